package io.quotagate.plans;

import io.quotagate.plans.YamlNode.Mapping;
import io.quotagate.plans.YamlNode.Scalar;
import io.quotagate.plans.YamlNode.Sequence;

import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code signals:}: near-limit thresholds (a default, and per plan and limit), the calendar quotas'
 * ({@code quota-near-limit}: lists, a default and per plan and quota), the global quota's,
 * throttled-for-long, recovery, the event queue and the webhook.
 */
final class SignalBinder {
    private static final Pattern PERCENT = Pattern.compile("(\\d{1,3})%?");
    private static final Pattern ENV = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");

    private final FieldCursor in;

    SignalBinder(FieldCursor in) {
        this.in = in;
    }

    SignalSettings signals(YamlNode node, Map<String, Plan> plans) {
        if (node == null) return SignalSettings.DEFAULTS;
        Mapping m = in.mapping(node, "signals", Set.of("near-limit", "quota-near-limit", "global-near-limit",
                "throttled-for-long", "recovered-after", "queue", "webhook"));
        SignalSettings.Builder b = SignalSettings.builder();
        YamlNode near = m.entries().get("near-limit");
        if (near instanceof Mapping nm) {
            nearLimits(nm, plans, b);
        } else if (near != null) {
            b.nearLimit(percent(near, "signals.near-limit"));
        }
        YamlNode quotaNear = m.entries().get("quota-near-limit");
        if (quotaNear instanceof Mapping qm) {
            quotaNearLimits(qm, plans, b);
        } else if (quotaNear != null) {
            b.quotaNearLimit(thresholds(quotaNear, "signals.quota-near-limit"));
        }
        YamlNode global = m.entries().get("global-near-limit");
        if (global != null) b.globalNearLimit(percent(global, "signals.global-near-limit"));
        YamlNode throttled = m.entries().get("throttled-for-long");
        if (throttled != null) {
            String f = "signals.throttled-for-long";
            Mapping tm = in.mapping(throttled, f, Set.of("minutes", "within"));
            YamlNode minutes = in.required(tm, "minutes", f);
            YamlNode within = in.required(tm, "within", f);
            int n = in.positiveInt(minutes, f + ".minutes", 1440);
            Duration w = in.period(within, f + ".within");
            try {
                b.throttledForLong(n, w);
            } catch (IllegalArgumentException e) {
                throw in.error(within.line(), f + ".within", e.getMessage());
            }
        }
        YamlNode recovered = m.entries().get("recovered-after");
        if (recovered != null) {
            Duration d = in.period(recovered, "signals.recovered-after");
            try {
                b.recoveredAfter(d);
            } catch (IllegalArgumentException e) {
                throw in.error(recovered.line(), "signals.recovered-after", e.getMessage());
            }
        }
        YamlNode queue = m.entries().get("queue");
        if (queue != null) b.queue(in.positiveInt(queue, "signals.queue", 1_000_000));
        YamlNode webhook = m.entries().get("webhook");
        if (webhook != null) b.webhook(webhook(webhook));
        return b.build();
    }

    /** {@code near-limit: { default: 80%, plans: { pro: { burst: 75%, daily: 90% } } }}. */
    private void nearLimits(Mapping nm, Map<String, Plan> plans, SignalSettings.Builder b) {
        String f = "signals.near-limit";
        in.mapping(nm, f, Set.of("default", "plans"));
        YamlNode def = nm.entries().get("default");
        if (def != null) b.nearLimit(percent(def, f + ".default"));
        YamlNode byPlan = nm.entries().get("plans");
        if (byPlan == null) return;
        Mapping pm = in.mapping(byPlan, f + ".plans", null);
        pm.entries().forEach((plan, limitsNode) -> {
            String pf = f + ".plans." + plan;
            Plan p = plans.get(plan);
            if (p == null) {
                throw in.error(pm.keyLines().get(plan), pf, "no such plan, defined: " + plans.keySet());
            }
            Mapping lm = in.mapping(limitsNode, pf, null);
            lm.entries().forEach((limit, v) -> {
                if (p.limits().stream().noneMatch(bw -> bw.name().equals(limit))) {
                    throw in.error(lm.keyLines().get(limit), pf + "." + limit, "plan " + plan + " has no limit '"
                            + limit + "', its limits: " + p.limits().stream().map(Bandwidth::name).toList());
                }
                b.nearLimit(plan, limit, percent(v, pf + "." + limit));
            });
        });
    }

    /** {@code quota-near-limit: { default: [80%, 90%], plans: { pro: { monthly: [75%, 95%] } } }}. */
    private void quotaNearLimits(Mapping qm, Map<String, Plan> plans, SignalSettings.Builder b) {
        String f = "signals.quota-near-limit";
        in.mapping(qm, f, Set.of("default", "plans"));
        YamlNode def = qm.entries().get("default");
        if (def != null) b.quotaNearLimit(thresholds(def, f + ".default"));
        YamlNode byPlan = qm.entries().get("plans");
        if (byPlan == null) return;
        Mapping pm = in.mapping(byPlan, f + ".plans", null);
        pm.entries().forEach((plan, quotasNode) -> {
            String pf = f + ".plans." + plan;
            Plan p = plans.get(plan);
            if (p == null) {
                throw in.error(pm.keyLines().get(plan), pf, "no such plan, defined: " + plans.keySet());
            }
            Mapping lm = in.mapping(quotasNode, pf, null);
            lm.entries().forEach((quota, v) -> {
                if (p.quotas().stream().noneMatch(q -> q.name().equals(quota))) {
                    throw in.error(lm.keyLines().get(quota), pf + "." + quota, "plan " + plan + " has no quota '"
                            + quota + "', its quotas: " + p.quotas().stream().map(CalendarQuota::name).toList());
                }
                b.quotaNearLimit(plan, quota, thresholds(v, pf + "." + quota));
            });
        });
    }

    /** {@code 80%}, or a list {@code [80%, 90%]} ({@code []}: none): each 1 % to 100 %, none twice. */
    private List<Integer> thresholds(YamlNode node, String field) {
        if (!(node instanceof Sequence seq)) return List.of(percent(node, field));
        List<Integer> out = new ArrayList<>(seq.items().size());
        for (YamlNode item : seq.items()) {
            int v = percent(item, field);
            if (out.contains(v)) throw in.error(item.line(), field, v + "% is listed twice");
            out.add(v);
        }
        return out;
    }

    /** {@code 80%} or {@code 80}: percent of the capacity used, 1 to 100. */
    private int percent(YamlNode node, String field) {
        String text = node instanceof Scalar s && s.type() != Scalar.Type.NULL ? s.text() : null;
        Matcher m = text == null ? null : PERCENT.matcher(text);
        if (m == null || !m.matches()) {
            throw in.error(node.line(), field, "expected a percentage such as 80%, found "
                    + (text == null ? node.kind() : "'" + text + "'"));
        }
        int v = Integer.parseInt(m.group(1));
        if (v < 1 || v > 100) throw in.error(node.line(), field, "must be 1% to 100%, was '" + text + "'");
        return v;
    }

    private SignalSettings.Webhook webhook(YamlNode node) {
        String f = "signals.webhook";
        Mapping m = in.mapping(node, f, Set.of("url", "secret-env", "secret-file", "timeout", "retries", "queue"));
        YamlNode urlNode = in.required(m, "url", f);
        String text = in.string(urlNode, f + ".url");
        URI url;
        try {
            url = new URI(text);
        } catch (URISyntaxException e) {
            throw in.error(urlNode.line(), f + ".url", "not a URL: '" + text + "'");
        }
        if (url.getHost() == null || !("http".equals(url.getScheme()) || "https".equals(url.getScheme()))) {
            throw in.error(urlNode.line(), f + ".url", "expected an http:// or https:// URL, was '" + text + "'");
        }
        YamlNode envNode = m.entries().get("secret-env");
        YamlNode fileNode = m.entries().get("secret-file");
        if ((envNode == null) == (fileNode == null)) {
            throw in.error(m.line(), f + ".secret-env", "exactly one of secret-env and secret-file is required "
                    + "(the secret that signs each body; never written in the plans file)");
        }
        String env = envNode == null ? null : in.matching(envNode, f + ".secret-env", ENV);
        Path file = fileNode == null ? null : Path.of(in.string(fileNode, f + ".secret-file"));
        YamlNode timeoutNode = m.entries().get("timeout");
        Duration timeout = timeoutNode == null ? Duration.ofSeconds(2) : in.period(timeoutNode, f + ".timeout");
        if (timeout.compareTo(Duration.ofMinutes(1)) > 0) {
            throw in.error(timeoutNode.line(), f + ".timeout", "must be at most 1m, was " + timeout);
        }
        YamlNode retriesNode = m.entries().get("retries");
        int retries = 3;
        if (retriesNode != null) {
            retries = retriesNode instanceof Scalar s && "0".equals(s.text()) ? 0
                    : in.positiveInt(retriesNode, f + ".retries", 10);
        }
        YamlNode queueNode = m.entries().get("queue");
        int queue = queueNode == null ? 1000 : in.positiveInt(queueNode, f + ".queue", 1_000_000);
        return new SignalSettings.Webhook(url, env, file, timeout, retries, queue, in.source(), m.line());
    }
}
