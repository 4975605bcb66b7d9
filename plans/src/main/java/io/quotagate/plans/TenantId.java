package io.quotagate.plans;

/**
 * The rule every tenant id obeys, wherever it comes from (a header, a plans file, a JWT):
 * 1 to {@value #MAX_LENGTH} characters of {@code [A-Za-z0-9._:-]}, and not made of dots only
 * ({@code .} and {@code ..} are path segments, not names). An id that breaks it never becomes a key
 * of any table, metric or log line.
 */
public final class TenantId {
    /** The longest valid tenant id. */
    public static final int MAX_LENGTH = 64;

    private TenantId() {
    }

    /** True if {@code id} is a valid tenant id. Allocation-free. */
    public static boolean isValid(CharSequence id) {
        if (id == null) return false;
        int n = id.length();
        if (n == 0 || n > MAX_LENGTH) return false;
        boolean onlyDots = true;
        for (int i = 0; i < n; i++) {
            char c = id.charAt(i);
            boolean ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                    || c == '.' || c == '_' || c == ':' || c == '-';
            if (!ok) return false;
            if (c != '.') onlyDots = false;
        }
        return !onlyDots;
    }
}
