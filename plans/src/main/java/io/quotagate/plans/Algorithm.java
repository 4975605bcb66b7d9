package io.quotagate.plans;

import java.util.Locale;
import java.util.Optional;

/**
 * How a limit ({@link Bandwidth}) counts: the arithmetic of its bucket. Written per limit as
 * {@code algorithm: token-bucket | gcra | sliding-window}; the token bucket is the default.
 */
public enum Algorithm {
    /**
     * A token bucket: at most {@code capacity} units at once, refilled smoothly at {@code refill} units per
     * {@code period}. Allows a burst of {@code capacity} after an idle spell.
     */
    TOKEN_BUCKET("token-bucket"),
    /**
     * The generic cell rate algorithm: the same admissions as a token bucket of burst {@code capacity} and rate
     * {@code refill} per {@code period}, kept as one timestamp per key (the theoretical arrival time).
     */
    GCRA("gcra"),
    /**
     * A sliding window: at most {@code capacity} units in any {@code period}, whatever window of that length is
     * looked at; takes no {@code refill}.
     */
    SLIDING_WINDOW("sliding-window");

    private final String fileName;

    Algorithm(String fileName) {
        this.fileName = fileName;
    }

    /** The name written in files and properties: {@code token-bucket}, {@code gcra}, {@code sliding-window}. */
    public String fileName() {
        return fileName;
    }

    /** The algorithm written as {@code text} (its {@link #fileName()}, any case), or empty. */
    public static Optional<Algorithm> ofFileName(String text) {
        if (text == null) return Optional.empty();
        String t = text.trim().toLowerCase(Locale.ROOT);
        for (Algorithm a : values()) {
            if (a.fileName.equals(t)) return Optional.of(a);
        }
        return Optional.empty();
    }

    @Override
    public String toString() {
        return fileName;
    }
}
