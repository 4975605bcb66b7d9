package io.quotagate.plans;

import io.quotagate.plans.YamlNode.Mapping;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;

import static io.quotagate.plans.FieldCursor.NAME;

/** {@code groups:}: the caps and queues a concurrency group has across all tenants. */
final class GroupBinder {
    /** The largest {@code groups.<g>.queue.size}: each waiting request holds a server thread. */
    static final int MAX_QUEUE_SIZE = 10_000;
    /** The longest {@code groups.<g>.queue.max-wait}. */
    static final Duration MAX_QUEUE_WAIT = Duration.ofMinutes(1);

    private final FieldCursor in;

    GroupBinder(FieldCursor in) {
        this.in = in;
    }

    /** The group settings by name; {@code used}: the groups routes have, the only ones that may be set. */
    Map<String, GroupSettings> groups(YamlNode node, Set<String> used) {
        if (node == null) return Map.of();
        Mapping gm = in.mapping(node, "groups", null);
        Map<String, GroupSettings> out = new LinkedHashMap<>();
        gm.entries().forEach((name, v) -> {
            String f = "groups." + name;
            int line = gm.keyLines().get(name);
            if (!NAME.matcher(name).matches()) throw in.error(line, f, "a group name must match " + NAME.pattern());
            RouteBinder.requireUsedGroup(in, used, name, line, f);
            Mapping m = in.mapping(v, f, Set.of("max-inflight", "queue", "adaptive"));
            YamlNode maxNode = m.entries().get("max-inflight");
            OptionalInt maxInflight = maxNode == null ? OptionalInt.empty()
                    : OptionalInt.of(in.positiveInt(maxNode, f + ".max-inflight", Integer.MAX_VALUE));
            YamlNode qn = m.entries().get("queue");
            Optional<GroupSettings.Queue> queue = qn == null ? Optional.empty() : Optional.of(queue(qn, f + ".queue"));
            YamlNode an = m.entries().get("adaptive");
            Optional<GroupSettings.Adaptive> adaptive = Optional.empty();
            if (an != null) {
                if (maxNode != null) {
                    throw in.error(an.line(), f + ".adaptive", "cannot be set with max-inflight: adaptive.max is the"
                            + " group's ceiling (remove max-inflight)");
                }
                adaptive = Optional.of(adaptive(an, f + ".adaptive"));
            }
            out.put(name, new GroupSettings(name, maxInflight, queue, adaptive));
        });
        return out;
    }

    private GroupSettings.Queue queue(YamlNode node, String field) {
        Mapping q = in.mapping(node, field, Set.of("size", "max-wait"));
        int size = in.positiveInt(in.required(q, "size", field), field + ".size", MAX_QUEUE_SIZE);
        YamlNode waitNode = in.required(q, "max-wait", field);
        Duration maxWait = in.period(waitNode, field + ".max-wait");
        if (maxWait.compareTo(MAX_QUEUE_WAIT) > 0) {
            throw in.error(waitNode.line(), field + ".max-wait", "must be <= " + MAX_QUEUE_WAIT.toSeconds()
                    + "s (a waiting request holds a server thread), was " + maxWait);
        }
        return new GroupSettings.Queue(size, maxWait);
    }

    /** {@code groups.<g>.adaptive}: algorithm (default gradient2), initial, min (default 1), max. */
    private GroupSettings.Adaptive adaptive(YamlNode node, String field) {
        Mapping a = in.mapping(node, field, Set.of("algorithm", "initial", "min", "max"));
        GroupSettings.Adaptive.Algorithm algorithm = in.choice(a, "algorithm", field + ".algorithm",
                GroupSettings.Adaptive.Algorithm.GRADIENT2, GroupSettings.Adaptive.Algorithm.class);
        int max = in.positiveInt(in.required(a, "max", field), field + ".max", GroupSettings.Adaptive.MAX_LIMIT);
        YamlNode minNode = a.entries().get("min");
        int min = minNode == null ? 1 : in.positiveInt(minNode, field + ".min", GroupSettings.Adaptive.MAX_LIMIT);
        if (min > max) throw in.error(minNode.line(), field + ".min", "must be <= max (" + max + "), was " + min);
        YamlNode initialNode = in.required(a, "initial", field);
        int initial = in.positiveInt(initialNode, field + ".initial", GroupSettings.Adaptive.MAX_LIMIT);
        if (initial < min) {
            throw in.error(initialNode.line(), field + ".initial", "must be >= min (" + min + "), was " + initial);
        }
        if (initial > max) {
            throw in.error(initialNode.line(), field + ".initial", "must be <= max (" + max + "), was " + initial);
        }
        return new GroupSettings.Adaptive(algorithm, initial, min, max);
    }

    /** Each {@code plans.<p>.concurrency.<group>} must name a group some route has. */
    void checkPlanCapsAreUsed(Mapping top, Set<String> used) {
        if (!(top.entries().get("plans") instanceof Mapping plansNode)) return;
        plansNode.entries().forEach((plan, node) -> {
            if (!(node instanceof Mapping pm) || !(pm.entries().get("concurrency") instanceof Mapping cm)) return;
            cm.keyLines().forEach((group, line) ->
                    RouteBinder.requireUsedGroup(in, used, group, line, "plans." + plan + ".concurrency." + group));
        });
    }
}
