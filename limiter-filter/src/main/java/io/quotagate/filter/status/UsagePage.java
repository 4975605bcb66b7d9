package io.quotagate.filter.status;

import java.util.List;

/**
 * One page of a usage export ({@code QuotaControl.usage}): the tenants whose quota counters the store holds,
 * each exactly once in the whole export, with their use of the current period and the closed periods kept.
 * Ask for the next page with {@link #next()}; {@link #csv} and {@link #json} write a page in the documented
 * formats.
 *
 * @param tenants the tenants of this page
 * @param next    the cursor of the next page, null if this is the last
 */
public record UsagePage(List<TenantUsage> tenants, String next) {

    /** The CSV header: one line per tenant, quota and period. */
    public static final String CSV_HEADER = "tenant,plan,quota,per,limit,period_start,period_end,closed,used";

    /** Copies the tenants. */
    public UsagePage {
        tenants = List.copyOf(tenants);
    }

    /**
     * This page as CSV (RFC 4180, lines ending in CRLF): {@link #CSV_HEADER} first if {@code header}, then one
     * line per tenant, quota and period. Times are ISO-8601 instants in UTC. A cell that a spreadsheet would
     * take for a formula (starting with {@code =}, {@code +}, {@code -}, {@code @}, a tab or a carriage return)
     * is written with a leading {@code '}; a cell with a comma, a quote or a line break is quoted.
     */
    public String csv(boolean header) {
        StringBuilder b = new StringBuilder(64 + tenants.size() * 96);
        if (header) b.append(CSV_HEADER).append("\r\n");
        for (TenantUsage t : tenants) {
            for (TenantUsage.Period p : t.periods()) {
                cell(b, t.tenant()).append(',');
                cell(b, t.plan()).append(',');
                cell(b, p.quota()).append(',');
                b.append(p.per().name().toLowerCase(java.util.Locale.ROOT)).append(',');
                b.append(p.limit()).append(',');
                b.append(p.start()).append(',');
                b.append(p.end()).append(',');
                b.append(p.closed()).append(',');
                b.append(p.used()).append("\r\n");
            }
        }
        return b.toString();
    }

    /**
     * This page as JSON: {@code {"tenants":[{"tenant":..., "plan":..., "periods":[{"quota":..., "per":"month",
     * "limit":..., "start":"2026-11-01T00:00:00Z", "end":..., "closed":true, "used":...}]}], "next":...}}
     * ({@code next} null on the last page).
     */
    public String json() {
        StringBuilder b = new StringBuilder(64 + tenants.size() * 160).append("{\"tenants\":[");
        for (int i = 0; i < tenants.size(); i++) {
            TenantUsage t = tenants.get(i);
            if (i > 0) b.append(',');
            b.append("{\"tenant\":");
            string(b, t.tenant()).append(",\"plan\":");
            string(b, t.plan()).append(",\"periods\":[");
            for (int j = 0; j < t.periods().size(); j++) {
                TenantUsage.Period p = t.periods().get(j);
                if (j > 0) b.append(',');
                b.append("{\"quota\":");
                string(b, p.quota()).append(",\"per\":\"").append(p.per().name().toLowerCase(java.util.Locale.ROOT))
                        .append("\",\"limit\":").append(p.limit())
                        .append(",\"start\":\"").append(p.start()).append("\",\"end\":\"").append(p.end())
                        .append("\",\"closed\":").append(p.closed()).append(",\"used\":").append(p.used()).append('}');
            }
            b.append("]}");
        }
        b.append("],\"next\":");
        if (next == null) b.append("null");
        else string(b, next);
        return b.append('}').toString();
    }

    /** A CSV cell: quoted if it must be, a formula's first character neutralised. */
    static StringBuilder cell(StringBuilder b, String v) {
        boolean formula = !v.isEmpty() && "=+-@\t\r".indexOf(v.charAt(0)) >= 0;
        boolean quote = false;
        for (int i = 0; i < v.length() && !quote; i++) {
            char c = v.charAt(i);
            quote = c == ',' || c == '"' || c == '\n' || c == '\r';
        }
        if (quote) b.append('"');
        if (formula) b.append('\'');
        for (int i = 0; i < v.length(); i++) {
            char c = v.charAt(i);
            if (c == '"') b.append('"');
            b.append(c);
        }
        if (quote) b.append('"');
        return b;
    }

    private static StringBuilder string(StringBuilder b, String v) {
        b.append('"');
        for (int i = 0; i < v.length(); i++) {
            char c = v.charAt(i);
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                case '\r' -> b.append("\\r");
                case '\t' -> b.append("\\t");
                default -> {
                    if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
                    else b.append(c);
                }
            }
        }
        return b.append('"');
    }
}
