package io.quotagate.loadtest.scenario;

import java.util.ArrayList;
import java.util.List;

/**
 * The figures of one mode after a run.
 *
 * @param serverSide     whether {@code admitted} was counted by the server (in-process) or summed
 *                       from the clients' accepted responses (external target)
 * @param convergence    seconds the workers needed to settle after each event of the scenario
 * @param pace           whether the generator kept the schedule, and how many requests failed
 */
record ModeResult(Mode mode, Scenario scenario, ModeRun run, Series admitted, boolean serverSide,
                  long accepted, double unitsPerMinute, long throttled, long rejectedByLimiter, long gaveUp,
                  long errors, long neighbourAccepted, long neighbourThrottled, double utilization, double fairness,
                  Measures.WindowCheck window, List<Convergence> convergence, boolean publishedFieldsSeen,
                  Pace.Verdict pace) {

    /**
     * How long the workers' accepted rate took to reach its new share after an event, and to hold
     * it (seconds, -1: never).
     */
    record Convergence(String event, int atSecond, double targetPerMinute, int reachSeconds, int seconds) {
        static Convergence of(String event, int at, int until, double target, long[] perSecond) {
            return new Convergence(event, at, target,
                    Measures.reach(perSecond, at, until, target, CONVERGENCE_TOLERANCE, CONVERGENCE_SMOOTHING),
                    Measures.convergence(perSecond, at, until, target, CONVERGENCE_TOLERANCE, CONVERGENCE_SMOOTHING, CONVERGENCE_HOLD));
        }
    }

    static final double CONVERGENCE_TOLERANCE = 0.15;
    static final int CONVERGENCE_SMOOTHING = 10;
    static final int CONVERGENCE_HOLD = 20;

    /** @param countingDelay per second, the server's longest delay from admitting a unit to counting it, scenario s (empty for clients' counts) */
    static ModeResult of(Mode mode, Scenario scenario, ModeRun run, Series serverAdmitted, double[] countingDelay) {
        int seconds = scenario.seconds();
        long accepted = 0, throttled = 0, rejected = 0, gaveUp = 0, errors = 0;
        double[] perInstance = new double[run.workers.size()];
        long[] workersPerSecond = new long[seconds];
        for (int i = 0; i < run.workers.size(); i++) {
            ModeRun.Worker w = run.workers.get(i);
            long a = Series.total(w.series.accepted);
            accepted += a;
            throttled += Series.total(w.series.throttled);
            rejected += Series.total(w.series.rejected);
            gaveUp += Series.total(w.series.gaveUp);
            errors += Series.total(w.series.errors);
            double aliveMinutes = Math.max(1e-9, (seconds - w.startNanos / 1e9) / 60);
            perInstance[i] = a / aliveMinutes;
            for (int s = 0; s < seconds; s++) workersPerSecond[s] += w.series.accepted.get(s);
        }
        long neighbourAccepted = Series.total(run.neighbour.accepted);
        boolean serverSide = serverAdmitted != null;
        Series admitted = serverAdmitted;
        if (admitted == null) {
            // external target: the clients' accepted responses are the best view we have of it
            admitted = new Series("accepted by clients", seconds);
            for (int s = 0; s <= seconds; s++) {
                long sum = run.neighbour.accepted.get(s);
                for (ModeRun.Worker w : run.workers) sum += w.series.accepted.get(s);
                admitted.accepted.set(s, sum);
            }
        }
        // every bin, including the tail after the end where the last requests in flight were admitted
        int bins = admitted.bins();
        long[] admittedPerSecond = new long[bins];
        double[] quotaPerSecond = new double[bins];
        for (int s = 0; s < bins; s++) {
            admittedPerSecond[s] = admitted.accepted.get(s);
            quotaPerSecond[s] = scenario.quotaAt(Math.min(s, seconds - 1));
        }
        Measures.WindowCheck window = Measures.checkWindows(admittedPerSecond, quotaPerSecond, scenario.burst(), 60, countingDelay);

        List<Convergence> convergence = new ArrayList<>();
        scenario.neighbour().ifPresent(n -> {
            int arrive = (int) n.start().toSeconds();
            int leave = (int) n.end().toSeconds();
            double during = scenario.quota() - n.unitsPerMinute();
            convergence.add(Convergence.of("neighbour arrives", arrive, Math.min(leave, seconds), during, workersPerSecond));
            int next = scenario.quotaDrop().map(d -> (int) d.start().toSeconds()).filter(s -> s > leave).orElse(seconds);
            convergence.add(Convergence.of("neighbour leaves", leave, next, scenario.quotaAt(leave), workersPerSecond));
        });
        scenario.quotaDrop().ifPresent(d -> {
            int from = (int) d.start().toSeconds();
            int to = (int) d.end().toSeconds();
            convergence.add(Convergence.of("quota drops", from, Math.min(to, seconds), scenario.quotaAt(from), workersPerSecond));
            convergence.add(Convergence.of("quota restored", to, seconds, scenario.quotaAt(to), workersPerSecond));
        });

        double minutes = seconds / 60.0;
        return new ModeResult(mode, scenario, run, admitted, serverSide, accepted, accepted / minutes, throttled, rejected,
                gaveUp, errors, neighbourAccepted, Series.total(run.neighbour.throttled),
                Measures.utilization(accepted, scenario.quotaUnits(), neighbourAccepted),
                Measures.jain(perInstance), window, convergence, run.sawPublishedFields(), run.pace.verdict());
    }
}
