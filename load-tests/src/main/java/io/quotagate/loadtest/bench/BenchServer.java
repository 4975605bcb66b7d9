package io.quotagate.loadtest.bench;

import io.quotagate.filter.QuotaFilter;
import io.quotagate.filter.store.StoreHealth;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.eclipse.jetty.util.thread.ScheduledExecutorScheduler;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/**
 * An embedded Jetty 12 on 127.0.0.1 whose every path answers {@code 200 ok}, behind the filter of a
 * {@link Mode}, running on threads of its own whose CPU time it can report.
 *
 * <p>Every thread the server runs (acceptor, selector, request handling, scheduler, DoSFilter's
 * timer) is named {@code bench-server-<mode>-...}; the load generator's threads are not, so
 * {@link #cpuByThread()} sees the server's work only. The pool's size is fixed so no thread (and the
 * CPU time it accumulated) disappears during a run. The filter's own threads are named by the library,
 * not by the bench: a Redis store's client (Lettuce's event loop, which encodes the calls, decodes the
 * replies and wakes the waiting request threads, and its other pools), the store's heartbeat, the
 * shared limits' checker. Those that appear while the server starts (a Redis store connects as it is
 * built) are counted as its own too, with any later thread of the same Lettuce pools, so a Redis
 * mode's CPU per request includes its client's work (Redis's own CPU is the bench's separate column).
 * Servers start one at a time, and the bench's own Redis client before them. No request is sent while
 * starting: a local allowance would flush it into another mode's run.
 */
final class BenchServer implements AutoCloseable {
    static final String THREAD_PREFIX = "bench-server-";
    private static final int THREADS = 24;
    private static final ThreadMXBean THREAD_MX = ManagementFactory.getThreadMXBean();

    private final Mode mode;
    private final Server server;
    private final String threadPrefix;
    private final FilterHolder filter;
    /** Threads the server's filter started, named by the library ({@link #libraryThread}), by id. */
    private final Set<Long> libraryThreads;
    /**
     * The name prefixes of the Lettuce pools those threads belong to ({@code lettuce-nioEventLoop-7-}):
     * a pool starts its threads as it needs them, and each client has pools of its own.
     */
    private final Set<String> libraryPools;

    private BenchServer(Mode mode, Server server, String threadPrefix, FilterHolder filter, Set<Long> libraryThreads,
                        Set<String> libraryPools) {
        this.mode = mode;
        this.server = server;
        this.threadPrefix = threadPrefix;
        this.filter = filter;
        this.libraryThreads = libraryThreads;
        this.libraryPools = libraryPools;
    }

    /** Starts a server for this mode on a free port. */
    static BenchServer start(Mode mode) throws Exception {
        return start(mode, null);
    }

    /** Starts a server for this mode on a free port; Redis modes use {@code redisUri}. */
    static BenchServer start(Mode mode, String redisUri) throws Exception {
        return start(mode, redisUri, io.quotagate.plans.Algorithm.TOKEN_BUCKET);
    }

    /** As {@link #start(Mode, String)}, QuotaFilter's limit counted by {@code algorithm}. */
    static BenchServer start(Mode mode, String redisUri, io.quotagate.plans.Algorithm algorithm) throws Exception {
        if (!THREAD_MX.isThreadCpuTimeSupported()) {
            throw new IllegalStateException("this JVM cannot measure per-thread CPU time");
        }
        if (!THREAD_MX.isThreadCpuTimeEnabled()) THREAD_MX.setThreadCpuTimeEnabled(true);

        Set<Long> before = threadIds();
        String prefix = THREAD_PREFIX + mode.label() + "-";
        QueuedThreadPool pool = new QueuedThreadPool(THREADS, THREADS, 600_000);
        pool.setName(prefix + "pool");
        Server server = new Server(pool, new ScheduledExecutorScheduler(prefix + "scheduler", false), null);
        ServerConnector connector = new ServerConnector(server);
        connector.setHost("127.0.0.1");
        connector.setPort(0);
        server.addConnector(connector);

        ServletContextHandler context = new ServletContextHandler();
        context.setContextPath("/");
        FilterHolder filter = mode.filter(prefix, redisUri, algorithm).orElse(null);
        if (filter != null) context.addFilter(filter, "/*", EnumSet.of(DispatcherType.REQUEST));
        context.addServlet(new ServletHolder(new Ok()), "/");
        server.setHandler(context);
        server.start();
        Set<Long> threads = new HashSet<>();
        Set<String> pools = new HashSet<>();
        for (ThreadInfo info : THREAD_MX.getThreadInfo(THREAD_MX.getAllThreadIds(), 0)) {
            if (info == null || before.contains(info.getThreadId()) || !libraryThread(info.getThreadName())) continue;
            threads.add(info.getThreadId());
            String lettuce = lettucePool(info.getThreadName());
            if (lettuce != null) pools.add(lettuce);
        }
        return new BenchServer(mode, server, prefix, filter, Set.copyOf(threads), Set.copyOf(pools));
    }

    /** A thread the filter's library names: a Redis client's (Lettuce) or quotagate's own (heartbeat...). */
    private static boolean libraryThread(String name) {
        return name.startsWith("lettuce-") || name.startsWith("quotagate-");
    }

    /**
     * The pool of a Lettuce thread, {@code lettuce-nioEventLoop-7-} of {@code lettuce-nioEventLoop-7-1}
     * (Netty names a pool's threads {@code <name>-<pool id>-<thread id>}), or null for a name of another form.
     */
    static String lettucePool(String name) {
        if (!name.startsWith("lettuce-")) return null;
        int last = name.lastIndexOf('-');
        int before = name.lastIndexOf('-', last - 1);
        if (before < 0 || !digits(name, before + 1, last) || !digits(name, last + 1, name.length())) return null;
        return name.substring(0, last + 1);
    }

    private static boolean digits(String s, int from, int to) {
        if (from >= to) return false;
        for (int i = from; i < to; i++) {
            if (s.charAt(i) < '0' || s.charAt(i) > '9') return false;
        }
        return true;
    }

    private static Set<Long> threadIds() {
        Set<Long> ids = new HashSet<>();
        for (long id : THREAD_MX.getAllThreadIds()) ids.add(id);
        return ids;
    }

    /** Decisions this server's shared store took locally so far (fallback or contention); 0 without one. */
    long localDecisions() {
        if (filter == null || !(filter.getFilter() instanceof QuotaFilter q)) return 0;
        return q.control().store().health().map(StoreHealth::fallbackDecisions).orElse(0L);
    }

    Mode mode() {
        return mode;
    }

    InetSocketAddress address() {
        return new InetSocketAddress("127.0.0.1", ((ServerConnector) server.getConnectors()[0]).getLocalPort());
    }

    /** CPU nanoseconds used so far by each live thread of this server, by thread id. */
    Map<Long, Long> cpuByThread() {
        Map<Long, Long> cpu = new HashMap<>();
        long[] ids = THREAD_MX.getAllThreadIds();
        ThreadInfo[] infos = THREAD_MX.getThreadInfo(ids, 0);
        for (ThreadInfo info : infos) {
            if (info == null || !counted(info)) continue;
            long nanos = THREAD_MX.getThreadCpuTime(info.getThreadId());
            if (nanos >= 0) cpu.put(info.getThreadId(), nanos);
        }
        return cpu;
    }

    /** Whether a thread's CPU is this server's: named by the bench for it, or started by its filter's library. */
    private boolean counted(ThreadInfo info) {
        String name = info.getThreadName();
        if (name.startsWith(threadPrefix) || libraryThreads.contains(info.getThreadId())) return true;
        String pool = lettucePool(name);
        return pool != null && libraryPools.contains(pool);
    }

    /** CPU nanoseconds the server's threads used between two {@link #cpuByThread()} snapshots. */
    static long cpuBetween(Map<Long, Long> before, Map<Long, Long> after) {
        long sum = 0;
        for (var e : after.entrySet()) sum += e.getValue() - before.getOrDefault(e.getKey(), 0L);
        return sum;
    }

    @Override
    public void close() {
        try {
            server.stop();
        } catch (Exception e) {
            if (e instanceof InterruptedException) Thread.currentThread().interrupt();
            throw new IllegalStateException("stopping the " + mode.label() + " server failed", e);
        }
    }

    /** The benchmark endpoint: {@code 200}, {@code text/plain}, body {@code ok}, with a Content-Length. */
    static final class Ok extends HttpServlet {
        private static final long serialVersionUID = 1L;
        private static final byte[] BODY = "ok".getBytes(StandardCharsets.US_ASCII);

        @Override
        protected void service(HttpServletRequest req, HttpServletResponse resp) throws IOException {
            resp.setContentType("text/plain");
            resp.setContentLength(BODY.length);
            resp.getOutputStream().write(BODY);
        }
    }
}
