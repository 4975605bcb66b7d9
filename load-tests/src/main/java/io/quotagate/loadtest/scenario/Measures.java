package io.quotagate.loadtest.scenario;

/** The figures a run is judged by, computed from per-second counts. Pure functions. */
final class Measures {
    private Measures() {
    }

    /**
     * Jain's fairness index {@code (Σx)² / (n·Σx²)}: 1 when every instance got the same, {@code 1/n}
     * when one got everything. 1 for no or one instance, or when all got nothing.
     */
    static double jain(double[] x) {
        if (x.length <= 1) return 1;
        double sum = 0, squares = 0;
        for (double v : x) {
            sum += v;
            squares += v * v;
        }
        return squares == 0 ? 1 : sum * sum / (x.length * squares);
    }

    /**
     * The share of the hidden quota the workers used: their accepted units over what the quota let
     * through during the run (∫ quota dt) minus what the neighbour got. Can exceed 1 by the bucket's
     * initial burst.
     */
    static double utilization(long workersAccepted, double quotaUnits, long neighbourAccepted) {
        double available = quotaUnits - neighbourAccepted;
        return available <= 0 ? 0 : workersAccepted / available;
    }

    /** The worst 60 s window of the server-side check; {@code slackUnits}: what its allowance added for the counting delay. */
    record WindowCheck(int worstStart, long worstAccepted, double worstAllowed, boolean passed, double slackUnits) {
    }

    /**
     * Checks that no {@code window}-second window of whole seconds admitted more than the quota
     * refilled in it plus the bucket's capacity (the most a token bucket can ever give in a window).
     * Windows of whole-second bins lie inside real windows, so a pass here is a true pass for them.
     * A unit counted in second {@code b} may have been admitted up to {@code delay[b]} earlier, so a
     * window's counts may hold units admitted before it starts: its allowance covers that stretch
     * too, as far back as the earliest admission its own bins allow (under compressed time a few ms
     * of real delay are a sizeable fraction of a scenario second).
     *
     * @param admitted    units admitted per second
     * @param quotaPerMin the quota during each second, units per minute
     * @param delay       per second, the longest a unit counted in it can have been admitted before, scenario seconds
     *                    (missing entries: 0)
     */
    static WindowCheck checkWindows(long[] admitted, double[] quotaPerMin, long burst, int window, double[] delay) {
        int worstStart = 0;
        long worstAccepted = 0;
        double worstAllowed = 0;
        double worstSlack = 0;
        double worstMargin = Double.NEGATIVE_INFINITY;
        int n = admitted.length;
        int w = Math.min(window, n);
        for (int start = 0; start + w <= n; start++) {
            long sum = 0;
            double before = 0;   // how far before the window its earliest unit can have been admitted
            double allowed = burst;
            for (int i = start; i < start + w; i++) {
                sum += admitted[i];
                allowed += quotaPerMin[i] / 60;
                if (i < delay.length) before = Math.max(before, delay[i] - (i - start));
            }
            double slack = quotaPerMin[Math.max(0, start - 1)] / 60 * before;
            allowed += slack;
            double margin = sum - allowed;
            if (margin > worstMargin) {
                worstMargin = margin;
                worstStart = start;
                worstAccepted = sum;
                worstAllowed = allowed;
                worstSlack = slack;
            }
        }
        return new WindowCheck(worstStart, worstAccepted, worstAllowed, worstMargin <= 1e-9, worstSlack);
    }

    /**
     * Seconds after {@code event} until the workers hold their new share: the end of the first
     * {@code smooth}-second window (units per second averaged, compared in units per minute) from
     * which every window starting in the next {@code hold} seconds is within {@code tolerance} of
     * {@code target}; -1 if that never happens before {@code until}. A sawtooth that only crosses
     * the band, or a later excursion, does not count: the share has to stay for {@code hold} s.
     */
    static int convergence(long[] perSecond, int event, int until, double target, double tolerance, int smooth, int hold) {
        if (hold < 1) throw new IllegalArgumentException("hold must be >= 1");
        for (int start = event; start + hold - 1 + smooth <= until; start++) {
            boolean holds = true;
            for (int w = start; w < start + hold && holds; w++) {
                long sum = 0;
                for (int i = w; i < w + smooth; i++) sum += perSecond[i];
                holds = Math.abs(sum * 60.0 / smooth - target) <= tolerance * target;
            }
            if (holds) return start - event + smooth;
        }
        return -1;
    }

    /** Seconds after {@code event} until the first {@code smooth}-second average within the band ({@code hold} = 1). */
    static int reach(long[] perSecond, int event, int until, double target, double tolerance, int smooth) {
        return convergence(perSecond, event, until, target, tolerance, smooth, 1);
    }
}
