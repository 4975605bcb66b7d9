package io.quotagate.filter.internal.limits;

import io.quotagate.filter.status.LimitOverrides;
import io.quotagate.filter.status.LimitsStatus;
import io.quotagate.filter.store.LimitsChannel;
import io.quotagate.plans.Plans;
import io.quotagate.plans.TenantId;
import io.quotagate.tenant.TenantContract;

import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;

/**
 * Governs the limits in force: this instance's plans file, the limits part every instance sharing a
 * store agreed on, and the runtime changes, put in force through a {@link Target} (the filter's one
 * policy swap). With a local store the changes live here; with a shared store ({@link LimitsChannel})
 * they live in the store's versioned record, so a change made through any instance is enforced and
 * reported by all:
 * <ul>
 *   <li><b>Start</b>: no record, or one whose base is another file's: this instance publishes its
 *       file's limits (the file published last wins; tenant entries are kept, global and plan changes
 *       dropped). The limits part includes plans' per-user limits and routes' own limits, by route
 *       name; the routes themselves stay each instance's own. A record of the same file: adopted, with its runtime changes.</li>
 *   <li><b>Change</b> ({@link #change}): read the record, apply the change, validate it against this
 *       instance's routes, write it as the next version only if nobody wrote meanwhile (else read again
 *       and retry), then announce it. A change that fails validation, or cannot reach the store,
 *       changes nothing anywhere.</li>
 *   <li><b>Follow</b>: an announcement, and a version check every {@link #CHECK_INTERVAL} that heals a
 *       lost one, bring other instances' versions; a record that cannot be used is refused (logged once,
 *       counted) and the last good limits stay. A record that vanished (Redis lost its data) is written
 *       back from the last good one, so a lost key never brings back a limit nobody set.</li>
 * </ul>
 * Thread-safe: changes and checks are serialised on this object; reads of the status never block.
 */
public final class SharedLimits implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(SharedLimits.class.getName());
    /** How often an instance compares the stored version with its own (announcements come at once). */
    public static final Duration CHECK_INTERVAL = Duration.ofSeconds(1);
    private static final int MAX_ATTEMPTS = 8;
    private static final int FAILED_CHECKS_BEFORE_UNREACHABLE = 3;
    private static final String VERSION_MESSAGE = "v";
    private static final String INVALIDATE_PREFIX = "i:";
    /** No record refused since the last one put in force. */
    private static final long NONE = Long.MIN_VALUE;

    /** Puts plans in force: the filter's policy swap. Must not call back into this object. */
    @FunctionalInterface
    public interface Target {
        /**
         * @param plans    the plans in force from now on
         * @param asAtStart true if no shared bucket can hold other limits than these: the record has
         *                 never changed since this file's limits were first published (so a bucket this
         *                 instance has not seen yet needs no move, saving a round trip at its first use)
         * @throws RuntimeException if the plans cannot be put in force (nothing changed then)
         */
        void put(Plans plans, boolean asAtStart);
    }

    private final LimitsChannel channel;
    private final Target target;
    private final Consumer<String> invalidate;
    private final Clock clock;
    private final ScheduledExecutorService checker;
    private final AtomicLong refused = new AtomicLong();
    /** Warnings logged once per cause: a disagreement between files, a file too large to share. */
    private final Set<String> loggedOnce = ConcurrentHashMap.newKeySet();

    private Plans file;
    private LimitsBase fileBase;
    private String fileFingerprint;
    /** Local store: the runtime changes. */
    private LimitOverrides localOverrides = LimitOverrides.NONE;
    /** Shared store: the record in force, its version, and whether this instance's start reached the store. */
    private LimitsRecord applied;
    private long appliedVersion;
    /** The version refused last ({@link LimitsChannel#DAMAGED} for one without a usable version), or {@link #NONE}. */
    private long refusedVersion = NONE;
    private boolean started;
    private int failedChecks;
    private volatile LimitsStatus status;

    private SharedLimits(Plans file, LimitsChannel channel, Target target, Consumer<String> invalidate, Clock clock) {
        this.channel = channel;
        this.target = Objects.requireNonNull(target, "target");
        this.invalidate = Objects.requireNonNull(invalidate, "invalidate");
        this.clock = Objects.requireNonNull(clock, "clock");
        useFile(file);
        this.checker = channel == null ? null : Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "quotagate-limits");
            t.setDaemon(true);
            return t;
        });
        publishStatus(true, Optional.empty());
    }

    /**
     * The limits of one instance: the file and the runtime changes made here. The file is in force
     * already (nothing is put at start).
     */
    public static SharedLimits local(Plans file, Target target, Consumer<String> invalidate) {
        return new SharedLimits(file, null, target, invalidate, Clock.systemUTC());
    }

    /**
     * The limits every instance sharing {@code channel} enforces. Reads (or publishes) the shared record
     * now and puts the result in force; a store that cannot be reached leaves the file in force and is
     * tried again every {@link #CHECK_INTERVAL}.
     *
     * @param invalidate drops one tenant's cached directory answer (called for every instance's
     *                   {@link #invalidate})
     * @throws IllegalArgumentException if the file's limits make a record over {@link LimitsChannel#MAX_RECORD_BYTES}
     *                                  (no instance would read it)
     */
    public static SharedLimits shared(Plans file, LimitsChannel channel, Target target, Consumer<String> invalidate) {
        SharedLimits s = new SharedLimits(file, Objects.requireNonNull(channel, "channel"), target, invalidate,
                Clock.systemUTC());
        synchronized (s) {
            try {
                s.publishFile(false);
            } catch (IllegalArgumentException unshareable) {
                s.close();
                throw unshareable;
            } catch (RuntimeException unreachable) {
                s.unreachable("at start, keeping " + file.source() + "'s limits until it answers", unreachable);
            }
        }
        channel.listen(s::onMessage);
        long period = CHECK_INTERVAL.toMillis();
        s.checker.scheduleWithFixedDelay(s::checkQuietly, period, period, TimeUnit.MILLISECONDS);
        return s;
    }

    /** True if the limits are governed through a shared store. */
    public boolean isShared() {
        return channel != null;
    }

    /** Where the limits in force come from. */
    public LimitsStatus status() {
        return status;
    }

    /** The runtime changes in force. */
    public synchronized LimitOverrides overrides() {
        return channel == null ? localOverrides : applied == null ? LimitOverrides.NONE : applied.overrides();
    }

    /**
     * The contract the limits in force give this tenant by the plans file or a runtime change (not
     * the application's directory), or empty.
     */
    public synchronized Optional<TenantContract> contract(String tenant) {
        LimitOverrides o = overrides();
        TenantContract c = o.tenants().get(tenant);
        if (c != null) return Optional.of(c);
        LimitsBase base = channel == null || applied == null ? fileBase : applied.base();
        return Optional.ofNullable(base.tenants().get(tenant));
    }

    /**
     * A new plans file on this instance (a reload, {@code apply}): it becomes the base, its global and
     * plan changes dropped, tenant entries kept; with a shared store it is published to every instance.
     *
     * @throws IllegalArgumentException if the result cannot be put in force (nothing changed)
     * @throws IllegalStateException    if the shared store cannot be reached or keeps changing (nothing changed)
     */
    public synchronized void fileChanged(Plans newFile) {
        Objects.requireNonNull(newFile, "plans");
        if (channel == null) {
            LimitOverrides kept = keepable(localOverrides.forNewFile(), newFile);
            target.put(EffectiveLimits.of(newFile, LimitsBase.of(newFile), kept), false);
            useFile(newFile);
            localOverrides = kept;
            publishStatus(true, Optional.empty());
            return;
        }
        Plans before = file;
        useFile(newFile);
        try {
            publishFile(true);
        } catch (RuntimeException failed) {
            useFile(before);
            throw failed;
        }
    }

    /**
     * Applies one runtime change everywhere, or nowhere. A stored record that cannot be used (damaged, of
     * a newer format, or unusable with this instance's file) is left as it is: the change is refused, the
     * message says why and how to repair it. An {@link IllegalArgumentException} is always the change's
     * own fault, never the stored record's.
     *
     * @param what   a short description for the record ({@code setGlobalQuota}, {@code setTenant acme})
     * @param change the change, applied to the overrides in force
     * @throws IllegalArgumentException if the result is invalid (a capacity below a route's cost, an unknown
     *                                  plan, a record over {@link LimitsChannel#MAX_RECORD_BYTES})
     * @throws IllegalStateException    if the shared store cannot be reached, its record cannot be used, or
     *                                  other instances keep writing
     */
    public synchronized void change(String what, UnaryOperator<LimitOverrides> change) {
        if (channel == null) {
            LimitOverrides next = change.apply(localOverrides);
            target.put(EffectiveLimits.of(file, fileBase, next), false);
            localOverrides = next;
            publishStatus(true, Optional.empty());
            return;
        }
        for (int attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
            Optional<LimitsChannel.Versioned> stored;
            try {
                stored = channel.read();
            } catch (RuntimeException unreachable) {
                unreachable("for " + what, unreachable);
                throw new IllegalStateException("the shared limits store cannot be reached; nothing changed: "
                        + unreachable.getMessage(), unreachable);
            }
            LimitsRecord current;
            long version = 0;
            if (stored.isEmpty()) {
                // no record: the one in force if Redis lost it (the change goes on top), else this file's
                current = applied != null ? applied
                        : record(fileBase, file.source(), LimitOverrides.NONE, "published " + file.source());
            } else {
                version = stored.get().version();
                current = usableForChange(stored.get());
            }
            LimitOverrides next = change.apply(current.overrides());
            Plans effective = EffectiveLimits.of(file, current.base(), next); // invalid: nothing written
            LimitsRecord written = new LimitsRecord(current.base(), current.source(), current.publishedBy(),
                    current.publishedAt(), next, new LimitsRecord.Change(channel.instanceId(), clock.instant(), what));
            long v = nextVersion(version);
            if (!write(version, v, written, what)) continue;
            install(v, written, effective);
            return;
        }
        throw new IllegalStateException("other instances kept changing the shared limits; nothing changed");
    }

    /** Drops one tenant's cached directory answer, on every instance sharing the store. */
    public void invalidate(String tenant) {
        if (!TenantId.isValid(tenant)) throw new IllegalArgumentException("not a valid tenant id: " + tenant);
        invalidate.accept(tenant);
        if (channel == null) return;
        try {
            channel.announce(INVALIDATE_PREFIX + tenant);
        } catch (RuntimeException unreachable) {
            throw new IllegalStateException("dropped on this instance only: the shared store cannot be reached ("
                    + unreachable.getMessage() + "); the others' caches refresh on their own", unreachable);
        }
    }

    /**
     * The stored record, parsed and checked against this instance's file, for a change to go on top;
     * else why not, as an {@link IllegalStateException} (the store's fault, not the change's).
     */
    private LimitsRecord usableForChange(LimitsChannel.Versioned stored) {
        if (stored.damage().isPresent()) throw damaged(stored.damage().get());
        LimitsRecord current;
        try {
            current = LimitsRecord.parse(stored.body());
        } catch (LimitsRecord.Unusable unusable) {
            if (unusable.newerFormat()) {
                throw new IllegalStateException("the shared limits record (version " + stored.version() + ") cannot be "
                        + "used: " + unusable.getMessage() + "; nothing changed");
            }
            throw damaged(channel.location() + " version " + stored.version() + ": " + unusable.getMessage());
        }
        try {
            EffectiveLimits.of(file, current.base(), current.overrides());
        } catch (IllegalArgumentException unusableHere) {
            throw new IllegalStateException("the shared limits record (version " + stored.version() + ") cannot be "
                    + "used with this instance's " + file.source() + ": " + unusableHere.getMessage()
                    + "; nothing changed (make the change on an instance that enforces it, or publish this file)");
        }
        return current;
    }

    /** A change refused because the stored record is damaged: what is wrong, and the two ways to repair it. */
    private IllegalStateException damaged(String why) {
        return new IllegalStateException("the shared limits record is damaged (" + why + "); nothing changed "
                + "anywhere. Repair it by publishing the plans file again (reload or apply, on any instance), or "
                + "by deleting " + channel.location() + ": the instances then write back the limits in force");
    }

    /**
     * The version to write over {@code expected}: the next one; over no record or a damaged one, the
     * next after both the version in force here and the one refused here: a number no instance has
     * applied or refused yet (an instance skips a version it has), so every instance reads the new record.
     */
    private long nextVersion(long expected) {
        if (LimitsChannel.usable(expected)) {
            if (expected < LimitsChannel.MAX_VERSION) return expected + 1;
            throw new IllegalStateException("the shared limits record is at version " + expected + ", the highest "
                    + "a record may have; nothing changed. Delete " + channel.location()
                    + ": the instances then write back the limits in force");
        }
        long highest = Math.max(appliedVersion, refusedVersion);
        return highest < LimitsChannel.MAX_VERSION ? highest + 1 : 1;
    }

    /** Checks the stored version now (the periodic check calls it; tests too). */
    public synchronized void check() {
        long version;
        try {
            version = channel.version();
        } catch (RuntimeException unreachable) {
            unreachable("at a version check", unreachable);
            return;
        }
        if (failedChecks > 0 && status != null && !status.reachable()) {
            LOG.log(System.Logger.Level.INFO, "quotagate: the shared limits store answers again");
        }
        failedChecks = 0;
        if (!started) {
            publishFile(false);
            return;
        }
        // after a refusal, the version in force is read again: a repaired record may have the same number
        if (version == refusedVersion || version == appliedVersion && applied != null && refusedVersion == NONE) {
            if (!status.reachable()) publishStatus(true, status.lastRefusal());
            return;
        }
        if (version == 0) {
            restore();
            return;
        }
        Optional<LimitsChannel.Versioned> stored = channel.read();
        if (stored.isEmpty()) return;
        adopt(stored.get());
    }

    @Override
    public void close() {
        if (checker != null) checker.shutdownNow();
    }

    private void checkQuietly() {
        try {
            check();
        } catch (IllegalArgumentException unshareable) { // publishing a file too large to share, once Redis answered
            if (loggedOnce.add(unshareable.getMessage())) {
                LOG.log(System.Logger.Level.WARNING, "quotagate: " + file.source() + " cannot be published as the "
                        + "shared limits, keeping its limits here: " + unshareable.getMessage());
            }
        } catch (RuntimeException failure) {
            unreachable("at a version check", failure);
        }
    }

    private void onMessage(String message) {
        if (message.equals(VERSION_MESSAGE)) {
            checker.execute(this::checkQuietly);
        } else if (message.startsWith(INVALIDATE_PREFIX)) {
            String tenant = message.substring(INVALIDATE_PREFIX.length());
            if (TenantId.isValid(tenant)) invalidate.accept(tenant);
        }
    }

    /**
     * Publishes this instance's file as the base, unless the stored record already has it (then adopts
     * it). At start ({@code explicit} false) an unusable record is left alone; a reload or apply
     * replaces one that does not parse, never one of a newer format.
     */
    private void publishFile(boolean explicit) {
        for (int attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
            Optional<LimitsChannel.Versioned> stored = channel.read();
            LimitsRecord current = null;
            long version = 0;
            if (stored.isPresent()) {
                version = stored.get().version();
                String unusable = stored.get().damage().orElse(null);
                boolean newer = false;
                if (unusable == null) {
                    try {
                        current = LimitsRecord.parse(stored.get().body());
                    } catch (LimitsRecord.Unusable u) {
                        unusable = u.getMessage();
                        newer = u.newerFormat();
                    }
                }
                if (unusable != null) {
                    if (!explicit || newer) {
                        started = true;
                        refuse(version, unusable);
                        if (explicit) {
                            throw new IllegalStateException("the shared limits record (version " + version
                                    + ") cannot be replaced: " + unusable);
                        }
                        return;
                    }
                    LOG.log(System.Logger.Level.WARNING, "quotagate: replacing the unusable shared limits record ("
                            + refusal(version, unusable) + ") with " + file.source());
                }
            }
            if (current != null && current.fingerprint().equals(fileFingerprint)) {
                started = true;
                adoptRecord(version, current);
                return;
            }
            LimitOverrides kept = keepable(current == null ? LimitOverrides.NONE : current.overrides().forNewFile(), file);
            LimitsRecord written = record(fileBase, file.source(), kept, "published " + file.source());
            Plans effective = EffectiveLimits.of(file, fileBase, kept);
            long v = nextVersion(version);
            if (!write(version, v, written, "publishing " + file.source())) continue;
            started = true;
            LOG.log(System.Logger.Level.INFO, "quotagate: published the limits of " + file.source()
                    + " as shared limits version " + v + (current == null ? ""
                    : " (replacing those of " + current.source() + " from " + current.publishedBy() + ")"));
            install(v, written, effective);
            return;
        }
        throw new IllegalStateException("other instances kept changing the shared limits; " + file.source()
                + " was not published");
    }

    private void adopt(LimitsChannel.Versioned stored) {
        if (stored.damage().isPresent()) {
            refuse(stored.version(), stored.damage().get());
            return;
        }
        LimitsRecord record;
        try {
            record = LimitsRecord.parse(stored.body());
        } catch (LimitsRecord.Unusable unusable) {
            refuse(stored.version(), unusable.getMessage());
            return;
        }
        adoptRecord(stored.version(), record);
    }

    private void adoptRecord(long version, LimitsRecord record) {
        Plans effective;
        try {
            effective = EffectiveLimits.of(file, record.base(), record.overrides());
        } catch (IllegalArgumentException invalid) {
            refuse(version, invalid.getMessage());
            return;
        }
        install(version, record, effective);
    }

    /**
     * The record vanished (Redis lost its data, or the key was deleted, as to repair a damaged one): write
     * back the last good one, or publish this file if none was ever in force here.
     */
    private void restore() {
        if (applied == null) {
            publishFile(false);
            return;
        }
        long v = nextVersion(0);
        if (!write(0, v, applied, "restoring")) return; // another instance restored it first: the next check adopts theirs
        LOG.log(System.Logger.Level.WARNING, "quotagate: the shared limits record was gone (Redis restarted "
                + "without its data, or the key was deleted); wrote back version " + appliedVersion
                + "'s limits as version " + v);
        appliedVersion = v;
        refusedVersion = NONE;
        publishStatus(true, status.lastRefusal());
    }

    /** Writes {@code record} as version {@code next} over {@code expected}; false if another instance wrote first. */
    private boolean write(long expected, long next, LimitsRecord record, String what) {
        String json = record.toJson();
        int bytes = json.getBytes(java.nio.charset.StandardCharsets.UTF_8).length;
        if (bytes > LimitsChannel.MAX_RECORD_BYTES) { // no instance would read it
            throw new IllegalArgumentException("the shared limits record would be " + bytes + " bytes, more than the "
                    + LimitsChannel.MAX_RECORD_BYTES + " a record may have; nothing changed (contracts in bulk belong "
                    + "in a tenant directory)");
        }
        try {
            return channel.replace(expected, next, json);
        } catch (RuntimeException unreachable) {
            unreachable("for " + what, unreachable);
            throw new IllegalStateException("the shared limits store cannot be reached; nothing changed: "
                    + unreachable.getMessage(), unreachable);
        }
    }

    private void install(long version, LimitsRecord record, Plans effective) {
        // version 1 of this very file, unchanged: every bucket was created at these limits
        boolean asAtStart = applied == null && version == 1 && record.overrides().isEmpty()
                && record.fingerprint().equals(fileFingerprint);
        try {
            target.put(effective, asAtStart);
        } catch (RuntimeException cannot) {
            refuse(version, cannot.getMessage());
            return;
        }
        applied = record;
        appliedVersion = version;
        refusedVersion = NONE;
        boolean agrees = record.fingerprint().equals(fileFingerprint);
        if (!agrees && loggedOnce.add(record.fingerprint() + fileFingerprint)) {
            LOG.log(System.Logger.Level.WARNING, "quotagate: this instance's " + file.source() + " has other limits "
                    + "than the shared ones, published from " + record.source() + " by " + record.publishedBy()
                    + " at " + record.publishedAt() + "; enforcing the shared limits (the plans file published "
                    + "last wins)");
            java.util.Set<String> ignored = EffectiveLimits.ignoredRoutes(file, record.base());
            if (!ignored.isEmpty()) {
                LOG.log(System.Logger.Level.WARNING, "quotagate: the shared limits give routes " + ignored + " limits "
                        + "of their own, but this instance's " + file.source() + " has no limited route of those "
                        + "names: their limits are ignored here");
            }
        }
        publishStatus(true, status == null ? Optional.empty() : status.lastRefusal());
    }

    /**
     * A stored record this instance cannot use: counted and logged once (every record without a usable
     * version counts as one until a usable one is stored), the last good limits stay.
     */
    private void refuse(long version, String reason) {
        if (version == refusedVersion) return;
        refusedVersion = version;
        refused.incrementAndGet();
        LOG.log(System.Logger.Level.WARNING, "quotagate: " + describe(version) + " refused, keeping "
                + (applied == null ? file.source() + "'s limits" : "version " + appliedVersion) + ": " + reason);
        publishStatus(true, Optional.of(refusal(version, reason)));
    }

    private static String describe(long version) {
        return version == LimitsChannel.DAMAGED ? "the shared limits record (damaged version)"
                : "shared limits version " + version;
    }

    /** Why a record was refused, with its version if it has a usable one (a damaged one's reason shows it). */
    private static String refusal(long version, String reason) {
        return version == LimitsChannel.DAMAGED ? reason : "version " + version + ": " + reason;
    }

    /**
     * A check or a change that could not reach the store. One slow command (the store's timeout is a
     * request's, tens of milliseconds) is not an outage: the status says unreachable, and the log says
     * so once, after {@value #FAILED_CHECKS_BEFORE_UNREACHABLE} checks in a row failed.
     */
    private void unreachable(String when, RuntimeException failure) {
        if (++failedChecks < FAILED_CHECKS_BEFORE_UNREACHABLE) return;
        if (status != null && status.reachable()) {
            LOG.log(System.Logger.Level.WARNING, "quotagate: the shared limits store cannot be reached " + when
                    + "; the limits in force stay: " + failure);
        }
        publishStatus(false, status == null ? Optional.empty() : status.lastRefusal());
    }

    /** The runtime changes that still apply under {@code plans}: tenant entries whose plan it defines. */
    private static LimitOverrides keepable(LimitOverrides overrides, Plans plans) {
        Map<String, TenantContract> kept = new TreeMap<>();
        overrides.tenants().forEach((tenant, c) -> {
            Optional<String> why = plans.plan(c.plan()).isEmpty()
                    ? Optional.of("plan '" + c.plan() + "' is not defined in " + plans.source())
                    : c.hasOwnLimits() ? plans.limitsRefusal("tenant " + tenant, c.plan(), c.limits()) : Optional.empty();
            if (why.isEmpty() && c.hasOwnQuotas()) why = plans.quotasRefusal("tenant " + tenant, c.quotas());
            if (why.isEmpty()) kept.put(tenant, c);
            else LOG.log(System.Logger.Level.WARNING, "quotagate: runtime entry of tenant " + tenant
                    + " dropped with the new plans file: " + why.get());
        });
        return new LimitOverrides(overrides.global(), overrides.plans(), kept, overrides.quotas());
    }

    private LimitsRecord record(LimitsBase base, String source, LimitOverrides overrides, String what) {
        var now = clock.instant();
        String me = channel.instanceId();
        return new LimitsRecord(base, source, me, now, overrides, new LimitsRecord.Change(me, now, what));
    }

    private void useFile(Plans plans) {
        this.file = plans;
        this.fileBase = LimitsBase.of(plans);
        this.fileFingerprint = LimitsRecord.fingerprint(fileBase);
    }

    private void publishStatus(boolean reachable, Optional<String> lastRefusal) {
        if (channel == null) {
            status = new LimitsStatus(false, 0, file.source(), "local", true, true, 0, Optional.empty(),
                    localOverrides);
            return;
        }
        LimitsRecord r = applied;
        status = new LimitsStatus(true, appliedVersion, r == null ? file.source() : r.source(),
                r == null ? channel.instanceId() : r.publishedBy(),
                r == null || r.fingerprint().equals(fileFingerprint), reachable, refused.get(), lastRefusal,
                r == null ? LimitOverrides.NONE : r.overrides());
    }
}
