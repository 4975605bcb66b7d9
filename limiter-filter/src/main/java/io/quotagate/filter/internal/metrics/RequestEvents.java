package io.quotagate.filter.internal.metrics;

import io.quotagate.filter.metrics.StatisticsView.CostSink;
import io.quotagate.filter.metrics.StatisticsView.DelaySink;
import io.quotagate.filter.status.ConcurrencyListener;

import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiConsumer;

/**
 * What a {@link RequestStatistics} passes on rather than counts in its cells: concurrency queue waits,
 * throttle delays (and how many requests are delayed now), settled costs and refusals by buckets beside the
 * tenant's, each to the receivers added for it (the meter binder's timers, summaries and counters).
 */
final class RequestEvents {
    private final List<ConcurrencyListener> queueWaitSinks = new CopyOnWriteArrayList<>();
    private final List<CostSink> costSinks = new CopyOnWriteArrayList<>();
    private final List<DelaySink> delaySinks = new CopyOnWriteArrayList<>();
    private final AtomicInteger delayedNow = new AtomicInteger();
    private final List<BiConsumer<String, String>> scopedRefusalSinks = new CopyOnWriteArrayList<>();

    void queueWait(String group, String tenant, long waitedNanos, boolean admitted) {
        for (ConcurrencyListener sink : queueWaitSinks) sink.queueWait(group, tenant, waitedNanos, admitted);
    }

    void onQueueWait(ConcurrencyListener sink) {
        queueWaitSinks.add(Objects.requireNonNull(sink, "sink"));
    }

    void delayStarted() {
        delayedNow.incrementAndGet();
    }

    void delayEnded(String route, long nanos, boolean resumed) {
        delayedNow.decrementAndGet();
        for (DelaySink sink : delaySinks) sink.delayed(route, nanos, resumed);
    }

    int delayedNow() {
        return delayedNow.get();
    }

    void onDelay(DelaySink sink) {
        delaySinks.add(Objects.requireNonNull(sink, "sink"));
    }

    void costSettled(String route, long reserved, long actual) {
        for (CostSink sink : costSinks) sink.settled(route, reserved, actual);
    }

    void onCostSettled(CostSink sink) {
        costSinks.add(Objects.requireNonNull(sink, "sink"));
    }

    void scopedRefused(String route, String scope) {
        for (BiConsumer<String, String> sink : scopedRefusalSinks) sink.accept(route, scope);
    }

    void onScopedRefusal(BiConsumer<String, String> sink) {
        scopedRefusalSinks.add(Objects.requireNonNull(sink, "sink"));
    }
}
