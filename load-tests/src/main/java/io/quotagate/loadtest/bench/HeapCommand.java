package io.quotagate.loadtest.bench;

import io.quotagate.plans.Algorithm;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * The {@code heap} command: bytes of heap each tracked tenant costs behind each per-tenant filter of
 * {@code bench}. For every filter it starts the bench server, sends one request for each of
 * {@code --tenants} distinct tenants over HTTP, and compares the live heap after a full collection
 * before and after; the bare server fed the same requests is subtracted, so what remains is what
 * the filter keeps per tenant (its table entry, its bucket or limiter, its key), not Jetty's own.
 * {@code --algorithms} measures QuotaFilter once per algorithm of its limit ({@code quotagate} is the token
 * bucket, {@code quotagate/gcra} and {@code quotagate/sliding-window} the others).
 */
@Command(name = "heap", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Heap bytes per tracked tenant: QuotaFilter's local store next to a ConcurrentHashMap of bucket4j "
                + "buckets, resilience4j's RateLimiterRegistry and a bare counter map, each fed one request per tenant.",
                "Exit status 1 if any request was not answered 200, 2 for an invalid option."})
public final class HeapCommand implements Callable<Integer> {
    /** The filters measured, by the name printed, in order; bare first, as the baseline. */
    static final Map<String, Mode> FILTERS = new LinkedHashMap<>();

    static {
        FILTERS.put("bare", Mode.BARE_10000_TENANTS);
        FILTERS.put("quotagate", Mode.QUOTAGATE_10000_TENANTS);
        FILTERS.put("bucket4j-map", Mode.BUCKET4J_MAP_10000_TENANTS);
        FILTERS.put("resilience4j", Mode.RESILIENCE4J_10000_TENANTS);
        FILTERS.put("counter-map", Mode.COUNTER_MAP_10000_TENANTS);
    }

    @Option(names = "--tenants", description = "Distinct tenants sent to each filter, at most 100000 (default ${DEFAULT-VALUE})")
    int tenants = 50_000;

    @Option(names = "--runs", description = "Measurements per filter; the median is reported (default ${DEFAULT-VALUE})")
    int runs = 3;

    @Option(names = "--algorithms", split = ",", paramLabel = "ALGORITHM", description = "QuotaFilter measured with its "
            + "limit counted by each of these: token-bucket, gcra, sliding-window (default ${DEFAULT-VALUE})")
    List<String> algorithms = List.of(Algorithm.TOKEN_BUCKET.fileName());

    @Spec
    CommandSpec spec;

    private static final MemoryMXBean MEMORY = ManagementFactory.getMemoryMXBean();

    /** Heap bytes of one filter's tenants, one run: the growth of the live heap over the run. */
    record Growth(String filter, long bytes, long tenants, long non200) {
        double perTenant() {
            return (double) bytes / tenants;
        }
    }

    @Override
    public Integer call() throws Exception {
        PrintWriter out = spec.commandLine().getOut();
        String invalid = tenants <= 0 || tenants > LoadGenerator.MAX_TENANTS
                ? "--tenants must be in 1.." + LoadGenerator.MAX_TENANTS + ", was " + tenants
                : runs <= 0 ? "--runs must be > 0, was " + runs : null;
        List<Algorithm> chosen = new ArrayList<>();
        for (String text : algorithms) {
            Algorithm a = Algorithm.ofFileName(text).orElse(null);
            if (a == null && invalid == null) invalid = "unknown algorithm '" + text + "'; algorithms: token-bucket, gcra, sliding-window";
            if (a != null && !chosen.contains(a)) chosen.add(a);
        }
        if (invalid != null) {
            spec.commandLine().getErr().println("heap: " + invalid);
            return 2;
        }
        out.printf(Locale.ROOT, "heap: %,d tenants, one request each, per filter; %d run(s); heap after a full GC, %s%n",
                tenants, runs, ManagementFactory.getGarbageCollectorMXBeans().stream().map(b -> b.getName()).toList());
        Map<String, List<Growth>> results = new LinkedHashMap<>();
        Map<String, Mode> filters = new LinkedHashMap<>();
        Map<String, Algorithm> algorithmOf = new LinkedHashMap<>();
        FILTERS.forEach((name, mode) -> {
            for (Algorithm a : mode.quotagate() ? chosen : List.of(Algorithm.TOKEN_BUCKET)) {
                String n = a == Algorithm.TOKEN_BUCKET ? name : name + "/" + a.fileName();
                filters.put(n, mode);
                algorithmOf.put(n, a);
            }
        });
        for (int run = 1; run <= runs; run++) {
            for (var e : filters.entrySet()) {
                Growth g = measure(e.getKey(), e.getValue(), tenants, algorithmOf.get(e.getKey()));
                results.computeIfAbsent(e.getKey(), k -> new ArrayList<>()).add(g);
                out.printf(Locale.ROOT, "run %d/%d %-24s %,12d bytes  %8.1f bytes/tenant%s%n", run, runs, g.filter(), g.bytes(),
                        g.perTenant(), g.non200() == 0 ? "" : "  " + BenchReport.FLAG + ": " + g.non200() + " non-200");
            }
        }
        double bare = median(results.get("bare"));
        out.println();
        out.println("median heap per tracked tenant, the bare server's growth subtracted (goal for quotagate: <= 400 bytes)");
        for (var e : results.entrySet()) {
            if (e.getKey().equals("bare")) continue;
            out.printf(Locale.ROOT, "%-24s %8.0f bytes/tenant%n", e.getKey(), median(e.getValue()) - bare);
        }
        out.printf(Locale.ROOT, "(bare server: %+.0f bytes/tenant, subtracted)%n", bare);
        out.flush();
        boolean errors = results.values().stream().flatMap(List::stream).anyMatch(g -> g.non200() > 0);
        return errors ? 1 : 0;
    }

    /** One filter's growth: a server of its own, warmed on one tenant, then one request per tenant. */
    static Growth measure(String name, Mode mode, int tenants) throws Exception {
        return measure(name, mode, tenants, Algorithm.TOKEN_BUCKET);
    }

    /** As {@link #measure(String, Mode, int)}, QuotaFilter's limit counted by {@code algorithm}. */
    static Growth measure(String name, Mode mode, int tenants, Algorithm algorithm) throws Exception {
        try (BenchServer server = BenchServer.start(mode, null, algorithm);
             RawHttpConnection connection = new RawHttpConnection(server.address())) {
            byte[] request = LoadGenerator.request(server.address());
            int digitsAt = LoadGenerator.digitsAt(request);
            long non200 = 0;
            // warm-up on the last tenant id only: code paths compiled, pools filled, one entry made
            LoadGenerator.forTenant(request, digitsAt, LoadGenerator.MAX_TENANTS - 1);
            for (int i = 0; i < 20_000; i++) non200 += connection.exchange(request) == 200 ? 0 : 1;
            long before = liveHeap();
            for (int i = 0; i < tenants; i++) {
                LoadGenerator.forTenant(request, digitsAt, i);
                non200 += connection.exchange(request) == 200 ? 0 : 1;
            }
            long after = liveHeap();
            return new Growth(name, after - before, tenants, non200);
        }
    }

    /** The heap in use after full collections, once it stops shrinking. */
    private static long liveHeap() throws InterruptedException {
        long used = Long.MAX_VALUE;
        for (int i = 0; i < 5; i++) {
            System.gc();
            Thread.sleep(50);
            long now = MEMORY.getHeapMemoryUsage().getUsed();
            if (now >= used) return Math.min(now, used);
            used = now;
        }
        return used;
    }

    private static double median(List<Growth> runs) {
        return BenchReport.median(runs.stream().mapToDouble(Growth::perTenant).toArray());
    }
}
