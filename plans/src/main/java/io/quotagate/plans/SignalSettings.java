package io.quotagate.plans;

import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * The plans file's {@code signals:} section: when the filter raises quota events (near a limit,
 * exhausted, throttled for long, recovered, the global quota near its limit, store fallback) and where
 * the file sends them (a webhook). Immutable; built with {@link #builder()}.
 */
public final class SignalSettings {
    /** Default {@link #throttledMinutes()}: refused in more than 10 minutes... */
    public static final int DEFAULT_THROTTLED_MINUTES = 10;
    /** ...of the last hour ({@link #throttledWithin()}). */
    public static final Duration DEFAULT_THROTTLED_WITHIN = Duration.ofHours(1);
    /** Default {@link #recoveredAfter()}: a tenant refused nothing for a minute has recovered. */
    public static final Duration DEFAULT_RECOVERED_AFTER = Duration.ofMinutes(1);
    /** Default {@link #queue()}: events waiting for the listeners before new ones are dropped. */
    public static final int DEFAULT_QUEUE = 1024;
    /** The longest {@link #throttledWithin()}: a day of minutes. */
    public static final Duration MAX_THROTTLED_WITHIN = Duration.ofDays(1);

    /** Default {@link #quotaNearLimit}: a calendar quota's {@code near_limit} at 80 % and at 90 % used. */
    public static final List<Integer> DEFAULT_QUOTA_NEAR_LIMIT = List.of(80, 90);

    /** Everything at its default: no near-limit thresholds on bandwidths, quotas at 80 % and 90 %, no webhook. */
    public static final SignalSettings DEFAULTS = builder().build();

    private final OptionalInt nearLimitDefault;
    private final Map<String, Map<String, Integer>> nearLimitByPlan;
    private final OptionalInt globalNearLimit;
    private final List<Integer> quotaNearLimitDefault;
    private final Map<String, Map<String, List<Integer>>> quotaNearLimitByPlan;
    private final int throttledMinutes;
    private final Duration throttledWithin;
    private final Duration recoveredAfter;
    private final int queue;
    private final Optional<Webhook> webhook;

    private SignalSettings(Builder b) {
        this.nearLimitDefault = b.nearLimitDefault;
        Map<String, Map<String, Integer>> byPlan = new LinkedHashMap<>();
        b.nearLimitByPlan.forEach((plan, limits) -> byPlan.put(plan, Map.copyOf(limits)));
        this.nearLimitByPlan = Map.copyOf(byPlan);
        this.globalNearLimit = b.globalNearLimit;
        this.quotaNearLimitDefault = b.quotaNearLimitDefault;
        Map<String, Map<String, List<Integer>>> quotasByPlan = new LinkedHashMap<>();
        b.quotaNearLimitByPlan.forEach((plan, quotas) -> quotasByPlan.put(plan, Map.copyOf(quotas)));
        this.quotaNearLimitByPlan = Map.copyOf(quotasByPlan);
        this.throttledMinutes = b.throttledMinutes;
        this.throttledWithin = b.throttledWithin;
        this.recoveredAfter = b.recoveredAfter;
        this.queue = b.queue;
        this.webhook = b.webhook;
        if (throttledMinutes > throttledWithin.toMinutes()) {
            throw new IllegalArgumentException("throttled-for-long: " + throttledMinutes + " minutes cannot fit in "
                    + throttledWithin);
        }
    }

    /** A builder with every default. */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * The near-limit threshold of one limit (bandwidth) of a plan, in percent of its capacity used: the
     * plan's own for that limit, else the file's default; empty for none.
     */
    public OptionalInt nearLimit(String plan, String limit) {
        Map<String, Integer> own = nearLimitByPlan.get(plan);
        if (own != null && own.containsKey(limit)) return OptionalInt.of(own.get(limit));
        return nearLimitDefault;
    }

    /** True if some plan limit has a near-limit threshold. */
    public boolean hasNearLimit() {
        return nearLimitDefault.isPresent() || !nearLimitByPlan.isEmpty();
    }

    /**
     * The {@code near_limit} thresholds of one calendar quota of a plan, in percent of its limit used,
     * ascending: the plan's own for that quota, else the file's default ({@link #DEFAULT_QUOTA_NEAR_LIMIT}
     * unless set); empty for none. Each is raised once per tenant, quota and period.
     */
    public List<Integer> quotaNearLimit(String plan, String quota) {
        Map<String, List<Integer>> own = plan == null ? null : quotaNearLimitByPlan.get(plan);
        if (own != null && own.containsKey(quota)) return own.get(quota);
        return quotaNearLimitDefault;
    }

    /** The threshold of the global quota, in percent used; empty for none. */
    public OptionalInt globalNearLimit() {
        return globalNearLimit;
    }

    /** Throttled for long: refused in more than this many minutes... */
    public int throttledMinutes() {
        return throttledMinutes;
    }

    /** ...of this last stretch of time (whole minutes). */
    public Duration throttledWithin() {
        return throttledWithin;
    }

    /** A refused tenant has recovered once it was refused nothing for this long. */
    public Duration recoveredAfter() {
        return recoveredAfter;
    }

    /** Events waiting for the listeners at most; past it new ones are dropped (and counted). */
    public int queue() {
        return queue;
    }

    /** Where the file sends every event, if anywhere. */
    public Optional<Webhook> webhook() {
        return webhook;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof SignalSettings s && nearLimitDefault.equals(s.nearLimitDefault)
                && nearLimitByPlan.equals(s.nearLimitByPlan) && globalNearLimit.equals(s.globalNearLimit)
                && quotaNearLimitDefault.equals(s.quotaNearLimitDefault)
                && quotaNearLimitByPlan.equals(s.quotaNearLimitByPlan)
                && throttledMinutes == s.throttledMinutes && throttledWithin.equals(s.throttledWithin)
                && recoveredAfter.equals(s.recoveredAfter) && queue == s.queue && webhook.equals(s.webhook);
    }

    @Override
    public int hashCode() {
        return Objects.hash(nearLimitDefault, nearLimitByPlan, globalNearLimit, quotaNearLimitDefault,
                quotaNearLimitByPlan, throttledMinutes, throttledWithin,
                recoveredAfter, queue, webhook);
    }

    @Override
    public String toString() {
        return "SignalSettings[nearLimit=" + nearLimitDefault + " " + nearLimitByPlan + ", global=" + globalNearLimit
                + ", quotas=" + quotaNearLimitDefault + " " + quotaNearLimitByPlan
                + ", throttled=" + throttledMinutes + " of " + throttledWithin + ", recoveredAfter=" + recoveredAfter
                + ", queue=" + queue + ", webhook=" + webhook + "]";
    }

    /**
     * {@code signals.webhook}: POST every event as JSON to {@code url}, the body signed with HMAC-SHA256
     * under a secret read from an environment variable or a file (never written in the plans file).
     *
     * @param url        http or https
     * @param secretEnv  the environment variable holding the secret, or null
     * @param secretFile the file holding the secret, or null (exactly one of the two)
     * @param timeout    connect and response timeout of one attempt
     * @param retries    attempts after the first, with doubling back-off
     * @param queue      events waiting to be sent at most; past it new ones are dropped (and counted)
     * @param source     the plans file, for errors
     * @param line       the line of {@code signals.webhook}, for errors
     */
    public record Webhook(URI url, String secretEnv, Path secretFile, Duration timeout, int retries, int queue,
                          String source, int line) {
        public Webhook {
            Objects.requireNonNull(url, "url");
            if ((secretEnv == null) == (secretFile == null)) {
                throw new IllegalArgumentException("exactly one of secretEnv and secretFile");
            }
        }

        /**
         * The secret, read now from the environment or the file.
         *
         * @throws InvalidPlansException naming the file, the line and the field if it is missing or empty
         */
        public byte[] secret() {
            String field = secretEnv != null ? "signals.webhook.secret-env" : "signals.webhook.secret-file";
            String value;
            if (secretEnv != null) {
                value = System.getenv(secretEnv);
                if (value == null || value.isBlank()) {
                    throw new InvalidPlansException(source, line, field, "environment variable " + secretEnv
                            + " is not set (or empty)");
                }
            } else {
                try {
                    value = Files.readString(secretFile, StandardCharsets.UTF_8).strip();
                } catch (IOException e) {
                    throw new InvalidPlansException(source, line, field, "cannot read " + secretFile + ": " + e);
                }
                if (value.isEmpty()) throw new InvalidPlansException(source, line, field, secretFile + " is empty");
            }
            return value.getBytes(StandardCharsets.UTF_8);
        }
    }

    /** Builds {@link SignalSettings}; every setter checks its value at once. */
    public static final class Builder {
        private OptionalInt nearLimitDefault = OptionalInt.empty();
        private final Map<String, Map<String, Integer>> nearLimitByPlan = new LinkedHashMap<>();
        private OptionalInt globalNearLimit = OptionalInt.empty();
        private List<Integer> quotaNearLimitDefault = DEFAULT_QUOTA_NEAR_LIMIT;
        private final Map<String, Map<String, List<Integer>>> quotaNearLimitByPlan = new LinkedHashMap<>();
        private int throttledMinutes = DEFAULT_THROTTLED_MINUTES;
        private Duration throttledWithin = DEFAULT_THROTTLED_WITHIN;
        private Duration recoveredAfter = DEFAULT_RECOVERED_AFTER;
        private int queue = DEFAULT_QUEUE;
        private Optional<Webhook> webhook = Optional.empty();

        private Builder() {
        }

        /** The threshold of every plan limit without its own, in percent used (1-100). */
        public Builder nearLimit(int percent) {
            this.nearLimitDefault = OptionalInt.of(percent(percent, "near-limit"));
            return this;
        }

        /** The threshold of one limit of one plan, in percent used (1-100). */
        public Builder nearLimit(String plan, String limit, int percent) {
            nearLimitByPlan.computeIfAbsent(Objects.requireNonNull(plan, "plan"), p -> new LinkedHashMap<>())
                    .put(Objects.requireNonNull(limit, "limit"), percent(percent, "near-limit " + plan + "." + limit));
            return this;
        }

        /** The threshold of the global quota, in percent used (1-100). */
        public Builder globalNearLimit(int percent) {
            this.globalNearLimit = OptionalInt.of(percent(percent, "global near-limit"));
            return this;
        }

        /**
         * The {@code near_limit} thresholds of every calendar quota without its own, in percent used (each
         * 1-100; an empty list: none). Default {@link #DEFAULT_QUOTA_NEAR_LIMIT}.
         */
        public Builder quotaNearLimit(List<Integer> percents) {
            this.quotaNearLimitDefault = thresholds(percents, "quota near-limit");
            return this;
        }

        /** The {@code near_limit} thresholds of one calendar quota of one plan (each 1-100; empty: none). */
        public Builder quotaNearLimit(String plan, String quota, List<Integer> percents) {
            quotaNearLimitByPlan.computeIfAbsent(Objects.requireNonNull(plan, "plan"), p -> new LinkedHashMap<>())
                    .put(Objects.requireNonNull(quota, "quota"),
                            thresholds(percents, "quota near-limit " + plan + "." + quota));
            return this;
        }

        /** Throttled for long: refused in more than {@code minutes} of the last {@code within} (whole minutes, at most a day). */
        public Builder throttledForLong(int minutes, Duration within) {
            Objects.requireNonNull(within, "within");
            if (minutes <= 0) throw new IllegalArgumentException("throttled-for-long minutes must be > 0, was " + minutes);
            if (within.toMinutes() < 1 || within.compareTo(MAX_THROTTLED_WITHIN) > 0 || within.toSeconds() % 60 != 0) {
                throw new IllegalArgumentException("throttled-for-long window must be whole minutes, 1m to 1d, was " + within);
            }
            if (minutes >= within.toMinutes()) {
                throw new IllegalArgumentException("throttled-for-long: more than " + minutes + " minutes of "
                        + within.toMinutes() + " can never happen");
            }
            this.throttledMinutes = minutes;
            this.throttledWithin = within;
            return this;
        }

        /** A refused tenant has recovered once refused nothing for this long (at least 1 s). */
        public Builder recoveredAfter(Duration quiet) {
            if (quiet.compareTo(Duration.ofSeconds(1)) < 0) {
                throw new IllegalArgumentException("recovered-after must be at least 1s, was " + quiet);
            }
            this.recoveredAfter = quiet;
            return this;
        }

        /** Events waiting for the listeners at most (1 to 1,000,000). */
        public Builder queue(int events) {
            if (events <= 0 || events > 1_000_000) {
                throw new IllegalArgumentException("queue must be 1 to 1000000, was " + events);
            }
            this.queue = events;
            return this;
        }

        /** Where every event is sent. */
        public Builder webhook(Webhook webhook) {
            this.webhook = Optional.of(webhook);
            return this;
        }

        public SignalSettings build() {
            return new SignalSettings(this);
        }

        /** Sorted, each 1-100, no repeats. */
        private static List<Integer> thresholds(List<Integer> percents, String what) {
            Objects.requireNonNull(percents, what);
            for (Integer p : percents) percent(Objects.requireNonNull(p, what), what);
            List<Integer> sorted = percents.stream().sorted().toList();
            if (sorted.stream().distinct().count() != sorted.size()) {
                throw new IllegalArgumentException(what + " lists a percentage twice: " + percents);
            }
            return sorted;
        }

        private static int percent(int percent, String what) {
            if (percent < 1 || percent > 100) {
                throw new IllegalArgumentException(what + " must be 1 to 100 (percent used), was " + percent);
            }
            return percent;
        }
    }
}
