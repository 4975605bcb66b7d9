package io.quotagate.filter.metrics;

import io.quotagate.filter.status.ConcurrencyView;
import io.quotagate.filter.status.LimitsStatus;
import io.quotagate.filter.status.QuotaUsage;
import io.quotagate.filter.status.Reason;
import io.quotagate.filter.store.BucketStore;

import java.util.List;
import java.util.Set;

/**
 * What a quota filter exposes for monitoring; {@code QuotaControl} extends it, so
 * {@code new QuotaMeterBinder(filter.control())} binds everything.
 */
public interface QuotaSource {
    /** Request counters by tenant (bounded), plan, route, outcome and reason; queue waits. Read-only. */
    StatisticsView statistics();

    /** In-flight and queued counts per concurrency group and tenant. */
    ConcurrencyView concurrency();

    /** The capacity of the global quota in force (its smallest bandwidth), or 0 if there is none. */
    long globalQuotaCapacity();

    /** The plans in force, by name. */
    default Set<String> planNames() {
        return Set.of();
    }

    /** The smallest capacity in force of a plan's buckets, or NaN if the plan is not in force. */
    default double planCapacity(String plan) {
        return Double.NaN;
    }

    /** The names of a plan's calendar quotas in force, in plan order; empty for none or an unknown plan. */
    default List<String> quotaNames(String plan) {
        return List.of();
    }

    /** The limit in force of a plan's calendar quota, or NaN if the plan or the quota is not in force. */
    default double quotaLimit(String plan, String quota) {
        return Double.NaN;
    }

    /**
     * The use of each calendar quota of a tenant in the current period; empty if its plan has none or
     * no assignment or directory knows it.
     *
     * @throws IllegalArgumentException if {@code tenant} is not a valid tenant id
     */
    default List<QuotaUsage> tenantQuotas(String tenant) {
        return List.of();
    }

    /** Units available now in the global quota (the smallest over its bandwidths), or 0 if there is none. */
    long globalQuotaAvailable();

    /** Requests that shadow mode let through although the limits would have refused them for {@code reason}. */
    long shadowRejections(Reason reason);

    /**
     * Where the buckets live; a shared store (one with a {@link BucketStore#health()}) adds the
     * {@code quotagate.store.*} meters. Null: none to report.
     */
    default BucketStore store() {
        return null;
    }

    /**
     * Where the limits in force come from (the shared record's version, whether this instance's plans
     * file agrees, records refused); adds the {@code quotagate.limits.*} meters. Null: none to report.
     */
    default LimitsStatus limitsStatus() {
        return null;
    }

    /** The filter's quota events ({@code quotagate.events{type}}, {@code quotagate.events.dropped}). Null: none to report. */
    default io.quotagate.filter.signals.SignalCounts signals() {
        return null;
    }
}
