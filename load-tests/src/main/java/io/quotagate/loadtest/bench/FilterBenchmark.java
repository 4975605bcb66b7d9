package io.quotagate.loadtest.bench;

import io.quotagate.plans.Algorithm;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.FilterConfig;
import jakarta.servlet.ServletContext;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.servlet.http.HttpServletResponseWrapper;
import jakarta.servlet.http.HttpSession;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.lang.reflect.Proxy;
import java.util.Collections;
import java.util.Enumeration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * The filter's own cost, without the server around it: one {@code doFilter} of each filter of the
 * {@code bench} command ({@link Mode#newFilter}) on a request that answers only what a container would
 * (method, path, headers, attributes), with a chain that does nothing. {@code bare} is the empty
 * filter chain alone, with the random pick and the fresh tenant string: subtract it. The tenant id is
 * a fresh {@code String} per request, as a container's header parser hands out, picked at random
 * among {@code tenants} ids (every limiter created in setup: the steady state). Any request method
 * the stub does not implement throws, so a filter cannot quietly benchmark a shortcut.
 *
 * <p>The {@code bench} command measures the same filters inside Jetty, where the server's own work
 * dwarfs them and moves by up to ±15 % between rounds on a shared machine; this measures the
 * difference itself.
 *
 * <p>{@code algorithm} chooses how QuotaFilter's limit counts ({@code token-bucket}, the default, {@code gcra},
 * {@code sliding-window}; the other filters are what they are), and {@code tenants} how many tenant ids a mode is fed
 * ({@code mode}, the default: the number in its label; or a number, such as 1, 10000 or 1000000, for every mode).
 * Each algorithm at each count: {@code jmh FilterBenchmark -p mode=quotagate-10000-tenants,bucket4j-map-10000-tenants
 * -p algorithm=token-bucket,gcra,sliding-window -p tenants=1,10000,1000000 -jvmArgsAppend -Xmx4g} (a million tenants
 * take about 1 GB in each filter's tables, besides their ids).
 *
 * <p>Run: {@code java -jar load-tests/target/load-tests.jar jmh FilterBenchmark -f 10 -prof gc}. At 10,000
 * tenants each filter's speed moves by up to a factor of two from one fork to the next (where the collector lays
 * out its objects), so two forks cannot rank them; BENCHMARKS.md names the forks of every run it reports.
 */
@State(Scope.Thread)
@BenchmarkMode(org.openjdk.jmh.annotations.Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 6, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
public class FilterBenchmark {
    private static final FilterChain END = (request, response) -> { };
    /** DoSFilter's limit here: above what one thread can send (it keeps a {@code long[]} of this size). */
    private static final int DOS_MAX_REQUESTS_PER_SEC = 20_000_000;

    /** A {@link Mode} label: its filter, fed {@code tenants} ids. */
    @Param({"bare", "quotagate-1-tenant", "jetty-dosfilter", "quotagate-10000-tenants", "counter-map-10000-tenants",
            "bucket4j-map-10000-tenants", "resilience4j-10000-tenants"})
    String mode;

    /** How QuotaFilter's limit counts: {@code token-bucket}, {@code gcra} or {@code sliding-window}. */
    @Param({"token-bucket"})
    String algorithm = "token-bucket";

    /** Tenant ids fed: {@code mode} for the number in the mode's label, or a number (1, 10000, 1000000...). */
    @Param({"mode"})
    String tenants = "mode";

    Filter filter;
    private String[] ids;
    private StubRequest request;
    private StubResponse response;

    @Setup(Level.Trial)
    public void setUp() throws Exception {
        Mode m = Mode.ofLabel(mode);
        Algorithm a = algorithm(algorithm);
        int n = tenantCount(tenants, m);
        filter = m.newFilter("bench-jmh-", null, a, n).orElse(null);
        Map<String, String> params = new HashMap<>(m.initParameters());
        // one benchmark thread sends millions a second, far more than the bench's servers see: a
        // DoSFilter at the bench's limit would delay it (and ask for async support)
        if (m == Mode.JETTY_DOSFILTER) params.put("maxRequestsPerSec", Integer.toString(DOS_MAX_REQUESTS_PER_SEC));
        if (filter != null) filter.init(new StubConfig(params));
        ids = new String[n];
        for (int i = 0; i < ids.length; i++) ids[i] = String.format("tenant-%05d", i);
        request = new StubRequest();
        response = new StubResponse();
        for (String id : ids) { // every limiter created now: the measurement is the steady state
            int status = run(id);
            if (status != 200) throw new IllegalStateException(mode + " refused " + id + ": " + status);
        }
    }

    /** The algorithm written as {@code text}, or an error naming the valid ones. */
    static Algorithm algorithm(String text) {
        return Algorithm.ofFileName(text).orElseThrow(() -> new IllegalArgumentException("unknown algorithm '" + text
                + "'; algorithms: token-bucket, gcra, sliding-window"));
    }

    /** The tenants of {@code text}: {@code mode} for the mode's own count, else a number from 1 to 10,000,000. */
    static int tenantCount(String text, Mode mode) {
        if (text.equals("mode")) return mode.tenants();
        int n;
        try {
            n = Integer.parseInt(text.replace("_", ""));
        } catch (NumberFormatException e) {
            n = 0;
        }
        if (n < 1 || n > 10_000_000) {
            throw new IllegalArgumentException("tenants must be 'mode' or 1 to 10000000, was '" + text + "'");
        }
        return n;
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        if (filter != null) filter.destroy();
    }

    /** One request through the mode's filter. */
    @Benchmark
    public int filter() throws Exception {
        return run(new String(ids[ThreadLocalRandom.current().nextInt(ids.length)]));
    }

    private int run(String tenant) throws Exception {
        request.next(tenant);
        response.status = 200;
        if (filter == null) END.doFilter(request, response);
        else filter.doFilter(request, response, END);
        return response.status;
    }

    /** Anything a test double does not answer itself: an error naming the method. */
    private static <T> T unsupported(Class<T> type) {
        return type.cast(Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[]{type}, (proxy, method, args) -> {
            throw new UnsupportedOperationException("stub " + type.getSimpleName() + "." + method.getName());
        }));
    }

    /** {@code GET /items/42} from 127.0.0.1 with one {@code X-Tenant-Id}, as the bench sends. */
    public static final class StubRequest extends HttpServletRequestWrapper {
        private final Map<String, Object> attributes = new HashMap<>();
        private String tenant;

        StubRequest() {
            super(unsupported(HttpServletRequest.class));
        }

        StubRequest next(String tenant) {
            this.tenant = tenant;
            attributes.clear();
            return this;
        }

        @Override
        public String getHeader(String name) {
            return "X-Tenant-Id".equalsIgnoreCase(name) ? tenant : null;
        }

        @Override
        public Enumeration<String> getHeaders(String name) {
            return "X-Tenant-Id".equalsIgnoreCase(name) ? Collections.enumeration(java.util.List.of(tenant))
                    : Collections.emptyEnumeration();
        }

        @Override
        public String getMethod() {
            return "GET";
        }

        @Override
        public String getServletPath() {
            return "/items/42";
        }

        @Override
        public String getPathInfo() {
            return null;
        }

        @Override
        public String getRequestURI() {
            return "/items/42";
        }

        @Override
        public DispatcherType getDispatcherType() {
            return DispatcherType.REQUEST;
        }

        @Override
        public String getRemoteAddr() {
            return "127.0.0.1";
        }

        @Override
        public int getRemotePort() {
            return 40000;
        }

        @Override
        public Object getAttribute(String name) {
            return attributes.get(name);
        }

        @Override
        public void setAttribute(String name, Object o) {
            attributes.put(name, o);
        }

        @Override
        public void removeAttribute(String name) {
            attributes.remove(name);
        }

        @Override
        public boolean isAsyncStarted() {
            return false;
        }

        @Override
        public HttpSession getSession(boolean create) {
            return null;
        }

        @Override
        public java.security.Principal getUserPrincipal() {
            return null;
        }
    }

    /** A response that records its status and headers' absence; nothing is written by an admitted request. */
    public static final class StubResponse extends HttpServletResponseWrapper {
        int status = 200;

        StubResponse() {
            super(unsupported(HttpServletResponse.class));
        }

        @Override
        public void setStatus(int sc) {
            status = sc;
        }

        @Override
        public void sendError(int sc) {
            status = sc;
        }

        @Override
        public void setHeader(String name, String value) {
            // nothing to keep: no filter reads its own response headers back
        }

        @Override
        public void addHeader(String name, String value) {
            // as setHeader
        }

        @Override
        public boolean isCommitted() {
            return false;
        }
    }

    private record StubConfig(Map<String, String> params) implements FilterConfig {
        @Override
        public String getFilterName() {
            return "bench";
        }

        @Override
        public ServletContext getServletContext() {
            return null;
        }

        @Override
        public String getInitParameter(String name) {
            return params.get(name);
        }

        @Override
        public Enumeration<String> getInitParameterNames() {
            return Collections.enumeration(params.keySet());
        }
    }
}
