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

    /** {@code [-.0-9:]}: the allowed characters below 64, bit {@code c} each. */
    private static final long ALLOWED_LOW = bits('-', '.', 0) | bits('0', ':', 0);
    /** {@code [A-Z_a-z]}: the allowed characters from 64 to 127, bit {@code c - 64} each. */
    private static final long ALLOWED_HIGH = bits('A', 'Z', 64) | bits('_', '_', 64) | bits('a', 'z', 64);

    /** True if {@code id} is a valid tenant id ({@link #isValid(String)} on its text). */
    public static boolean isValid(CharSequence id) {
        return id != null && isValid(id.toString());
    }

    /**
     * True if {@code id} is a valid tenant id. Allocation-free; a {@code String} parameter, so the
     * character reads of every request's id are plain array reads, never an interface call.
     */
    public static boolean isValid(String id) {
        if (id == null) return false;
        int n = id.length();
        if (n == 0 || n > MAX_LENGTH) return false;
        boolean onlyDots = true;
        for (int i = 0; i < n; i++) {
            char c = id.charAt(i);
            // one bit test per character: every request's id goes through here
            boolean ok = c < 64 ? (ALLOWED_LOW >>> c & 1) != 0 : c < 128 && (ALLOWED_HIGH >>> (c - 64) & 1) != 0;
            if (!ok) return false;
            if (c != '.') onlyDots = false;
        }
        return !onlyDots;
    }

    /** Bits {@code from - base} to {@code to - base}. */
    private static long bits(char from, char to, int base) {
        long mask = 0;
        for (char c = from; c <= to; c++) mask |= 1L << (c - base);
        return mask;
    }
}
