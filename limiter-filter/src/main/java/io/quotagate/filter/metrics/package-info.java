/**
 * API: the filter's meters ({@link io.quotagate.filter.metrics.QuotaMeterBinder} for Micrometer) and the
 * read-only request counters they are made of ({@link io.quotagate.filter.metrics.StatisticsView}).
 */
package io.quotagate.filter.metrics;
