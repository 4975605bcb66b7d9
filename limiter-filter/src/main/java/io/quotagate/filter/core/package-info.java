/**
 * The bottom of limiter-filter: the clock and the bucket kinds, which every other package uses and
 * which use nothing of the others (so {@code store}, {@code admission}, {@code metrics} and
 * {@code servlet} form no cycle).
 */
package io.quotagate.filter.core;
