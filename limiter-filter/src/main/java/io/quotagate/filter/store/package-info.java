/**
 * SPI: where a store of buckets plugs in ({@link io.quotagate.filter.store.BucketStore}, found for a plans
 * file's {@code store.type} through {@link io.quotagate.filter.store.BucketStoreProvider}), with the local
 * store (package-private) and the types a store speaks: buckets, their limits, a take's
 * {@link io.quotagate.filter.store.Probe}, calendar-quota counters, the shared limits record, health and the
 * clock. limiter-redis implements it; an application needs it only to choose or write a store.
 */
package io.quotagate.filter.store;
