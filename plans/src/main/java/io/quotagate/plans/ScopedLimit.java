package io.quotagate.plans;

import java.util.List;
import java.util.Objects;

/**
 * Bandwidths of a bucket a route has of its own, beside the plan's, and what one such bucket is kept
 * for: each tenant, each user inside a tenant, or each client address.
 *
 * @param per    whose bucket it is
 * @param limits its bandwidths, at least one; a request must fit all of them
 */
public record ScopedLimit(Scope per, List<Bandwidth> limits) {
    /** Whose bucket a {@link ScopedLimit} is: part of its key, and the {@code scope} of its refusals. */
    public enum Scope {
        /** One bucket per tenant (an anonymous client: per address). */
        TENANT("tenant"),
        /** One bucket per user inside a tenant ({@code tenants.users}); requests without a user share one. */
        USER("user"),
        /** One bucket per client address (behind {@code tenants.trusted-proxies}), whatever the tenant. */
        CLIENT_ADDRESS("client-address");

        private final String text;

        Scope(String text) {
            this.text = text;
        }

        /** As written in a plans file, e.g. {@code client-address}. */
        @Override
        public String toString() {
            return text;
        }
    }

    public ScopedLimit {
        Objects.requireNonNull(per, "per");
        limits = List.copyOf(limits);
        if (limits.isEmpty()) throw new IllegalArgumentException("a scoped limit needs at least one bandwidth");
    }
}
