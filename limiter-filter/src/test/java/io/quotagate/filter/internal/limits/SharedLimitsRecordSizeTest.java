package io.quotagate.filter.internal.limits;

import io.quotagate.filter.status.LimitOverrides;
import io.quotagate.filter.store.LimitsChannel;
import io.quotagate.plans.Bandwidth;
import io.quotagate.plans.Plans;
import io.quotagate.plans.PlansFile;
import io.quotagate.tenant.TenantContract;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.Consumer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * No instance writes a shared record that the others would refuse as too large: a change that would
 * make one is the change's fault ({@link IllegalArgumentException}, nothing written), and a plans file
 * that would make one is refused at start. On a channel in memory (the Redis side, which never reads
 * such a body, is {@code SharedLimitsTest}'s).
 */
class SharedLimitsRecordSizeTest {
    private static final Plans PLANS = PlansFile.parse("size.yml", """
            plans:
              free:
                limits: [ { name: burst, capacity: 20, refill: 1, period: 10s } ]
            tenants:
              default-plan: free
            """);
    /** About 130 bytes of JSON each, with its tenant id: 80,000 of them make a record of some 10 MB. */
    private static final List<Bandwidth> OWN = List.of(new Bandwidth("burst", 500, 100, Duration.ofSeconds(10)));
    private static final int MANY = 80_000;

    /** A record in memory: the version compared and counted as Redis's script does. */
    static final class MemoryChannel implements LimitsChannel {
        long version;
        String body;
        int writes;

        @Override
        public synchronized long version() {
            return version;
        }

        @Override
        public synchronized Optional<Versioned> read() {
            return body == null ? Optional.empty() : Optional.of(Versioned.of(version, body));
        }

        @Override
        public synchronized boolean replace(long expected, long next, String newBody) {
            if (expected != version) return false;
            assertThat(newBody.getBytes(StandardCharsets.UTF_8).length).isLessThanOrEqualTo(MAX_RECORD_BYTES);
            version = next;
            body = newBody;
            writes++;
            return true;
        }

        @Override
        public void announce(String message) {
        }

        @Override
        public void listen(Consumer<String> listener) {
        }

        @Override
        public String instanceId() {
            return "test";
        }
    }

    @Test
    void aChangeThatWouldMakeTheRecordTooLargeIsRefusedAsTheChangesFaultAndWritesNothing() {
        MemoryChannel channel = new MemoryChannel();
        List<Plans> put = new java.util.ArrayList<>();
        try (SharedLimits limits = SharedLimits.shared(PLANS, channel, (p, atStart) -> put.add(p), t -> { })) {
            assertThat(channel.version).isEqualTo(1);
            Map<String, TenantContract> tenants = new TreeMap<>();
            for (int i = 0; i < MANY; i++) tenants.put("tenant-with-a-longer-name-" + i, new TenantContract("free", OWN));
            String before = channel.body;
            assertThatThrownBy(() -> limits.change("bulk", o -> new LimitOverrides(Optional.empty(), Map.of(), tenants)))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("more than the " + LimitsChannel.MAX_RECORD_BYTES)
                    .hasMessageContaining("nothing changed");
            assertThat(channel.version).isEqualTo(1);
            assertThat(channel.body).isEqualTo(before);
            assertThat(limits.status().version()).isEqualTo(1);
            assertThat(limits.overrides().isEmpty()).isTrue();
            assertThat(put).as("nothing put in force after the start").hasSize(1);
        }
    }

    @Test
    void aPlansFileThatWouldMakeTheRecordTooLargeIsRefusedAtStart() {
        Map<String, String> assignments = new HashMap<>();
        Map<String, List<Bandwidth>> own = new HashMap<>();
        for (int i = 0; i < MANY; i++) {
            assignments.put("tenant-with-a-longer-name-" + i, "free");
            own.put("tenant-with-a-longer-name-" + i, OWN);
        }
        Plans large = PLANS.withTenants(assignments, own);
        MemoryChannel channel = new MemoryChannel();
        assertThatThrownBy(() -> SharedLimits.shared(large, channel, (p, atStart) -> { }, t -> { }))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("more than the " + LimitsChannel.MAX_RECORD_BYTES);
        assertThat(channel.writes).isZero();
    }
}
