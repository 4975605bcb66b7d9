package io.quotagate.tenant;

import java.util.Map;
import java.util.Optional;

/**
 * Tells which plan a tenant is on. The plans file's {@code tenants.assignments} is one directory;
 * an application may supply its own (a database lookup, cached).
 */
@FunctionalInterface
public interface TenantDirectory {

    /** The plan name assigned to this (valid) tenant id, or empty if the directory does not know it. */
    Optional<String> planOf(String tenantId);

    /** A fixed directory. */
    static TenantDirectory of(Map<String, String> assignments) {
        Map<String, String> copy = Map.copyOf(assignments);
        return tenant -> Optional.ofNullable(copy.get(tenant));
    }
}
