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

    /** The allowed characters, {@code [A-Za-z0-9._:-]}, by code (all below 128). */
    private static final boolean[] ALLOWED = new boolean[128];

    static {
        for (char c = 'a'; c <= 'z'; c++) ALLOWED[c] = true;
        for (char c = 'A'; c <= 'Z'; c++) ALLOWED[c] = true;
        for (char c = '0'; c <= '9'; c++) ALLOWED[c] = true;
        for (char c : new char[]{'.', '_', ':', '-'}) ALLOWED[c] = true;
    }

    /** True if {@code id} is a valid tenant id ({@link #isValid(String)} on its text). */
    public static boolean isValid(CharSequence id) {
        return id != null && id.length() <= MAX_LENGTH && isValid(id.toString()); // no copy of a long one
    }

    /**
     * True if {@code id} is a valid tenant id. Allocation-free; a {@code String} parameter, so the
     * character reads of every request's id are plain array reads, never an interface call.
     */
    public static boolean isValid(String id) {
        if (id == null) return false;
        int n = id.length();
        if (n == 0 || n > MAX_LENGTH) return false;
        int dots = 0;
        for (int i = 0; i < n; i++) {
            char c = id.charAt(i);
            // one table read per character, no range tests: every request's id goes through here
            if (c >= ALLOWED.length || !ALLOWED[c]) return false;
            if (c == '.') dots++;
        }
        return dots < n;
    }
}
