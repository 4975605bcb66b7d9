package io.quotagate.filter.internal.route;

import io.quotagate.plans.RouteRule;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The indexed table against its definition: the first rule, in order, whose method and path match
 * ({@link RouteRule#matches}), over generated tables, methods and paths.
 */
class RouteTableEquivalenceTest {
    private static final String[] SEGMENTS = {"a", "b", "ab", "*", "a"};
    private static final String[] PATH_PARTS = {"a", "b", "ab", "ba", "", "c"};
    private static final List<Set<String>> METHODS =
            List.of(Set.of(), Set.of("GET"), Set.of("POST", "PUT"), Set.of("PUT"));
    private static final String[] REQUEST_METHODS = {"GET", "HEAD", "POST", "PUT", "DELETE"};

    @Test
    void theFirstRuleInOrderWhoseMethodAndPathMatchWins() {
        Random random = new Random(7);
        for (int t = 0; t < 500; t++) {
            List<RouteRule> rules = new ArrayList<>();
            int n = 1 + random.nextInt(6);
            for (int r = 0; r < n; r++) {
                String[] paths = new String[1 + random.nextInt(2)];
                for (int p = 0; p < paths.length; p++) paths[p] = pattern(random);
                rules.add(RouteRule.builder("r" + r).methods(METHODS.get(random.nextInt(METHODS.size())))
                        .paths(paths).build());
            }
            RouteTable table = new RouteTable(rules);
            for (int q = 0; q < 200; q++) {
                String method = REQUEST_METHODS[random.nextInt(REQUEST_METHODS.length)];
                String path = path(random);
                String expected = rules.stream().filter(rule -> rule.matches(method, path)).findFirst()
                        .map(RouteRule::name).orElse(Route.DEFAULT.name());
                assertThat(table.match(method, path).name()).as("%s %s in %s", method, path, rules).isEqualTo(expected);
            }
        }
    }

    private static String pattern(Random random) {
        StringBuilder b = new StringBuilder();
        int segments = random.nextInt(4);
        for (int i = 0; i < segments; i++) b.append('/').append(SEGMENTS[random.nextInt(SEGMENTS.length)]);
        if (random.nextInt(3) == 0) b.append("/**");
        return b.length() == 0 ? "/" : b.toString();
    }

    private static String path(Random random) {
        StringBuilder b = new StringBuilder();
        int parts = random.nextInt(5);
        for (int i = 0; i < parts; i++) b.append('/').append(PATH_PARTS[random.nextInt(PATH_PARTS.length)]);
        if (b.length() == 0) return random.nextBoolean() ? "/" : "";
        return b.toString();
    }
}
