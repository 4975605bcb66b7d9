package io.quotagate.plans;

import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * Which requests a rule covers and what they cost.
 *
 * <p>Rules are tried in file order; the first whose method and path match wins. Paths are
 * {@link PathPattern}s: {@code /health}, {@code /items/*} (one segment), {@code /v1/**} (any rest).
 * A rule for {@code GET} also covers {@code HEAD}: a servlet answers HEAD by running its GET
 * ({@code HttpServlet.doHead}), so a HEAD must cost what the GET costs and take its concurrency slot.
 *
 * @param name    unique name, used in metrics and logs
 * @param methods HTTP methods matched (upper case); empty means every method; {@code GET} implies {@code HEAD}
 * @param paths   path patterns, at least one
 * @param cost    units taken from the tenant's and the global bucket per request, &gt; 0
 * @param group   the concurrency group, if the route is capped by in-flight count
 * @param limited false for routes never limited (health checks, metrics)
 */
public record RouteRule(String name, Set<String> methods, List<PathPattern> paths, long cost,
                        Optional<String> group, boolean limited) {
    public RouteRule {
        Objects.requireNonNull(name, "name");
        methods = Set.copyOf(methods);
        if (methods.contains("GET") && !methods.contains("HEAD")) {
            methods = Set.copyOf(union(methods, "HEAD"));
        }
        paths = List.copyOf(paths);
        Objects.requireNonNull(group, "group");
        if (paths.isEmpty()) throw new IllegalArgumentException("route " + name + " needs at least one path");
        if (cost <= 0) throw new IllegalArgumentException("cost must be > 0, was " + cost);
    }

    private static Set<String> union(Set<String> methods, String method) {
        Set<String> all = new java.util.HashSet<>(methods);
        all.add(method);
        return all;
    }

    /** True if this rule covers a request with this method (upper case) and path. */
    public boolean matches(String method, String path) {
        if (!methods.isEmpty() && !methods.contains(method)) return false;
        // indexed: an iterator per rule per request is garbage on the hot path
        for (int i = 0, n = paths.size(); i < n; i++) {
            if (paths.get(i).matches(path)) return true;
        }
        return false;
    }
}
