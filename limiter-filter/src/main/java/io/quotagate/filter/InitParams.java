package io.quotagate.filter;

import io.quotagate.plans.PlansFile;
import jakarta.servlet.FilterConfig;

import java.nio.file.Path;

/**
 * A container-created filter's settings from its init-params ({@code web.xml},
 * {@code FilterRegistration.setInitParameter}), as a {@link QuotaFilter.Builder}. A bad value fails
 * with a message naming the init-param and the value.
 */
final class InitParams {
    private InitParams() {
    }

    /**
     * The builder these init-params describe.
     *
     * @throws IllegalArgumentException      for a missing or malformed init-param
     * @throws io.quotagate.plans.InvalidPlansException for a class-path plans file that is invalid
     */
    static QuotaFilter.Builder builder(FilterConfig config) {
        String location = value(config, QuotaFilter.PLANS_PARAM);
        if (location == null) {
            throw new IllegalArgumentException("init-param '" + QuotaFilter.PLANS_PARAM
                    + "' is required (classpath:<resource> or a file path)");
        }
        QuotaFilter.Builder b = QuotaFilter.builder();
        String max = value(config, QuotaFilter.MAX_PLANS_FILE_BYTES_PARAM);
        if (max != null) {
            try {
                b.maxPlansFileBytes(Long.parseLong(max));
            } catch (IllegalArgumentException e) { // NumberFormatException too
                throw new IllegalArgumentException("init-param '" + QuotaFilter.MAX_PLANS_FILE_BYTES_PARAM
                        + "' must be a whole number of bytes from 1 to " + (Integer.MAX_VALUE - 1)
                        + ", was '" + max + "'");
            }
        }
        if (location.startsWith(PlansFile.CLASSPATH_PREFIX)) b.plans(PlansFile.load(location, b.maxPlansFileBytes));
        else b.plansFile(Path.of(location));
        String interval = value(config, QuotaFilter.RELOAD_INTERVAL_PARAM);
        if (interval != null) b.watchPlansFile(PlansFile.parsePeriod(interval));
        b.legacyRateLimitHeaders(Boolean.parseBoolean(value(config, QuotaFilter.LEGACY_HEADERS_PARAM)));
        String maxDelayed = value(config, QuotaFilter.MAX_DELAYED_REQUESTS_PARAM);
        if (maxDelayed != null) {
            try {
                b.maxDelayedRequests(Integer.parseInt(maxDelayed.trim()));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("init-param '" + QuotaFilter.MAX_DELAYED_REQUESTS_PARAM
                        + "': not a whole number: " + maxDelayed);
            }
        }
        String bodyTimeout = value(config, QuotaFilter.BODY_READ_TIMEOUT_PARAM);
        if (bodyTimeout != null) b.bodyReadTimeout(PlansFile.parsePeriod(bodyTimeout));
        String snapshot = value(config, QuotaFilter.QUOTA_SNAPSHOT_PARAM);
        String snapshotInterval = value(config, QuotaFilter.QUOTA_SNAPSHOT_INTERVAL_PARAM);
        if (snapshotInterval != null && snapshot == null) {
            throw new IllegalArgumentException("init-param '" + QuotaFilter.QUOTA_SNAPSHOT_INTERVAL_PARAM
                    + "' needs '" + QuotaFilter.QUOTA_SNAPSHOT_PARAM + "' (the file)");
        }
        if (snapshot != null) {
            String every = snapshotInterval != null ? snapshotInterval : QuotaFilter.DEFAULT_QUOTA_SNAPSHOT_INTERVAL;
            try {
                b.quotaSnapshot(Path.of(snapshot), PlansFile.parsePeriod(every));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("init-param '" + QuotaFilter.QUOTA_SNAPSHOT_INTERVAL_PARAM
                        + "': " + e.getMessage());
            }
        }
        String usage = value(config, QuotaFilter.USAGE_ENDPOINT_PARAM);
        if (usage != null) {
            try {
                b.usageEndpoint(usage, Boolean.parseBoolean(value(config, QuotaFilter.USAGE_ENDPOINT_HIDDEN_PARAM)));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("init-param '" + QuotaFilter.USAGE_ENDPOINT_PARAM + "': "
                        + e.getMessage());
            }
        }
        String kept = value(config, QuotaFilter.CLOSED_PERIODS_KEPT_PARAM);
        if (kept != null) {
            try {
                b.closedPeriodsKept(Integer.parseInt(kept));
            } catch (IllegalArgumentException e) { // NumberFormatException too
                throw new IllegalArgumentException("init-param '" + QuotaFilter.CLOSED_PERIODS_KEPT_PARAM
                        + "' must be a whole number from 0 to " + QuotaFilter.Builder.MAX_CLOSED_PERIODS_KEPT
                        + ", was '" + kept + "'");
            }
        }
        return b;
    }

    /** The init-param's value, trimmed; null if it is absent or blank. */
    private static String value(FilterConfig config, String name) {
        String value = config.getInitParameter(name);
        return value == null || value.isBlank() ? null : value.trim();
    }
}
