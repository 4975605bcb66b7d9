package io.quotagate.filter.signals;

import java.time.Duration;
import java.time.Instant;
import java.util.Objects;

/**
 * Something an operator or a billing system should hear about, as opposed to a single refusal (the
 * system working): the fixed set below, each raised once per crossing by one instance, and a calendar
 * quota's {@code near_limit} and {@code exhausted} once per tenant, quota, period and threshold across
 * the instances (see docs/events.md). {@link #type()} is the wire name used in logs, metrics and webhook bodies.
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
     * A tenant used at least {@code thresholdPercent} of one limit of its plan. For a bandwidth (a limit that
     * refills) it is raised once per crossing by each instance that sees it, and again only after its usage
     * fell back below the threshold (by 5 points); {@link #periodStart()} and {@link #periodEnd()} are null.
     * For a calendar quota ({@link #quota()} true) it is raised once per tenant, quota, period and threshold,
     * across all instances sharing a store, and carries the period.
     *
     * @param limit       the bandwidth's or the calendar quota's name ({@code burst}, {@code daily}, {@code monthly})
     * @param used        units used (capacity − available) when it was read
     * @param capacity    the bandwidth's capacity, or the quota's limit per period
     * @param periodStart a calendar quota's current period: when it began; null for a bandwidth
     * @param periodEnd   when that period ends (the quota is whole again); null for a bandwidth
     */
    record NearLimit(Instant at, String tenant, String plan, String limit, int thresholdPercent, long used,
                     long capacity, Instant periodStart, Instant periodEnd) implements QuotaEvent {
        public static final String TYPE = "near_limit";

        /** Checks the tenant, and that a period has both ends or none. */
        public NearLimit {
            Objects.requireNonNull(tenant, "tenant");
            if ((periodStart == null) != (periodEnd == null)) {
                throw new IllegalArgumentException("a period needs both its start and its end");
            }
        }

        /** The event of a bandwidth (no period), as before calendar quotas raised it. */
        public NearLimit(Instant at, String tenant, String plan, String limit, int thresholdPercent, long used,
                         long capacity) {
            this(at, tenant, plan, limit, thresholdPercent, used, capacity, null, null);
        }

        /** True if {@link #limit()} names a calendar quota (the event carries its period). */
        public boolean quota() {
            return periodStart != null;
        }

        @Override
        public String type() {
            return TYPE;
        }
    }

    /**
     * A tenant's first refusal since it last recovered (or ever), raised by each instance that refused it;
     * or, for a calendar quota ({@code quota} not null), the quota used up: raised once per tenant, quota and
     * period across all instances sharing a store, carrying the period.
     *
     * @param reason      what refused it: {@code tenant_rate}, {@code global_rate}, {@code guest_rate},
     *                    {@code concurrency}, {@code quota}...
     * @param quota       the calendar quota used up, or null for a refusal by anything else
     * @param periodStart the quota's current period: when it began; null without a quota
     * @param periodEnd   when that period ends and the quota is whole again; null without a quota
     */
    record Exhausted(Instant at, String tenant, String plan, String reason, String quota, Instant periodStart,
                     Instant periodEnd) implements QuotaEvent {
        public static final String TYPE = "exhausted";

        /** Checks that a quota comes with its period, and anything else without one. */
        public Exhausted {
            if ((quota == null) != (periodStart == null) || (periodStart == null) != (periodEnd == null)) {
                throw new IllegalArgumentException("a quota needs its period's start and end, and only a quota has one");
            }
        }

        /** The event of a refusal by something other than a calendar quota (no quota, no period). */
        public Exhausted(Instant at, String tenant, String plan, String reason) {
            this(at, tenant, plan, reason, null, null, null);
        }

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
