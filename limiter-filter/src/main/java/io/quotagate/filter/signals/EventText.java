package io.quotagate.filter.signals;

import java.util.LinkedHashMap;
import java.util.Map;

/** An event's fields, as a logfmt line and as a JSON object (the webhook's body). */
final class EventText {
    private EventText() {
    }

    /** The fields in a fixed order: {@code type}, {@code at}, then the event's own. Values: String, Number or Boolean. */
    static Map<String, Object> fields(QuotaEvent event) {
        Map<String, Object> f = new LinkedHashMap<>();
        f.put("type", event.type());
        f.put("at", event.at().toString());
        if (event instanceof QuotaEvent.NearLimit e) {
            f.put("tenant", e.tenant());
            f.put("plan", e.plan());
            f.put("limit", e.limit());
            f.put("threshold", e.thresholdPercent());
            f.put("used", e.used());
            f.put("capacity", e.capacity());
            if (e.quota()) period(f, e.periodStart(), e.periodEnd());
        } else if (event instanceof QuotaEvent.Exhausted e) {
            f.put("tenant", e.tenant());
            f.put("plan", e.plan());
            f.put("reason", e.reason());
            if (e.quota() != null) {
                f.put("quota", e.quota());
                period(f, e.periodStart(), e.periodEnd());
            }
        } else if (event instanceof QuotaEvent.ThrottledForLong e) {
            f.put("tenant", e.tenant());
            f.put("plan", e.plan());
            f.put("refusedMinutes", e.refusedMinutes());
            f.put("minutes", e.minutes());
            f.put("withinMinutes", e.within().toMinutes());
        } else if (event instanceof QuotaEvent.Recovered e) {
            f.put("tenant", e.tenant());
            f.put("plan", e.plan());
            f.put("refusedSeconds", e.refusedFor().toSeconds());
            f.put("refusals", e.refusals());
        } else if (event instanceof QuotaEvent.GlobalNearLimit e) {
            f.put("threshold", e.thresholdPercent());
            f.put("used", e.used());
            f.put("capacity", e.capacity());
        } else if (event instanceof QuotaEvent.StoreFallback e) {
            f.put("active", e.active());
        }
        return f;
    }

    /** A calendar quota's period: {@code periodStart}, {@code periodEnd} (ISO-8601 instants). */
    private static void period(Map<String, Object> f, java.time.Instant start, java.time.Instant end) {
        f.put("periodStart", start.toString());
        f.put("periodEnd", end.toString());
    }

    static String logfmt(QuotaEvent event) {
        StringBuilder b = new StringBuilder("quotagate event=").append(event.type());
        fields(event).forEach((k, v) -> {
            if (k.equals("type") || k.equals("at")) return;
            b.append(' ').append(k).append('=').append(v);
        });
        return b.toString();
    }

    static String json(QuotaEvent event, String instance) {
        StringBuilder b = new StringBuilder(192).append('{');
        Map<String, Object> f = fields(event);
        f.put("instance", java.util.Objects.requireNonNull(instance, "instance"));
        boolean first = true;
        for (Map.Entry<String, Object> e : f.entrySet()) {
            if (!first) b.append(',');
            first = false;
            quote(b, e.getKey());
            b.append(':');
            Object v = e.getValue();
            if (v instanceof String s) quote(b, s);
            else b.append(v);
        }
        return b.append('}').toString();
    }

    private static void quote(StringBuilder b, String s) {
        b.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '"' || c == '\\') b.append('\\').append(c);
            else if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
            else b.append(c);
        }
        b.append('"');
    }
}
