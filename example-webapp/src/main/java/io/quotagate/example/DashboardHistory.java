package io.quotagate.example;

import io.quotagate.filter.metrics.QuotaSource;
import io.quotagate.filter.metrics.StatisticsView;
import io.quotagate.filter.status.ConcurrencyView;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Queue;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The dashboard's memory: once a second, how many requests each tenant (as tagged in metrics) had
 * allowed and rejected during that second, the requests in flight per concurrency group, and the
 * global quota's available units. Keeps the last
 * {@value #WINDOW_SECONDS} seconds.
 *
 * <p>A second's requests are the growth of each <em>cell</em> (one counter of the statistics)
 * since the previous sample, never a difference of per-tenant totals: a tenant that loses its name
 * takes its cells with it, and one named again starts new cells from 0, so totals by tag could go
 * down. A removed cell's growth up to the next sample is still counted under its tenant, then the
 * cell is forgotten; the tenant's later requests appear under {@code other}.
 */
final class DashboardHistory implements AutoCloseable {
    static final int WINDOW_SECONDS = 300;

    private record Sample(long epochSecond, Map<String, long[]> perTenant, long globalAvailable,
                          Map<String, Integer> inflight) {
    }

    private final StatisticsView statistics;
    private final QuotaSource source;
    private final ConcurrencyView concurrency;
    private final Deque<Sample> samples = new ArrayDeque<>();
    /** Each cell's count at the previous sample (cells compare by identity). */
    private final Map<StatisticsView.Cell, Long> lastCounts = new HashMap<>();
    /** Cells removed since the previous sample (told from request threads). */
    private final Queue<StatisticsView.Cell> removed = new ConcurrentLinkedQueue<>();
    private final ScheduledExecutorService sampler = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "dashboard-sampler");
        t.setDaemon(true);
        return t;
    });

    DashboardHistory(QuotaSource source) {
        this.statistics = source.statistics();
        this.source = source;
        this.concurrency = source.concurrency();
        statistics.onCell(cell -> { }, removed::add);
        sampler.scheduleAtFixedRate(this::sample, 1, 1, TimeUnit.SECONDS);
    }

    /** Takes one sample now: per-tenant requests since the previous sample. */
    synchronized void sample() {
        Map<String, long[]> deltas = new HashMap<>();
        // removed cells first: one removed after this point is still among the live ones below, and
        // its remaining growth is taken at the next sample (its last count stays until then)
        for (StatisticsView.Cell c; (c = removed.poll()) != null; ) {
            Long before = lastCounts.remove(c);
            add(deltas, c, c.count() - (before == null ? 0 : before));
        }
        statistics.forEach(c -> {
            long now = c.count();
            Long before = lastCounts.put(c, now);
            add(deltas, c, now - (before == null ? 0 : before));
        });
        Map<String, Integer> inflight = new TreeMap<>();
        for (String group : concurrency.groups()) inflight.put(group, concurrency.inflight(group));
        samples.addLast(new Sample(System.currentTimeMillis() / 1000, deltas, source.globalQuotaAvailable(), inflight));
        while (samples.size() > WINDOW_SECONDS) samples.removeFirst();
    }

    private static void add(Map<String, long[]> deltas, StatisticsView.Cell c, long delta) {
        deltas.computeIfAbsent(c.tenant(), k -> new long[2])[c.result().ordinal()] += delta;
    }

    /**
     * The history as JSON: {@code {"capacity":N,"topTenants":N,"t":[…],"global":[…],
     * "inflight":{"reports":[…]},"tenants":{"acme":{"allowed":[…],"rejected":[…]}}}}; {@code topTenants}
     * is the most tenants named at once (the others are {@code other}).
     */
    synchronized String json() {
        TreeSet<String> tenants = new TreeSet<>();
        samples.forEach(s -> tenants.addAll(s.perTenant().keySet()));
        StringBuilder b = new StringBuilder(4096).append("{\"capacity\":").append(source.globalQuotaCapacity())
                .append(",\"topTenants\":").append(statistics.topTenants()).append(",\"t\":[");
        join(b, samples.stream().mapToLong(Sample::epochSecond).toArray());
        b.append("],\"global\":[");
        join(b, samples.stream().mapToLong(Sample::globalAvailable).toArray());
        b.append("],\"inflight\":{");
        boolean firstGroup = true;
        for (String group : concurrency.groups().stream().sorted().toList()) {
            if (!firstGroup) b.append(',');
            firstGroup = false;
            b.append('"').append(group).append("\":[");
            join(b, samples.stream().mapToLong(s -> s.inflight().getOrDefault(group, 0)).toArray());
            b.append(']');
        }
        b.append("},\"tenants\":{");
        Map<String, long[][]> series = new LinkedHashMap<>();
        for (String t : tenants) {
            series.put(t, new long[][]{
                    samples.stream().mapToLong(s -> s.perTenant().getOrDefault(t, new long[2])[0]).toArray(),
                    samples.stream().mapToLong(s -> s.perTenant().getOrDefault(t, new long[2])[1]).toArray()});
        }
        boolean first = true;
        for (Map.Entry<String, long[][]> e : series.entrySet()) {
            if (!first) b.append(',');
            first = false;
            // tenant tags are valid tenant ids or fixed words: no escaping needed
            b.append('"').append(e.getKey()).append("\":{\"allowed\":[");
            join(b, e.getValue()[0]);
            b.append("],\"rejected\":[");
            join(b, e.getValue()[1]);
            b.append("]}");
        }
        return b.append("}}").toString();
    }

    private static void join(StringBuilder b, long[] values) {
        for (int i = 0; i < values.length; i++) {
            if (i > 0) b.append(',');
            b.append(values[i]);
        }
    }

    @Override
    public void close() {
        sampler.shutdownNow();
    }
}
