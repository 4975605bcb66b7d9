package io.quotagate.filter.testing;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * A scheduler for a filter's throttle ({@code QuotaFilter.Builder.throttleScheduler}) that records each planned
 * delay and runs the task only on {@link #release()}: a test reads the delays the filter planned instead of
 * timing them on the wall clock.
 */
public final class HeldScheduler extends ScheduledThreadPoolExecutor {
    /** The tasks scheduled and not yet released. */
    public final List<Runnable> held = new CopyOnWriteArrayList<>();
    /** Every delay asked for, in nanoseconds, in order. */
    public final List<Long> delays = new CopyOnWriteArrayList<>();

    public HeldScheduler() {
        super(1);
        setRemoveOnCancelPolicy(true);
    }

    @Override
    public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
        delays.add(unit.toNanos(delay));
        held.add(command);
        return super.schedule(() -> { }, 1, TimeUnit.HOURS); // cancellable, never due in a test
    }

    /** Runs every held task now, on this thread; a task scheduled meanwhile is held for the next release. */
    public void release() {
        List<Runnable> due = new ArrayList<>(held);
        held.clear();
        due.forEach(Runnable::run); // here: this executor's execute() is a schedule(), held again
    }
}
