package io.quotagate.client;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * The requests of an {@link AdaptiveLimiter} waiting for units, first come first served, and the units they
 * ask for together. One maximum wait for all, so the head has the earliest deadline. Not thread-safe: used
 * under the limiter's lock; the waiters taken out are completed after it is released.
 */
final class WaitQueue {
    private final ArrayDeque<Waiter> waiters = new ArrayDeque<>();
    private long units;

    int size() {
        return waiters.size();
    }

    boolean isEmpty() {
        return waiters.isEmpty();
    }

    /** The units all waiters ask for. */
    long units() {
        return units;
    }

    /** The first waiter, or null. */
    Waiter head() {
        return waiters.peekFirst();
    }

    void add(Waiter w) {
        waiters.addLast(w);
        units += w.units;
    }

    /** Takes out a waiter (cancelled); false if it was no longer queued. */
    boolean remove(Waiter w) {
        if (!waiters.remove(w)) return false;
        units -= w.units;
        return true;
    }

    /** Takes out the waiters whose deadline comes before {@code time}; null if none. */
    List<Waiter> takeDeadlinesBefore(long time) {
        List<Waiter> taken = null;
        while (!waiters.isEmpty() && waiters.peekFirst().deadline < time) {
            if (taken == null) taken = new ArrayList<>();
            taken.add(take());
        }
        return taken;
    }

    /** Takes out, in order, the waiters whose units the bucket has now, taking those units; null if none. */
    List<Waiter> takeGranted(RateBucket bucket) {
        List<Waiter> taken = null;
        while (!waiters.isEmpty() && bucket.take(waiters.peekFirst().units)) {
            if (taken == null) taken = new ArrayList<>();
            taken.add(take());
        }
        return taken;
    }

    private Waiter take() {
        Waiter w = waiters.pollFirst();
        units -= w.units;
        return w;
    }
}
