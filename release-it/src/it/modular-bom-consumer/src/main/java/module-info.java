/** A user's modular application: each quotagate module by the name its jar's manifest gives it. */
module app {
    requires io.quotagate.plans;
    requires io.quotagate.tenant;
    requires io.quotagate.filter;
    requires io.quotagate.filter.redis;
    requires io.quotagate.spring;
    requires io.quotagate.client;
    requires jakarta.servlet;

    // the Redis store is found through ServiceLoader; on the module path too
    uses io.quotagate.filter.store.BucketStoreProvider;
}
