package io.quotagate.client;

import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/** A request queued for its units: completed with its permit by the limiter's timer. */
final class Waiter extends CompletableFuture<AdaptiveLimiter.Permit> {
    final long units;
    final long queuedAt;
    final long deadline;
    private final Consumer<Waiter> onCancel;

    /** @param onCancel takes the waiter out of its queue when the caller cancels it */
    Waiter(long units, long queuedAt, long deadline, Consumer<Waiter> onCancel) {
        this.units = units;
        this.queuedAt = queuedAt;
        this.deadline = deadline;
        this.onCancel = onCancel;
    }

    @Override
    public boolean cancel(boolean mayInterruptIfRunning) {
        boolean cancelled = super.cancel(mayInterruptIfRunning);
        if (cancelled) onCancel.accept(this);
        return cancelled;
    }
}
