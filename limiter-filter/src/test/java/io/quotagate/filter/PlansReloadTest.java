package io.quotagate.filter;

import io.quotagate.filter.testing.Await;
import io.quotagate.filter.testing.Http;
import io.quotagate.filter.testing.JettyServer;
import io.quotagate.filter.testing.LogCapture;
import io.quotagate.filter.testing.ManualClock;
import io.quotagate.plans.Bandwidth;
import io.quotagate.plans.InvalidPlansException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Limits changed while running: file reload (explicit and watched) and the programmatic API, on real Jetty. */
class PlansReloadTest {
    static final String V1 = """
            global: { limits: [ { name: api, capacity: 100, refill: 100, period: 1m } ] }
            plans:
              free: { limits: [ { name: burst, capacity: 5, refill: 5, period: 1m } ] }
            routes:
              - { name: reports, paths: ["/reports/*"], cost: 2 }
            """;
    static final String V2 = """
            global: { limits: [ { name: api, capacity: 100, refill: 100, period: 1m } ] }
            plans:
              free: { limits: [ { name: burst, capacity: 10, refill: 10, period: 1m } ] }
            routes:
              - { name: reports, paths: ["/reports/*"], cost: 2 }
              - { name: ops, paths: ["/health"], limited: false }
            """;

    @TempDir
    Path dir;
    private final ManualClock clock = new ManualClock();
    private JettyServer server;

    @AfterEach
    void stop() throws Exception {
        if (server != null) server.close();
    }

    private Path file(String yaml) throws Exception {
        Path f = dir.resolve("plans.yml");
        Files.writeString(f, yaml);
        return f;
    }

    /**
     * Replaces the watched file in one step, as deployment tools do: {@code writeString} truncates
     * first, and a watcher polling every 20 ms could read the empty file in between (a real, logged
     * "invalid" read that made the log assertion below race).
     */
    private static void replace(Path f, String yaml) throws Exception {
        Path tmp = Files.writeString(f.resolveSibling(f.getFileName() + ".tmp"), yaml);
        Files.move(tmp, f, java.nio.file.StandardCopyOption.REPLACE_EXISTING, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
    }

    private int status(String path, String tenant) throws Exception {
        return Http.get(server.uri(path), tenant).statusCode();
    }

    @Test
    void aValidFileTakesEffectForExistingTenantsWithTheirTokensKept() throws Exception {
        Path f = file(V1);
        QuotaFilter filter = QuotaFilter.builder().plansFile(f).clock(clock).build();
        server = JettyServer.start(filter);
        for (int i = 0; i < 3; i++) assertThat(status("/x", "acme")).isEqualTo(200);
        assertThat(status("/health", null)).as("no such route yet").isEqualTo(401);

        Files.writeString(f, V2);
        filter.control().reload();
        // 2 tokens kept (not a fresh 10), now refilling towards 10
        assertThat(status("/x", "acme")).isEqualTo(200);
        assertThat(status("/x", "acme")).isEqualTo(200);
        assertThat(status("/x", "acme")).isEqualTo(429);
        clock.advance(Duration.ofSeconds(48)); // 10 per minute: 8 units
        for (int i = 0; i < 8; i++) assertThat(status("/x", "acme")).isEqualTo(200);
        assertThat(status("/health", null)).as("routes come with the new file").isEqualTo(200);
        assertThat(filter.control().plans().plan("free").orElseThrow().limits().get(0).capacity()).isEqualTo(10);
    }

    @Test
    void anInvalidFileIsRefusedWithFileLineAndFieldAndTheOldPlansStay() throws Exception {
        Path f = file(V1);
        QuotaFilter filter = QuotaFilter.builder().plansFile(f).clock(clock).build();
        server = JettyServer.start(filter);
        assertThat(status("/x", "acme")).isEqualTo(200);

        Files.writeString(f, V1.replace("capacity: 5,", "capacity: -5,"));
        assertThatThrownBy(filter.control()::reload).isInstanceOfSatisfying(InvalidPlansException.class, e -> {
            assertThat(e.getMessage()).startsWith(f + ":3: plans.free.limits[0].capacity");
        });
        for (int i = 0; i < 4; i++) assertThat(status("/x", "acme")).isEqualTo(200);
        assertThat(status("/x", "acme")).as("still the old 5").isEqualTo(429);
    }

    @Test
    void theWatcherAppliesAValidChangeLogsAnInvalidOneAndStopsWithTheFilter() throws Exception {
        try (LogCapture log = LogCapture.of(QuotaFilter.class, java.util.logging.Level.WARNING)) {
            Path f = file(V1);
            QuotaFilter filter = QuotaFilter.builder().plansFile(f).watchPlansFile(Duration.ofMillis(20)).clock(clock).build();
            server = JettyServer.start(filter);
            assertThat(status("/x", "acme")).isEqualTo(200);

            replace(f, V2);
            Await.until("the new plans in force", () -> filter.control().plans().plan("free").orElseThrow().limits().get(0).capacity() == 10);
            for (int i = 0; i < 4; i++) assertThat(status("/x", "acme")).isEqualTo(200);
            assertThat(status("/x", "acme")).as("4 kept of the old 5, capped at the new 10").isEqualTo(429);

            replace(f, V2.replace("period: 1m } ] }", "period: 1 } ] }"));
            Await.until("the refused file logged", () -> log.messages().stream().anyMatch(w -> w.contains("keeping the previous plans")));
            assertThat(log.messages()).anySatisfy(w -> assertThat(w).contains(f + ":3:", "plans.free.limits[0].period"));
            assertThat(filter.control().plans().plan("free").orElseThrow().limits().get(0).capacity()).isEqualTo(10);

            server.close();
            server = null;
            Await.until("the watcher thread ended", () -> Thread.getAllStackTraces().keySet().stream()
                    .noneMatch(t -> t.getName().equals("quotagate-plans-watcher") && t.isAlive()));
        }
    }

    /** Every record the filter's logger publishes from WARNING up: its text, and whether it carries a stack trace. */
    private static final class Warnings extends java.util.logging.Handler implements AutoCloseable {
        private final java.util.logging.Logger logger = java.util.logging.Logger.getLogger(QuotaFilter.class.getName());
        private final List<java.util.logging.LogRecord> records = new java.util.concurrent.CopyOnWriteArrayList<>();

        Warnings() {
            logger.addHandler(this);
        }

        @Override
        public void publish(java.util.logging.LogRecord r) {
            if (r.getLevel().intValue() >= java.util.logging.Level.WARNING.intValue()) records.add(r);
        }

        boolean any(String text) {
            return records.stream().anyMatch(r -> r.getMessage().contains(text));
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
            logger.removeHandler(this);
        }
    }

    @Test
    void theWatcherRefusesAPeriodPastTenYearsWithFileLineAndFieldNotAStackTrace() throws Exception {
        try (Warnings log = new Warnings()) {
            Path f = file(V1);
            QuotaFilter filter = QuotaFilter.builder().plansFile(f).watchPlansFile(Duration.ofMillis(20)).clock(clock).build();
            server = JettyServer.start(filter);

            // 106752 days is past 2^63 ns: it used to reach the policy and fail there with an ArithmeticException
            replace(f, V2.replace("capacity: 10, refill: 10, period: 1m", "capacity: 10, refill: 10, period: 106752d"));
            Await.until("the refused file logged", () -> log.any("keeping the previous plans"));
            assertThat(log.records).singleElement().satisfies(r -> {
                assertThat(r.getLevel()).isEqualTo(java.util.logging.Level.WARNING);
                assertThat(r.getMessage()).contains(f + ":3: plans.free.limits[0].period: must be at most 3650d (10 years), was '106752d'");
                assertThat(r.getThrown()).as("no stack trace").isNull();
            });
            assertThat(filter.control().plans().plan("free").orElseThrow().limits().get(0).capacity()).isEqualTo(5);
            assertThatThrownBy(filter.control()::reload).isInstanceOf(InvalidPlansException.class)
                    .hasMessageStartingWith(f + ":3: plans.free.limits[0].period: must be at most 3650d");
        }
    }

    static final String ESTIMATED = """
            plans:
              free: { limits: [ { name: burst, capacity: 50, refill: 50, period: 1m } ] }
            routes:
              - { name: completions, methods: [POST], paths: ["/v1/completions"] }
            """;

    /** Prices a request at the number in its body, as the builder registered it for {@code completions}. */
    private static final CostEstimator BODY_NUMBER = (request, body) -> Long.parseLong(new String(body).trim());

    private int post(String path, String tenant, String body) throws Exception {
        var request = java.net.http.HttpRequest.newBuilder(server.uri(path)).timeout(Duration.ofSeconds(10))
                .header("X-Tenant-Id", tenant).POST(java.net.http.HttpRequest.BodyPublishers.ofString(body)).build();
        return java.net.http.HttpClient.newHttpClient().send(request, java.net.http.HttpResponse.BodyHandlers.ofString()).statusCode();
    }

    @Test
    void aReloadThatRenamesAnEstimatedRouteIsRefusedNamingTheEstimatorAndTheRoute() throws Exception {
        Path f = file(ESTIMATED);
        QuotaFilter filter = QuotaFilter.builder().plansFile(f).costEstimator("completions", BODY_NUMBER).clock(clock).build();
        server = JettyServer.start(filter);
        assertThat(post("/v1/completions", "acme", "100")).as("estimated 100, above the capacity 50").isEqualTo(400);

        Files.writeString(f, ESTIMATED.replace("name: completions", "name: llm"));
        assertThatThrownBy(filter.control()::reload).isInstanceOf(IllegalArgumentException.class)
                .hasMessage(f + ": routes: no limited route 'completions', but the filter has a costEstimator for it; "
                        + "keep the route (or rebuild the filter without that estimator)");
        Files.writeString(f, ESTIMATED.replace("methods: [POST],", "limited: false,"));
        assertThatThrownBy(filter.control()::reload).as("an unlimited route is never estimated either")
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("no limited route 'completions'");
        var renamed = io.quotagate.plans.PlansFile.parse("api.yml", ESTIMATED.replace("name: completions", "name: llm"));
        assertThatThrownBy(() -> filter.control().apply(renamed)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("api.yml: routes: no limited route 'completions'");

        assertThat(filter.control().plans().routes()).extracting(io.quotagate.plans.RouteRule::name).containsExactly("completions");
        assertThat(post("/v1/completions", "acme", "100")).as("still estimated, not charged 1 as 'llm'").isEqualTo(400);
        assertThat(post("/v1/completions", "acme", "40")).isEqualTo(200);
    }

    @Test
    void theWatcherLogsARefusedEstimatedRouteAsAnInvalidFileWithoutAStackTrace() throws Exception {
        try (Warnings log = new Warnings()) {
            Path f = file(ESTIMATED);
            QuotaFilter filter = QuotaFilter.builder().plansFile(f).costEstimator("completions", BODY_NUMBER)
                    .watchPlansFile(Duration.ofMillis(20)).clock(clock).build();
            server = JettyServer.start(filter);

            replace(f, ESTIMATED.replace("name: completions", "name: llm"));
            Await.until("the refused file logged", () -> log.any("keeping the previous plans"));
            assertThat(log.records).singleElement().satisfies(r -> {
                assertThat(r.getLevel()).isEqualTo(java.util.logging.Level.WARNING);
                assertThat(r.getMessage()).contains("plans file changed but is invalid, keeping the previous plans: "
                        + f + ": routes: no limited route 'completions', but the filter has a costEstimator for it");
                assertThat(r.getThrown()).as("no stack trace").isNull();
            });
            assertThat(post("/v1/completions", "acme", "100")).isEqualTo(400);
        }
    }

    @Test
    void aContainerCreatedFilterWatchesItsFileWhenAskedTo() throws Exception {
        Path f = file(V1);
        var context = new org.eclipse.jetty.ee10.servlet.ServletContextHandler();
        context.setContextPath("/");
        var holder = new org.eclipse.jetty.ee10.servlet.FilterHolder(QuotaFilter.class);
        holder.setInitParameter(QuotaFilter.PLANS_PARAM, f.toString());
        holder.setInitParameter(QuotaFilter.RELOAD_INTERVAL_PARAM, "20ms");
        context.addFilter(holder, "/*", java.util.EnumSet.of(jakarta.servlet.DispatcherType.REQUEST));
        context.addServlet(new org.eclipse.jetty.ee10.servlet.ServletHolder(new JettyServer.OkServlet()), "/");
        server = JettyServer.start(context);
        assertThat(status("/health", null)).isEqualTo(401);
        replace(f, V2);
        Await.until("the reloaded plans in force", () -> {
            try {
                return status("/health", null) == 200;
            } catch (Exception e) {
                return false;
            }
        });
    }

    /** {@code yaml} followed by comment lines up to {@code bytes}: a valid plans file, only too large. */
    private Path padded(String name, String yaml, long bytes) throws Exception {
        Path f = dir.resolve(name);
        String line = "# " + "x".repeat(97) + "\n";
        try (var out = Files.newBufferedWriter(f)) {
            out.write(yaml);
            for (long n = yaml.length(); n < bytes; n += line.length()) out.write(line);
        }
        return f;
    }

    @Test
    void anOversizedFileIsRefusedAtStartNamingTheFileItsSizeAndTheLimit() throws Exception {
        Path big = padded("big.yml", V1, 10_000_000);
        long size = Files.size(big);
        assertThatThrownBy(() -> QuotaFilter.builder().plansFile(big).build())
                .isInstanceOf(InvalidPlansException.class)
                .hasMessageStartingWith(big + ": the file is " + size + " bytes, over the limit of 1048576 bytes");
        assertThat(QuotaFilter.builder().plansFile(big).maxPlansFileBytes(20_000_000).build().control().plans().plan("free"))
                .as("the limit is configurable, in either order with plansFile").isPresent();
        assertThatThrownBy(() -> QuotaFilter.builder().maxPlansFileBytes(0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("maxPlansFileBytes");
    }

    @Test
    void aContainerCreatedFilterTakesItsLimitFromAnInitParam() throws Exception {
        Path f = file(V1);
        long size = Files.size(f);
        assertThatThrownBy(() -> new QuotaFilter().init(initParams(f, String.valueOf(size - 1))))
                .isInstanceOf(jakarta.servlet.ServletException.class)
                .hasMessage("QuotaFilter 'quota': invalid plans: " + f + ": the file is " + size + " bytes, over the limit of "
                        + (size - 1) + " bytes; it was not parsed (raise the limit if it is meant to be this large)");
        assertThatThrownBy(() -> new QuotaFilter().init(initParams(f, "lots"))).isInstanceOf(jakarta.servlet.ServletException.class)
                .hasMessageContaining("init-param 'max-plans-file-bytes' must be a whole number of bytes").hasMessageContaining("'lots'");
        QuotaFilter filter = new QuotaFilter();
        filter.init(initParams(f, String.valueOf(size)));
        assertThat(filter.control().plans().plan("free")).as("exactly at the limit").isPresent();
    }

    private static jakarta.servlet.FilterConfig initParams(Path plans, String maxBytes) {
        Map<String, String> params = Map.of(QuotaFilter.PLANS_PARAM, plans.toString(), QuotaFilter.MAX_PLANS_FILE_BYTES_PARAM, maxBytes);
        return new jakarta.servlet.FilterConfig() {
            @Override
            public String getFilterName() {
                return "quota";
            }

            @Override
            public jakarta.servlet.ServletContext getServletContext() {
                return null;
            }

            @Override
            public String getInitParameter(String name) {
                return params.get(name);
            }

            @Override
            public java.util.Enumeration<String> getInitParameterNames() {
                return java.util.Collections.enumeration(params.keySet());
            }
        };
    }

    @Test
    void anOversizedFileOnReloadIsRefusedUnparsedAndTheOldPlansStay() throws Exception {
        Path f = file(V1);
        QuotaFilter filter = QuotaFilter.builder().plansFile(f).clock(clock).build();
        server = JettyServer.start(filter);
        assertThat(status("/x", "acme")).isEqualTo(200);

        // V2 is valid: had it reached the parser, it would have been put in force
        replace(f, Files.readString(padded("big.yml", V2, 10_000_000)));
        long size = Files.size(f);
        assertThatThrownBy(filter.control()::reload).isInstanceOf(InvalidPlansException.class)
                .hasMessageStartingWith(f + ": the file is " + size + " bytes, over the limit of 1048576 bytes");
        assertThat(filter.control().plans().plan("free").orElseThrow().limits().get(0).capacity()).isEqualTo(5);
        for (int i = 0; i < 4; i++) assertThat(status("/x", "acme")).isEqualTo(200);
        assertThat(status("/x", "acme")).as("still the old 5").isEqualTo(429);
        assertThat(status("/health", null)).as("still the old routes").isEqualTo(401);
    }

    @Test
    void reloadAndTheWatcherUseTheConfiguredLimitNotTheDefault() throws Exception {
        try (LogCapture log = LogCapture.of(QuotaFilter.class, java.util.logging.Level.WARNING)) {
            Path f = file(V1);
            QuotaFilter filter = QuotaFilter.builder().plansFile(f).maxPlansFileBytes(1000)
                    .watchPlansFile(Duration.ofMillis(20)).clock(clock).build();
            server = JettyServer.start(filter);

            replace(f, Files.readString(padded("v2.yml", V2, 5000))); // well under the default limit
            long size = Files.size(f);
            Await.until("the oversized file logged", () -> log.messages().stream().anyMatch(w -> w.contains("over the limit")));
            assertThat(log.messages()).anySatisfy(w -> assertThat(w).contains("keeping the previous plans",
                    f + ": the file is " + size + " bytes, over the limit of 1000 bytes"));
            assertThatThrownBy(filter.control()::reload).isInstanceOf(InvalidPlansException.class).hasMessageContaining("limit of 1000 bytes");
            assertThat(filter.control().plans().plan("free").orElseThrow().limits().get(0).capacity()).isEqualTo(5);

            replace(f, V2);
            Await.until("the new plans in force", () -> filter.control().plans().plan("free").orElseThrow().limits().get(0).capacity() == 10);
        }
    }

    @Test
    void reloadNeedsAFile() {
        QuotaFilter filter = QuotaFilter.builder().plans(io.quotagate.plans.PlansFile.parse("t.yml", V1)).build();
        assertThatThrownBy(filter.control()::reload).isInstanceOf(IllegalStateException.class).hasMessageContaining("plans file");
    }

    @Test
    void theGlobalQuotaAndAPlansLimitsChangeThroughTheApi() throws Exception {
        QuotaFilter filter = QuotaFilter.builder().plansFile(file(V1)).clock(clock).build();
        server = JettyServer.start(filter);
        for (int i = 0; i < 3; i++) assertThat(status("/x", "t" + i)).isEqualTo(200);

        filter.control().setGlobalQuota(List.of(new Bandwidth("api", 5, 5, Duration.ofMinutes(1))));
        // 97 kept, capped at 5
        for (int i = 0; i < 5; i++) assertThat(status("/x", "u" + i)).isEqualTo(200);
        assertThat(Http.get(server.uri("/x"), "u9").body()).contains("\"reason\":\"global_rate\"");

        assertThatThrownBy(() -> filter.control().setGlobalQuota(List.of(new Bandwidth("api", 1, 1, Duration.ofMinutes(1)))))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("route 'reports'");
        assertThat(filter.control().plans().global().orElseThrow().limits().get(0).capacity()).as("refused: unchanged").isEqualTo(5);

        filter.control().setGlobalQuota(List.of());
        filter.control().setPlanLimits("free", List.of(new Bandwidth("burst", 2, 2, Duration.ofMinutes(1))));
        assertThat(status("/x", "t0")).as("4 kept, capped at the new 2").isEqualTo(200);
        assertThat(status("/x", "t0")).isEqualTo(200);
        assertThat(status("/x", "t0")).isEqualTo(429);
    }
}
