package io.quotagate.plans;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * Settings of a concurrency group shared by all tenants ({@code groups.<name>} in the plans file):
 * an optional cap on the group's requests in flight across every tenant, and an optional bounded
 * queue in which a request waits for a slot instead of being refused at once.
 *
 * <p>The per-tenant caps are not here: they belong to each plan ({@link Plan#concurrency()}).
 *
 * @param name        the group's name, as routes name it in {@code group:}
 * @param maxInflight the most requests of the group in flight across all tenants, if capped
 * @param queue       the waiting room, if requests may wait for a slot; empty means fail fast
 */
public record GroupSettings(String name, OptionalInt maxInflight, Optional<Queue> queue) {
    public GroupSettings {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(maxInflight, "maxInflight");
        Objects.requireNonNull(queue, "queue");
        if (maxInflight.isPresent() && maxInflight.getAsInt() <= 0) {
            throw new IllegalArgumentException("maxInflight must be > 0, was " + maxInflight.getAsInt());
        }
    }

    /** A group with neither a global cap nor a queue: fail fast on the plans' per-tenant caps. */
    public static GroupSettings failFast(String name) {
        return new GroupSettings(name, OptionalInt.empty(), Optional.empty());
    }

    /**
     * A bounded FIFO waiting room.
     *
     * @param size    the most requests waiting at once in the group (all tenants together), &gt; 0
     * @param maxWait how long a request waits at most before it is refused, &gt; 0
     */
    public record Queue(int size, Duration maxWait) {
        public Queue {
            Objects.requireNonNull(maxWait, "maxWait");
            if (size <= 0) throw new IllegalArgumentException("queue size must be > 0, was " + size);
            if (maxWait.isZero() || maxWait.isNegative()) {
                throw new IllegalArgumentException("queue max-wait must be > 0, was " + maxWait);
            }
        }
    }
}
