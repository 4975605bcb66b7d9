package io.quotagate.loadtest.scenario;

import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * Whether this machine can be expected to keep a scenario's schedule at a speed-up, said before the
 * run starts. Clients, servers and the generator all share the machine's processors, and compressing
 * time multiplies the request rate by the speed; past what the processors carry, requests queue in
 * the clients and the story is no longer the one of {@code --speed 1}. The run itself measures what
 * really happened ({@link Pace}); this is the estimate that warns first.
 */
final class Capacity {
    /**
     * Requests per second (as {@link #offeredPerSecond} counts them) per processor that the
     * in-process example apps and their clients carry on schedule. Measured on a 2-vCPU machine
     * shared with other builds: {@code race} kept its schedule at {@code --speed 15} (6,250/s by
     * this count) and did not at 22 (9,170/s) nor 30; so the warning starts a little above 15.
     */
    static final double REQUESTS_PER_SECOND_PER_CPU = 3_500;

    private Capacity() {
    }

    /**
     * About how many requests per second (real time) the modes send: the clients with a limiter
     * settle near the quota (or their fixed rate), {@code none} sends its demand and retries the
     * excess over the quota up to {@link ModeRun#MAX_RETRIES} times; the neighbour adds its rate.
     */
    static double offeredPerSecond(Scenario scenario, List<Mode> modes, double speed) {
        double perMinute = 0;
        double neighbour = scenario.neighbour().map(Scenario.Neighbour::unitsPerMinute).orElse(0.0);
        double demand = scenario.workers().size() * scenario.demand();
        for (Mode mode : modes) {
            perMinute += neighbour + switch (mode) {
                case NONE -> demand + ModeRun.MAX_RETRIES * Math.max(0, demand - scenario.quota());
                case FIXED -> Math.min(demand, scenario.fixedRate());
                case AIMD, CUBIC, HEADERS -> Math.min(demand, scenario.quota());
            };
        }
        return perMinute / 60 * speed;
    }

    /** The warning to print before the run, if the speed asks more of this machine than it is known to carry. */
    static Optional<String> warning(Scenario scenario, List<Mode> modes, double speed) {
        return warning(scenario, modes, speed, Runtime.getRuntime().availableProcessors());
    }

    static Optional<String> warning(Scenario scenario, List<Mode> modes, double speed, int processors) {
        double offered = offeredPerSecond(scenario, modes, speed);
        double carried = REQUESTS_PER_SECOND_PER_CPU * processors;
        if (offered <= carried) return Optional.empty();
        double faithful = Math.floor(speed * carried / offered * 10) / 10;
        // the rate is linear in the speed, but a tenth rounded in floating point can land a hair above the budget
        while (faithful > 0.1 && offeredPerSecond(scenario, modes, faithful) > carried) faithful = Math.round(faithful * 10 - 1) / 10.0;
        return Optional.of(String.format(Locale.ROOT,
                "WARNING: at speed %s the modes may send up to %,.0f requests/s, more than the %,.0f that %d processor(s) "
                        + "carry on schedule (%,.0f each); requests will queue in the clients and the figures will drift "
                        + "from --speed 1. Use --speed %s or less, or fewer --modes, or a smaller --scale.",
                Reports.fmt(speed), offered, carried, processors, REQUESTS_PER_SECOND_PER_CPU, Reports.fmt(Math.max(faithful, 0.1))));
    }
}
