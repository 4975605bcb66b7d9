package io.quotagate.example.readme;

import io.quotagate.filter.QuotaFilter;
import io.quotagate.filter.redis.RedisSettings;
import io.quotagate.plans.Plans;
import io.quotagate.plans.PlansFile;
import io.quotagate.tenant.TenantResolver;
import io.quotagate.tenant.TenantResolvers;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every YAML snippet of the documentation (README.md and every page of docs/) is accepted by the loader that
 * would read it, so a page never shows an option, a value or a shape the library refuses at startup. A
 * snippet is either a whole plans file ({@code plans:}, {@code global:}), which must also build a filter (one for
 * the Redis store has its store options checked instead: building it would connect), or a part of one, placed
 * where it belongs in a minimal plans file: a {@code store:} or {@code groups:} section, or the entries of
 * {@code tenants.resolvers} (checked as at startup, without reading key material: the pages' secrets and key
 * files are examples). The Spring Boot {@code quotagate:} block is the {@code application.yml}
 * that {@code InlineLimitsApplicationTest} (spring-boot-starter) starts an application with.
 */
class DocYamlSnippetsTest {
    /** The least a plans file needs, for snippets that are one section of one. */
    private static final String MINIMAL = """
            plans:
              doc:
                limits: [ { capacity: 10, refill: 10, period: 1s } ]
            """;
    /** The application's own resolver: the file's resolvers are then checked, not built. */
    private static final TenantResolver HEADER = TenantResolver.header(TenantResolver.DEFAULT_HEADER);
    /** A group's name in a {@code groups:} section: a key two spaces in. */
    private static final Pattern GROUP = Pattern.compile("^  ([\\w-]+):", Pattern.MULTILINE);

    @Test
    void everyYamlSnippetOfTheDocsIsAcceptedWhereItBelongs() throws IOException {
        List<String> checked = new ArrayList<>();
        for (Path page : ReadmeSnippetsTest.pages()) {
            List<String> blocks = ReadmeSnippetsTest.blocks(Files.readString(page), "yaml");
            for (int i = 0; i < blocks.size(); i++) {
                String where = page.getFileName() + ", YAML block " + (i + 1);
                checked.add(check(where, page, blocks.get(i)));
            }
        }
        // the README's plans file, the reference of plans-file.md, the groups, store and resolver sections
        assertThat(checked).as("YAML snippets checked").hasSizeGreaterThanOrEqualTo(15)
                .contains("plans file", "store", "groups", "resolvers");
    }

    /** Checks one snippet by its first key; returns what it was checked as. */
    private static String check(String where, Path page, String yaml) {
        String first = yaml.lines().filter(l -> !l.isBlank() && !l.stripLeading().startsWith("#"))
                .findFirst().orElseThrow(() -> new AssertionError(where + " is empty"));
        if (first.startsWith("plans:") || first.startsWith("global:")) {
            Plans plans = PlansFile.parse(where, yaml);
            // the resolvers checked as at startup, without reading the pages' example secrets and key files
            if (plans.store().isLocal()) QuotaFilter.builder().plans(plans).tenantResolver(HEADER).build();
            else RedisSettings.of(plans.store()); // a file for Redis: its options checked, no connection made
            return "plans file";
        }
        if (first.startsWith("store:")) {
            Plans plans = PlansFile.parse(where, MINIMAL + yaml);
            RedisSettings.of(plans.store()); // the Redis store's own check of its options, no connection
            return "store";
        }
        if (first.startsWith("groups:")) { // each group with a route in it, as the page says to put routes in groups
            String routes = GROUP.matcher(yaml).results().map(g -> "  - { name: " + g.group(1) + ", paths: [\"/"
                    + g.group(1) + "/*\"], group: " + g.group(1) + " }\n").collect(Collectors.joining("", "routes:\n", ""));
            QuotaFilter.builder().plans(PlansFile.parse(where, MINIMAL + routes + yaml)).tenantResolver(HEADER).build();
            return "groups";
        }
        if (first.startsWith("- { type:")) { // entries of tenants.resolvers, maybe with a sibling of it
            String tenants = "tenants:\n  resolvers:\n" + yaml.lines().map(l -> "  " + l + "\n")
                    .reduce("", String::concat);
            TenantResolvers.check(PlansFile.parse(where, MINIMAL + tenants).tenants());
            return "resolvers";
        }
        if (first.startsWith("tenants:")) { // a plans file's tenants section
            QuotaFilter.builder().plans(PlansFile.parse(where, MINIMAL + yaml)).tenantResolver(HEADER).build();
            return "tenants";
        }
        if (first.startsWith("quotagate:")) {
            assertThat(page.getFileName()).as(where + ": Spring Boot properties, started by InlineLimitsApplicationTest")
                    .hasToString("spring-boot.md");
            return "spring boot";
        }
        throw new AssertionError(where + " starts with " + first + ": say in this test where such a snippet belongs");
    }
}
