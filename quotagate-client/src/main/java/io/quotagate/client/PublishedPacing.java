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
 */
final class PublishedPacing implements RateController {
    private final double tauP;
    private final double tauI;
    private double min;
    private double max;
    private double integral;        // units per second, whole app
    private long lastUpdate;
    private boolean primed;

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
        return initial;
    }

    @Override
    public double onThrottled(double rate, long now, long sentAt) {
        integral *= 0.9;
        return integral * 60;
    }

    @Override
    public double onAccepted(double rate, long now, boolean waited) {
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
        }
        primed = true;
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
