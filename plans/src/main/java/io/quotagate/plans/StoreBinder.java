package io.quotagate.plans;

import io.quotagate.plans.YamlNode.Mapping;

import java.time.Duration;
import java.util.Map;
import java.util.Set;

/** {@code store:}: local (the default, which takes no other key) or Redis with its settings. */
final class StoreBinder {
    private final FieldCursor in;

    StoreBinder(FieldCursor in) {
        this.in = in;
    }

    StoreSettings store(YamlNode node) {
        if (node == null) return StoreSettings.local();
        Mapping m = in.mapping(node, "store", Set.of("type", "uri", "prefix", "timeout", "max-retries", "batching",
                "on-failure", "heartbeat", "instance-ttl", "local-allowance"));
        StoreSettings.Type type = in.choice(m, "type", "store.type", StoreSettings.Type.LOCAL,
                StoreSettings.Type.class);
        if (type == StoreSettings.Type.LOCAL) {
            for (Map.Entry<String, Integer> key : m.keyLines().entrySet()) {
                if (!key.getKey().equals("type")) {
                    throw in.error(key.getValue(), "store." + key.getKey(), "only for a store of type: redis");
                }
            }
            return StoreSettings.local();
        }
        YamlNode uriNode = in.required(m, "uri", "store");
        String uri = in.string(uriNode, "store.uri");
        if (!StoreSettings.isRedisUri(uri)) {
            throw in.error(uriNode.line(), "store.uri", "expected redis://host:port (or rediss://, redis-sentinel://,"
                    + " redis-cluster://host1:port1,host2:port2), was '" + StoreSettings.redact(uri) + "'");
        }
        StoreSettings.Builder s = StoreSettings.from(StoreSettings.redis(uri));
        YamlNode prefixNode = m.entries().get("prefix");
        if (prefixNode != null) s.prefix(in.matching(prefixNode, "store.prefix", StoreSettings.PREFIX));
        YamlNode timeoutNode = m.entries().get("timeout");
        if (timeoutNode != null) s.timeout(in.period(timeoutNode, "store.timeout"));
        YamlNode retriesNode = m.entries().get("max-retries");
        if (retriesNode != null) s.maxRetries(in.positiveInt(retriesNode, "store.max-retries", 100));
        boolean batching = in.bool(m, "batching", "store.batching", true);
        s.batching(batching);
        s.onFailure(in.choice(m, "on-failure", "store.on-failure", StoreSettings.OnFailure.OPEN,
                StoreSettings.OnFailure.class));
        YamlNode heartbeatNode = m.entries().get("heartbeat");
        Duration heartbeat = heartbeatNode == null ? StoreSettings.DEFAULT_HEARTBEAT
                : in.period(heartbeatNode, "store.heartbeat");
        YamlNode ttlNode = m.entries().get("instance-ttl");
        Duration ttl = ttlNode == null ? StoreSettings.DEFAULT_INSTANCE_TTL : in.period(ttlNode, "store.instance-ttl");
        if (ttl.compareTo(heartbeat) <= 0) {
            throw in.error(ttlNode != null ? ttlNode.line() : m.line(), "store.instance-ttl",
                    "must be longer than store.heartbeat (" + heartbeat + "), was " + ttl);
        }
        s.heartbeat(heartbeat).instanceTtl(ttl);
        YamlNode allowanceNode = m.entries().get("local-allowance");
        if (allowanceNode != null) {
            StoreSettings.LocalAllowance allowance = localAllowance(allowanceNode);
            if (!batching) {
                throw in.error(m.entries().get("batching").line(), "store.batching",
                        "cannot be false with store.local-allowance (which always batches)");
            }
            s.localAllowance(allowance);
        }
        return s.build();
    }

    private StoreSettings.LocalAllowance localAllowance(YamlNode node) {
        String field = "store.local-allowance";
        Mapping m = in.mapping(node, field, Set.of("units", "max-delay"));
        long units = in.positive(in.required(m, "units", field), field + ".units", Integer.MAX_VALUE);
        YamlNode delayNode = in.required(m, "max-delay", field);
        Duration maxDelay = in.period(delayNode, field + ".max-delay");
        // period() already refused 0 (and below), so only "above 1m" is left to check here
        if (maxDelay.compareTo(Duration.ofMinutes(1)) > 0) {
            throw in.error(delayNode.line(), field + ".max-delay", "must be > 0 and at most 1m, was " + maxDelay);
        }
        return new StoreSettings.LocalAllowance(units, maxDelay);
    }
}
