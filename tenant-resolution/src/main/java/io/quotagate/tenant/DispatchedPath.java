package io.quotagate.tenant;

import jakarta.servlet.http.HttpServletRequest;

/**
 * Reads the tenant segment of the path a servlet container dispatches a request to, segment by
 * segment under the same rules as the filter's route matching (limiter-filter's {@code RequestPath}):
 * empty and {@code .} segments skipped, path parameters ({@code ;x=1}) cut from each segment, a
 * segment of dots still percent-encoded ({@code %2e}) read as those dots, and a {@code ..} segment
 * refused.
 *
 * <p>Why not the raw request URI: the container resolves {@code /t/acme/../globex/items/1} to
 * {@code /t/globex/items/1} and serves globex's URL; a resolver reading the raw URI would charge acme
 * for it, and {@code /./t/acme/items/1} would resolve no tenant at all. Reading what the container
 * dispatched, the tenant charged is always the tenant of the URL the application serves.
 */
final class DispatchedPath {
    /** The reason of a request whose path has a {@code ..} segment left in it. */
    static final String INVALID_PATH = "invalid_path";

    private final String[] prefix;

    /** @param prefix starts and ends with {@code /}; no empty, {@code .} or {@code ..} segment */
    DispatchedPath(String prefix) {
        String inner = prefix.length() < 2 ? "" : prefix.substring(1, prefix.length() - 1);
        this.prefix = inner.isEmpty() ? new String[0] : inner.split("/", -1);
        for (String segment : this.prefix) {
            if (segment.isEmpty() || isDots(segment, 1) || isDots(segment, 2)) {
                throw new IllegalArgumentException("prefix must not hold an empty, '.' or '..' segment, was '" + prefix + "'");
            }
        }
    }

    /** The path inside the application as the servlet mapping saw it: servlet path + path info, decoded. */
    static String of(HttpServletRequest request) {
        String servletPath = request.getServletPath();
        String pathInfo = request.getPathInfo();
        if (servletPath == null) servletPath = "";
        return pathInfo == null ? servletPath : servletPath + pathInfo;
    }

    /**
     * The segment after the prefix, without its path parameters, or null if the path does not start
     * with the prefix or ends there.
     *
     * @throws TenantRejectedException 400 {@value #INVALID_PATH} for a {@code ..} segment, which
     *                                 containers resolve differently (the filter refuses such a path
     *                                 before it asks any resolver)
     */
    String segmentAfterPrefix(String path) {
        String found = null;
        int matched = 0; // prefix segments matched so far; -1 once the path is known not to match
        int n = path.length();
        int semicolon = -1; // the next ';' at or after start (n if none): found once per ';', so the walk stays linear
        for (int start = 0; start <= n; ) {
            int slash = path.indexOf('/', start);
            int end = slash < 0 ? n : slash;
            if (semicolon < start) {
                semicolon = path.indexOf(';', start);
                if (semicolon < 0) semicolon = n;
            }
            int cut = Math.min(semicolon, end); // path parameters are no part of a name
            if (isDots(path, start, cut, 2)) { // anywhere: /t/acme/../globex is globex's URL, not acme's
                throw new TenantRejectedException(400, INVALID_PATH,
                        "The request path has a '..' segment, which servlet containers resolve differently.");
            }
            if (cut > start && !isDots(path, start, cut, 1) && found == null && matched >= 0) {
                if (matched == prefix.length) {
                    found = path.substring(start, cut);
                } else {
                    String expected = prefix[matched];
                    matched = cut - start == expected.length() && path.startsWith(expected, start) ? matched + 1 : -1;
                }
            }
            start = end + 1;
        }
        return found;
    }

    private static boolean isDots(String segment, int dots) {
        return isDots(segment, 0, segment.length(), dots);
    }

    /** True if {@code s[from, to)} is exactly {@code dots} dots, each written {@code .} or {@code %2e} / {@code %2E}. */
    private static boolean isDots(String s, int from, int to, int dots) {
        int i = from;
        for (int d = 0; d < dots; d++) {
            if (i < to && s.charAt(i) == '.') {
                i++;
            } else if (i + 3 <= to && s.charAt(i) == '%' && s.charAt(i + 1) == '2'
                    && (s.charAt(i + 2) == 'e' || s.charAt(i + 2) == 'E')) {
                i += 3;
            } else {
                return false;
            }
        }
        return i == to;
    }
}
