package io.quotagate.filter.internal.signals;

import io.quotagate.filter.internal.admission.QuotaPeriod;
import io.quotagate.filter.signals.QuotaEvent;
import io.quotagate.filter.status.BandwidthStatus;
import io.quotagate.filter.testing.ManualClock;
import io.quotagate.plans.SignalSettings;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * How the signals thread claims a calendar quota's events: raised only by the instance whose claim the
 * store grants, asked once per event, and asked again at a later check when the store could not answer.
 */
class QuotaClaimTest {
    private static final Instant START = Instant.parse("2027-03-01T00:00:00Z");
    private static final Instant END = Instant.parse("2027-04-01T00:00:00Z");

    /** A tenant at 9 of 10 units of its monthly quota; claims answered as the test says. */
    private static final class Probe implements SignalProbe {
        long used = 9;
        boolean storeAway;
        final Set<String> claimedElsewhere = new HashSet<>();
        final List<String> asked = new ArrayList<>();

        @Override
        public List<QuotaPeriod> tenantQuotas(String tenant) {
            return List.of(new QuotaPeriod("monthly", 10, used, START, END, "monthly:" + tenant + ":2027-03-01",
                    END.toEpochMilli() + 3_600_000));
        }

        @Override
        public boolean claim(String key, long expiresAtMillis) {
            asked.add(key);
            if (storeAway) throw new IllegalStateException("the shared store is unreachable");
            return !claimedElsewhere.contains(key);
        }

        @Override
        public List<BandwidthStatus> tenantLimits(String tenant) {
            return List.of();
        }

        @Override
        public long globalCapacity() {
            return 0;
        }

        @Override
        public long globalAvailable() {
            return 0;
        }

        @Override
        public Optional<Boolean> storeAvailable() {
            return Optional.empty();
        }
    }

    private final BlockingQueue<QuotaEvent> events = new LinkedBlockingQueue<>();
    private final Probe probe = new Probe();

    private List<QuotaEvent> drain() throws InterruptedException {
        List<QuotaEvent> out = new ArrayList<>();
        QuotaEvent e;
        while ((e = events.poll(300, TimeUnit.MILLISECONDS)) != null) out.add(e);
        return out;
    }

    @Test
    void anEventClaimedByAnotherInstanceIsNotRaisedHereAndNotAskedForAgain() throws Exception {
        probe.claimedElsewhere.add("monthly:acme:2027-03-01:near:80");
        try (QuotaSignals signals = QuotaSignals.start(() -> SignalSettings.DEFAULTS, List.of(events::add), probe,
                new ManualClock(), false)) {
            signals.admitted("acme", "pro");
            signals.check();
            assertThat(drain()).singleElement().isInstanceOfSatisfying(QuotaEvent.NearLimit.class, e -> {
                assertThat(e.thresholdPercent()).isEqualTo(90);
                assertThat(e.periodStart()).isEqualTo(START);
                assertThat(e.periodEnd()).isEqualTo(END);
            });
            signals.admitted("acme", "pro");
            signals.check();
            assertThat(drain()).isEmpty();
            assertThat(probe.asked).as("each asked once")
                    .containsExactly("monthly:acme:2027-03-01:near:80", "monthly:acme:2027-03-01:near:90");
        }
    }

    @Test
    void aClaimTheStoreCannotAnswerIsAskedAgainAtTheTenantsNextCheck() throws Exception {
        probe.storeAway = true;
        try (QuotaSignals signals = QuotaSignals.start(() -> SignalSettings.DEFAULTS, List.of(events::add), probe,
                new ManualClock(), false)) {
            signals.admitted("acme", "pro");
            signals.check();
            assertThat(drain()).as("not raised without a claim").isEmpty();
            probe.storeAway = false;
            probe.used = 10;
            signals.admitted("acme", "pro");
            signals.check();
            assertThat(drain()).extracting(QuotaEvent::type).containsExactly("near_limit", "near_limit", "exhausted");
            assertThat(signals.raised("near_limit")).isEqualTo(2);
            assertThat(signals.raised("exhausted")).isEqualTo(1);
        }
    }
}
