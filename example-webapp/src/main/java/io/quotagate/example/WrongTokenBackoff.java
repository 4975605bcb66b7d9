package io.quotagate.example;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;

import java.time.Duration;
import java.util.Objects;
import java.util.function.LongSupplier;

/**
 * Slows down guessing of the admin token, per client address. The first wrong tokens of an address
 * cost nothing more than the 401; from the {@link #FREE_FAILURES}th on, each one locks the address
 * out for 1 s, then 2 s, 4 s ... up to {@link #MAX_LOCKOUT}. While locked out, the address gets at
 * most one token compared per {@link #COMPARE_INTERVAL}: the others are refused with 429 and
 * {@code Retry-After} without being compared. So a guesser gets about one try a second, while the
 * right token still works within a second: the operator's SSH tunnel arrives from 127.0.0.1 like
 * everyone else on the machine, and a lockout must not keep it out for minutes. A right token clears
 * its address's record; another address is never slowed by it.
 *
 * <p>Memory is bounded: at most {@value #MAX_ADDRESSES} addresses are remembered, each until
 * {@link #FORGET_AFTER} after its last wrong token or comparison. An attacker with more
 * addresses than that can push records out, which only gives it what a fresh address has anyway.
 *
 * <p>Only a presented bearer token that is wrong counts: a request without one compared nothing.
 * Wrong tokens sent at the same moment before a lockout are all compared (the lockout starts with
 * the first failure recorded); each of them extends it.
 */
final class WrongTokenBackoff {
    /** The failure that starts the first lockout. */
    static final int FREE_FAILURES = 3;
    /** The first lockout; each further failure doubles it. */
    static final Duration FIRST_LOCKOUT = Duration.ofSeconds(1);
    /** The longest lockout. */
    static final Duration MAX_LOCKOUT = Duration.ofMinutes(5);
    /** While locked out, an address gets one token compared per this long (its last comparison counts). */
    static final Duration COMPARE_INTERVAL = Duration.ofSeconds(1);
    /** An address without a wrong token for this long starts again from nothing. */
    static final Duration FORGET_AFTER = Duration.ofMinutes(15);
    /** The most addresses remembered. */
    static final int MAX_ADDRESSES = 10_000;

    /**
     * Wrong tokens of one address so far, the nanoTime its lockout ends (from {@link #FREE_FAILURES} on),
     * and the nanoTime of its last comparison.
     */
    private record Failures(int count, long lockedUntil, long lastCompared) {
    }

    private final LongSupplier nanos;
    private final Cache<String, Failures> failures;

    /** @param nanos time source in nanoseconds ({@code System::nanoTime}; tests advance their own) */
    WrongTokenBackoff(LongSupplier nanos) {
        this.nanos = Objects.requireNonNull(nanos, "nanos");
        this.failures = Caffeine.newBuilder()
                .maximumSize(MAX_ADDRESSES)
                .expireAfterWrite(FORGET_AFTER)
                .ticker(nanos::getAsLong)
                .executor(Runnable::run) // maintenance on the caller: no background thread, exact in tests
                .build();
    }

    /** Nanoseconds until {@code address}'s lockout ends; 0 if it is not locked out. */
    long lockedFor(String address) {
        Failures f = failures.getIfPresent(address);
        if (f == null || f.count < FREE_FAILURES) return 0;
        return Math.max(0, f.lockedUntil - nanos.getAsLong());
    }

    /**
     * Asks to compare a token from {@code address} now. Returns 0 if it may: always when the address
     * is not locked out; while it is, once per {@link #COMPARE_INTERVAL}, and this call takes that turn.
     * Otherwise returns the nanoseconds until its next turn (at most {@link #COMPARE_INTERVAL}).
     */
    long mayCompare(String address) {
        long now = nanos.getAsLong();
        Failures seen = failures.getIfPresent(address);
        if (!lockedOut(seen, now)) return 0;
        if (turnIn(seen, now) > 0) return turnIn(seen, now); // the common refusal, without a write
        long[] wait = {0};
        // compute, not get-then-put: of requests racing for one turn, exactly one gets it
        failures.asMap().computeIfPresent(address, (a, f) -> {
            if (!lockedOut(f, now)) return f;
            wait[0] = turnIn(f, now);
            return wait[0] > 0 ? f : new Failures(f.count, f.lockedUntil, now);
        });
        return wait[0];
    }

    private static boolean lockedOut(Failures f, long now) {
        return f != null && f.count >= FREE_FAILURES && f.lockedUntil - now > 0;
    }

    /** Nanoseconds until a locked-out address may have a token compared again; 0 if now. */
    private static long turnIn(Failures f, long now) {
        return Math.max(0, f.lastCompared + COMPARE_INTERVAL.toNanos() - now);
    }

    /** Records a wrong token from {@code address}; returns how long it is now locked out, in nanoseconds. */
    long failed(String address) {
        long now = nanos.getAsLong();
        Failures f = failures.asMap().compute(address, (a, old) -> {
            int count = old == null ? 1 : old.count + 1;
            return new Failures(count, count < FREE_FAILURES ? 0 : now + lockout(count), now);
        });
        return f.count < FREE_FAILURES ? 0 : f.lockedUntil - now;
    }

    /** The lockout after the {@code count}th wrong token: 1 s at {@value #FREE_FAILURES}, doubling, capped. */
    static long lockout(int count) {
        int doublings = Math.min(count - FREE_FAILURES, 30); // 2^30 s is far past the cap: no overflow
        return Math.min(MAX_LOCKOUT.toNanos(), FIRST_LOCKOUT.toNanos() << doublings);
    }

    /** A right token from {@code address}: its wrong ones are forgotten. */
    void succeeded(String address) {
        failures.invalidate(address);
    }

    /** Addresses remembered now (tests). */
    long addresses() {
        failures.cleanUp();
        return failures.estimatedSize();
    }
}
