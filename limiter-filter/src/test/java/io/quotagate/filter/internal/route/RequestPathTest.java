package io.quotagate.filter.internal.route;

import io.quotagate.plans.PathPattern;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;

class RequestPathTest {

    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource({
            "/reports/1, /reports/1",
            "/, /",
            "'', /",
            "/reports//1, /reports/1",
            "//reports///1, /reports/1",
            "/reports/./1, /reports/1",
            "/./reports/1, /reports/1",
            "/reports/1/./, /reports/1/",
            "/reports/1/., /reports/1/",
            "/reports/1/, /reports/1/",
            "/reports/x/../1, ",
            "/reports/1/.., ",
            "/reports/%2e/1, /reports/1",
            "/reports/%2E%2e/reports/1, ",
            "/reports;jsessionid=abc/1, /reports/1",
            "/reports/1;x=y, /reports/1",
            "/reports/.;x/1, /reports/1",
            "/reports/..;/admin, ",
            "/items/a.b, /items/a.b",
            "/.well-known/x, /.well-known/x",
            "/items/100%, /items/100%",
            "/items/%2e%2ex, /items/%2e%2ex",
            "/.., ",
            "/reports/../../x, ",
    })
    void everyVariantHasOneCanonicalFormOrNoneWithADotDot(String path, String canonical) {
        assertThat(RequestPath.normalize(path)).isEqualTo(canonical);
    }

    @ParameterizedTest
    @ValueSource(strings = {"/reports//1", "/reports/./1", "/reports/1/./", "/reports/%2e/1", "/reports;a=b/1",
            "//reports/1"})
    void variantsServedByTheSameServletMatchTheSamePattern(String variant) {
        PathPattern reports = PathPattern.parse("/reports/*");
        assertThat(reports.matches(variant)).isFalse(); // as the container hands it over
        assertThat(reports.matches(RequestPath.normalize(variant))).isTrue();
    }

    @ParameterizedTest
    @ValueSource(strings = {"/items/1", "/", "/v1/completions", "/a/b/c/d"})
    void aCanonicalPathIsReturnedAsItIs(String path) {
        assertThat(RequestPath.normalize(path)).isSameAs(path);
    }
}
