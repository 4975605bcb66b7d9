package io.quotagate.filter.signals;

import java.time.Duration;
import java.time.Instant;
import java.util.Objects;

/**
 * Something an operator or a billing system should hear about, as opposed to a single refusal (the
 * system working): the fixed set below, each raised once per crossing by one instance (see
 * docs/events.md). {@link #type()} is the wire name used in logs, metrics and webhook bodies.
 */
public sealed interface QuotaEvent {

    /** When the filter saw it (wall clock). */
    Instant at();

    /** The wire name: {@code near_limit}, {@code exhausted}, {@code throttled_for_long}, {@code recovered}, {@code global_near_limit}, {@code store_fallback}. */
    String type();

    /** Every wire name, in the order of the permitted types. */
    /**
     * The event as one logfmt line, as the filter logs it: {@code quotagate event=<type> tenant=... plan=...}
     * and the type's own fields.
     */
    default String logfmt() {
        return EventText.logfmt(this);
    }

    static java.util.List<String> types() {
        return java.util.List.of(NearLimit.TYPE, Exhausted.TYPE, ThrottledForLong.TYPE, Recovered.TYPE,
                GlobalNearLimit.TYPE, StoreFallback.TYPE);
    }

    /**
     * A tenant used at least {@code thresholdPercent} of one limit of its plan; raised once per crossing,
     * raised again only after its usage fell back below the threshold (by 5 points).
     *
     * @param limit    the bandwidth's name ({@code burst}, {@code daily})
     * @param used     units used (capacity − available) when it was read
     * @param capacity the bandwidth's capacity
     */
    record NearLimit(Instant at, String tenant, String plan, String limit, int thresholdPercent, long used,
                     long capacity) implements QuotaEvent {
        public static final String TYPE = "near_limit";

        public NearLimit {
            Objects.requireNonNull(tenant, "tenant");
        }

        @Override
        public String type() {
            return TYPE;
        }
    }

    /**
     * A tenant's first refusal since it last recovered (or ever).
     *
     * @param reason what refused it: {@code tenant_rate}, {@code global_rate}, {@code guest_rate}, {@code concurrency}
     */
    record Exhausted(Instant at, String tenant, String plan, String reason) implements QuotaEvent {
        public static final String TYPE = "exhausted";

        @Override
        public String type() {
            return TYPE;
        }
    }

    /**
     * A tenant was refused in more than {@code minutes} distinct minutes of the last {@code within};
     * raised once, again only after it recovered and fell below that.
     *
     * @param refusedMinutes the minutes with refusals in that stretch
     */
    record ThrottledForLong(Instant at, String tenant, String plan, int refusedMinutes, int minutes, Duration within)
            implements QuotaEvent {
        public static final String TYPE = "throttled_for_long";

        @Override
        public String type() {
            return TYPE;
        }
    }

    /**
     * A tenant that was refused has been refused nothing for the recovery time.
     *
     * @param refusedFor from its first to its last refusal of the spell
     * @param refusals   the signals checks (about one a second) in which it was refused during the spell:
     *                   a lower bound of its refusals, which the request path does not count one by one
     */
    record Recovered(Instant at, String tenant, String plan, Duration refusedFor, long refusals)
            implements QuotaEvent {
        public static final String TYPE = "recovered";

        @Override
        public String type() {
            return TYPE;
        }
    }

    /** The global quota has {@code thresholdPercent} or more used; once per crossing (re-armed 5 points below). */
    record GlobalNearLimit(Instant at, int thresholdPercent, long used, long capacity) implements QuotaEvent {
        public static final String TYPE = "global_near_limit";

        @Override
        public String type() {
            return TYPE;
        }
    }

    /** The shared store became unreachable and this instance decides from local buckets ({@code active}), or it is back. */
    record StoreFallback(Instant at, boolean active) implements QuotaEvent {
        public static final String TYPE = "store_fallback";

        @Override
        public String type() {
            return TYPE;
        }
    }
}
