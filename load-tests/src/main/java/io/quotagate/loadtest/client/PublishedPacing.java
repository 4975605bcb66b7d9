package io.quotagate.loadtest.client;

import java.util.List;

/**
 * Paces a client from the {@code RateLimit} fields the server publishes, so that it needs no 429
 * to find the quota.
 *
 * <p>The remaining units {@code r} of the most constrained policy are the level of the server's
 * bucket: they rise when everyone together sends less than the refill and fall when they send more.
 * A proportional-integral loop keeps {@code r} at a small set point {@code s} (5% of the policy's
 * quota): {@code rate = I + (r − s)/τp} with {@code dI/dt = (r − s)/τi} and {@code τi = 4·τp²}
 * (critically damped on the bucket, which integrates refill minus consumption). In balance the
 * bucket neither empties (no 429) nor fills (no lost refill), whatever the other clients take.
 * The integral starts at the policy's sustained rate {@code q/w}. A 429 still pauses the limiter
 * (see {@link ClientLimiter}) and trims the integral by 10%.
 */
public final class PublishedPacing implements RateController {
    private final double min;
    private final double max;
    private final double tauP;
    private final double tauI;
    private double integral;        // units per second, whole app
    private double rate;            // units per minute, whole app
    private long lastUpdate;
    private boolean primed;

    /**
     * @param initial    units per minute before any field was seen
     * @param min        lowest rate
     * @param max        highest rate
     * @param tauSeconds the loop's time constant τp (seconds of the caller's clock)
     * @param now        the caller's clock
     */
    public PublishedPacing(double initial, double min, double max, double tauSeconds, long now) {
        if (!(min > 0) || min > max) throw new IllegalArgumentException("need 0 < min <= max");
        if (!(tauSeconds > 0)) throw new IllegalArgumentException("tau must be > 0");
        this.min = min;
        this.max = max;
        this.tauP = tauSeconds;
        this.tauI = 4 * tauSeconds * tauSeconds;
        this.rate = RateController.clamp(initial, min, max);
        this.integral = rate / 60;
        this.lastUpdate = now;
    }

    @Override
    public double unitsPerMinute() {
        return rate;
    }

    @Override
    public void onThrottled(long now, long sentAt) {
        integral *= 0.9;
        rate = RateController.clamp(integral * 60, min, max);
    }

    @Override
    public void onAccepted(long now, boolean waited) {
    }

    @Override
    public void onPublished(long now, List<RateLimitFields.Limit> limits, List<RateLimitFields.Policy> policies) {
        RateLimitFields.Limit binding = null;
        double bindingFill = Double.MAX_VALUE;
        RateLimitFields.Policy bindingPolicy = null;
        for (RateLimitFields.Limit limit : limits) {
            RateLimitFields.Policy policy = policies.stream()
                    .filter(p -> p.name().equals(limit.policy())).findFirst().orElse(null);
            double fill = policy != null && policy.quota() > 0 ? (double) limit.remaining() / policy.quota() : limit.remaining();
            if (fill < bindingFill) {
                bindingFill = fill;
                binding = limit;
                bindingPolicy = policy;
            }
        }
        if (binding == null) return;
        double setPoint = bindingPolicy != null ? Math.max(1, bindingPolicy.quota() / 20.0) : 10;
        if (!primed && bindingPolicy != null && bindingPolicy.windowSeconds().isPresent()) {
            integral = (double) bindingPolicy.quota() / bindingPolicy.windowSeconds().get();
        }
        primed = true;
        double dt = Math.max(0, (now - lastUpdate) / 1e9);
        lastUpdate = now;
        double error = binding.remaining() - setPoint;
        integral = Math.max(min / 60, Math.min(max / 60, integral + error / tauI * dt));
        rate = RateController.clamp((integral + error / tauP) * 60, min, max);
    }
}
