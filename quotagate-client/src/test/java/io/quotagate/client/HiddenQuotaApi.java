package io.quotagate.client;

import io.quotagate.example.ExampleApp;
import io.quotagate.plans.PlansFile;

import java.net.URI;
import java.util.Locale;

/**
 * The real example app on a free port of 127.0.0.1 with one hidden global quota of
 * {@code perMinute} units per minute and a burst of one second's refill: a client learns it from
 * 429 + Retry-After alone, as from Microsoft Graph.
 */
final class HiddenQuotaApi implements AutoCloseable {
    final long perMinute;
    final long burst;
    private final ExampleApp.Running app;

    HiddenQuotaApi(long perMinute) throws Exception {
        this.perMinute = perMinute;
        this.burst = Math.max(1, perMinute / 60);
        String yaml = String.format(Locale.ROOT, """
                global:
                  limits:
                    - { name: hidden, capacity: %d, refill: %d, period: 1m }
                plans:
                  roomy:
                    limits:
                      - { name: huge, capacity: 1000000000, refill: 1000000000, period: 1s }
                routes:
                  - { name: items, methods: [GET], paths: ["/items/*"], cost: 1 }
                tenants:
                  default-plan: roomy
                  unresolved: reject
                  unknown: default
                """, burst, perMinute);
        this.app = ExampleApp.start("127.0.0.1", 0, PlansFile.parse("hidden-quota.yml", yaml));
    }

    URI item(long id) {
        return URI.create(app.baseUri()).resolve("/items/" + id);
    }

    /** The most units the quota lets through in {@code seconds} from a full bucket. */
    double allowedIn(double seconds) {
        return burst + perMinute / 60.0 * seconds;
    }

    @Override
    public void close() throws Exception {
        app.close();
    }
}
