package io.quotagate.filter.store;

import java.util.Objects;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * Where the instances sharing a store keep the limits they all enforce: one versioned record (the
 * plans file that was published last, plus the runtime changes made through any instance) and a
 * channel on which a change is announced. A shared store offers it ({@link BucketStore#limitsChannel});
 * the filter keeps every instance on the record's version (see docs/changing-limits.md, "Several instances").
 *
 * <p>What is stored is input from whoever can write to the store, not only from quotagate: a channel
 * reports a record it cannot hand over whole as {@linkplain Versioned#damage() damaged} (a version that
 * is not a usable number, a body over {@link #MAX_RECORD_BYTES}, no body, a value of another kind),
 * without reading more of it than that takes.
 *
 * <p>Every method may throw a {@link RuntimeException} when the backend is unreachable; the caller
 * keeps the limits it has and tries again.
 */
public interface LimitsChannel {
    /**
     * The highest usable version, 2<sup>53</sup> &minus; 1: the largest whole number a double holds
     * exactly, so a script language, a JSON reader or a dashboard reads every usable version as written.
     * A usable version is written in plain decimal digits, without sign, leading zero or exponent.
     */
    long MAX_VERSION = (1L << 53) - 1;

    /** The version of a stored record whose version cannot be used (see {@link #MAX_VERSION}). */
    long DAMAGED = -1;

    /**
     * The longest body read, in bytes (8 MiB); a longer one is damaged and never read, and none is
     * written. Several times the JSON of a plans file at its default size cap.
     */
    int MAX_RECORD_BYTES = 8 << 20;

    /** The version of the stored record: 0 if there is none, {@link #DAMAGED} if its version cannot be used. */
    long version();

    /** The stored record, or empty if there is none; its body is not read if it is too long. */
    Optional<Versioned> read();

    /**
     * Stores {@code body} as version {@code next} if the stored version is still {@code expected}, and
     * announces it to every instance. {@code expected}: 0 for no record, {@link #DAMAGED} for a record
     * whose version cannot be used (it is replaced whole, whatever it holds), else a usable version.
     *
     * @param next a usable version, above {@code expected}
     * @return false if the stored version was not {@code expected} (another instance wrote first: read
     * again and retry)
     */
    boolean replace(long expected, long next, String body);

    /** Sends a message to every instance's listener, this one's included; best effort (it may be lost). */
    void announce(String message);

    /**
     * Calls {@code listener} with every message announced from now on, on a thread of the store's.
     * Messages are hints: one may be lost (a reconnect), so a reader also checks {@link #version()} now
     * and then.
     */
    void listen(Consumer<String> listener);

    /** The name of this instance among those sharing the store (host, process, random suffix). */
    String instanceId();

    /** Where the record is, for an operator who repairs or deletes it by hand (on Redis: its key). */
    default String location() {
        return "the shared limits record";
    }

    /** True if {@code version} is a usable version: from 1 to {@link #MAX_VERSION}. */
    static boolean usable(long version) {
        return version >= 1 && version <= MAX_VERSION;
    }

    /**
     * A stored record.
     *
     * @param version its version: usable, or {@link #DAMAGED}
     * @param body    its text (the filter's JSON format); empty if it is damaged
     * @param damage  why the record cannot be used as stored, naming where it is (for the log, the status
     *                and the error of a change); empty if it can be read
     */
    record Versioned(long version, String body, Optional<String> damage) {
        public Versioned {
            Objects.requireNonNull(body, "body");
            Objects.requireNonNull(damage, "damage");
            if (damage.isEmpty() && !usable(version)) {
                throw new IllegalArgumentException("a readable record needs a usable version, was " + version);
            }
        }

        /** A record that can be read. */
        public static Versioned of(long version, String body) {
            return new Versioned(version, body, Optional.empty());
        }

        /** A record that cannot: {@code version} is usable if only its body is damaged, else {@link #DAMAGED}. */
        public static Versioned damaged(long version, String why) {
            return new Versioned(usable(version) ? version : DAMAGED, "", Optional.of(why));
        }
    }
}
