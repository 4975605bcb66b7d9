package io.quotagate.client;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.List;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class RateLimitFieldsTest {
    @Test
    void parsesTheDraftsRateLimitExample() {
        List<RateLimitFields.Limit> limits = RateLimitFields.parseRateLimit("\"burst\";r=37;t=4");
        assertThat(limits).hasSize(1);
        assertThat(limits.get(0).policy()).isEqualTo("burst");
        assertThat(limits.get(0).remaining()).isEqualTo(37);
        assertThat(limits.get(0).resetSeconds()).contains(4L);
    }

    @Test
    void parsesSeveralItemsWithPartitionKeysAndUnknownParameters() {
        List<RateLimitFields.Limit> limits = RateLimitFields.parseRateLimit(
                "\"burst\";r=0;t=1;pk=:AAE=:, daily;r=4990;t=86000;x=?1;y=\"a\\\"b\";z=1.25");
        assertThat(limits).extracting(RateLimitFields.Limit::policy).containsExactly("burst", "daily");
        assertThat(limits.get(1).remaining()).isEqualTo(4990);
        assertThat(limits.get(1).parameters()).containsEntry("x", true).containsEntry("y", "a\"b").containsEntry("z", 1.25);
        assertThat(limits.get(0).parameters()).containsKey("pk");
    }

    @Test
    void resetIsOptional() {
        assertThat(RateLimitFields.parseRateLimit("\"hidden\";r=12").get(0).resetSeconds()).isEqualTo(Optional.empty());
    }

    @Test
    void parsesPolicies() {
        List<RateLimitFields.Policy> policies = RateLimitFields.parsePolicy(
                "\"burst\";q=100;w=60, \"daily\";q=1000;w=86400;qu=\"requests\"");
        assertThat(policies).extracting(RateLimitFields.Policy::name).containsExactly("burst", "daily");
        assertThat(policies.get(0).quota()).isEqualTo(100);
        assertThat(policies.get(0).windowSeconds()).contains(60L);
        assertThat(policies.get(1).parameters()).containsEntry("qu", "requests");
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "  ", "\"burst\"", "\"burst\";t=4", "\"burst\";r=-1", "\"burst\";r=1.5", "\"burst\";r=x",
            "\"burst;r=1", "\"burst\";r=1,", "\"burst\";r=1 \"daily\";r=2", "\"burst\";R=1", "1;r=2", "\"burst\";r=1234567890123456"})
    void rejectsMalformedRateLimitValues(String value) {
        assertThatThrownBy(() -> RateLimitFields.parseRateLimit(value)).isInstanceOf(IllegalArgumentException.class);
    }

    @ParameterizedTest
    @ValueSource(strings = {"\"p\"", "\"p\";w=60", "\"p\";q=10;w=0", "\"p\";q=?1", "\"p\";q=10;qu=5", "\"p\";q=10;qu=?1"})
    void rejectsMalformedPolicies(String value) {
        assertThatThrownBy(() -> RateLimitFields.parsePolicy(value)).isInstanceOf(IllegalArgumentException.class);
    }
}
