/**
 * Not API: the quota-event engine: checks, the dispatcher. Public only so that the filter's
 * own packages and the engine benchmarks of load-tests reach it; any release may change or remove it.
 * Applications use {@code io.quotagate.filter} and its {@code status}, {@code metrics} and {@code signals}
 * packages; a store implements {@code io.quotagate.filter.store}.
 */
package io.quotagate.filter.internal.signals;
