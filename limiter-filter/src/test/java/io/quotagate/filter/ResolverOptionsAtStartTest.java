package io.quotagate.filter;

import io.quotagate.filter.testing.FilterConfigs;
import io.quotagate.filter.testing.Http;
import io.quotagate.filter.testing.JettyServer;
import io.quotagate.plans.InvalidPlansException;
import io.quotagate.plans.PlansFile;
import io.quotagate.tenant.TenantResolver;
import jakarta.servlet.FilterConfig;
import jakarta.servlet.ServletException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A resolver option is checked by its resolver type in tenant-resolution, not by the plans file's
 * parser: the filter still refuses a bad one when it is built, when the container starts it, and on
 * a reload (keeping the plans in force), with the file, line and field.
 */
class ResolverOptionsAtStartTest {
    private static final String GOOD = """
            plans:
              free: { limits: [ { capacity: 2, refill: 2, period: 1m } ] }
            tenants:
              resolvers:
                - { type: header, name: X-Tenant-Id }
            """;
    private static final String BAD = GOOD.replace("name: X-Tenant-Id", "name: \"X Tenant\"");
    private static final String BAD_FIELD = ":5: tenants.resolvers[0].name: must match";

    @TempDir
    Path dir;
    private JettyServer server;

    @AfterEach
    void stop() throws Exception {
        if (server != null) server.close();
    }

    private Path file(String yaml) throws Exception {
        return Files.writeString(dir.resolve("plans.yml"), yaml);
    }

    @Test
    void theBuilderRefusesABadResolverOption() throws Exception {
        Path f = file(BAD);
        assertThatThrownBy(() -> QuotaFilter.builder().plansFile(f).build())
                .isInstanceOf(InvalidPlansException.class).hasMessageStartingWith(f + BAD_FIELD);
        assertThatThrownBy(() -> QuotaFilter.builder().plans(PlansFile.load(f)).build())
                .isInstanceOf(InvalidPlansException.class).hasMessageStartingWith(f + BAD_FIELD);
    }

    @Test
    void theBuilderRefusesABadResolverOptionEvenWhenItsOwnResolverReplacesTheFiles() throws Exception {
        Path f = file(BAD);
        TenantResolver own = TenantResolver.header("X-Own");
        assertThatThrownBy(() -> QuotaFilter.builder().plansFile(f).tenantResolver(own).build())
                .isInstanceOf(InvalidPlansException.class).hasMessageStartingWith(f + BAD_FIELD);
    }

    @Test
    void theContainerRefusesToStartTheFilter() throws Exception {
        Path f = file(BAD);
        assertThatThrownBy(() -> new QuotaFilter().init(config(f)))
                .isInstanceOf(ServletException.class)
                .hasMessageStartingWith("QuotaFilter 'quota': invalid plans: " + f + BAD_FIELD);
    }

    @Test
    void aReloadWithABadResolverOptionIsRefusedAndTheOldPlansStay() throws Exception {
        Path f = file(GOOD);
        QuotaFilter filter = QuotaFilter.builder().plansFile(f).build();
        server = JettyServer.start(filter);
        assertThat(Http.get(server.uri("/x"), "acme").statusCode()).isEqualTo(200);

        Files.writeString(f, BAD.replace("capacity: 2, refill: 2", "capacity: 9, refill: 9"));
        assertThatThrownBy(filter.control()::reload).isInstanceOf(InvalidPlansException.class)
                .hasMessageStartingWith(f + BAD_FIELD);
        assertThat(filter.control().plans().plan("free").orElseThrow().limits().get(0).capacity()).isEqualTo(2);
        assertThat(Http.get(server.uri("/x"), "acme").statusCode()).isEqualTo(200);
        assertThat(Http.get(server.uri("/x"), "acme").statusCode()).as("still the old 2").isEqualTo(429);
    }

    private static FilterConfig config(Path plans) {
        return FilterConfigs.of(QuotaFilter.PLANS_PARAM, plans.toString());
    }
}
