package io.quotagate.client;

/**
 * {@link RateController#aimd()} and {@link RateController#cubic()}: every step is relative to the
 * current rate or to the last ceiling, so the same defaults fit a quota of 1 request/s and one of
 * 10,000/s.
 *
 * <ol>
 *   <li><b>Slow start.</b> Until the first throttle the rate doubles, at most once a second.</li>
 *   <li><b>Cut</b> (once per congestion event: a throttle of a request sent before the last cut is
 *       not a new event). If at least 80 % of this instance's answers since the last cut were
 *       accepted, the rate becomes 0.8 × rate and the ceiling 0.9 × rate: the quota is a little
 *       below where the throttle came. Otherwise the last cut was not enough: the rate becomes the
 *       accepted share of the rate (what the server let through), at least 0.7 × rate, and the
 *       ceiling that new rate. A throttle while probing keeps the ceiling if 0.9 × rate is below it:
 *       the linger just proved it (against a bucket without burst, a probe is throttled just above
 *       the quota, and 0.9 × that would drift to 90 %).</li>
 *   <li><b>Linger.</b> After a cut the rate climbs back (doubling, at most once a second) to the
 *       ceiling and stays at or below it for at least 30 s <em>and</em> 300 of this instance's
 *       answers, at most 15 min: at most one throttle in 300 requests, however small the quota.</li>
 *   <li><b>Probe.</b> Then it rises above the ceiling: {@link Probe#LINEAR} by 0.5 % of the ceiling a
 *       second, {@link Probe#CUBIC} along {@code ceiling·(1 + (t / 2 min)³)}, {@code t} since the
 *       linger ended (flat near the ceiling, then steeper).</li>
 *   <li><b>Outage.</b> Three cuts in a row with nothing accepted in between are a server that refuses
 *       everything, not a smaller quota: the ceiling goes back to what it was before the first of
 *       them (in slow start: what the first of them set, if 80 % had been accepted until then), and the rate, which still falls, climbs
 *       back to it once the server answers again.</li>
 * </ol>
 *
 * <p>The rate grows only on accepted requests that had to wait for units. Not thread-safe: the
 * limiter calls it under its lock.
 */
final class RelativeController implements RateController {
    /** How the rate rises above the ceiling once the linger is over. */
    enum Probe { LINEAR, CUBIC }

    private enum Phase { SLOW_START, LINGER, PROBE }

    private static final long SECOND = 1_000_000_000L;
    static final double CUT = 0.8;
    static final double CEILING = 0.9;
    static final double HEALTHY_SHARE = 0.8;
    static final double DEEPEST_CUT = 0.7;
    static final long LINGER_AT_LEAST = 30 * SECOND;
    static final long LINGER_AT_MOST = 15 * 60 * SECOND;
    static final int LINGER_ANSWERS = 300;
    /** {@link Probe#LINEAR}: share of the ceiling added per second. */
    static final double LINEAR_STEP = 0.005;
    /** {@link Probe#CUBIC}: seconds until the curve is at twice the ceiling. */
    static final double CUBIC_SECONDS = 120;
    static final int OUTAGE_CUTS = 3;

    private final Probe probe;
    private Phase phase = Phase.SLOW_START;
    private double ceiling = Double.NaN;      // units per minute, whole app; NaN before the first cut
    private double ceilingBeforeStreak = Double.NaN;
    private long lastIncrease;
    private long lastCut = Long.MIN_VALUE;
    private long probeStart;
    private long accepted;                    // answers since the last cut (or the start)
    private long throttled;
    private int cutsInARow;                   // cuts with nothing accepted in between

    RelativeController(Probe probe) {
        this.probe = probe;
    }

    @Override
    public double start(double initial, double min, double max, long now) {
        lastIncrease = now;
        return initial;
    }

    /** The ceiling in units per minute for the whole app; NaN before the first throttle. */
    double ceiling() {
        return ceiling;
    }

    /** Whether the rate may rise above the ceiling now. */
    boolean probing() {
        return phase == Phase.PROBE;
    }

    @Override
    public double onThrottled(double rate, long now, long sentAt) {
        throttled++;
        // a 429 for a request sent before the last cut reports the congestion already answered
        if (lastCut != Long.MIN_VALUE && sentAt < lastCut) return rate;
        boolean firstOfStreak = ++cutsInARow == 1;
        double share = (double) accepted / (accepted + throttled);
        double ceilingBefore = ceiling;
        boolean healthy = share >= HEALTHY_SHARE;
        double next;
        if (healthy) {
            next = rate * CUT;
            // a throttle while probing: the ceiling held for the whole linger, so the quota is above it
            ceiling = phase == Phase.PROBE ? Math.max(ceiling, rate * CEILING) : rate * CEILING;
        } else {
            next = rate * Math.max(DEEPEST_CUT, share);
            ceiling = next;
        }
        // a server refusing everything says nothing about the quota: keep the ceiling it had before
        // (in slow start, the one its first throttle set, if the rate had been working until then)
        if (firstOfStreak) ceilingBeforeStreak = Double.isNaN(ceilingBefore) && healthy ? ceiling : ceilingBefore;
        if (cutsInARow >= OUTAGE_CUTS && !Double.isNaN(ceilingBeforeStreak)) ceiling = ceilingBeforeStreak;
        phase = Phase.LINGER;
        lastCut = now;
        // the climb back waits a second: otherwise the cut is undone by an answer already on its way
        lastIncrease = now;
        accepted = 0;
        throttled = 0;
        return next;
    }

    @Override
    public double onAccepted(double rate, long now, boolean waited) {
        accepted++;
        cutsInARow = 0;
        if (phase == Phase.LINGER && lingerOver(now)) {
            phase = Phase.PROBE;
            probeStart = now;
        }
        if (!waited) return rate;
        return switch (phase) {
            case SLOW_START -> doubled(rate, now, Double.MAX_VALUE);
            case LINGER -> rate < ceiling ? doubled(rate, now, ceiling) : rate;
            case PROBE -> {
                double target = probeTarget(now);
                if (rate < ceiling) yield doubled(rate, now, target);
                yield Math.max(rate, target);
            }
        };
    }

    private boolean lingerOver(long now) {
        long lingered = now - lastCut;
        return lingered >= LINGER_AT_MOST || (lingered >= LINGER_AT_LEAST && accepted + throttled >= LINGER_ANSWERS);
    }

    private double doubled(double rate, long now, double cap) {
        if (now - lastIncrease < SECOND) return rate;
        lastIncrease = now;
        return Math.min(cap, rate * 2);
    }

    /** The probe's rate at {@code now}, units per minute. */
    private double probeTarget(long now) {
        double t = (now - probeStart) / 1e9;
        return switch (probe) {
            case LINEAR -> ceiling * (1 + LINEAR_STEP * t);
            case CUBIC -> ceiling * (1 + Math.pow(t / CUBIC_SECONDS, 3));
        };
    }

    @Override
    public String toString() {
        return probe == Probe.LINEAR ? "aimd()" : "cubic()";
    }
}
