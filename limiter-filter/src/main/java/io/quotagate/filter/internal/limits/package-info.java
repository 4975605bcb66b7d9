/**
 * Not API: the limits in force: the plans file, the shared record and the runtime changes, put in force
 * together. Public only so that the filter's own packages and the engine benchmarks of load-tests reach
 * it; any release may change or remove it. Applications use {@code io.quotagate.filter} and its {@code
 * status}, {@code metrics} and {@code signals} packages; a store implements {@code
 * io.quotagate.filter.store}.
 */
package io.quotagate.filter.internal.limits;
