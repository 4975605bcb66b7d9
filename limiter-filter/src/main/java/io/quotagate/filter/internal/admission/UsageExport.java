package io.quotagate.filter.internal.admission;

import io.quotagate.filter.internal.admission.Limits.PlanLimits;
import io.quotagate.filter.status.TenantUsage;
import io.quotagate.filter.status.UsagePage;
import io.quotagate.filter.store.BucketKind;
import io.quotagate.filter.store.QuotaCounters;
import io.quotagate.plans.CalendarQuota;
import io.quotagate.plans.TenantId;

import java.time.Clock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Every tenant's use of its calendar quotas, read from the store's counters a page at a time: the current
 * period and the closed periods the counters are kept for ({@link QuotaWindows#kept()}).
 *
 * <p><b>Which tenants.</b> Those the store holds counters of ({@link QuotaCounters#scan}): a tenant that never
 * used a quota has none. Each counter found names its tenant; the tenant is placed on its plan as a request
 * would be, and all its counters of the periods exported are read (one {@link QuotaCounters#usedAll} per
 * page).
 *
 * <p><b>Each tenant once.</b> A tenant has several counters (quotas × periods), found on different pages. It is
 * listed on the page of its first closed period's counter that holds a unit (plan order, newest period first),
 * or of its first current counter holding one if no closed one does ({@link #owner}): so a tenant whose counters
 * exist through the export is listed exactly once, one whose current counter appears or is refunded meanwhile
 * too if it has a closed period with units, and one with nothing counted in the periods exported not at all. Counters of quotas its plan no longer has are not read.
 *
 * <p><b>One time.</b> The cursor carries the export's time, so every page reads the same periods even if one
 * ends while the export runs.
 */
final class UsageExport {
    private static final char SEP = '~';
    /** Store scans one page makes at most; a page may then hold fewer tenants than asked, even none (follow next). */
    static final int MAX_SCANS = 64;

    private final Limits limits;
    private final QuotaCounters counters;
    private final Clock wall;

    UsageExport(Limits limits, QuotaCounters counters, Clock wall) {
        this.limits = limits;
        this.counters = counters;
        this.wall = wall;
    }

    /**
     * The page after {@code cursor} (null for the first), about {@code size} tenants at most.
     *
     * @throws IllegalArgumentException if the cursor is not one an export gave, or {@code size < 1}
     */
    UsagePage page(TenantPlans placement, String cursor, int size) {
        if (size < 1) throw new IllegalArgumentException("size must be >= 1, was " + size);
        if (counters == null) return new UsagePage(List.of(), null);
        long nowNanos;
        String storeCursor;
        if (cursor == null) {
            nowNanos = QuotaWindows.nanos(wall.instant());
            storeCursor = null;
        } else {
            int at = cursor.indexOf(SEP);
            try {
                nowNanos = Long.parseLong(at < 0 ? cursor : cursor.substring(0, at));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("not a cursor of a usage export: " + cursor);
            }
            storeCursor = at < 0 ? null : cursor.substring(at + 1);
        }
        List<TenantUsage> out = new ArrayList<>();
        String next = storeCursor;
        int scans = 0;
        do { // at most MAX_SCANS store scans a page: a sparse keyspace gives short (even empty) pages, not one long call
            QuotaCounters.Page scanned = counters.scan(next, Math.max(1, size - out.size()));
            collect(placement, scanned.keys(), nowNanos, out);
            next = scanned.next();
        } while (next != null && out.size() < (size + 1) / 2 && ++scans < MAX_SCANS);
        return new UsagePage(out, next == null ? null : nowNanos + String.valueOf(SEP) + next);
    }

    /** One tenant found on this page: its plan, quotas and the keys of its counters, in export order. */
    private record Found(String tenant, String plan, QuotaWindows windows, List<QuotaWindows.Period>[] periods,
                         List<String> keys, java.util.Set<String> scanned) {
    }

    private void collect(TenantPlans placement, List<String> keys, long nowNanos, List<TenantUsage> out) {
        Map<String, Found> found = new LinkedHashMap<>();
        List<String> reads = new ArrayList<>();
        for (String key : keys) {
            int first = key.indexOf(':');
            int last = key.lastIndexOf(':');
            if (first <= 0 || last <= first + 1) continue;
            String tenant = key.substring(first + 1, last);
            Found known = found.get(tenant);
            if (known != null) { // another counter of a tenant this page found already
                known.scanned.add(key);
                continue;
            }
            if (!TenantId.isValid(tenant)) continue;
            Optional<TenantPlans.Placement> placed = placement.place(tenant);
            if (placed.isEmpty() || placed.get().kind() != BucketKind.TENANT) continue;
            PlanLimits pl = limits.limitsOf(BucketKind.TENANT, tenant, placed.get().plan());
            if (pl.quotas() == null) continue;
            CalendarQuota[] quotas = pl.quotas().quotas();
            @SuppressWarnings("unchecked")
            List<QuotaWindows.Period>[] periods = new List[quotas.length];
            List<String> own = new ArrayList<>();
            for (int i = 0; i < quotas.length; i++) {
                periods[i] = pl.quotas().recent(quotas[i], nowNanos, pl.quotas().kept());
                for (QuotaWindows.Period p : periods[i]) own.add(QuotaWindows.key(quotas[i], tenant, p.label()));
            }
            if (!own.contains(key)) continue; // a quota its plan no longer has, or a period not exported
            java.util.Set<String> scanned = new java.util.HashSet<>();
            scanned.add(key);
            found.put(tenant, new Found(tenant, placed.get().plan(), pl.quotas(), periods, own, scanned));
            reads.addAll(own);
        }
        if (found.isEmpty()) return;
        long[] used = counters.usedAll(reads);
        Map<String, Long> byKey = new HashMap<>(reads.size() * 2);
        for (int i = 0; i < used.length; i++) byKey.put(reads.get(i), used[i]);
        for (Found f : found.values()) {
            String owner = owner(f, byKey, nowNanos);
            if (owner == null || !f.scanned.contains(owner)) continue;
            List<TenantUsage.Period> rows = new ArrayList<>(f.keys.size());
            CalendarQuota[] quotas = f.windows.quotas();
            int k = 0;
            for (int i = 0; i < quotas.length; i++) {
                for (QuotaWindows.Period p : f.periods[i]) {
                    rows.add(new TenantUsage.Period(quotas[i].name(), quotas[i].per(), quotas[i].limit(),
                            QuotaWindows.instant(p.startNanos()), QuotaWindows.instant(p.endNanos()),
                            p.endNanos() <= nowNanos, byKey.getOrDefault(f.keys.get(k++), 0L)));
                }
            }
            out.add(new TenantUsage(f.tenant, f.plan, rows));
        }
    }

    /**
     * The counter whose page lists the tenant: its first closed period's counter holding a unit (in export order),
     * or, if no closed one holds any, its first current counter holding one. A closed counter is neither created
     * nor changed while an export runs (but for settlements in its grace hour), so the choice does not depend on
     * when each page was read: a tenant whose current counter is created after the scan passed it, or whose
     * current count is refunded to 0 between pages, is still listed once, on its closed counter's page.
     */
    private static String owner(Found f, Map<String, Long> byKey, long nowNanos) {
        String current = null;
        int k = 0;
        for (List<QuotaWindows.Period> periods : f.periods) {
            for (QuotaWindows.Period p : periods) {
                String key = f.keys.get(k++);
                if (byKey.getOrDefault(key, 0L) <= 0) continue;
                if (p.endNanos() <= nowNanos) return key;
                if (current == null) current = key;
            }
        }
        return current;
    }
}
