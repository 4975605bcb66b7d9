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
 * <p>Instead of a fixed {@code max-inflight}, the cap across tenants may be {@linkplain Adaptive adaptive}:
 * it then follows the group's request latency (a limit that falls when requests slow down and climbs
 * back when they speed up), and tenants share it fairly. The two are exclusive.
 *
 * <p>The per-tenant caps are not here: they belong to each plan ({@link Plan#concurrency()}).
 *
 * @param name        the group's name, as routes name it in {@code group:}
 * @param maxInflight the most requests of the group in flight across all tenants, if capped
 * @param queue       the waiting room, if requests may wait for a slot; empty means fail fast
 * @param adaptive    the adaptive cap across tenants, if the group has one (then {@code maxInflight} is empty)
 */
public record GroupSettings(String name, OptionalInt maxInflight, Optional<Queue> queue, Optional<Adaptive> adaptive) {
    public GroupSettings {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(maxInflight, "maxInflight");
        Objects.requireNonNull(queue, "queue");
        Objects.requireNonNull(adaptive, "adaptive");
        if (maxInflight.isPresent() && maxInflight.getAsInt() <= 0) {
            throw new IllegalArgumentException("maxInflight must be > 0, was " + maxInflight.getAsInt());
        }
        if (maxInflight.isPresent() && adaptive.isPresent()) {
            throw new IllegalArgumentException("maxInflight and adaptive exclude each other (adaptive.max is the ceiling)");
        }
    }

    /** A group with a fixed cap (or none) across tenants, not adaptive. */
    public GroupSettings(String name, OptionalInt maxInflight, Optional<Queue> queue) {
        this(name, maxInflight, queue, Optional.empty());
    }

    /** A group with neither a global cap nor a queue: fail fast on the plans' per-tenant caps. */
    public static GroupSettings failFast(String name) {
        return new GroupSettings(name, OptionalInt.empty(), Optional.empty(), Optional.empty());
    }

    /**
     * A cap across tenants that follows latency ({@code groups.<name>.adaptive}): this instance's limit
     * of the group's requests in flight starts at {@code initial} and moves between {@code min} and
     * {@code max} as the algorithm reads the durations of completed requests.
     *
     * @param algorithm how the limit moves
     * @param initial   the limit before any request completed
     * @param min       the limit never falls below this, &gt;= 1
     * @param max       the limit never climbs above this (the group's ceiling), at most {@value #MAX_LIMIT}
     */
    public record Adaptive(Algorithm algorithm, int initial, int min, int max) {
        /** The largest {@code max}. */
        public static final int MAX_LIMIT = 100_000;

        public Adaptive {
            Objects.requireNonNull(algorithm, "algorithm");
            if (min < 1) throw new IllegalArgumentException("adaptive min must be >= 1, was " + min);
            if (max > MAX_LIMIT) throw new IllegalArgumentException("adaptive max must be <= " + MAX_LIMIT + ", was " + max);
            if (initial < min || initial > max) {
                throw new IllegalArgumentException("adaptive needs min <= initial <= max, was " + min + ", " + initial + ", " + max);
            }
        }

        /** How an adaptive limit reads latency. */
        public enum Algorithm {
            /**
             * Compares the latest duration with a long-run average: a slowdown cuts the limit at once
             * (by at most half per sample), and a slowdown that lasts becomes the new normal over a few
             * hundred requests. Netflix's Gradient2. The default.
             */
            GRADIENT2,
            /**
             * Compares durations with the shortest seen (re-probed now and then): the limit moves by a
             * few slots per sample, down while requests queue, up while they do not. Netflix's Vegas.
             */
            VEGAS
        }
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
