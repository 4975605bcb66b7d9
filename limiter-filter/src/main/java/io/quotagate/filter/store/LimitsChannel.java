package io.quotagate.filter.store;

import java.util.Optional;
import java.util.function.Consumer;

/**
 * Where the instances sharing a store keep the limits they all enforce: one versioned record (the
 * plans file that was published last, plus the runtime changes made through any instance) and a
 * channel on which a change is announced. A shared store offers it ({@link BucketStore#limitsChannel});
 * the filter keeps every instance on the record's version (see the README, "Several instances").
 *
 * <p>Every method may throw a {@link RuntimeException} when the backend is unreachable; the caller
 * keeps the limits it has and tries again.
 */
public interface LimitsChannel {

    /** The version of the stored record, 0 if there is none. */
    long version();

    /** The stored record, or empty if there is none. */
    Optional<Versioned> read();

    /**
     * Stores {@code body} as the next version if the stored version is still {@code expected} (0: no
     * record stored), and announces the new version to every instance.
     *
     * @return the new version, or -1 if the stored version was not {@code expected} (another instance
     * wrote first: read again and retry)
     */
    long replace(long expected, String body);

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

    /**
     * A stored record.
     *
     * @param version its version, &gt; 0, one more at every write
     * @param body    its text (the filter's JSON format)
     */
    record Versioned(long version, String body) {
    }
}
