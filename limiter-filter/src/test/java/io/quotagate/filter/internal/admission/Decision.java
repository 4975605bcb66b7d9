package io.quotagate.filter.internal.admission;

import io.quotagate.filter.status.Reason;
import io.quotagate.filter.status.RetryAfter;
import io.quotagate.filter.store.BucketKind;

import java.util.Objects;

/**
 * Test-only: the bucket arithmetic's answer as a plain value ({@link Decisions#admit}), so tests of the
 * admission core compare what was charged or why it refused without a route, a permit or a servlet. The
 * filter itself decides through {@link Gate#decide}, whose one result type is {@link Outcome}.
 */
public sealed interface Decision permits Decision.Admitted, Decision.Rejected {

    /**
     * The request may run. It says which buckets were charged and how much, which is all that
     * {@link Decisions#reconcile} needs to settle the request's actual cost afterwards.
     *
     * @param kind            the table of the tenant's bucket ({@code TENANT} or {@code GUEST})
     * @param tenant          the tenant key whose bucket was charged
     * @param plan            the plan that sized the tenant's bucket
     * @param charged         units taken from the tenant's bucket (and the global one when
     *                        {@code globalCharged}); 0 when nothing was taken (shadow mode)
     * @param globalCharged   true if the same units were also taken from the global quota
     * @param guestsCharged   true if the same units were also taken from the guest pool
     * @param shadowRejection in shadow mode, the refusal the request escaped (nothing was charged);
     *                        null when the limits admitted it
     * @param quotaNanos      the wall time (epoch nanoseconds) at which {@code charged} was also counted
     *                        in the plan's calendar quotas, so it settles in those periods; 0 if it was not
     */
    record Admitted(BucketKind kind, String tenant, String plan, long charged, boolean globalCharged,
                    boolean guestsCharged, Rejected shadowRejection, long quotaNanos) implements Decision {
        public Admitted {
            Objects.requireNonNull(kind, "kind");
            Objects.requireNonNull(tenant, "tenant");
            Objects.requireNonNull(plan, "plan");
            if (charged < 0) throw new IllegalArgumentException("charged must be >= 0, was " + charged);
        }

        /** A request whose units were not counted in calendar quotas. */
        public Admitted(BucketKind kind, String tenant, String plan, long charged, boolean globalCharged,
                        boolean guestsCharged, Rejected shadowRejection) {
            this(kind, tenant, plan, charged, globalCharged, guestsCharged, shadowRejection, 0);
        }

        /** True if the charge was also counted in the plan's calendar quotas. */
        public boolean quotasCharged() {
            return quotaNanos != 0;
        }

        /** True if the limits would have refused this request and only shadow mode let it through. */
        public boolean shadowed() {
            return shadowRejection != null;
        }
    }

    /**
     * The request is refused and nothing was taken from any bucket.
     *
     * @param reason      which bucket refused (the one with the longest wait)
     * @param nanosToWait how long until the same request would be admitted, if nothing else consumed
     * @param limit       the name of the calendar quota that refused ({@link Reason#QUOTA}), else null
     */
    record Rejected(Reason reason, long nanosToWait, String limit) implements Decision {
        public Rejected {
            Objects.requireNonNull(reason, "reason");
        }

        /** A refusal by a bucket or a concurrency cap. */
        public Rejected(Reason reason, long nanosToWait) {
            this(reason, nanosToWait, null);
        }

        /** {@code Retry-After} in whole seconds: {@link #nanosToWait} rounded up, at least 1. */
        public long retryAfterSeconds() {
            return RetryAfter.seconds(nanosToWait);
        }
    }
}
