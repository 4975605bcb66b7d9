package io.quotagate.client;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * {@link RateController#publishedPacing(Duration)}: paces from the {@code RateLimit} fields the server
 * publishes, so that it needs no 429 to find the quota.
 *
 * <p>The remaining units {@code r} of the most constrained policy are the level of the server's
 * bucket: they rise when everyone together sends less than the refill and fall when they send more.
 * A proportional-integral loop keeps {@code r} at a small set point {@code s} (5% of the policy's
 * quota): {@code rate = I + (r − s)/τp} with {@code dI/dt = (r − s)/τi} and {@code τi = 4·τp²}
 * (critically damped on the bucket, which integrates refill minus consumption). In balance the
 * bucket neither empties (no 429) nor fills (no lost refill), whatever the other clients take.
 * The integral starts at the policy's sustained rate {@code q/w}. A 429 still pauses the limiter
 * and trims the integral by 10%.
 *
 * <p>Without fields there is nothing to pace from: while no readable field has come for {@code τp}
 * (a server that publishes none, or stopped), the answers go to {@link RateController#aimd()}
 * instead, which learns from 429s alone: a 429 cuts once per congestion event, and after a phase
 * of 429s the 2xx answers of requests that waited climb back, doubling at most once a second, to
 * the ceiling the 429s left. Without this a run of 429s trimmed the integral down to the minimum
 * rate and nothing ever raised it again. When fields come back, the loop takes over from the rate
 * that controller reached.
 */
final class PublishedPacing implements RateController {
    private final double tauP;
    private final double tauI;
    private double min;
    private double max;
    private double integral;        // units per second, whole app
    private long lastUpdate;
    private boolean primed;
    // the answers while the server publishes nothing
    private final RelativeController blind = new RelativeController(RelativeController.Probe.LINEAR);
    private long lastPublished;
    private boolean published;

    PublishedPacing(Duration tau) {
        Objects.requireNonNull(tau, "tau");
        if (tau.isNegative() || tau.isZero()) throw new IllegalArgumentException("tau must be > 0, was " + tau);
        this.tauP = tau.toNanos() / 1e9;
        this.tauI = 4 * tauP * tauP;
    }

    @Override
    public double start(double initial, double min, double max, long now) {
        this.min = min;
        this.max = max;
        this.integral = initial / 60;
        this.lastUpdate = now;
        blind.start(initial, min, max, now);
        return initial;
    }

    /**
     * Whether the loop paces now: a readable field came within {@code τp}. A server that publishes
     * fields sends them on the very answer the limiter reports next (they are read first), so an
     * answer without any is told by the time since the last.
     */
    private boolean pacing(long now) {
        return published && now - lastPublished <= tauP * 1e9;
    }

    @Override
    public double onThrottled(double rate, long now, long sentAt) {
        if (!pacing(now)) return blind.onThrottled(rate, now, sentAt);
        integral *= 0.9;
        return integral * 60;
    }

    @Override
    public double onAccepted(double rate, long now, boolean waited) {
        if (!pacing(now)) return blind.onAccepted(rate, now, waited);
        return rate;
    }

    @Override
    public double onPublished(double rate, long now, List<RateLimitFields.Limit> limits, List<RateLimitFields.Policy> policies) {
        RateLimitFields.Limit binding = null;
        double bindingFill = Double.MAX_VALUE;
        RateLimitFields.Policy bindingPolicy = null;
        // by name, the first of a name winning: one pass over each list, however many the server sends
        Map<String, RateLimitFields.Policy> byName = new HashMap<>();
        for (RateLimitFields.Policy p : policies) byName.putIfAbsent(p.name(), p);
        for (RateLimitFields.Limit limit : limits) {
            RateLimitFields.Policy policy = byName.get(limit.policy());
            double fill = policy != null && policy.quota() > 0 ? (double) limit.remaining() / policy.quota() : limit.remaining();
            if (fill < bindingFill) {
                bindingFill = fill;
                binding = limit;
                bindingPolicy = policy;
            }
        }
        if (binding == null) return rate;
        double setPoint = bindingPolicy != null ? Math.max(1, bindingPolicy.quota() / 20.0) : 10;
        if (!primed && bindingPolicy != null && bindingPolicy.windowSeconds().isPresent()) {
            integral = (double) bindingPolicy.quota() / bindingPolicy.windowSeconds().get();
        } else if (!pacing(now)) {
            // fields again after a time without: the loop goes on from the rate the answers led to,
            // and the time without fields is no error to integrate
            integral = rate / 60;
            lastUpdate = now;
        }
        primed = true;
        published = true;
        lastPublished = now;
        double dt = Math.max(0, (now - lastUpdate) / 1e9);
        lastUpdate = now;
        double error = binding.remaining() - setPoint;
        integral = Math.max(min / 60, Math.min(max / 60, integral + error / tauI * dt));
        return (integral + error / tauP) * 60;
    }

    @Override
    public String toString() {
        return "publishedPacing(" + tauP + " s)";
    }
}
