package io.quotagate.filter.internal.admission;

import io.quotagate.filter.store.BucketKind;
import io.quotagate.plans.Plan;
import io.quotagate.plans.Plans;
import io.quotagate.plans.TenantSettings;
import io.quotagate.tenant.TenantContract;
import io.quotagate.tenant.TenantDirectory;

import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Decides which plan a (valid) tenant id is on and which bucket table holds its bucket: an assigned
 * tenant (the directory knows it) gets its plan and a {@link BucketKind#TENANT} bucket; an unknown
 * tenant gets the default plan in a {@link BucketKind#GUEST} bucket under {@code unknown: default},
 * or nothing (the caller answers 403) under {@code unknown: reject}, so a made-up id then never
 * creates a bucket at all.
 *
 * <p>A directory that names a plan the plans file does not define is a server misconfiguration: the
 * tenant is treated as unknown and the plan name is logged once.
 *
 * <p>Servlet-free and thread-safe.
 */
final class TenantPlans {
    private static final System.Logger LOG = System.getLogger(TenantPlans.class.getName());
    private static final int MAX_LOGGED = 100;

    /**
     * Where a tenant's bucket lives.
     *
     * @param kind {@link BucketKind#TENANT} for an assigned tenant, {@link BucketKind#GUEST} otherwise
     * @param plan the plan that sizes the bucket
     */
    public record Placement(BucketKind kind, String plan) {
        public Placement {
            Objects.requireNonNull(kind, "kind");
            Objects.requireNonNull(plan, "plan");
        }
    }

    private final TenantDirectory directory;
    private final Optional<Placement> unknownPlacement;
    private final Placement anonymous;
    private final Set<String> loggedPlans = ConcurrentHashMap.newKeySet();
    private final Map<String, Optional<Placement>> assignedPlacements;
    /** Where contracts with own limits are noted for admission; null for a policy without buckets. */
    private final ContractLimits contracts;

    /** Placement alone, for a policy without buckets (own limits of contracts are not noted). */
    TenantPlans(Plans plans, TenantDirectory directory) {
        this(plans, directory, null);
    }

    /**
     * @param plans     the defined plans and the {@code unknown} policy
     * @param directory tenant → plan (the plans file's assignments, a cached user directory, or both)
     * @param contracts where a contract with own limits is noted, so admission sizes the bucket by them
     */
    TenantPlans(Plans plans, TenantDirectory directory, ContractLimits contracts) {
        this.contracts = contracts;
        Objects.requireNonNull(plans, "plans");
        this.directory = Objects.requireNonNull(directory, "directory");
        TenantSettings t = plans.tenants();
        // every placement names its plan by the plan's own name string, the key of the policy's maps
        // by plan: their lookups of every request then match by identity before comparing
        Plan defaultPlan = plans.plans().get(t.defaultPlan());
        String defaultName = defaultPlan == null ? t.defaultPlan() : defaultPlan.name();
        Placement unknown = t.unknown() == TenantSettings.Unknown.DEFAULT
                ? new Placement(BucketKind.GUEST, defaultName) : null;
        this.unknownPlacement = Optional.ofNullable(unknown);
        this.anonymous = new Placement(BucketKind.GUEST, defaultName);
        Map<String, Optional<Placement>> placements = new HashMap<>();
        for (Plan plan : plans.plans().values()) {
            placements.put(plan.name(), Optional.of(new Placement(BucketKind.TENANT, plan.name())));
        }
        this.assignedPlacements = Map.copyOf(placements);
    }

    /** The placement of a valid tenant id, or empty if it is unknown and unknown tenants are refused. */
    public Optional<Placement> place(String tenant) {
        Optional<TenantContract> assigned = directory.contractOf(tenant);
        if (assigned.isPresent()) {
            TenantContract contract = assigned.get();
            String plan = contract.plan();
            Optional<Placement> placed = assignedPlacements.get(plan); // built once: no allocation per request
            if (placed != null) {
                if (contracts != null) {
                    if (contract.hasOwnLimits() || contract.hasOwnQuotas() || contract.zone() != null) {
                        contracts.note(tenant, contract); // a zone of its own: its plan's quotas counted in it
                    } else if (!contracts.isEmpty()) {
                        contracts.forget(tenant);
                    }
                }
                return placed;
            }
            if (loggedPlans.size() < MAX_LOGGED && loggedPlans.add(plan)) {
                LOG.log(System.Logger.Level.WARNING, "tenant directory names plan ''{0}'', which the plans file "
                        + "does not define; such tenants are treated as unknown", plan);
            }
        }
        return unknownPlacement;
    }

    /**
     * The placement of a tenant the directory cannot place now, under {@code tenants.directory.unavailable:
     * default}: the default plan, in the guest table, as an unknown tenant under {@code unknown: default}.
     */
    public Placement unavailable() {
        return anonymous;
    }

    /** The placement of an anonymous client: the default plan, in the guest table. */
    public Placement anonymous() {
        return anonymous;
    }
}
