package io.quotagate.filter.testing;

import org.junit.jupiter.api.Test;
import org.opentest4j.TestAbortedException;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The Redis fixtures never pass without running: a missing program fails under CI and skips elsewhere. */
class RedisServerTest {
    @Test
    void aMissingProgramFailsUnderCiAndIsSkippedWithTheReasonElsewhere() {
        if ("true".equalsIgnoreCase(System.getenv("CI"))) {
            assertThatThrownBy(() -> RedisServer.requireInstalled("redis-server", "quotagate-no-such-program"))
                    .isInstanceOf(AssertionError.class)
                    .hasMessageContaining("quotagate-no-such-program is not installed")
                    .hasMessageContaining("CI=true: failing, not skipping");
        } else {
            assertThatThrownBy(() -> RedisServer.requireInstalled("redis-server", "quotagate-no-such-program"))
                    .isInstanceOf(TestAbortedException.class)
                    .hasMessageContaining("quotagate-no-such-program is not installed")
                    .hasMessageContaining("under CI=true this fails");
        }
    }
}
