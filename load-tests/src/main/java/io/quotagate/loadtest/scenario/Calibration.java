package io.quotagate.loadtest.scenario;

import io.quotagate.example.ExampleApp;
import io.quotagate.filter.QuotaFilter;
import io.quotagate.plans.Bandwidth;
import io.quotagate.plans.Plans;
import io.quotagate.plans.PlansFile;

import org.eclipse.jetty.client.HttpClient;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.atomic.LongAdder;

/**
 * A short measurement, before an in-process run, of how many requests per second this machine carries through
 * the example app and its filter right now, with other load on it: {@link Capacity} knows processors, not
 * neighbours. A run that asks more than {@link #HEADROOM} of it will not keep its schedule (its requests wait in
 * the clients and {@link Pace} marks it SATURATED), so the warning comes first, with a speed that fits.
 */
final class Calibration {
    /** Share of the measured rate a run may ask and still keep its lags short: the rest is queueing. */
    static final double HEADROOM = 0.6;
    private static final Duration WARM_UP = Duration.ofMillis(1_500);
    private static final Duration MEASURE = Duration.ofMillis(1_500);
    private static final int CONNECTIONS = 8;

    private Calibration() {
    }

    /** Measures, then answers the warning to print, if the speed asks more than this machine carries now. */
    static Optional<String> warning(Scenario scenario, List<Mode> modes, double speed) throws Exception {
        return warning(Capacity.offeredPerSecond(scenario, modes, speed), measure(), speed);
    }

    static Optional<String> warning(double offered, double measured, double speed) {
        double kept = measured * HEADROOM;
        if (offered <= kept) return Optional.empty();
        double faithful = Math.max(0.1, Math.floor(speed * kept / offered * 10) / 10);
        return Optional.of(String.format(Locale.ROOT,
                "WARNING: a %.0f s calibration carried %,.0f requests/s through the example app on this machine now; at "
                        + "speed %s the modes may send up to %,.0f/s, more than the %,.0f/s (%.0f %%) that keeps the "
                        + "schedule: expect SATURATED (exit status %d). Use --speed %s or less.",
                (WARM_UP.toMillis() + MEASURE.toMillis()) / 1000.0, measured, Reports.fmt(speed), offered, kept,
                100 * HEADROOM, ScenarioCommand.SATURATED, Reports.fmt(faithful)));
    }

    /** Requests per second one app carries from {@value #CONNECTIONS} keep-alive connections, after a warm-up. */
    static double measure() throws Exception {
        Plans plans = PlansFile.load(ExampleApp.DEFAULT_PLANS);
        QuotaFilter filter = ExampleApp.withEstimators(QuotaFilter.builder().plans(plans), plans).build();
        // no quota in the way: what is measured is the machine, not a bucket
        filter.control().setGlobalQuota(List.of());
        filter.control().setPlanLimits("pro", List.of(new Bandwidth("b0", 1_000_000_000, 1_000_000_000, Duration.ofSeconds(1))));
        HttpClient client = new HttpClient(); // the scenario's own client, Jetty's, so the figure is the run's
        client.setMaxConnectionsPerDestination(CONNECTIONS);
        client.start();
        try (ExampleApp.Running app = ExampleApp.start("127.0.0.1", 0, filter)) {
            String uri = app.baseUri() + "/items/1";
            long start = System.nanoTime();
            long measureFrom = start + WARM_UP.toNanos();
            long end = measureFrom + MEASURE.toNanos();
            LongAdder done = new LongAdder();
            List<Thread> threads = new ArrayList<>();
            for (int i = 0; i < CONNECTIONS; i++) {
                Thread t = new Thread(() -> {
                    for (long now = System.nanoTime(); now < end; now = System.nanoTime()) {
                        try {
                            client.newRequest(uri).headers(h -> h.put("X-Tenant-Id", "acme"))
                                    .timeout(5, java.util.concurrent.TimeUnit.SECONDS).send();
                        } catch (InterruptedException e) {
                            return;
                        } catch (Exception e) {
                            continue; // a failed request carried nothing
                        }
                        if (now >= measureFrom) done.increment();
                    }
                }, "calibration-" + i);
                t.setDaemon(true);
                t.start();
                threads.add(t);
            }
            for (Thread t : threads) t.join();
            return done.sum() / (MEASURE.toNanos() / 1e9);
        } finally {
            client.stop();
        }
    }
}
