package io.quotagate.plans;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.OptionalInt;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The plans file's {@code signals:} section. */
class SignalsSectionTest {
    private static final String PLANS = """
            plans:
              free: { limits: [ { name: burst, capacity: 20, refill: 10, period: 10s } ], quotas: [ { name: monthly, limit: 1000, per: month } ] }
              pro:
                limits:
                  - { name: burst, capacity: 200, refill: 100, period: 10s }
                  - { name: daily, capacity: 100000, refill: 100000, period: 1d }
            tenants: { default-plan: free }
            """;

    @Test
    void withoutASectionEveryDefaultHoldsAndNoNearLimitIsSet() {
        SignalSettings s = PlansFile.parse("p.yml", PLANS).signals();
        assertThat(s).isEqualTo(SignalSettings.DEFAULTS);
        assertThat(s.hasNearLimit()).isFalse();
        assertThat(s.nearLimit("pro", "daily")).isEmpty();
        assertThat(s.throttledMinutes()).isEqualTo(10);
        assertThat(s.throttledWithin()).isEqualTo(Duration.ofHours(1));
        assertThat(s.recoveredAfter()).isEqualTo(Duration.ofMinutes(1));
        assertThat(s.webhook()).isEmpty();
    }

    @Test
    void readsThresholdsPerPlanAndLimitOverTheDefault() {
        SignalSettings s = PlansFile.parse("p.yml", PLANS + """
                signals:
                  near-limit: { default: 80%, plans: { pro: { daily: 95 } } }
                  global-near-limit: 90%
                  throttled-for-long: { minutes: 30, within: 6h }
                  recovered-after: 5m
                  queue: 10
                  webhook: { url: "https://ops.example.com/q", secret-env: HOOK_SECRET, timeout: 500ms, retries: 0 }
                """).signals();
        assertThat(s.nearLimit("pro", "daily")).isEqualTo(OptionalInt.of(95));
        assertThat(s.nearLimit("pro", "burst")).isEqualTo(OptionalInt.of(80));
        assertThat(s.nearLimit("free", "burst")).isEqualTo(OptionalInt.of(80));
        assertThat(s.globalNearLimit()).isEqualTo(OptionalInt.of(90));
        assertThat(s.throttledMinutes()).isEqualTo(30);
        assertThat(s.throttledWithin()).isEqualTo(Duration.ofHours(6));
        assertThat(s.recoveredAfter()).isEqualTo(Duration.ofMinutes(5));
        assertThat(s.queue()).isEqualTo(10);
        SignalSettings.Webhook w = s.webhook().orElseThrow();
        assertThat(w.url()).isEqualTo(URI.create("https://ops.example.com/q"));
        assertThat(w.secretEnv()).isEqualTo("HOOK_SECRET");
        assertThat(w.timeout()).isEqualTo(Duration.ofMillis(500));
        assertThat(w.retries()).isZero();
        assertThat(w.line()).isEqualTo(14);
    }

    @Test
    void calendarQuotasRaiseNearLimitAt80And90PercentByDefault() {
        SignalSettings s = PlansFile.parse("p.yml", PLANS).signals();
        assertThat(s.quotaNearLimit("pro", "monthly")).containsExactly(80, 90);
        assertThat(s.quotaNearLimit("free", "anything")).containsExactly(80, 90);
    }

    @Test
    void readsQuotaThresholdsAsAListOrAValuePerPlanAndQuotaOverTheDefault() {
        SignalSettings s = PlansFile.parse("p.yml", PLANS + """
                signals:
                  quota-near-limit: { default: [95%, 50%], plans: { free: { monthly: 75 } } }
                """).signals();
        assertThat(s.quotaNearLimit("free", "monthly")).containsExactly(75);
        assertThat(s.quotaNearLimit("pro", "monthly")).containsExactly(50, 95); // sorted: a tenant's own quota
        assertThat(PlansFile.parse("p.yml", PLANS + "signals: { quota-near-limit: [] }\n").signals()
                .quotaNearLimit("pro", "monthly")).isEmpty();
        assertThat(PlansFile.parse("p.yml", PLANS + "signals: { quota-near-limit: 60% }\n").signals()
                .quotaNearLimit("pro", "monthly")).containsExactly(60);
        assertThat(PlansFile.parse("p.yml", PLANS + "signals: { quota-near-limit: { plans: { free: { monthly: [] } } } }\n")
                .signals().quotaNearLimit("free", "monthly")).isEmpty();
    }

    @Test
    void aSingleValueIsTheThresholdOfEveryLimit() {
        SignalSettings s = PlansFile.parse("p.yml", PLANS + "signals: { near-limit: 75% }\n").signals();
        assertThat(s.nearLimit("free", "burst")).isEqualTo(OptionalInt.of(75));
        assertThat(s.nearLimit("pro", "daily")).isEqualTo(OptionalInt.of(75));
    }

    @Test
    void theWebhookSecretComesFromItsFileAndAMissingFileNamesTheLine(@org.junit.jupiter.api.io.TempDir Path dir)
            throws Exception {
        Path secret = dir.resolve("s");
        Files.writeString(secret, "k3y\n");
        SignalSettings.Webhook w = PlansFile.parse("p.yml", PLANS + "signals:\n  webhook: { url: \"http://127.0.0.1:9/h\", "
                + "secret-file: \"" + secret + "\" }\n").signals().webhook().orElseThrow();
        assertThat(new String(w.secret(), StandardCharsets.UTF_8)).isEqualTo("k3y");
        Files.delete(secret);
        assertThatThrownBy(w::secret).isInstanceOf(InvalidPlansException.class)
                .hasMessageStartingWith("p.yml:9: signals.webhook.secret-file: cannot read " + secret);
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "signals: { near-limit: 0% }|p.yml:8: signals.near-limit: must be 1% to 100%, was '0%'",
            "signals: { near-limit: lots }|p.yml:8: signals.near-limit: expected a percentage such as 80%, found 'lots'",
            "signals: { near-limit: { plans: { gold: { burst: 80% } } } }|p.yml:8: signals.near-limit.plans.gold: no such plan, defined: [free, pro]",
            "signals: { throttled-for-long: { minutes: 5 } }|p.yml:8: signals.throttled-for-long.within: required",
            "signals: { throttled-for-long: { minutes: 5, within: 90s } }|p.yml:8: signals.throttled-for-long.within: throttled-for-long window must be whole minutes, 1m to 1d, was PT1M30S",
            "signals: { recovered-after: 10ms }|p.yml:8: signals.recovered-after: recovered-after must be at least 1s, was PT0.01S",
            "signals: { webhook: { url: ftp://x/y, secret-env: S } }|p.yml:8: signals.webhook.url: expected an http:// or https:// URL, was 'ftp://x/y'",
            "signals: { webhook: { url: http://x/y } }|p.yml:8: signals.webhook.secret-env: exactly one of secret-env and secret-file is required (the secret that signs each body; never written in the plans file)",
            "signals: { webhook: { url: http://x/y, secret: abc } }|p.yml:8: signals.webhook.secret: unknown key, expected one of [queue, retries, secret-env, secret-file, timeout, url]",
            "signals: { quota-near-limit: [80%, 101%] }|p.yml:8: signals.quota-near-limit: must be 1% to 100%, was '101%'",
            "signals: { quota-near-limit: [80%, 80] }|p.yml:8: signals.quota-near-limit: 80% is listed twice",
            "signals: { quota-near-limit: soon }|p.yml:8: signals.quota-near-limit: expected a percentage such as 80%, found 'soon'",
            "signals: { quota-near-limit: { plans: { gold: { monthly: 80% } } } }|p.yml:8: signals.quota-near-limit.plans.gold: no such plan, defined: [free, pro]",
            "signals: { quota-near-limit: { plans: { free: { daily: 80% } } } }|p.yml:8: signals.quota-near-limit.plans.free.daily: plan free has no quota 'daily', its quotas: [monthly]",
            "signals: { quota-near-limit: { default: 80%, every: 90% } }|p.yml:8: signals.quota-near-limit.every: unknown key, expected one of [default, plans]",
            "signals: { nearlimit: 80% }|p.yml:8: signals.nearlimit: unknown key, expected one of [global-near-limit, near-limit, queue, quota-near-limit, recovered-after, throttled-for-long, webhook]",
    })
    void refusesMistakesNamingFileLineAndField(String section, String message) {
        assertThatThrownBy(() -> PlansFile.parse("p.yml", PLANS + section + "\n"))
                .isInstanceOf(InvalidPlansException.class).hasMessage(message);
    }
}
