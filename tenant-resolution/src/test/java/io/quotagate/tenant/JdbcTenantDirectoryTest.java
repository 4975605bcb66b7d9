package io.quotagate.tenant;

import io.quotagate.plans.Bandwidth;
import io.quotagate.plans.CalendarQuota;
import io.quotagate.tenant.testing.PostgresDatabase;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.sql.SQLException;
import java.time.Duration;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.params.provider.Arguments.arguments;

/**
 * {@link JdbcTenantDirectory} against a real PostgreSQL: a database of this class's own, created with a
 * random name and dropped at the end.
 */
class JdbcTenantDirectoryTest {
    /** The table docs/tenants.md documents, read by {@link JdbcTenantDirectory#DEFAULT_QUERY}. */
    static final String DOCUMENTED_TABLE = "create table quotagate_tenants (tenant_id varchar(64) primary key, "
            + "plan varchar(32) not null, limits varchar(4000), quotas varchar(4000))";

    private static final String QUERY = "select plan, limits, quotas from tenants where id = ?";
    private static final List<Bandwidth> BURST_AND_DAY = List.of(new Bandwidth("b0", 200, 100, Duration.ofSeconds(10)),
            new Bandwidth("day", 100000, 100000, Duration.ofDays(1)));
    private static final List<CalendarQuota> MONTHLY_AND_DAILY = List.of(
            new CalendarQuota("monthly", 100000, CalendarQuota.Per.MONTH, ZoneId.of("Europe/Berlin")),
            new CalendarQuota("daily", 5000, CalendarQuota.Per.DAY, ZoneOffset.UTC));

    private static PostgresDatabase db;
    private static JdbcTenantDirectory directory;

    @BeforeAll
    static void createDatabase() {
        db = PostgresDatabase.create();
        // no constraints: the bad rows a careless billing schema allows
        db.execute("create table tenants (id text, plan text, limits text, quotas text)", DOCUMENTED_TABLE);
        directory = JdbcTenantDirectory.builder(db.dataSource()).query(QUERY).build();
        tenant("victim", "pro", null);
    }

    @AfterAll
    static void dropDatabase() {
        if (db != null) db.close();
    }

    private static void tenant(String id, String plan, String limits) {
        tenant(id, plan, limits, null);
    }

    private static void tenant(String id, String plan, String limits, String quotas) {
        db.update("insert into tenants (id, plan, limits, quotas) values (?, ?, ?, ?)", id, plan, limits, quotas);
    }

    @Test
    void aRowWithAPlanOnlyPutsTheTenantOnItsPlansLimits() {
        tenant("plan-only", "pro", null);
        tenant("plan-empty-limits", "free", "  ");
        tenant("plan-padded", " pro  ", null);

        assertThat(directory.contractOf("plan-only")).contains(TenantContract.onPlan("pro"));
        assertThat(directory.planOf("plan-only")).contains("pro");
        assertThat(directory.contractOf("plan-empty-limits")).contains(TenantContract.onPlan("free"));
        assertThat(directory.contractOf("plan-padded")).as("as a CHAR column pads").contains(TenantContract.onPlan("pro"));
        assertThat(JdbcTenantDirectory.builder(db.dataSource()).query("select plan from tenants where id = ?").build()
                .contractOf("plan-only")).as("no limits column").contains(TenantContract.onPlan("pro"));
    }

    @Test
    void aRowWithLimitsGivesTheTenantItsOwnLimitsWrittenAsInThePlansFileOrAsJson() {
        tenant("own-yaml", "pro", "[{capacity: 200, refill: 100, period: 10s}, {name: day, capacity: 100000, refill: 100000, period: 1d}]");
        tenant("own-json", "pro", "[{\"capacity\": 200, \"refill\": 100, \"period\": \"10s\"},"
                + " {\"name\": \"day\", \"capacity\": 100000, \"refill\": 100000, \"period\": \"PT24H\"}]");

        TenantContract expected = new TenantContract("pro", BURST_AND_DAY);
        assertThat(directory.contractOf("own-yaml")).contains(expected);
        assertThat(directory.contractOf("own-json")).contains(expected);
        assertThat(directory.contractOf("own-json").orElseThrow().hasOwnLimits()).isTrue();
        assertThat(directory.planOf("own-yaml")).contains("pro");
    }

    @Test
    void aRowsLimitsChooseTheirAlgorithmTokenBucketWhenNoneIsWritten() {
        tenant("own-algorithms", "pro", "[{algorithm: sliding-window, capacity: 100, period: 1m},"
                + " {name: burst, algorithm: gcra, capacity: 20, refill: 10, period: 10s},"
                + " {name: day, capacity: 100000, refill: 100000, period: 1d}]");
        tenant("own-algorithms-json", "pro", "[{\"algorithm\": \"sliding-window\", \"capacity\": 100, \"period\": \"1m\"},"
                + " {\"name\": \"burst\", \"algorithm\": \"gcra\", \"capacity\": 20, \"refill\": 10, \"period\": \"10s\"},"
                + " {\"name\": \"day\", \"capacity\": 100000, \"refill\": 100000, \"period\": \"PT24H\"}]");

        TenantContract expected = new TenantContract("pro", List.of(Bandwidth.slidingWindow("b0", 100, Duration.ofMinutes(1)),
                Bandwidth.gcra("burst", 20, 10, Duration.ofSeconds(10)),
                new Bandwidth("day", 100000, 100000, Duration.ofDays(1), io.quotagate.plans.Algorithm.TOKEN_BUCKET)));
        assertThat(directory.contractOf("own-algorithms")).contains(expected);
        assertThat(directory.contractOf("own-algorithms-json")).contains(expected);
    }

    @Test
    void aRowWithQuotasGivesTheTenantItsOwnCalendarQuotasWrittenAsInThePlansFileOrAsJson() {
        tenant("quotas-yaml", "pro", null, "[{name: monthly, limit: 100000, per: month, zone: Europe/Berlin}, "
                + "{name: daily, limit: 5000, per: day}]");
        tenant("quotas-json", "pro", null, "[{\"name\": \"monthly\", \"limit\": 100000, \"per\": \"month\", "
                + "\"zone\": \"Europe/Berlin\"}, {\"name\": \"daily\", \"limit\": 5000, \"per\": \"day\"}]");
        tenant("quotas-and-limits", "pro", "[{capacity: 200, refill: 100, period: 10s}, "
                + "{name: day, capacity: 100000, refill: 100000, period: 1d}]", "[{name: monthly, limit: 100000, per: month, "
                + "zone: Europe/Berlin}, {name: daily, limit: 5000, per: day}]");
        tenant("quotas-none", "pro", null, "[]");
        tenant("quotas-empty", "pro", null, " ");

        TenantContract ownQuotas = new TenantContract("pro", List.of(), MONTHLY_AND_DAILY);
        assertThat(directory.contractOf("quotas-yaml")).contains(ownQuotas);
        assertThat(directory.contractOf("quotas-json")).contains(ownQuotas);
        assertThat(directory.contractOf("quotas-yaml").orElseThrow())
                .as("own quotas alone keep the plan's limits")
                .matches(TenantContract::hasOwnQuotas).matches(c -> !c.hasOwnLimits());
        assertThat(directory.contractOf("quotas-and-limits")).contains(new TenantContract("pro", BURST_AND_DAY, MONTHLY_AND_DAILY));
        assertThat(directory.contractOf("quotas-none")).as("[]: no quotas at all, not the plan's")
                .contains(new TenantContract("pro", List.of(), List.of()));
        assertThat(directory.contractOf("quotas-empty")).as("empty: the plan's quotas")
                .contains(TenantContract.onPlan("pro")).map(TenantContract::hasOwnQuotas).contains(false);
        assertThat(directory.planOf("quotas-yaml")).contains("pro");
    }

    @Test
    void aJsonbColumnWorksAsWellUnderAnyNamesRenamedInTheQuery() {
        db.execute("create table customers (customer text primary key, tier text not null, contract jsonb)",
                "insert into customers values ('initech', 'pro', '[{\"capacity\": 5, \"refill\": 1, \"period\": \"1h\"}]')");
        JdbcTenantDirectory customers = JdbcTenantDirectory.builder(db.dataSource())
                .query("select tier as plan, contract as \"LIMITS\" from customers where customer = ?").build();
        assertThat(customers.contractOf("initech"))
                .contains(new TenantContract("pro", List.of(new Bandwidth("b0", 5, 1, Duration.ofHours(1)))));
    }

    @Test
    void theDefaultQueryReadsTheDocumentedTable() {
        db.update("insert into quotagate_tenants (tenant_id, plan, limits, quotas) values (?, ?, ?, ?)",
                "documented", "pro", "[{capacity: 5, refill: 1, period: 1h}]", "[{name: monthly, limit: 3, per: month}]");
        JdbcTenantDirectory byDefault = JdbcTenantDirectory.builder(db.dataSource()).build();
        assertThat(byDefault.contractOf("documented"))
                .contains(new TenantContract("pro", List.of(new Bandwidth("b0", 5, 1, Duration.ofHours(1))),
                        List.of(new CalendarQuota("monthly", 3, CalendarQuota.Per.MONTH, ZoneOffset.UTC))));
        assertThat(byDefault.contractOf("nobody")).isEmpty();
    }

    @Test
    void noRowIsAnUnknownTenant() {
        assertThat(directory.contractOf("never-inserted")).isEmpty();
        assertThat(directory.planOf("never-inserted")).isEmpty();
    }

    static Stream<Arguments> badRows() {
        return Stream.of(
                arguments(null, null, "column plan: is NULL"),
                arguments("", null, "column plan: is empty"),
                arguments("pro", "[{capacity: 0, refill: 5, period: 1s}]", "column limits[0].capacity: must be > 0, was 0"),
                arguments("pro", "[{capacity: -3, refill: 5, period: 1s}]", "column limits[0].capacity: "),
                arguments("pro", "[{capacity: 5, refill: 5, period: 1s}, {capacity: 5, refill: 5, period: 10}]",
                        "column limits[1].period: expected a period such as 10s"),
                arguments("pro", "[{capacity: 5, refill: 5, period: 10 s}]", "column limits[0].period: unknown period '10 s'"),
                arguments("pro", "[{capacity: 5, refill: 5, period: 1s, burst: 9}]", "column limits[0].burst: unknown key"),
                arguments("pro", "[{\"capacity\": 5, \"refill\": 5}]", "column limits[0].period: required"),
                arguments("pro", "{capacity: 5, refill: 5, period: 1s}", "column limits: expected a list, found"),
                arguments("pro", "[]", "column limits: at least one limit is required"),
                arguments("pro", "capacity=5", "column limits: expected a list"),
                arguments("pro", "[{capacity: 5, refill: 5, period: 1s, algorithm: leaky-bucket}]",
                        "column limits[0].algorithm: unknown value 'leaky-bucket', expected one of [token-bucket, gcra, sliding-window]"),
                arguments("pro", "[{algorithm: sliding-window, capacity: 5, refill: 5, period: 1s}]",
                        "column limits[0].refill: a sliding window takes no refill"),
                arguments("pro", "[{capacity: 5", "column limits: not valid YAML"));
    }

    static Stream<Arguments> badQuotas() {
        return Stream.of(
                arguments("[{name: monthly, limit: 0, per: month}]", "column quotas[0].limit: must be > 0, was 0"),
                arguments("[{name: monthly, limit: 10, per: year}]", "column quotas[0].per: "),
                arguments("[{name: monthly, limit: 10, per: month, zone: Mars/Olympus}]",
                        "column quotas[0].zone: unknown time zone 'Mars/Olympus'"),
                arguments("[{limit: 10, per: month}]", "column quotas[0].name: required"),
                arguments("[{name: m, limit: 10, per: month}, {name: m, limit: 20, per: day}]",
                        "column quotas[1].name: duplicate quota name 'm'"),
                arguments("[{name: m, limit: 10, per: month, reset: 1}]", "column quotas[0].reset: unknown key"),
                arguments("{name: m, limit: 10, per: month}", "column quotas: expected a list"),
                arguments("[{name: m, limit: 10", "column quotas: not valid YAML"));
    }

    @ParameterizedTest(name = "[{index}] {1}")
    @MethodSource("badQuotas")
    void aRowWithBadQuotasIsAnErrorNamingTheTenantTheColumnAndTheReason(String quotas, String reason) {
        String tenant = "bad-quotas-" + Integer.toHexString(quotas.hashCode());
        tenant(tenant, "pro", null, quotas);
        for (var lookup : List.<Runnable>of(() -> directory.contractOf(tenant), () -> directory.planOf(tenant))) {
            assertThatThrownBy(lookup::run)
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageStartingWith("tenant '" + tenant + "': ")
                    .hasMessageContaining(reason)
                    .hasMessageEndingWith("(quotas is '" + quotas + "')");
        }
    }

    @ParameterizedTest(name = "[{index}] {2}")
    @MethodSource("badRows")
    void aRowWithBadDataIsAnErrorNamingTheTenantTheColumnAndTheReason(String plan, String limits, String reason) {
        String tenant = "bad-" + Integer.toHexString((plan + "|" + limits).hashCode());
        tenant(tenant, plan, limits);
        for (var lookup : List.<Runnable>of(() -> directory.contractOf(tenant), () -> directory.planOf(tenant))) {
            assertThatThrownBy(lookup::run)
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageStartingWith("tenant '" + tenant + "': ")
                    .hasMessageContaining(reason);
        }
    }

    @Test
    void aZoneColumnPutsTheTenantInItsZoneAndItsOwnQuotasWithoutAZoneInItAnchorsIncluded() {
        db.execute("create table zoned (id text primary key, plan text not null, quotas text, zone varchar(64))",
                "insert into zoned values ('ny', 'pro', null, 'America/New_York')",
                "insert into zoned values ('ny-own', 'pro', '[{name: monthly, limit: 500, per: month, anchor: {day: 15, time: \"09:00\"}},"
                        + " {\"name\": \"daily\", \"limit\": 50, \"per\": \"day\", \"zone\": \"UTC\", \"anchor\": {\"time\": \"06:00\"}}]',"
                        + " 'America/New_York')",
                "insert into zoned values ('nowhere', 'pro', null, ' ')",
                "insert into zoned values ('mars', 'pro', null, 'Mars/Olympus')",
                "insert into zoned values ('bad-anchor', 'pro', '[{name: m, limit: 5, per: month, anchor: {weekday: monday}}]', null)");
        JdbcTenantDirectory zoned = JdbcTenantDirectory.builder(db.dataSource())
                .query("select plan, quotas, zone from zoned where id = ?").build();
        ZoneId ny = ZoneId.of("America/New_York");
        assertThat(zoned.contractOf("ny")).contains(TenantContract.onPlan("pro").withZone(ny));
        assertThat(zoned.contractOf("ny-own")).contains(new TenantContract("pro", List.of(), List.of(
                new CalendarQuota("monthly", 500, CalendarQuota.Per.MONTH, ny,
                        CalendarQuota.Anchor.monthly(15, java.time.LocalTime.of(9, 0))),
                new CalendarQuota("daily", 50, CalendarQuota.Per.DAY, ZoneOffset.UTC,
                        CalendarQuota.Anchor.daily(java.time.LocalTime.of(6, 0)))), ny));
        assertThat(zoned.contractOf("nowhere")).as("blank: no zone").contains(TenantContract.onPlan("pro"));
        assertThatThrownBy(() -> zoned.contractOf("mars")).isInstanceOf(IllegalStateException.class)
                .hasMessage("tenant 'mars': column zone: unknown time zone 'Mars/Olympus', expected an IANA name such as "
                        + "Europe/Berlin, or UTC");
        assertThatThrownBy(() -> zoned.contractOf("bad-anchor")).isInstanceOf(IllegalStateException.class)
                .hasMessageStartingWith("tenant 'bad-anchor': column quotas[0].anchor.weekday: a weekday anchors a weekly "
                        + "quota only; a monthly quota takes day");
    }

    @Test
    void aQueryOfAnotherShapeIsAnErrorNamingTheColumn() {
        tenant("shape", "pro", null);
        assertThatThrownBy(() -> JdbcTenantDirectory.builder(db.dataSource())
                .query("select plan, limits, id from tenants where id = ?").build().contractOf("shape"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("tenant 'shape': column 'id': unknown column; the tenant query must return the columns plan "
                        + "and, optionally, limits, quotas and zone");
        assertThatThrownBy(() -> JdbcTenantDirectory.builder(db.dataSource())
                .query("select plan, quotas, limits as quotas from tenants where id = ?").build().contractOf("shape"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageStartingWith("tenant 'shape': column 'quotas': returned twice");
        assertThatThrownBy(() -> JdbcTenantDirectory.builder(db.dataSource())
                .query("select limits from tenants where id = ?").build().contractOf("shape"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageStartingWith("tenant 'shape': column plan: missing");
        assertThatThrownBy(() -> JdbcTenantDirectory.builder(db.dataSource())
                .query("select plan, plan from tenants where id = ?").build().contractOf("shape"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageStartingWith("tenant 'shape': column 'plan': returned twice");
    }

    @Test
    void twoRowsForOneTenantAreAnError() {
        tenant("twice", "pro", null);
        tenant("twice", "free", null);
        assertThatThrownBy(() -> directory.contractOf("twice"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("tenant 'twice': the tenant query returned more than one row; it must return at most one per tenant id");
    }

    @Test
    void aFailingQueryIsAnErrorNamingTheTenantWithTheDriversReasonAsCause() {
        JdbcTenantDirectory missingTable = JdbcTenantDirectory.builder(db.dataSource())
                .query("select plan, limits from no_such_table where id = ?").build();
        assertThatThrownBy(() -> missingTable.contractOf("acme"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageStartingWith("tenant 'acme': the tenant query failed: ")
                .hasMessageContaining("no_such_table")
                .hasCauseInstanceOf(SQLException.class);
    }

    @Test
    void aQueryOverItsTimeoutIsCancelled() {
        tenant("slow", "pro", null);
        JdbcTenantDirectory slow = JdbcTenantDirectory.builder(db.dataSource())
                .query("select plan, limits from tenants where id = ? and pg_sleep(60) is not null")
                .queryTimeout(Duration.ofMillis(300)) // whole seconds for JDBC: rounded up to 1 s, never 0 (no limit)
                .build();
        assertThatThrownBy(() -> slow.contractOf("slow"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageStartingWith("tenant 'slow': the tenant query failed: ")
                .hasMessageContaining("canceling statement");
    }

    @ParameterizedTest
    @ValueSource(strings = {"x' or '1'='1", "x' or 1=1 --", "'; drop table tenants; --", "%", "*", "x\\' or true --"})
    void aTenantIdThatLooksLikeSqlIsOnlyAParameter(String id) {
        assertThat(directory.contractOf(id)).as(id).isEmpty();
        assertThat(directory.contractOf("victim")).as("the table is still there").isPresent();
        tenant(id, "enterprise", null);
        assertThat(directory.contractOf(id)).as("the id is matched as written").contains(TenantContract.onPlan("enterprise"));
    }

    @Test
    void theBuilderRefusesAQueryWithoutExactlyOneParameterAndANonPositiveTimeout() {
        var b = JdbcTenantDirectory.builder(db.dataSource());
        assertThatThrownBy(() -> b.query("select plan from tenants"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("query must have exactly one ? parameter (the tenant id), found 0: select plan from tenants");
        assertThatThrownBy(() -> b.query("select plan from tenants where id = ? or alias = ?"))
                .hasMessageContaining("found 2");
        assertThatThrownBy(() -> b.query(" ")).hasMessage("query must not be blank");
        assertThat(JdbcTenantDirectory.Builder.parameters("select plan, '?' as \"x?\" from t where id = ? and tags ?? 'a'"))
                .as("quoted and escaped ? are not parameters").isOne();
        assertThatThrownBy(() -> b.queryTimeout(Duration.ZERO)).hasMessage("query timeout must be > 0, was PT0S");
        assertThatThrownBy(() -> JdbcTenantDirectory.builder(null)).isInstanceOf(NullPointerException.class);
    }

    /**
     * The directory as {@link TenantDirectory#cached} caches it (5 min, 30 s for "unknown"), its lookups run
     * on the calling thread: what these tests show is what is cached and when, not the lookup timeout (a
     * first connection on a loaded machine may take longer than its 250 ms; CachedDirectoryTest shows it),
     * and a background read has ended when the call that started it returns.
     */
    private TenantDirectory cached(java.util.function.LongSupplier ticker) {
        return new CachedDirectory(directory, 1000, Duration.ofMinutes(5).toNanos(), Duration.ofSeconds(30).toNanos(),
                Duration.ofMillis(250).toNanos(), 8, ticker, Runnable::run);
    }

    @Test
    void cachedItShowsAChangedRowAfterInvalidateAndAfterTheRefreshTime() {
        tenant("upgraded", "free", null);
        AtomicLong nanos = new AtomicLong();
        TenantDirectory cached = cached(nanos::get);
        assertThat(cached.contractOf("upgraded")).contains(TenantContract.onPlan("free"));

        db.update("update tenants set plan = 'pro', limits = ? where id = ?", "[{capacity: 5, refill: 1, period: 1h}]", "upgraded");
        assertThat(cached.contractOf("upgraded")).as("cached").contains(TenantContract.onPlan("free"));
        cached.invalidate("upgraded");
        TenantContract upgraded = new TenantContract("pro", List.of(new Bandwidth("b0", 5, 1, Duration.ofHours(1))));
        assertThat(cached.contractOf("upgraded")).as("after invalidate").contains(upgraded);
        assertThat(cached.planOf("upgraded")).contains("pro");

        db.update("update tenants set limits = null where id = ?", "upgraded");
        nanos.addAndGet(Duration.ofSeconds(149).toNanos());
        assertThat(cached.contractOf("upgraded")).as("before the refresh time (half the expiry)").contains(upgraded);
        nanos.addAndGet(Duration.ofSeconds(2).toNanos());
        assertThat(cached.contractOf("upgraded")).as("after the refresh time: answered from the cache, read again")
                .contains(upgraded);
        assertThat(cached.contractOf("upgraded")).as("the answer that read brought").contains(TenantContract.onPlan("pro"));
    }

    @Test
    void cachedAnUnknownTenantIsFoundOnceItsShortExpiryHasPassedOrAfterInvalidate() {
        AtomicLong nanos = new AtomicLong();
        TenantDirectory cached = cached(nanos::get);
        assertThat(cached.contractOf("new-customer")).isEmpty();
        assertThat(cached.contractOf("newer-customer")).isEmpty();
        tenant("new-customer", "pro", null);
        tenant("newer-customer", "pro", null);
        assertThat(cached.contractOf("new-customer")).as("unknown is cached").isEmpty();
        cached.invalidate("newer-customer");
        assertThat(cached.contractOf("newer-customer")).as("after invalidate").contains(TenantContract.onPlan("pro"));
        nanos.addAndGet(Duration.ofSeconds(31).toNanos());
        assertThat(cached.contractOf("new-customer")).as("after the negative expiry").contains(TenantContract.onPlan("pro"));
    }

    @Test
    void cachedABadRowIsNotCachedSoItsFixIsSeenAtOnce() {
        tenant("fixed-later", "pro", "[{capacity: 0, refill: 1, period: 1h}]");
        TenantDirectory cached = cached(() -> 0L);
        assertThatThrownBy(() -> cached.contractOf("fixed-later")).hasMessageContaining("column limits[0].capacity");
        db.update("update tenants set limits = ? where id = ?", "[{capacity: 1, refill: 1, period: 1h}]", "fixed-later");
        assertThat(cached.contractOf("fixed-later")).map(TenantContract::hasOwnLimits).contains(true);
        assertThat(directory.toString()).contains(QUERY);
    }
}
