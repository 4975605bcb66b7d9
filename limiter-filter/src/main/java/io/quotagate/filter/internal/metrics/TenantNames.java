package io.quotagate.filter.internal.metrics;

import io.quotagate.filter.internal.metrics.RequestStatistics.CellCount;
import io.quotagate.filter.internal.metrics.RequestStatistics.Tuning;
import io.quotagate.filter.metrics.StatisticsView;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;

import static io.quotagate.filter.internal.metrics.RequestStatistics.HYSTERESIS;
import static io.quotagate.filter.internal.metrics.RequestStatistics.MIN_SAMPLES;
import static io.quotagate.filter.internal.metrics.RequestStatistics.OTHER;

/**
 * Which tenants of a {@link RequestStatistics} are named (counted under their own id): known tenants first,
 * guests by recent traffic through a sampled Space-Saving table ({@link HeavyHitters}) behind a
 * {@link Doorkeeper}, turnover with hysteresis, decay by traffic volume; the rules are the class comment
 * of {@link RequestStatistics}. A tenant that loses its name loses its cells ({@link CellTable#remove}), and
 * holders' recent traffic is read from their cells at each epoch's end, so both live under the statistics'
 * one lock, which this is given.
 */
final class TenantNames {
    /** A named tenant. Its fields other than {@code known} and {@code last} are read and written under the lock only. */
    static final class Holder {
        final String tenant;
        /** Set under the lock; read on the request path, which upgrades a guest that became known. */
        volatile boolean known;
        /** Epoch in which it was named: it cannot lose its name before one whole epoch measured it. */
        final long namedEpoch;
        /** Its recent requests (halved every epoch, as the heavy-hitter counts). */
        double recent;
        /** Its cells' total at the last epoch end. */
        long counted;
        /** Scratch: its cells' total now. */
        long total;
        /**
         * The cell its last request was counted in (any thread's; written only when it changes): a cell of
         * this tenant, or of {@code other} if the name was lost meanwhile, and then no request finds this
         * holder any more.
         */
        CellCount last;

        Holder(String tenant, boolean known, long namedEpoch, double recent) {
            this.tenant = tenant;
            this.known = known;
            this.namedEpoch = namedEpoch;
            this.recent = recent;
        }
    }

    private final int topTenants;
    private final Tuning tuning;
    private final ReentrantLock lock;
    private final CellTable cells;
    /** The named tenants: read without the lock on every request; changed under it. */
    private final ConcurrentHashMap<String, Holder> named = new ConcurrentHashMap<>();
    /** True while a known tenant takes a name at its first request: a slot is free or held by a guest. */
    private volatile boolean knownMayClaim;

    // under the lock
    private final List<Holder> holders = new ArrayList<>();
    private final HeavyHitters candidates;
    /** Unnamed ids sampled once this epoch, and every id the table holds: only these enter the table. */
    private final Doorkeeper door;
    private int guestHolders;
    private long epoch;
    /** The holders a newcomer of each kind competes with (past their first whole epoch), or null. */
    private Holder weakestGuest;
    private Holder weakestKnown;

    /**
     * @param lock      the statistics' lock, which also guards {@code cells}' changes
     * @param preferred known tenants named from the start, as many as fit (reserved words skipped)
     */
    TenantNames(int topTenants, Collection<String> preferred, Tuning tuning, ReentrantLock lock, CellTable cells) {
        this.topTenants = topTenants;
        this.tuning = Objects.requireNonNull(tuning, "tuning");
        this.lock = lock;
        this.cells = cells;
        this.candidates = new HeavyHitters(tuning.tracked());
        this.door = new Doorkeeper(tuning.epoch());
        for (String t : preferred) {
            if (holders.size() >= topTenants) break;
            Objects.requireNonNull(t);
            if (!StatisticsView.isReserved(t) && !named.containsKey(t)) name(t, true, 0);
        }
        refresh();
    }

    /** The tenant's holder if it is named now, else null (no lock). */
    Holder holder(String tenant) {
        return named.get(tenant);
    }

    boolean isNamed(String tenant) {
        return named.containsKey(tenant);
    }

    /**
     * The tenants named now (a copy), taken under the lock: the map's own iteration, concurrent with a
     * rename, could see the old name and the new one together, more names than ever held at once.
     */
    Set<String> namedTenants() {
        lock.lock();
        try {
            return Set.copyOf(named.keySet());
        } finally {
            lock.unlock();
        }
    }

    /**
     * The tag of a request of a real tenant (not a reserved word), giving or taking names as described in
     * the class comment of {@link RequestStatistics}.
     *
     * @param h the tenant's holder as the caller just looked it up (null: not named)
     */
    String tag(String tenant, boolean known, Holder h) {
        if (h != null) {
            if (known && !h.known) becameKnown(h);
            return tenant;
        }
        if (topTenants == 0) return OTHER;
        if (known && knownMayClaim) return claim(tenant);
        if (!tuning.sample().getAsBoolean()) return OTHER;
        if (!lock.tryLock()) return OTHER; // another thread updates the table: skip this sample, never wait
        try {
            return observe(tenant, known);
        } finally {
            lock.unlock();
        }
    }

    /** A known tenant's first request while a slot is free or held by a guest: it takes that slot. */
    private String claim(String tenant) {
        lock.lock();
        try {
            if (named.containsKey(tenant)) return tenant; // another request of it was first
            if (holders.size() >= topTenants) {
                Holder guest = null; // the weakest guest, however recently named: a known tenant comes first
                for (Holder h : holders) {
                    if (!h.known && (guest == null || h.recent < guest.recent)) guest = h;
                }
                if (guest == null) return OTHER; // all taken by known tenants meanwhile: compete by traffic
                demote(guest);
            }
            candidates.remove(tenant);
            name(tenant, true, 0);
            refresh();
            return tenant;
        } finally {
            lock.unlock();
        }
    }

    private void becameKnown(Holder h) {
        lock.lock();
        try {
            if (!h.known && named.get(h.tenant) == h) {
                h.known = true;
                guestHolders--;
                refresh();
            }
        } finally {
            lock.unlock();
        }
    }

    /** One sampled request of an unnamed tenant (under the lock): count it, maybe name it. */
    private String observe(String tenant, boolean known) {
        if (named.containsKey(tenant)) return tenant; // named since the caller looked
        String tag = OTHER;
        // an id's first sample of the epoch only marks it at the door: a flood of ids sampled once
        // each leaves the table (and its tenants' counts) alone
        if (door.seenBefore(tenant)) {
            if (promote(candidates.observe(tenant, known))) tag = tenant;
        } else {
            candidates.countSkipped();
        }
        // counted in the table, not in a field of this object: the fields here are read by every
        // request on every core, and a write per sample would take their cache line away from them
        if (candidates.observedSinceHalving() >= tuning.epoch()) endEpoch();
        return tag;
    }

    /** Names the candidate if its lower bound earns it a free slot or a weaker holder's. */
    private boolean promote(HeavyHitters.Entry e) {
        long lower = e.lowerBound();
        if (lower < MIN_SAMPLES) return false;
        String tenant = e.tenant;
        boolean known = e.known;
        Holder rival = null;
        if (holders.size() >= topTenants) {
            rival = known && weakestGuest == null ? weakestKnown : weakestGuest;
            if (rival == null) return false;
            // same kind: by traffic, with hysteresis; a known tenant takes a guest's name whatever its traffic
            boolean byTraffic = rival.known == known;
            if (byTraffic && lower <= HYSTERESIS * rival.recent / tuning.sampleEvery() + MIN_SAMPLES) return false;
        }
        candidates.remove(tenant); // before the demoted tenant goes back in: e may be reused
        if (rival != null) demote(rival);
        name(tenant, known, (double) lower * tuning.sampleEvery());
        refresh();
        return true;
    }

    private void name(String tenant, boolean known, double recent) {
        Holder h = new Holder(tenant, known, epoch, recent);
        holders.add(h);
        if (!known) guestHolders++;
        named.put(tenant, h);
    }

    /** Takes a holder's name: its cells go, and it goes back among the candidates with its exact count. */
    private void demote(Holder h) {
        named.remove(h.tenant); // first: from now on a request of it that looks is counted as "other"
        holders.remove(h);
        if (!h.known) guestHolders--;
        long total = cells.remove(h.tenant);
        // its count as the table would show it now: the last epochs halved, plus this epoch's requests
        double recent = h.recent / 2 + Math.max(0, total - h.counted);
        candidates.offer(h.tenant, h.known, (long) (recent / tuning.sampleEvery()));
        door.mark(h.tenant); // if the table took it back, its next sample must reach it
    }

    /** Decay (under the lock): holders' recent traffic from their cells, then every count halved. */
    private void endEpoch() {
        epoch++;
        for (Holder h : holders) h.total = 0;
        cells.forEach(c -> {
            Holder h = named.get(c.tenant());
            if (h != null) h.total += c.count();
        });
        for (Holder h : holders) {
            h.recent = h.recent / 2 + Math.max(0, h.total - h.counted);
            h.counted = h.total;
        }
        candidates.halve();
        door.clear(); // a new epoch: its ids must come twice again, except those the table holds
        candidates.forEachTenant(door::mark);
        refresh();
    }

    /** Recomputes the weakest holders and whether a known tenant may take a name at first sight. */
    private void refresh() {
        weakestGuest = null;
        weakestKnown = null;
        for (Holder h : holders) {
            if (epoch < h.namedEpoch + 2) continue; // not yet measured over one whole epoch
            if (h.known) {
                if (weakestKnown == null || h.recent < weakestKnown.recent) weakestKnown = h;
            } else if (weakestGuest == null || h.recent < weakestGuest.recent) {
                weakestGuest = h;
            }
        }
        knownMayClaim = topTenants > 0 && (holders.size() < topTenants || guestHolders > 0);
    }

    /** Ids the heavy-hitter table holds now (for tests). */
    int candidateCount() {
        lock.lock();
        try {
            return candidates.size();
        } finally {
            lock.unlock();
        }
    }

    /** The heavy-hitter table's lower bound of an id's sampled requests (for tests). */
    long candidateLowerBound(String tenant) {
        lock.lock();
        try {
            return candidates.lowerBound(tenant);
        } finally {
            lock.unlock();
        }
    }
}
