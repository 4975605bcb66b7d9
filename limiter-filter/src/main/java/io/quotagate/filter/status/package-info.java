/**
 * API: read-only views of what a filter enforces and has counted: a tenant's bandwidths
 * ({@link io.quotagate.filter.status.BandwidthStatus}) and calendar quotas, the concurrency groups, the
 * limits in force and where they come from, and why a request was refused. Values and snapshots: reading
 * them changes nothing.
 */
package io.quotagate.filter.status;
