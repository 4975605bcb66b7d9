package io.quotagate.filter.internal.admission;

import io.quotagate.filter.status.BandwidthStatus;
import io.quotagate.filter.status.QuotaUsage;
import io.quotagate.filter.status.Reason;
import io.quotagate.filter.store.BucketKind;
import io.quotagate.filter.store.BucketStore;
import io.quotagate.plans.Plans;

import java.util.List;

/**
 * The admission core driven as the filter drives it, one policy in force at a time: each call is
 * decided by the policy in force, {@link #apply} builds the next one from the last. For tests of the
 * bucket arithmetic that need no routes or requests; public, in the core's package, so tests of the
 * stores and metrics can drive the (package-private) {@link Admission} too.
 */
public final class Decisions {
    private final Admission admission;
    private Policy policy;

    public Decisions(Plans plans, BucketStore store) {
        this(plans, store, java.time.Clock.systemUTC());
    }

    /** With the wall clock of the calendar quotas. */
    public Decisions(Plans plans, BucketStore store, java.time.Clock wall) {
        this.admission = new Admission(store, wall);
        this.policy = admission.policy(plans);
    }

    public List<QuotaUsage> quotaUsage(String tenant, String plan) {
        return policy.readout().quotaUsage(BucketKind.TENANT, tenant, plan);
    }

    public Policy policy() {
        return policy;
    }

    public void apply(Plans plans) {
        policy = admission.policy(plans, io.quotagate.tenant.TenantDirectory.of(plans.tenants().assignments()), policy);
    }

    /** Charges an assigned tenant's request of {@code cost} under the policy in force. */
    public Decision admit(String tenant, String plan, long cost) {
        return admit(BucketKind.TENANT, tenant, plan, cost);
    }

    /** As {@link #admit(String, String, long)}, in the {@code kind} table ({@code TENANT} or {@code GUEST}). */
    public Decision admit(BucketKind kind, String key, String plan, long cost) {
        return admit(admission, policy, kind, key, plan, cost);
    }

    /** The charge of {@code cost} in {@code admission} under {@code policy}, as a plain value. */
    static Decision admit(Admission admission, Policy policy, BucketKind kind, String key, String plan, long cost) {
        Charged charged = admission.charge(policy, io.quotagate.filter.internal.route.Route.DEFAULT, null, null, kind,
                key, plan, cost, null, 0);
        return charged instanceof Rejection refusal ? rejected(refusal) : admitted((Ticket) charged);
    }

    /** Settles {@code admitted}'s actual cost under the policy in force. */
    public long reconcile(Decision.Admitted admitted, long actualCost) {
        return reconcile(policy, admitted, actualCost);
    }

    /** Settles {@code admitted}'s actual cost by {@code admittedBy}, the policy that admitted it. */
    public long reconcile(Policy admittedBy, Decision.Admitted admitted, long actualCost) {
        Ticket t = Ticket.admitted(admittedBy, io.quotagate.filter.internal.route.Route.DEFAULT, null, null,
                admitted.kind(), admitted.tenant(), admitted.plan(), admitted.charged(), admitted.globalCharged(),
                admitted.guestsCharged(), admitted.quotaNanos(), admitted.shadowRejection() == null ? null
                        : new Rejection(admitted.shadowRejection().reason(), admitted.shadowRejection().nanosToWait(),
                        admitted.shadowRejection().limit()), null, 0);
        return admission.reconcile(admittedBy, t, admitted.charged(), actualCost);
    }

    private static Decision.Rejected rejected(Rejection r) {
        return new Decision.Rejected(r.reason(), r.nanosToWait(), r.limit());
    }

    private static Decision.Admitted admitted(Ticket t) {
        Rejection shadow = t.rejection();
        return new Decision.Admitted(t.kind(), t.key(), t.plan(), t.charged(), t.globalCharged(), t.guestsCharged(),
                shadow == null ? null : rejected(shadow), t.quotaNanos());
    }

    public long maxCost(String plan) {
        return policy.readout().maxCost(plan);
    }

    public long maxCost(BucketKind kind, String key, String plan) {
        return policy.readout().maxCost(kind, key, plan);
    }

    public boolean publishes(String plan) {
        return policy.readout().publishes(plan);
    }

    public List<BandwidthStatus> status(String tenant, String plan) {
        return policy.readout().status(tenant, plan);
    }

    public List<BandwidthStatus> status(BucketKind kind, String tenant, String plan) {
        return policy.readout().status(kind, tenant, plan);
    }

    public boolean hasGlobalQuota() {
        return policy.readout().hasGlobalQuota();
    }

    public long globalAvailableTokens() {
        return policy.readout().globalAvailableTokens();
    }

    public long globalCapacity() {
        return policy.readout().globalCapacity();
    }

    public long shadowRejections(Reason reason) {
        return admission.shadowRejections(reason);
    }
}
