package io.quotagate.example;

import io.quotagate.filter.QuotaFilter;
import io.quotagate.filter.testing.Await;
import io.quotagate.filter.testing.RedisServer;
import io.quotagate.plans.Plans;
import io.quotagate.plans.PlansFile;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The report, as a new user would try it: two example apps on one Redis, the admin API on
 * one of them. A change made through A's management port is enforced and reported by B (its
 * {@code /metrics} and its admin reads) within 2 s; the tenants' admin API validates like the plans
 * file and changes nothing anywhere when it refuses.
 */
class SharedAdminTest {
    private static final HttpClient CLIENT = HttpClient.newHttpClient();
    private final List<ExampleApp.Running> apps = new ArrayList<>();

    private ExampleApp.Running start(String prefix) throws Exception {
        return start(prefix, RedisServer.shared());
    }

    private ExampleApp.Running start(String prefix, RedisServer redis) throws Exception {
        Plans file = PlansFile.load(ExampleApp.DEFAULT_PLANS);
        Plans plans = file.withStore(ExampleApp.withRedis(file, redis.uri()).store().with("prefix", prefix));
        QuotaFilter filter = ExampleApp.withEstimators(QuotaFilter.builder().plans(plans), plans).build();
        ExampleApp.Running app = ExampleApp.start("127.0.0.1", 0, "127.0.0.1", 0, filter, "tok");
        apps.add(app);
        return app;
    }

    @AfterEach
    void stop() throws Exception {
        for (ExampleApp.Running app : apps) app.close();
    }

    private static HttpResponse<String> send(String method, String uri, String tenant, String body) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(uri)).timeout(Duration.ofSeconds(10))
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body))
                .header("Content-Type", "application/json");
        if (tenant != null) b.header("X-Tenant-Id", tenant);
        if (uri.contains("/admin/")) b.header("Authorization", "Bearer tok");
        return CLIENT.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    private static String metrics(ExampleApp.Running app) {
        try {
            return send("GET", app.managementUri() + "/metrics", null, null).body();
        } catch (Exception e) {
            return "";
        }
    }

    @Test
    void aQuotaChangedThroughOneAppIsEnforcedAndReportedByTheOther() throws Exception {
        String prefix = RedisServer.randomPrefix();
        ExampleApp.Running a = start(prefix);
        ExampleApp.Running b = start(prefix);
        assertThat(metrics(b)).contains("quotagate_global_capacity_units 3000.0");

        assertThat(send("PUT", a.managementUri() + "/admin/quota", null,
                "{\"capacity\":10,\"refill\":10,\"period\":\"1m\"}").statusCode()).isEqualTo(200);
        Await.within(2, "B's /metrics reports the new quota", () -> metrics(b).contains("quotagate_global_capacity_units 10.0"));
        assertThat(send("GET", b.managementUri() + "/admin/quota", null, null).body()).contains("\"capacity\":10");
        assertThat(metrics(b)).contains("quotagate_limits_version 2.0").contains("quotagate_limits_file_agrees 1.0");

        int admitted = 0;
        for (int i = 0; i < 15; i++) {
            int status = send("GET", (i % 3 == 0 ? a : b).baseUri() + "/items/1", "t" + i, null).statusCode();
            assertThat(status).isIn(200, 429);
            if (status == 200) admitted++;
        }
        assertThat(admitted).as("one quota of 10 over both apps").isEqualTo(10);

        // B restarted with the same file: it enforces and reports the shared quota, not its file's
        b.close();
        apps.remove(b);
        ExampleApp.Running b2 = start(prefix);
        assertThat(metrics(b2)).contains("quotagate_global_capacity_units 10.0");
        assertThat(send("GET", b2.baseUri() + "/items/1", "t99", null).statusCode()).isEqualTo(429);

        // cleared through B: the file's quota again, on A too
        assertThat(send("DELETE", b2.managementUri() + "/admin/overrides", null, null).statusCode()).isEqualTo(204);
        Await.within(2, "A reports the file's quota", () -> metrics(a).contains("quotagate_global_capacity_units 3000.0"));
    }

    /**
     * A damaged record in Redis (hostile input): a version beyond what Lua counts exactly, then a 20 MB
     * record with a field no format has. Both apps refuse it and keep the quota in force; {@code PUT
     * /admin/quota} answers 503 naming the damage and the repair, applies nowhere and leaves the record
     * as it was (never 200 with nothing applied, never 503 with the change applied, never 400 for a body
     * that was fine). Deleting the record repairs it: the quota in force is written back and changes work.
     */
    @Test
    void aDamagedSharedRecordIsRefusedByBothAppsAndAQuotaChangeOnItAppliesNowhereWith503() throws Exception {
        try (RedisServer redis = RedisServer.startOwn()) { // 20 MB would slow the shared server's other users
            damagedRecordOn(redis);
        }
    }

    private void damagedRecordOn(RedisServer redis) throws Exception {
        String prefix = RedisServer.randomPrefix();
        String key = prefix + ":limits";
        ExampleApp.Running a = start(prefix, redis);
        ExampleApp.Running b = start(prefix, redis);
        String quota = a.managementUri() + "/admin/quota";
        assertThat(send("PUT", quota, null, "{\"capacity\":10,\"refill\":10,\"period\":\"1m\"}").statusCode())
                .isEqualTo(200);
        Await.within(2, "B at 10", () -> metrics(b).contains("quotagate_global_capacity_units 10.0"));
        String good = (String) redis.command("HGET", key, "body");
        String twenty = good.replace("\"capacity\":10,\"refill\":10", "\"capacity\":20,\"refill\":20");
        String five = "{\"capacity\":5,\"refill\":5,\"period\":\"1m\"}";

        int refused = 0;
        for (String damage : List.of("version", "size")) {
            String before = (String) redis.command("HGET", key, "version");
            if (damage.equals("version")) { // a good body with another quota, under a version Lua rounds
                redis.command("HSET", key, "version", "9223372036854775807", "body", twenty);
            } else {
                // the good record with a 20 MB field first, made by Redis (20 MB in this JVM would slow the apps)
                redis.command("EVAL", "local x = 'x' for i = 1, 20 do x = x .. x end x = string.rep(x, 19) "
                        + "redis.call('HINCRBY', KEYS[1], 'version', 1) "
                        + "redis.call('HSET', KEYS[1], 'body', '{\"pad\":\"' .. x .. '\",' .. string.sub(ARGV[1], 2))",
                        "1", key, good);
            }
            String stored = (String) redis.command("HGET", key, "version");
            int expected = ++refused;
            for (ExampleApp.Running app : List.of(a, b)) {
                Await.within(3, "refused (" + damage + ")", () -> metrics(app).contains("quotagate_limits_refused_total "
                        + expected + ".0"));
            }
            HttpResponse<String> put = send("PUT", quota, null, five);
            assertThat(put.statusCode()).as(put.body()).isEqualTo(503);
            assertThat(put.body()).contains("damaged").contains(key).contains("nothing changed")
                    .doesNotContain("Exception");
            assertThat(redis.command("HGET", key, "version")).as("the record as it was").isEqualTo(stored);
            Thread.sleep(300); // an announcement would have come by now
            for (ExampleApp.Running app : List.of(a, b)) {
                assertThat(metrics(app)).contains("quotagate_global_capacity_units 10.0")
                        .contains("quotagate_limits_version " + before + ".0")
                        .contains("quotagate_limits_reachable 1.0");
            }
            assertThat(send("GET", b.managementUri() + "/admin/overrides", null, null).body())
                    .contains("\"refused\":" + expected).contains("lastRefusal");
            assertThat(send("PUT", quota, null, "{\"capacity\":0}").statusCode()).as("the client's own mistake")
                    .isEqualTo(400);

            redis.command("DEL", key);
            Await.within(3, "the quota in force written back, in force on both", () -> {
                try {
                    Object v = redis.command("HGET", key, "version");
                    return v != null && metrics(a).contains("quotagate_limits_version " + v + ".0")
                            && metrics(b).contains("quotagate_limits_version " + v + ".0");
                } catch (Exception e) {
                    return false;
                }
            });
            assertThat(metrics(b)).contains("quotagate_global_capacity_units 10.0");
        }
        assertThat(send("PUT", quota, null, five).statusCode()).isEqualTo(200);
        Await.within(2, "B at 5", () -> metrics(b).contains("quotagate_global_capacity_units 5.0"));
        for (ExampleApp.Running app : List.of(a, b)) app.close(); // before their Redis stops
        apps.removeAll(List.of(a, b));
    }

    @Test
    void aTenantSetThroughOneAppIsEnforcedByTheOtherAndBadInputChangesNothing() throws Exception {
        String prefix = RedisServer.randomPrefix();
        ExampleApp.Running a = start(prefix);
        ExampleApp.Running b = start(prefix);
        String tenants = b.managementUri() + "/admin/tenants/";

        HttpResponse<String> put = send("PUT", tenants + "initech", null,
                "{\"plan\":\"pro\",\"limits\":[{\"name\":\"burst\",\"capacity\":6,\"refill\":1,\"period\":\"1m\"}]}");
        assertThat(put.statusCode()).as(put.body()).isEqualTo(200);
        Await.within(2, "A knows initech's contract", () -> {
            try {
                return send("GET", a.managementUri() + "/admin/tenants/initech", null, null).body()
                        .contains("\"plan\":\"pro\"");
            } catch (Exception e) {
                return false;
            }
        });
        String onA = send("GET", a.managementUri() + "/admin/tenants/initech", null, null).body();
        assertThat(onA).contains("\"runtime\":true").contains("\"capacity\":6");
        // pro's 3 report slots, its own 6 units: a report costs 5, so one report, then 429 on either app
        assertThat(send("GET", a.baseUri() + "/reports/1?ms=0", "initech", null).statusCode()).isEqualTo(200);
        assertThat(send("GET", b.baseUri() + "/reports/1?ms=0", "initech", null).statusCode()).isEqualTo(429);

        String before = send("GET", b.managementUri() + "/admin/overrides", null, null).body();
        for (String[] bad : new String[][]{
                {"initech", "{\"plan\":\"platinum\"}", "platinum"},
                {"initech", "{\"plan\":\"pro\",\"limits\":[{\"capacity\":3,\"refill\":1,\"period\":\"1m\"}]}", "cost 5"},
                {"initech", "{\"limits\":[{\"capacity\":30,\"refill\":1,\"period\":\"1 fortnight\"}]}", "limits[0].period"},
                {"initech", "{\"limits\":[{\"capacity\":0,\"refill\":1,\"period\":\"1m\"}]}", "limits[0].capacity"},
                {"initech", "{\"plan\":\"pro\"}{\"plan\":\"free\"}", "not valid JSON"},
                {"initech", "{\"plan\":\"pro\",\"plan\":\"free\"}", "not valid JSON"},
                {"initech", "{\"tier\":\"pro\"}", "Unknown field"},
                {"bad%20id", "{\"plan\":\"pro\"}", "Not a valid tenant id"}}) {
            HttpResponse<String> r = send("PUT", tenants + bad[0], null, bad[1]);
            assertThat(r.statusCode()).as(bad[1]).isEqualTo(400);
            assertThat(r.body()).as(bad[1]).contains(bad[2]).doesNotContain("Exception");
        }
        assertThat(send("GET", b.managementUri() + "/admin/overrides", null, null).body()).isEqualTo(before);

        assertThat(send("DELETE", tenants + "initech", null, null).statusCode()).isEqualTo(204);
        assertThat(send("DELETE", tenants + "initech", null, null).statusCode()).isEqualTo(404);
        Await.within(2, "A forgets initech's runtime entry", () -> {
            try {
                return send("GET", a.managementUri() + "/admin/tenants/initech", null, null).body()
                        .contains("\"runtime\":false");
            } catch (Exception e) {
                return false;
            }
        });
        assertThat(send("POST", tenants + "acme/invalidate", null, null).statusCode()).isEqualTo(204);
        assertThat(send("PUT", tenants + "acme", null, "{}").statusCode()).isEqualTo(200);
        assertThat(send("GET", tenants + "acme", null, null).body()).contains("\"plan\":\"pro\"");
    }
}
