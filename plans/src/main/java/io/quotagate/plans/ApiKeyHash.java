package io.quotagate.plans;

import java.util.Locale;
import java.util.regex.Pattern;

/**
 * The rule for an API key as stored in a plans file or a key table: the SHA-256 of the key as 64 hex
 * digits, either case, never the key itself. The plans file and the API-key resolver both use it.
 */
public final class ApiKeyHash {
    private static final Pattern SHA256_HEX = Pattern.compile("[0-9a-fA-F]{64}");

    private ApiKeyHash() {
    }

    /** True if {@code hash} is 64 hex digits (either case); false for {@code null}. */
    public static boolean isSha256Hex(String hash) {
        return hash != null && SHA256_HEX.matcher(hash).matches();
    }

    /** The table key for a valid {@code hash}: lower case, so either case finds the same tenant. */
    public static String normalize(String hash) {
        return hash.toLowerCase(Locale.ROOT);
    }
}
