package io.quotagate.filter.internal.route;

import io.quotagate.plans.PathPattern;
import io.quotagate.plans.RouteRule;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Decides which route a request belongs to: the first rule, in file order, whose method and path
 * match; {@link Route#DEFAULT} when none does. Built once; matching allocates nothing.
 *
 * <p>Every request is matched, so the table does not try every rule in turn: its path patterns are
 * indexed by their first segment. A request's first segment (hashed as it is read, never cut out)
 * picks the patterns that begin with that literal; those that begin with {@code *} or {@code **}
 * (or are {@code /}) are always tried. The two lists are merged in file order, so the first rule that
 * matches is still the one that wins.
 */
public final class RouteTable {
    private static final Candidate[] NONE = {};

    private final Route[] routes;
    /** Each rule's methods, or null for a rule that takes every method. */
    private final Set<String>[] methods;
    /** Patterns whose first segment is not a literal, in file order. */
    private final Candidate[] anyFirst;
    /** Open addressing by the first segment's {@code String.hashCode}: keys and their patterns in file order. */
    private final String[] firstKeys;
    private final Candidate[][] byFirst;

    /** One path pattern of rule number {@code rule}. */
    private record Candidate(int rule, PathPattern pattern) {
    }

    /** A table of these rules, tried in order. */
    @SuppressWarnings("unchecked")
    public RouteTable(List<RouteRule> rules) {
        int n = rules.size();
        this.routes = new Route[n];
        this.methods = new Set[n];
        List<Candidate> any = new ArrayList<>();
        Map<String, List<Candidate>> literal = new HashMap<>();
        for (int i = 0; i < n; i++) {
            RouteRule rule = rules.get(i);
            routes[i] = Route.of(rule);
            methods[i] = rule.methods().isEmpty() ? null : rule.methods();
            for (PathPattern pattern : rule.paths()) {
                String first = firstSegment(pattern.toString());
                if (first == null) any.add(new Candidate(i, pattern));
                else literal.computeIfAbsent(first, k -> new ArrayList<>()).add(new Candidate(i, pattern));
            }
        }
        this.anyFirst = any.toArray(Candidate[]::new);
        int size = Integer.highestOneBit(Math.max(1, literal.size()) * 4 - 1) << 1; // at most a quarter full
        this.firstKeys = new String[size];
        this.byFirst = new Candidate[size][];
        literal.forEach((key, candidates) -> {
            int slot = key.hashCode() & (size - 1);
            while (firstKeys[slot] != null) slot = (slot + 1) & (size - 1);
            firstKeys[slot] = key;
            byFirst[slot] = candidates.toArray(Candidate[]::new);
        });
    }

    /**
     * The literal first segment of a pattern's text ({@link PathPattern#toString()}, the text it was
     * parsed from), or null if it starts with a wildcard or is {@code /}.
     */
    private static String firstSegment(String pattern) {
        int end = pattern.indexOf('/', 1);
        String first = pattern.substring(1, end < 0 ? pattern.length() : end);
        return first.isEmpty() || first.equals("*") || first.equals("**") ? null : first;
    }

    /**
     * The route of a request.
     *
     * @param method HTTP method, upper case
     * @param path   the decoded path inside the application (no context path, no query)
     */
    public Route match(String method, String path) {
        Candidate[] literal = NONE;
        if (path != null && !path.isEmpty() && path.charAt(0) == '/') literal = withFirstSegmentOf(path);
        // merge both lists, each in file order: the first matching candidate is the first matching rule
        int a = 0;
        int l = 0;
        while (a < anyFirst.length || l < literal.length) {
            Candidate next = l == literal.length || (a < anyFirst.length && anyFirst[a].rule <= literal[l].rule)
                    ? anyFirst[a++] : literal[l++];
            Set<String> allowed = methods[next.rule];
            if ((allowed == null || allowed.contains(method)) && next.pattern.matches(path)) return routes[next.rule];
        }
        return Route.DEFAULT;
    }

    /** The patterns whose literal first segment is the path's first segment. */
    private Candidate[] withFirstSegmentOf(String path) {
        int n = path.length();
        int end = 1;
        int hash = 0;
        for (char c; end < n && (c = path.charAt(end)) != '/'; end++) hash = 31 * hash + c;
        int length = end - 1;
        if (length == 0) return NONE;
        for (int slot = hash & (firstKeys.length - 1); ; slot = (slot + 1) & (firstKeys.length - 1)) {
            String key = firstKeys[slot];
            if (key == null) return NONE;
            if (key.length() == length && path.startsWith(key, 1)) return byFirst[slot];
        }
    }
}
