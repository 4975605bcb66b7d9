package io.quotagate.containers;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.quotagate.filter.QuotaFilter;
import jakarta.servlet.AsyncContext;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.FilterRegistration;
import jakarta.servlet.ServletContainerInitializer;
import jakarta.servlet.ServletContext;
import jakarta.servlet.ServletRegistration;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import java.io.IOException;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/** The application every container of the matrix serves: the filter, an OK servlet and an async servlet. */
final class TestApp {
    static final String PLANS = "classpath:container-plans.yml";
    /** The response header in which {@link OkServlet} says whether it ran on a {@code virtual} or a {@code platform} thread. */
    static final String SERVED_ON = "Served-On";

    /**
     * The plans of a second filter, in front of {@code /estimated/*} only: a route priced by {@link #FAULTY}, one
     * request of it in flight per tenant.
     */
    static final String ESTIMATED_PLANS = """
            plans: { llm: { limits: [ { capacity: 100, refill: 100, period: 1m } ], concurrency: { faulty: 1 } } }
            routes:
              - { name: faulty, methods: [POST], paths: ["/estimated/*"], group: faulty }
            """;

    /** Prices a request at the number in its body, or fails as a buggy estimator would on {@code runtime}, {@code error}. */
    static final io.quotagate.filter.CostEstimator FAULTY = (request, body) -> {
        String text = new String(body, java.nio.charset.StandardCharsets.UTF_8).trim();
        if (text.equals("runtime")) throw new IllegalStateException("the estimator's own bug");
        if (text.equals("error")) throw new AssertionError("the estimator's own bug");
        return Long.parseLong(text);
    };

    /** The filter of {@code /estimated/*}, made by the builder (init-params name no estimator). */
    static QuotaFilter estimatedFilter() {
        return QuotaFilter.builder().plans(io.quotagate.plans.PlansFile.parse("estimated.yml", ESTIMATED_PLANS))
                .costEstimator("faulty", FAULTY).build();
    }

    /** Per {@code ?hold=key}: counted down when the async request has started (so it holds its slot). */
    static final Map<String, CountDownLatch> STARTED = new ConcurrentHashMap<>();
    /** Per {@code ?hold=key}: the test counts it down to let that request complete. */
    static final Map<String, CountDownLatch> RELEASE = new ConcurrentHashMap<>();

    /**
     * Requests under {@code /paced/} whose first dispatch has returned suspended (async started): a delayed
     * request is waiting then, no longer on its way into suspension (Jetty and Tomcat, {@link Initializer}).
     */
    static final AtomicInteger SUSPENDED = new AtomicInteger();

    /**
     * Per {@code ?late=key}: what {@code ActualCost.report} answered (or threw) when the application reported
     * after {@code AsyncContext.complete()}, once the test counted down {@code release(key)}.
     */
    static final Map<String, String> LATE_REPORTS = new ConcurrentHashMap<>();

    /** The meters of the filter of the container started last ({@link #newMeters()}). */
    private static volatile SimpleMeterRegistry meters;

    private TestApp() {
    }

    /**
     * A registry of its own for the container starting now, which its filter binds to when the context holds
     * it under {@link QuotaFilter#METER_REGISTRY_ATTRIBUTE} (docs/metrics.md): the containers of the matrix
     * start one after the other in one JVM, each filter's gauges in a registry of their own.
     */
    static SimpleMeterRegistry newMeters() {
        meters = new SimpleMeterRegistry();
        return meters;
    }

    static SimpleMeterRegistry meters() {
        return meters;
    }

    static CountDownLatch started(String key) {
        return STARTED.computeIfAbsent(key, k -> new CountDownLatch(1));
    }

    static CountDownLatch release(String key) {
        return RELEASE.computeIfAbsent(key, k -> new CountDownLatch(1));
    }

    /**
     * docs/installation.md's "From web.xml (or ServletContext.addFilter)" registration, verbatim but for the plans
     * file, plus the two servlets; run by Jetty and Tomcat as a {@link ServletContainerInitializer}.
     */
    static final class Initializer implements ServletContainerInitializer {
        @Override
        public void onStartup(Set<Class<?>> classes, ServletContext servletContext) {
            servletContext.setAttribute(QuotaFilter.METER_REGISTRY_ATTRIBUTE, newMeters());
            // before the quota filter, without async support: the requests it passes on cannot go async. Said
            // explicitly: Tomcat takes a filter whose registration never set it as supporting async
            FilterRegistration.Dynamic front = servletContext.addFilter("front", PassFilter.class);
            front.setAsyncSupported(false);
            front.addMappingForUrlPatterns(EnumSet.of(DispatcherType.REQUEST), false, "/front/*");
            // before the filter under test, so it sees each dispatch return from it
            FilterRegistration.Dynamic suspensions = servletContext.addFilter("suspensions", SuspensionCounter.class);
            suspensions.setAsyncSupported(true);
            suspensions.addMappingForUrlPatterns(EnumSet.of(DispatcherType.REQUEST), false, "/paced/*");
            FilterRegistration.Dynamic quota = servletContext.addFilter("quota", QuotaFilter.class);
            quota.setInitParameter(QuotaFilter.PLANS_PARAM, PLANS);
            quota.setAsyncSupported(true);
            quota.addMappingForUrlPatterns(EnumSet.of(DispatcherType.REQUEST), false, "/*");

            servletContext.addServlet("ok", OkServlet.class).addMapping("/items/*", "/health", "/front/*");
            // async support for the suspensions filter's sake; the servlet of a throttled route needs none ("plain")
            ServletRegistration.Dynamic paced = servletContext.addServlet("paced", OkServlet.class);
            paced.setAsyncSupported(true);
            paced.addMapping("/paced/*");
            FilterRegistration.Dynamic estimated = servletContext.addFilter("quota-estimated", estimatedFilter());
            estimated.setAsyncSupported(true);
            estimated.addMappingForUrlPatterns(EnumSet.of(DispatcherType.REQUEST), true, "/estimated/*");
            servletContext.addServlet("estimated", OkServlet.class).addMapping("/estimated/*");
            ServletRegistration.Dynamic reports = servletContext.addServlet("reports", ReportServlet.class);
            reports.setAsyncSupported(true);
            reports.addMapping("/reports/*", "/adaptive/*");
            // registered without async support (the default): a throttled request on its path is still delayed
            servletContext.addServlet("plain", OkServlet.class).addMapping("/plain/*");
        }
    }

    /** Counts the dispatches that return suspended ({@link #SUSPENDED}). */
    public static final class SuspensionCounter implements jakarta.servlet.Filter {
        @Override
        public void doFilter(jakarta.servlet.ServletRequest request, jakarta.servlet.ServletResponse response,
                             jakarta.servlet.FilterChain chain) throws IOException, jakarta.servlet.ServletException {
            chain.doFilter(request, response);
            if (request.isAsyncStarted()) SUSPENDED.incrementAndGet();
        }
    }

    /** Passes every request on; registered without async support ({@code /front/*}). */
    public static final class PassFilter implements jakarta.servlet.Filter {
        @Override
        public void doFilter(jakarta.servlet.ServletRequest request, jakarta.servlet.ServletResponse response,
                             jakarta.servlet.FilterChain chain) throws IOException, jakarta.servlet.ServletException {
            chain.doFilter(request, response);
        }
    }

    /** Answers 200 {@code ok}. */
    public static final class OkServlet extends HttpServlet {
        @Override
        protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
            resp.setContentType("text/plain");
            resp.setHeader(SERVED_ON, VirtualThreadLeg.isVirtual(Thread.currentThread()) ? "virtual" : "platform");
            resp.getWriter().write("ok");
        }

        @Override
        protected void doPost(HttpServletRequest req, HttpServletResponse resp) throws IOException {
            doGet(req, resp);
        }
    }

    /**
     * An async report: completes from another thread after {@code ?hold=key} is released, after
     * {@code ?ms=N}, at once, or never ({@code ?hang=1}, so the container's 200 ms async timeout fires).
     * With {@code ?late=key} it also reports an actual cost after {@code complete()}, once the test releases
     * {@code key}, into {@link #LATE_REPORTS}.
     */
    public static final class ReportServlet extends HttpServlet {
        @Override
        protected void doGet(HttpServletRequest req, HttpServletResponse resp) {
            AsyncContext async = req.startAsync();
            if (req.getParameter("hang") != null) {
                // no listener and no complete(): the container must end the request on its own timeout
                async.setTimeout(200);
                return;
            }
            async.setTimeout(30_000);
            String hold = req.getParameter("hold");
            String ms = req.getParameter("ms");
            String late = req.getParameter("late");
            // completion on another thread: the filter's slot must outlive the request thread
            Thread worker = new Thread(() -> {
                try {
                    if (hold != null) {
                        started(hold).countDown();
                        release(hold).await(20, TimeUnit.SECONDS);
                    } else if (ms != null) {
                        Thread.sleep(Long.parseLong(ms));
                    }
                    HttpServletResponse r = (HttpServletResponse) async.getResponse();
                    r.setContentType("text/plain");
                    r.getWriter().write("report");
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                } catch (IOException e) {
                    // the client went away: complete() below still ends the cycle
                } finally {
                    async.complete();
                }
                if (late != null) reportLate(req, late);
            }, "report-worker");
            worker.setDaemon(true);
            worker.start();
        }

        /** Reports a cost on the request (the filter's wrapper) after it completed, when the test says so. */
        private static void reportLate(HttpServletRequest req, String key) {
            String answer;
            try {
                answer = release(key).await(20, TimeUnit.SECONDS)
                        ? Boolean.toString(io.quotagate.filter.ActualCost.report(req, 2)) : "never released";
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                answer = "interrupted";
            } catch (RuntimeException e) {
                answer = e.toString();
            }
            LATE_REPORTS.put(key, answer);
        }
    }
}
