package io.quotagate.filter.internal.signals;

import io.quotagate.filter.internal.admission.QuotaPeriod;
import io.quotagate.filter.signals.QuotaEvent;
import io.quotagate.filter.signals.QuotaListener;
import io.quotagate.filter.signals.WebhookListener;
import io.quotagate.filter.status.BandwidthStatus;
import io.quotagate.filter.store.QuotaClock;
import io.quotagate.plans.SignalSettings;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Supplier;

/**
 * The checks behind {@link QuotaSignals}. The request path only records who was admitted or refused
 * since the last check (one map entry per tenant, bounded); everything else happens in {@link #check},
 * on the signals thread: spells of refusals (exhausted, throttled for long, recovered), the usage of the
 * reported tenants' limits (near-limit, one store read per tenant and check), their calendar quotas
 * (near-limit thresholds and used up, each claimed once per tenant, quota and period across the
 * instances through the store, from the counts this instance already holds), the global quota and
 * the store's availability. Events go to the {@link Dispatcher} and to a log line (at most
 * {@value #LOG_LINES_PER_SECOND} a second).
 */
final class SignalEngine implements QuotaSignals {
    private static final System.Logger LOG = System.getLogger(QuotaEvent.class.getName());
    /** Tenants recorded between two checks at most; more are not looked at in that check (counted). */
    static final int MAX_PENDING = 100_000;
    /** Tenants with a fired near-limit remembered at most; past it all are re-armed. */
    static final int MAX_FIRED = 100_000;
    /** A near-limit (and the global one) is re-armed this many points below its threshold: no flapping. */
    static final int REARM_POINTS = 5;
    static final int LOG_LINES_PER_SECOND = 10;
    /** The refusal reason of a calendar quota. */
    static final String QUOTA = "quota";
    private static final long MINUTE = TimeUnit.MINUTES.toNanos(1);
    private static final long SECOND = TimeUnit.SECONDS.toNanos(1);

    private record Seen(String plan, String reason) {
    }

    /** A tenant's refusals: the current spell (exhausted until recovered) and its minutes with refusals. */
    private static final class Spell {
        String plan;
        boolean active;
        boolean throttledFired;
        long start;
        long last;
        long count;
        final ArrayDeque<Long> minutes = new ArrayDeque<>();

        void refusedAt(long minute) {
            Long newest = minutes.peekLast();
            if (newest == null || newest != minute) minutes.addLast(minute);
        }

        int minutesWithin(long nowMinute, long windowMinutes) {
            while (!minutes.isEmpty() && minutes.peekFirst() <= nowMinute - windowMinutes) minutes.pollFirst();
            return minutes.size();
        }
    }

    private final Supplier<SignalSettings> settings;
    private final SignalProbe probe;
    private final QuotaClock clock;
    private final Clock wall = Clock.systemUTC();
    private final Dispatcher dispatcher;
    /** The webhooks among the listeners: their own queues and attempts lose events too, counted by them. */
    private final List<WebhookListener> webhooks;
    private final ScheduledExecutorService checker;
    private final Map<String, Integer> typeIndex = new HashMap<>();
    private final LongAdder[] raised;
    private final LongAdder overflow = new LongAdder();

    // written by the request path, drained by check()
    private final ConcurrentHashMap<String, Seen> admitted = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, Seen> refused = new ConcurrentHashMap<>();

    // check() only (synchronized)
    private final Map<String, Spell> spells = new HashMap<>();
    private final Map<String, Set<String>> nearFired = new HashMap<>();
    /**
     * Calendar quota events this instance raised or saw claimed by another ({@code <counter key>:near:80},
     * {@code ...:exhausted}), until their period's counter expires; at most {@value #MAX_FIRED}, oldest
     * forgotten first (the store's claim still holds it back).
     */
    private final LinkedHashMap<String, Long> quotaDone = new LinkedHashMap<>();
    private boolean globalFired;
    private Boolean storeUp;
    private long logSecond;
    private int logLines;
    private long logHeld;

    SignalEngine(Supplier<SignalSettings> settings, List<QuotaListener> listeners, SignalProbe probe, QuotaClock clock,
                 boolean background) {
        this.settings = settings;
        this.probe = probe;
        this.clock = clock;
        SignalSettings s = settings.get();
        this.dispatcher = new Dispatcher(listeners, s.queue());
        this.webhooks = listeners.stream().filter(WebhookListener.class::isInstance).map(WebhookListener.class::cast)
                .toList();
        List<String> types = QuotaEvent.types();
        this.raised = new LongAdder[types.size()];
        for (int i = 0; i < types.size(); i++) {
            typeIndex.put(types.get(i), i);
            raised[i] = new LongAdder();
        }
        if (background) {
            checker = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "quotagate-signals");
                t.setDaemon(true);
                return t;
            });
            long period = CHECK_INTERVAL.toMillis();
            checker.scheduleWithFixedDelay(this::checkQuietly, period, period, TimeUnit.MILLISECONDS);
        } else {
            checker = null;
        }
    }

    @Override
    public void admitted(String tenant, String plan) {
        // recorded for its calendar quotas too, whatever near-limit says
        // a tenant already recorded since the last check costs a lookup, nothing more
        if (admitted.containsKey(tenant)) return;
        if (admitted.size() >= MAX_PENDING) {
            overflow.increment();
            return;
        }
        admitted.putIfAbsent(tenant, new Seen(plan, null));
    }

    @Override
    public void refused(String tenant, String plan, String reason) {
        if (refused.containsKey(tenant)) return;
        if (refused.size() >= MAX_PENDING) {
            overflow.increment();
            return;
        }
        refused.putIfAbsent(tenant, new Seen(plan, reason));
    }

    @Override
    public long raised(String type) {
        Integer i = typeIndex.get(type);
        return i == null ? 0 : raised[i].sum();
    }

    @Override
    public long dropped() {
        return dispatcher.dropped();
    }

    @Override
    public long dropped(Drop where) {
        return switch (where) {
            case QUEUE_FULL -> dispatcher.dropped();
            case LISTENER_FAILED -> dispatcher.failures();
            case WEBHOOK_QUEUE_FULL -> webhooks.stream().mapToLong(WebhookListener::dropped).sum();
            case WEBHOOK_GAVE_UP -> webhooks.stream().mapToLong(WebhookListener::gaveUp).sum();
            case WEBHOOK_REFUSED -> webhooks.stream().mapToLong(WebhookListener::refused).sum();
        };
    }

    private void checkQuietly() {
        try {
            check();
        } catch (RuntimeException failure) {
            LOG.log(System.Logger.Level.WARNING, "quotagate: a signals check failed: " + failure);
        }
    }

    @Override
    public synchronized void check() {
        SignalSettings s = settings.get();
        long now = clock.nanoTime();
        Map<String, Seen> read = new HashMap<>();
        spells(s, now, read);
        drain(admitted, read);
        if (s.hasNearLimit()) {
            nearLimits(s, read);
        } else {
            nearFired.clear();
        }
        quotas(s, read);
        global(s);
        store();
    }

    /** Refusals since the last check open or extend spells; spells quiet long enough end. */
    private void spells(SignalSettings s, long now, Map<String, Seen> read) {
        long minute = Math.floorDiv(now, MINUTE);
        long window = s.throttledWithin().toMinutes();
        for (Iterator<Map.Entry<String, Seen>> it = refused.entrySet().iterator(); it.hasNext(); ) {
            Map.Entry<String, Seen> e = it.next();
            it.remove();
            String tenant = e.getKey();
            Seen seen = e.getValue();
            read.put(tenant, seen); // a refused tenant is near (or at) a limit too
            Spell spell = spells.computeIfAbsent(tenant, t -> new Spell());
            spell.plan = seen.plan();
            if (!spell.active) {
                spell.active = true;
                spell.start = now;
                spell.count = 0;
                // a calendar quota's refusal is raised by quotas(), once across the instances, with its period
                if (!QUOTA.equals(seen.reason())) {
                    raise(new QuotaEvent.Exhausted(wall.instant(), tenant, seen.plan(), seen.reason()));
                }
            }
            spell.last = now;
            spell.count++;
            spell.refusedAt(minute);
        }
        long quiet = s.recoveredAfter().toNanos();
        for (Iterator<Map.Entry<String, Spell>> it = spells.entrySet().iterator(); it.hasNext(); ) {
            Map.Entry<String, Spell> e = it.next();
            Spell spell = e.getValue();
            int minutes = spell.minutesWithin(minute, window);
            if (spell.active && !spell.throttledFired && minutes > s.throttledMinutes()) {
                spell.throttledFired = true;
                raise(new QuotaEvent.ThrottledForLong(wall.instant(), e.getKey(), spell.plan, minutes,
                        s.throttledMinutes(), s.throttledWithin()));
            }
            if (spell.active && now - spell.last >= quiet) {
                spell.active = false;
                raise(new QuotaEvent.Recovered(wall.instant(), e.getKey(), spell.plan,
                        Duration.ofNanos(spell.last - spell.start), spell.count));
            }
            if (!spell.active && minutes <= s.throttledMinutes()) spell.throttledFired = false;
            if (!spell.active && minutes == 0) it.remove();
        }
    }

    private static void drain(ConcurrentHashMap<String, Seen> from, Map<String, Seen> into) {
        for (Iterator<Map.Entry<String, Seen>> it = from.entrySet().iterator(); it.hasNext(); ) {
            Map.Entry<String, Seen> e = it.next();
            it.remove();
            into.putIfAbsent(e.getKey(), e.getValue());
        }
    }

    /** Reads the limits of each tenant reported since the last check: one store read per tenant. */
    private void nearLimits(SignalSettings s, Map<String, Seen> tenants) {
        if (nearFired.size() > MAX_FIRED) nearFired.clear();
        for (Map.Entry<String, Seen> e : tenants.entrySet()) {
            String tenant = e.getKey();
            String plan = e.getValue().plan();
            List<BandwidthStatus> limits;
            try {
                limits = probe.tenantLimits(tenant);
            } catch (RuntimeException unreadable) {
                continue; // the store is away: fallback and its own event tell that
            }
            for (BandwidthStatus l : limits) {
                OptionalInt threshold = s.nearLimit(plan, l.name());
                if (threshold.isEmpty() || l.capacity() <= 0) continue;
                long used = l.capacity() - l.remaining();
                double percent = 100.0 * used / l.capacity();
                Set<String> fired = nearFired.get(tenant);
                boolean wasFired = fired != null && fired.contains(l.name());
                if (!wasFired && percent >= threshold.getAsInt()) {
                    nearFired.computeIfAbsent(tenant, t -> new HashSet<>()).add(l.name());
                    raise(new QuotaEvent.NearLimit(wall.instant(), tenant, plan, l.name(), threshold.getAsInt(), used,
                            l.capacity()));
                } else if (wasFired && percent < threshold.getAsInt() - REARM_POINTS) {
                    fired.remove(l.name());
                    if (fired.isEmpty()) nearFired.remove(tenant);
                }
            }
        }
    }

    /**
     * The calendar quotas of each tenant reported since the last check: a threshold reached ({@code near_limit})
     * and a quota used up ({@code exhausted}: no unit left, or, for a tenant refused by a quota while each
     * has some left, the quota with the least left), each claimed in the store before it is raised, so
     * that one instance raises it once per tenant, quota and period. Reads what this instance last saw of
     * the counters (no round trip for one it counted); a claim the store cannot take now is tried again at
     * a later check of the tenant.
     */
    private void quotas(SignalSettings s, Map<String, Seen> tenants) {
        long nowMillis = wall.millis();
        if (quotaDone.size() > MAX_FIRED) {
            quotaDone.values().removeIf(until -> until <= nowMillis);
            for (Iterator<String> it = quotaDone.keySet().iterator(); quotaDone.size() > MAX_FIRED; ) {
                it.next();
                it.remove();
            }
        }
        for (Map.Entry<String, Seen> e : tenants.entrySet()) {
            String tenant = e.getKey();
            String plan = e.getValue().plan();
            List<QuotaPeriod> periods;
            try {
                periods = probe.tenantQuotas(tenant);
            } catch (RuntimeException unreadable) {
                continue;
            }
            if (periods.isEmpty()) continue;
            QuotaPeriod refusing = null;
            if (QUOTA.equals(e.getValue().reason())) {
                for (QuotaPeriod q : periods) {
                    if (q.used() >= q.limit()) {
                        refusing = null;
                        break;
                    }
                    if (refusing == null || q.limit() - q.used() < refusing.limit() - refusing.used()) refusing = q;
                }
            }
            for (QuotaPeriod q : periods) {
                for (int threshold : s.quotaNearLimit(plan, q.quota())) {
                    if (q.used() * 100 < (long) threshold * q.limit()) break; // ascending
                    once(q, "near:" + threshold, () -> new QuotaEvent.NearLimit(wall.instant(), tenant, plan,
                            q.quota(), threshold, q.used(), q.limit(), q.start(), q.end()));
                }
                if (q.used() >= q.limit() || q == refusing) {
                    once(q, "exhausted", () -> new QuotaEvent.Exhausted(wall.instant(), tenant, plan, QUOTA,
                            q.quota(), q.start(), q.end()));
                }
            }
        }
    }

    /** Raises the event of {@code what} in quota period {@code q} if no instance has claimed it yet. */
    private void once(QuotaPeriod q, String what, Supplier<QuotaEvent> event) {
        String key = q.counterKey() + ":" + what;
        if (quotaDone.containsKey(key)) return;
        boolean mine;
        try {
            mine = probe.claim(key, q.expiresAtMillis());
        } catch (RuntimeException storeAway) {
            return; // asked again at a later check of the tenant
        }
        quotaDone.put(key, q.expiresAtMillis());
        if (mine) raise(event.get());
    }

    private void global(SignalSettings s) {
        OptionalInt threshold = s.globalNearLimit();
        long capacity = probe.globalCapacity();
        if (threshold.isEmpty() || capacity <= 0) {
            globalFired = false;
            return;
        }
        long used = capacity - Math.max(0, probe.globalAvailable());
        double percent = 100.0 * used / capacity;
        if (!globalFired && percent >= threshold.getAsInt()) {
            globalFired = true;
            raise(new QuotaEvent.GlobalNearLimit(wall.instant(), threshold.getAsInt(), used, capacity));
        } else if (globalFired && percent < threshold.getAsInt() - REARM_POINTS) {
            globalFired = false;
        }
    }

    private void store() {
        Optional<Boolean> up = probe.storeAvailable();
        if (up.isEmpty()) return;
        boolean now = up.get();
        if (storeUp == null ? !now : storeUp != now) raise(new QuotaEvent.StoreFallback(wall.instant(), !now));
        storeUp = now;
    }

    private void raise(QuotaEvent event) {
        raised[typeIndex.get(event.type())].increment();
        log(event);
        dispatcher.offer(event);
    }

    /** One logfmt line per event, at most {@value #LOG_LINES_PER_SECOND} a second; the rest counted on the next line. */
    private void log(QuotaEvent event) {
        long second = Math.floorDiv(clock.nanoTime(), SECOND);
        if (second != logSecond) {
            logSecond = second;
            logLines = 0;
        }
        if (logLines >= LOG_LINES_PER_SECOND) {
            logHeld++;
            return;
        }
        logLines++;
        String held = logHeld == 0 ? "" : " unlogged_events=" + logHeld;
        logHeld = 0;
        LOG.log(System.Logger.Level.INFO, event.logfmt() + held);
    }

    @Override
    public void close() {
        if (checker != null) checker.shutdownNow();
        dispatcher.close();
    }
}
