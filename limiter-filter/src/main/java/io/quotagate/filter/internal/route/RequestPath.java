package io.quotagate.filter.internal.route;

/**
 * The one canonical form of a request path that every route rule is matched against, whatever the
 * servlet container did to it first.
 *
 * <p>Jetty and Tomcat normalise the path before a filter sees it; Undertow 2.3 does not: it serves
 * {@code /reports//1}, {@code /reports/./1} and {@code /reports/1/./} with the {@code /reports/*}
 * servlet but hands them to the filter as written. Matched as given, such a variant would fall to
 * the default route and leave its route's cost and concurrency group. So the filter matches this
 * form instead: empty and {@code .} segments dropped, path parameters ({@code ;jsessionid=...}) cut
 * from each segment, and a segment that is a dot still percent-encoded ({@code %2e}, from a container
 * that did not decode it) read as that dot. A trailing slash is kept.
 *
 * <p>A {@code ..} segment, in any spelling ({@code ..}, {@code ..;x}, {@code %2e%2e}), has no canonical
 * form: containers disagree on it (Tomcat reads {@code ..;} as {@code ..}, others keep it as a name),
 * so applying it could match {@code /reports/..;/admin} to an unlimited {@code /admin/**} route while
 * the container runs the report. Containers that normalise never pass one on; the filter refuses it.
 */
public final class RequestPath {
    private RequestPath() {
    }

    /**
     * The canonical form of {@code path}, or null if it has a {@code ..} segment (refuse the request).
     *
     * @param path the decoded path inside the application (servlet path + path info), without query
     */
    public static String normalize(String path) {
        if (path == null || path.isEmpty()) return "/";
        if (path.charAt(0) == '/' && isCanonical(path)) return path; // the common case: no allocation
        String[] parts = path.split("/", -1);
        String[] kept = new String[parts.length];
        int n = 0;
        for (String part : parts) {
            String segment = dotted(withoutParameters(part));
            if (segment.isEmpty() || segment.equals(".")) continue;
            if (segment.equals("..")) return null;
            kept[n++] = segment;
        }
        StringBuilder b = new StringBuilder(path.length());
        for (int i = 0; i < n; i++) b.append('/').append(kept[i]);
        if (n == 0 || endsWithSlash(parts)) b.append('/');
        return b.toString();
    }

    /** True if nothing would change: no empty, dot or parameter segment, no percent sign. */
    private static boolean isCanonical(String path) {
        int n = path.length();
        for (int i = 0; i < n; i++) {
            char c = path.charAt(i);
            if (c == ';' || c == '%') return false;
            if (c == '/' && i + 1 < n && (path.charAt(i + 1) == '/' || path.charAt(i + 1) == '.')) return false;
        }
        return true;
    }

    /** True if the path ends in a slash, or in a dot segment that leaves one ({@code /a/.}). */
    private static boolean endsWithSlash(String[] parts) {
        String last = dotted(withoutParameters(parts[parts.length - 1]));
        return parts.length > 1 && (last.isEmpty() || last.equals("."));
    }

    private static String withoutParameters(String segment) {
        int semicolon = segment.indexOf(';');
        return semicolon < 0 ? segment : segment.substring(0, semicolon);
    }

    /** {@code %2e} and {@code %2E} read as {@code .} in a segment made only of dots, encoded or not. */
    private static String dotted(String segment) {
        if (segment.indexOf('%') < 0) return segment;
        String decoded = segment.replace("%2e", ".").replace("%2E", ".");
        return decoded.equals(".") || decoded.equals("..") ? decoded : segment;
    }
}
