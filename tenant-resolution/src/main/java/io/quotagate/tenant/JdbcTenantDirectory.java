package io.quotagate.tenant;

import io.quotagate.plans.Bandwidth;
import io.quotagate.plans.CalendarQuota;
import io.quotagate.plans.InvalidPlansException;
import io.quotagate.plans.PlansFile;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.time.Duration;
import java.time.DateTimeException;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.function.BiFunction;

/**
 * A {@link TenantDirectory} over the application's own database (its billing or customer tables):
 * one query per lookup, the tenant id its only parameter, answering the tenant's plan and, if the
 * tenant has a contract of its own, its limits and calendar quotas.
 *
 * <pre>{@code
 * TenantDirectory directory = JdbcTenantDirectory.builder(dataSource)
 *         .query("select plan, limits, quotas from tenants where id = ?")
 *         .build();
 * QuotaFilter.builder().tenantDirectory(directory)   // the filter caches it
 * }</pre>
 *
 * <p><b>What the query returns.</b> Zero rows: the directory does not know the tenant (empty, and the
 * plans file's {@code tenants.unknown} decides). One row with the columns (labels, case-insensitive;
 * use {@code as} to rename):
 * <ul>
 *   <li>{@code plan}, required, not NULL: the plan's name as the plans file defines it (blanks around
 *       it, as a {@code CHAR} column pads, are ignored);</li>
 *   <li>{@code limits}, optional: NULL or empty for the plan's limits, or the tenant's own limits as a
 *       plans file's {@code limits:} writes them, in YAML or JSON
 *       ({@code [{capacity: 200, refill: 100, period: 10s}, {name: day, capacity: 100000, refill: 100000, period: 1d}]}),
 *       read by {@link PlansFile#parseLimits} with the file's checks and period rules;</li>
 *   <li>{@code quotas}, optional: NULL or empty for the plan's calendar quotas, or the tenant's own as a
 *       plans file's {@code quotas:} writes them, in YAML or JSON
 *       ({@code [{name: monthly, limit: 100000, per: month, zone: Europe/Berlin}]}; {@code []} for none
 *       at all), read by {@link PlansFile#parseQuotas} with the file's checks (anchors included:
 *       {@code anchor: {day: 15, time: "09:00"}}). They replace the plan's quotas whether or not the row
 *       has own limits.</li>
 *   <li>{@code zone}, optional: NULL or empty for none, or the tenant's time zone (an IANA name such as
 *       {@code America/New_York}): its plan's quotas run in it, and so do its own quotas that name no
 *       zone. The default query does not read it: add it to yours
 *       ({@code select plan, limits, quotas, zone from ...}).</li>
 * </ul>
 * Any other column, a missing {@code plan} column, a NULL plan, bad limits or quotas or a second row is an
 * {@link IllegalStateException} naming the tenant, the column and the reason; so is a failing query
 * (its {@link SQLException} is the cause). The filter cannot place that tenant then: it gets the answer
 * of the plans file's {@code tenants.directory.unavailable} (the default plan, or 503
 * {@code directory_unavailable}; never a 500), and the message is logged, rate-limited. Nothing is
 * cached here: wrap the directory in {@link TenantDirectory#cached} (the filter does so itself for the
 * directory its builder is given, and asks it on threads of its own, so no request waits for a hung
 * database longer than the lookup timeout) and call {@link TenantDirectory#invalidate} on the cache after
 * a tenant's row changes.
 *
 * <p>Each lookup borrows a connection from the {@link DataSource} and returns it; use a pooled one in
 * production. The query timeout bounds the query, not the wait for a connection, nor a server that
 * accepts a connection and never answers: set the pool's connection timeout and the driver's connect,
 * login and socket timeouts as well (docs/tenants.md shows them), or a hung database holds a lookup
 * thread until the operating system gives up. Thread-safe.
 */
public final class JdbcTenantDirectory implements TenantDirectory {
    /** The query unless {@link Builder#query} says otherwise: the table docs/tenants.md documents. */
    public static final String DEFAULT_QUERY = "select plan, limits, quotas from quotagate_tenants where tenant_id = ?";
    /** How long a lookup's query may run unless {@link Builder#queryTimeout} says otherwise. */
    public static final Duration DEFAULT_QUERY_TIMEOUT = Duration.ofSeconds(2);

    private static final String PLAN = "plan";
    private static final String LIMITS = "limits";
    private static final String QUOTAS = "quotas";
    private static final String ZONE = "zone";
    private static final String SHAPE = "the tenant query must return the columns plan and, optionally, limits, quotas and zone";
    /** How much of a bad limits or quotas value an error message quotes. */
    private static final int QUOTED = 200;

    private final DataSource dataSource;
    private final String query;
    private final int queryTimeoutSeconds;

    private JdbcTenantDirectory(Builder b) {
        this.dataSource = b.dataSource;
        this.query = b.query;
        // JDBC counts whole seconds, 0 meaning none: round up, so a timeout is never switched off
        long seconds = (b.queryTimeout.toNanos() + 999_999_999L) / 1_000_000_000L;
        this.queryTimeoutSeconds = (int) Math.min(Integer.MAX_VALUE, Math.max(1, seconds));
    }

    /** A builder of a directory that borrows its connections from {@code dataSource}. */
    public static Builder builder(DataSource dataSource) {
        return new Builder(dataSource);
    }

    /**
     * The tenant's plan; empty if the query returns no row. A row that cannot be used (see the class
     * comment) throws, here as in {@link #contractOf}: a tenant's row is good or it is not.
     *
     * @throws IllegalStateException naming the tenant, the column and the reason
     */
    @Override
    public Optional<String> planOf(String tenantId) {
        return contractOf(tenantId).map(TenantContract::plan);
    }

    /**
     * The tenant's plan, its own limits (none if the {@code limits} column is absent, NULL or empty)
     * and its own calendar quotas (the plan's if the {@code quotas} column is absent, NULL or empty);
     * empty if the query returns no row.
     *
     * @throws IllegalStateException naming the tenant, the column and the reason, for a row that
     *                               cannot be used or a query that fails
     */
    @Override
    public Optional<TenantContract> contractOf(String tenantId) {
        Objects.requireNonNull(tenantId, "tenantId");
        try (Connection connection = dataSource.getConnection();
             PreparedStatement statement = connection.prepareStatement(query)) {
            statement.setQueryTimeout(queryTimeoutSeconds);
            statement.setMaxRows(2); // a second row is already an error: never read a whole table
            statement.setString(1, tenantId);
            try (ResultSet rows = statement.executeQuery()) {
                Columns columns = columns(tenantId, rows.getMetaData());
                if (!rows.next()) return Optional.empty();
                String plan = rows.getString(columns.plan());
                String limits = columns.limits() == 0 ? null : rows.getString(columns.limits());
                String quotas = columns.quotas() == 0 ? null : rows.getString(columns.quotas());
                String zone = columns.zone() == 0 ? null : rows.getString(columns.zone());
                if (rows.next()) {
                    throw new IllegalStateException("tenant '" + tenantId + "': the tenant query returned more "
                            + "than one row; it must return at most one per tenant id");
                }
                return Optional.of(contract(tenantId, plan, limits, quotas, zone));
            }
        } catch (SQLException e) {
            throw new IllegalStateException("tenant '" + tenantId + "': the tenant query failed: " + e.getMessage(), e);
        }
    }

    /** Where {@code plan}, {@code limits}, {@code quotas} and {@code zone} are in the result (1-based; the optional ones 0 if absent). */
    private record Columns(int plan, int limits, int quotas, int zone) {
    }

    private static Columns columns(String tenant, ResultSetMetaData meta) throws SQLException {
        int plan = 0;
        int limits = 0;
        int quotas = 0;
        int zone = 0;
        for (int i = 1; i <= meta.getColumnCount(); i++) {
            String label = meta.getColumnLabel(i);
            String name = label == null ? "" : label.toLowerCase(Locale.ROOT);
            if (name.equals(PLAN) && plan == 0) {
                plan = i;
            } else if (name.equals(LIMITS) && limits == 0) {
                limits = i;
            } else if (name.equals(QUOTAS) && quotas == 0) {
                quotas = i;
            } else if (name.equals(ZONE) && zone == 0) {
                zone = i;
            } else {
                throw new IllegalStateException("tenant '" + tenant + "': column '" + label + "': "
                        + (name.equals(PLAN) || name.equals(LIMITS) || name.equals(QUOTAS) || name.equals(ZONE) ? "returned twice" : "unknown column")
                        + "; " + SHAPE);
            }
        }
        if (plan == 0) {
            throw new IllegalStateException("tenant '" + tenant + "': column plan: missing; " + SHAPE);
        }
        return new Columns(plan, limits, quotas, zone);
    }

    private static TenantContract contract(String tenant, String planValue, String limitsValue, String quotasValue,
                                           String zoneValue) {
        if (planValue == null) {
            throw new IllegalStateException("tenant '" + tenant + "': column plan: is NULL; a tenant's row must name its plan");
        }
        String plan = planValue.strip();
        if (plan.isEmpty()) {
            throw new IllegalStateException("tenant '" + tenant + "': column plan: is empty; a tenant's row must name its plan");
        }
        List<Bandwidth> limits = limitsValue == null || limitsValue.isBlank() ? List.of()
                : parsed(tenant, LIMITS, limitsValue, PlansFile::parseLimits);
        ZoneId zone = null;
        if (zoneValue != null && !zoneValue.isBlank()) {
            try {
                zone = ZoneId.of(zoneValue.strip());
            } catch (DateTimeException e) {
                String quoted = zoneValue.length() > QUOTED ? zoneValue.substring(0, QUOTED) + "..." : zoneValue;
                throw new IllegalStateException("tenant '" + tenant + "': column zone: unknown time zone '" + quoted
                        + "', expected an IANA name such as Europe/Berlin, or UTC");
            }
        }
        // the tenant's own quotas run in its zone unless one names its own
        ZoneId quotaZone = zone == null ? ZoneOffset.UTC : zone;
        List<CalendarQuota> quotas = quotasValue == null || quotasValue.isBlank() ? null
                : parsed(tenant, QUOTAS, quotasValue, (source, text) -> PlansFile.parseQuotas(source, text, quotaZone));
        return new TenantContract(plan, limits, quotas, zone);
    }

    /** A column's value read by the plans file's parser, or an error naming the tenant, the field and the reason. */
    private static <T> T parsed(String tenant, String column, String value, BiFunction<String, String, T> parser) {
        try {
            return parser.apply("tenant '" + tenant + "'", value);
        } catch (InvalidPlansException e) {
            // the binder names fields from the column's name: limits[1].period reads as a path inside the column
            String field = e.field().isEmpty() ? column : e.field();
            String quoted = value.length() > QUOTED ? value.substring(0, QUOTED) + "..." : value;
            throw new IllegalStateException("tenant '" + tenant + "': column " + field + ": " + e.reason()
                    + " (" + column + " is '" + quoted + "')");
        }
    }

    @Override
    public String toString() {
        return "JdbcTenantDirectory[" + query + "]";
    }

    /**
     * Settings of a {@link JdbcTenantDirectory}; each setter checks its value at once, so a bad setting
     * fails at start-up, naming it.
     */
    public static final class Builder {
        private final DataSource dataSource;
        private String query = DEFAULT_QUERY;
        private Duration queryTimeout = DEFAULT_QUERY_TIMEOUT;

        private Builder(DataSource dataSource) {
            this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
        }

        /**
         * The query of one tenant: one {@code ?} parameter (the tenant id, bound as a string, never
         * spliced into the text), returning the columns {@code plan} and, optionally, {@code limits} and
         * {@code quotas}.
         * Default {@value JdbcTenantDirectory#DEFAULT_QUERY}.
         *
         * @throws IllegalArgumentException if the query is blank or has not exactly one {@code ?} outside
         *                                  quotes ({@code ??}, the PostgreSQL driver's escaped
         *                                  {@code ?} operator, is not a parameter)
         */
        public Builder query(String sql) {
            Objects.requireNonNull(sql, "query");
            if (sql.isBlank()) throw new IllegalArgumentException("query must not be blank");
            int parameters = parameters(sql);
            if (parameters != 1) {
                throw new IllegalArgumentException("query must have exactly one ? parameter (the tenant id), found "
                        + parameters + ": " + sql);
            }
            this.query = sql;
            return this;
        }

        /**
         * How long one lookup's query may run before the driver cancels it (whole seconds, rounded up);
         * default {@link #DEFAULT_QUERY_TIMEOUT}. Behind {@link TenantDirectory#cached} a lookup runs on one
         * of the cache's own threads, which this bounds; a request waits for it at most the cache's lookup
         * timeout.
         *
         * @throws IllegalArgumentException if not &gt; 0
         */
        public Builder queryTimeout(Duration timeout) {
            Objects.requireNonNull(timeout, "queryTimeout");
            if (timeout.isZero() || timeout.isNegative()) {
                throw new IllegalArgumentException("query timeout must be > 0, was " + timeout);
            }
            this.queryTimeout = timeout;
            return this;
        }

        public JdbcTenantDirectory build() {
            return new JdbcTenantDirectory(this);
        }

        /** The {@code ?} outside quoted literals and identifiers; {@code ??} is an escaped operator. */
        static int parameters(String sql) {
            int count = 0;
            char quote = 0;
            for (int i = 0; i < sql.length(); i++) {
                char c = sql.charAt(i);
                if (quote != 0) {
                    if (c == quote) quote = 0; // a doubled quote closes and reopens: same count
                } else if (c == '\'' || c == '"') {
                    quote = c;
                } else if (c == '?') {
                    if (i + 1 < sql.length() && sql.charAt(i + 1) == '?') i++;
                    else count++;
                }
            }
            return count;
        }
    }
}
