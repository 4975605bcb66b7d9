package io.quotagate.example;

import io.quotagate.filter.QuotaFilter;
import io.quotagate.filter.testing.Http;
import io.quotagate.filter.testing.RedisServer;
import io.quotagate.plans.Plan;
import io.quotagate.plans.Plans;
import io.quotagate.plans.PlansFile;
import io.quotagate.plans.Throttle;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The meter table of docs/metrics.md gives every meter's Prometheus name, checked against a real scrape of the example
 * app's {@code /metrics} with every meter present: a Redis store (the store and shared-limits meters), a
 * settled completion (the cost summaries), a queued report (the queue timer) and a user over its seat
 * (the scoped refusals).
 */
class MeterTableTest {
    private static final Pattern TYPE = Pattern.compile("^# TYPE (quotagate_[a-z_]+) [a-z]+$", Pattern.MULTILINE);
    private static final Pattern NAME = Pattern.compile("`(quotagate_[a-z_]+)`");

    @Test
    void theReadmeNamesEveryScrapedMeterAndNoOther() throws Exception {
        Plans file = PlansFile.load(ExampleApp.DEFAULT_PLANS);
        Plans stored = file.withStore(ExampleApp.withRedis(file, RedisServer.shared().uri()).store()
                .with("prefix", RedisServer.randomPrefix()));
        // the free plan throttled, so that a delayed request registers the throttle meters
        Plans plans = Plans.from(stored).plan(Plan.from(stored.plan("free").orElseThrow())
                .throttle(Optional.of(new Throttle(Duration.ofSeconds(5), 4))).build()).build();
        QuotaFilter filter = ExampleApp.withEstimators(QuotaFilter.builder().plans(plans), plans).build();
        Set<String> scraped = new TreeSet<>();
        try (ExampleApp.Running app = ExampleApp.start("127.0.0.1", 0, "127.0.0.1", 0, filter, "tok")) {
            HttpClient client = HttpClient.newHttpClient();
            assertThat(Http.get(URI.create(app.baseUri() + "/items/1"), "acme").statusCode()).isEqualTo(200);
            HttpResponse<String> completion = client.send(HttpRequest.newBuilder(URI.create(app.baseUri() + "/v1/completions"))
                    .header("X-Tenant-Id", "acme").header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString("{\"prompt\": \"hello\", \"max_tokens\": 10}")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(completion.statusCode()).isEqualTo(200);
            int refused = 0; // a team user over its seat: the scoped refusal counter
            for (int i = 0; i < 40 && refused == 0; i++) {
                refused += client.send(HttpRequest.newBuilder(URI.create(app.baseUri() + "/items/1"))
                        .header("X-Tenant-Id", "hooli").header("X-User-Id", "ann").build(),
                        HttpResponse.BodyHandlers.ofString()).statusCode() == 429 ? 1 : 0;
            }
            assertThat(refused).isOne();
            int delayed = 0; // globex (free: a burst of 20, then 1 a second) past its burst: delayed, not refused
            for (int i = 0; i < 40 && delayed == 0; i++) {
                HttpResponse<String> r = client.send(HttpRequest.newBuilder(URI.create(app.baseUri() + "/items/1"))
                        .header("X-Tenant-Id", "globex").build(), HttpResponse.BodyHandlers.ofString());
                assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
                delayed += r.headers().firstValue("Quota-Delay").isPresent() ? 1 : 0;
            }
            assertThat(delayed).isOne();
            String text = Http.get(URI.create(app.managementUri() + "/metrics"), null).body();
            Matcher m = TYPE.matcher(text);
            while (m.find()) scraped.add(m.group(1));
        }
        assertThat(scraped).as("the scrape has the store and shared-limits meters")
                .contains("quotagate_store_instances", "quotagate_limits_version");

        List<String> rows = meterRows(Files.readString(Path.of("../docs/metrics.md")));
        Set<String> documented = new TreeSet<>();
        for (String row : rows) {
            String[] cells = row.split("\\|");
            List<String> names = new ArrayList<>();
            Matcher m = NAME.matcher(cells[2]);
            while (m.find()) names.add(m.group(1));
            assertThat(names).as("Prometheus names of the docs/metrics.md row " + cells[1].strip()).isNotEmpty();
            documented.addAll(names);
        }
        assertThat(documented).as("the Prometheus names of docs/metrics.md").isEqualTo(scraped);
    }

    /** The meter table's rows: those of the table under "## Metrics (Micrometer)" that name a meter. */
    private static List<String> meterRows(String page) {
        String section = page.substring(page.indexOf("\n## Metrics (Micrometer)\n"));
        section = section.substring(0, section.indexOf("\n## ", 1));
        return section.lines().filter(l -> l.startsWith("| `quotagate.")).toList();
    }
}
