package io.quotagate.filter;

import io.quotagate.filter.testing.ManualClock;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.ResourceBundle;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

class RejectionLogTest {
    private final ManualClock clock = new ManualClock();
    private final List<String> lines = new CopyOnWriteArrayList<>();
    private final RejectionLog log = new RejectionLog(new CapturingLogger(lines), clock);

    @Test
    void logsTheFirstRejectionPerSecondPerTenantThenCountsTheSuppressedOnes() {
        for (int i = 0; i < 1000; i++) log.rejected("acme", "free", "items", "tenant_rate", 429, 3);
        assertThat(lines).containsExactly(
                "quotagate rejected tenant=acme plan=free route=items status=429 reason=tenant_rate retry_after=3 suppressed=0");
        clock.advance(Duration.ofSeconds(1));
        log.rejected("acme", "free", "items", "tenant_rate", 429, 2);
        assertThat(lines).hasSize(2);
        assertThat(lines.get(1)).endsWith("retry_after=2 suppressed=999");
    }

    @Test
    void aQuietTenantGetsASummaryOfWhatWasSuppressed() {
        for (int i = 0; i < 10; i++) log.rejected("acme", "free", "items", "tenant_rate", 429, 3);
        clock.advance(Duration.ofMinutes(1));
        log.flush();
        assertThat(lines).hasSize(2).last().isEqualTo("quotagate rejections-summary tenant=acme suppressed=9");
    }

    @Test
    void aFloodOfDistinctTenantsIsCappedAndEveryRejectionIsStillAccountedFor() {
        int n = 100_000;
        for (int i = 0; i < n; i++) log.rejected("spoof-" + i, "free", "items", "tenant_rate", 429, 1);
        assertThat(lines).hasSize(RejectionLog.MAX_LINES_PER_SECOND);
        clock.advance(Duration.ofSeconds(1));
        log.rejected("acme", "free", "items", "tenant_rate", 429, 1);
        assertThat(lines).hasSize(RejectionLog.MAX_LINES_PER_SECOND + 1);
        long accounted = lines.size();
        Matcher m = Pattern.compile("(?:suppressed|unlogged_other_tenants)=(\\d+)").matcher(String.join("\n", lines));
        while (m.find()) accounted += Long.parseLong(m.group(1));
        assertThat(accounted).isEqualTo(n + 1);
    }

    /** A System.Logger that keeps INFO lines. */
    record CapturingLogger(List<String> lines) implements System.Logger {
        @Override
        public String getName() {
            return "test";
        }

        @Override
        public boolean isLoggable(Level level) {
            return level.getSeverity() >= Level.INFO.getSeverity();
        }

        @Override
        public void log(Level level, ResourceBundle bundle, String msg, Throwable thrown) {
            lines.add(msg);
        }

        @Override
        public void log(Level level, ResourceBundle bundle, String format, Object... params) {
            lines.add(format);
        }

        @Override
        public void log(Level level, Supplier<String> msgSupplier) {
            lines.add(msgSupplier.get());
        }
    }
}
