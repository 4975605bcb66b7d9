package io.quotagate.loadtest.scenario;

import io.quotagate.example.ExampleApp;
import io.quotagate.filter.QuotaFilter;
import io.quotagate.plans.InvalidPlansException;
import io.quotagate.plans.Plans;
import io.quotagate.plans.PlansFile;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletContextRequest;

import java.io.IOException;
import java.util.EnumSet;
import java.util.Locale;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * The example app started in this JVM on a free port of 127.0.0.1, with plans sized for a scenario:
 * a hidden global quota of {@code quota × speed} units per real minute (so {@code quota} per
 * scenario minute) and a tenant plan large enough that only the global quota binds. A counting
 * filter behind the {@code QuotaFilter} records every admitted unit per scenario second: the
 * server's own view, for the window check.
 */
final class InProcessServer implements AutoCloseable {
    private final ExampleApp.Running app;
    final Series admitted;
    /**
     * Per bin of {@link #admitted}, the longest a unit counted in it took from its request's headers
     * being read to being counted, scenario nanoseconds: the unit was admitted at most this long
     * before it was counted, so a window of the counts may hold units admitted before the window
     * starts ({@link Measures#checkWindows}).
     */
    final AtomicLongArray countingDelay;
    private final ScenarioClock clock;
    /** whether the quota is published (one shared, published tenant plan instead of the hidden global quota) */
    boolean published;
    /** the bearer token of the app's {@code /admin/quota} */
    String adminToken;

    private InProcessServer(ExampleApp.Running app, Series admitted, ScenarioClock clock) {
        this.app = app;
        this.admitted = admitted;
        this.clock = clock;
        this.countingDelay = new AtomicLongArray(admitted.bins());
    }

    /**
     * @param published publish the quota in {@code RateLimit} fields (for the {@code headers} mode).
     *                  The global quota is never published, so the quota becomes the plan of the one
     *                  tenant that workers and neighbour share. Falls back to the hidden quota (and
     *                  says so) when the server cannot publish.
     */
    static InProcessServer start(Scenario scenario, ScenarioClock clock, boolean published) throws Exception {
        double perRealMinute = scenario.quota() * clock.speed();
        Plans plans = null;
        boolean publishing = false;
        if (published) {
            try {
                plans = PlansFile.parse("scenario " + scenario.name() + " (published)", publishedPlansYaml(perRealMinute, scenario.burst()));
                publishing = true;
            } catch (InvalidPlansException e) {
                System.err.println("scenario: this server cannot publish RateLimit fields (" + e.getMessage()
                        + "); the headers mode runs against the hidden quota");
            }
        }
        if (plans == null) plans = PlansFile.parse("scenario " + scenario.name(), plansYaml(perRealMinute, scenario.burst()));
        QuotaFilter filter = QuotaFilter.builder().plans(plans).build();
        // quota-drop changes the quota the way an operator would: PUT /admin/quota with this token
        String token = UUID.randomUUID().toString();
        ExampleApp.Running app = ExampleApp.start("127.0.0.1", 0, filter, token);
        InProcessServer server = new InProcessServer(app, new Series("server", scenario.seconds(),
                // requests still in flight at the end are admitted after it: keep counting them (the run waits 10 s real for them)
                (int) Math.ceil(11 * clock.speed()) + 60), clock);
        Series admitted = server.admitted;
        try {
            ServletContextHandler context = app.server().getDescendant(ServletContextHandler.class);
            // added after the QuotaFilter, so it sees exactly the requests the quota admitted
            context.addFilter(new FilterHolder(new Filter() {
                @Override
                public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain) throws IOException, ServletException {
                    if (ModeRun.WARM_UP_TENANT.equals(((HttpServletRequest) req).getHeader("X-Tenant-Id"))) {
                        chain.doFilter(req, res);   // before the story: not counted
                        return;
                    }
                    long now = server.clock.now();
                    long read = server.clock.at(ServletContextRequest.getServletContextRequest(req).getHeadersNanoTime());
                    int bin = admitted.bin(now);
                    server.countingDelay.accumulateAndGet(bin, now - read, Math::max);
                    admitted.accepted.incrementAndGet(bin);
                    chain.doFilter(req, res);
                }
            }), "/items/*", EnumSet.of(DispatcherType.REQUEST));
        } catch (RuntimeException e) {
            app.close();
            throw e;
        }
        server.published = publishing;
        server.adminToken = token;
        return server;
    }


    static String plansYaml(double quotaPerRealMinute, long burst) {
        long refill = Math.max(1, Math.round(quotaPerRealMinute));
        return String.format(Locale.ROOT, """
                global:
                  limits:
                    - { name: hidden, capacity: %d, refill: %d, period: 1m }
                plans:
                  unlimited:
                    limits:
                      - { name: huge, capacity: 1000000000, refill: 1000000000, period: 1s }
                routes:
                  - { name: admin, paths: ["/admin/**"], limited: false }
                  - { name: items, methods: [GET], paths: ["/items/*"], cost: 1 }
                tenants:
                  default-plan: unlimited
                  unresolved: reject
                  unknown: default
                """, burst, refill);
    }

    static String publishedPlansYaml(double quotaPerRealMinute, long burst) {
        long refill = Math.max(1, Math.round(quotaPerRealMinute));
        return String.format(Locale.ROOT, """
                plans:
                  shared:
                    publish: true
                    limits:
                      - { name: quota, capacity: %d, refill: %d, period: 1m }
                routes:
                  - { name: admin, paths: ["/admin/**"], limited: false }
                  - { name: items, methods: [GET], paths: ["/items/*"], cost: 1 }
                tenants:
                  default-plan: shared
                  unresolved: reject
                  unknown: default
                """, burst, refill);
    }

    /** {@link #countingDelay} in scenario seconds, per bin. */
    double[] countingDelaySeconds() {
        double[] seconds = new double[countingDelay.length()];
        for (int i = 0; i < seconds.length; i++) seconds[i] = countingDelay.get(i) / 1e9;
        return seconds;
    }

    /**
     * Real time for the hidden quota's bucket to refill completely, after the warm-up emptied it:
     * the story then starts from a full bucket, as without a warm-up.
     */
    static long refillNanos(Scenario scenario, ScenarioClock clock) {
        return (long) Math.ceil(scenario.burst() / (scenario.quota() * clock.speed() / 60) * 1e9);
    }

    String baseUri() {
        return app.baseUri();
    }

    /** The app's management port, where {@code /admin/quota} is served. */
    String managementUri() {
        return app.managementUri();
    }

    @Override
    public void close() throws Exception {
        app.close();
    }
}
