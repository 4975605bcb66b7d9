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

    @Test
    void readsAsManyMembersAndParametersAsRfc9651AsksAndRefusesMore() {
        assertThat(RateLimitFields.parseRateLimit(members(RateLimitFields.MAX_MEMBERS))).hasSize(RateLimitFields.MAX_MEMBERS);
        assertThatThrownBy(() -> RateLimitFields.parseRateLimit(members(RateLimitFields.MAX_MEMBERS + 1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("more than 1024 members");
        assertThatThrownBy(() -> RateLimitFields.parsePolicy(members(5000).replace(";r=", ";q=")))
                .isInstanceOf(IllegalArgumentException.class);
        StringBuilder params = new StringBuilder("p;r=1");
        for (int i = 1; i < RateLimitFields.MAX_PARAMETERS; i++) params.append(";x").append(i).append("=1");
        assertThat(RateLimitFields.parseRateLimit(params.toString()).get(0).parameters()).hasSize(RateLimitFields.MAX_PARAMETERS);
        assertThatThrownBy(() -> RateLimitFields.parseRateLimit(params + ";y=1"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("more than 256 parameters");
    }

    private static String members(int n) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < n; i++) b.append(i == 0 ? "" : ", ").append("p").append(i).append(";r=").append(i);
        return b.toString();
    }

    @Test
    void aMegabyteFieldIsReadOrRefusedInOnePassAndItsMessageQuotesOnlyItsStart() {
        String name = "x".repeat(1_000_000);
        assertThat(RateLimitFields.parseRateLimit("\"" + name + "\";r=7").get(0).remaining()).isEqualTo(7);
        assertThatThrownBy(() -> RateLimitFields.parseRateLimit("\"" + name + "\";r=-7"))
                .isInstanceOf(IllegalArgumentException.class).satisfies(e -> assertThat(e.getMessage()).hasSizeLessThan(300));
        assertThatThrownBy(() -> RateLimitFields.parseRateLimit("\"" + name))
                .isInstanceOf(IllegalArgumentException.class).satisfies(e -> assertThat(e.getMessage()).hasSizeLessThan(300));
    }

    @ParameterizedTest
    @ValueSource(strings = {"\"burst\";r=\u0663", "\"burst\";r=1;t=\u0661", "\"burst\";r=1;t=-1", "\u0000", "\"burst\";r=1e3",
            "\"burst\";r=9223372036854775808", "\"burst\";r=1;t=1.5", "\"bu\u00e9rst\";r=1", "\u00e9;r=1", "\"burst\";r=?1"})
    void refusesNonAsciiDigitsNegativeResetsAndOtherGarbage(String value) {
        assertThatThrownBy(() -> RateLimitFields.parseRateLimit(value)).isInstanceOf(IllegalArgumentException.class);
    }

    @ParameterizedTest
    @ValueSource(strings = {"\"p\"", "\"p\";w=60", "\"p\";q=10;w=0", "\"p\";q=?1", "\"p\";q=10;qu=5", "\"p\";q=10;qu=?1"})
    void rejectsMalformedPolicies(String value) {
        assertThatThrownBy(() -> RateLimitFields.parsePolicy(value)).isInstanceOf(IllegalArgumentException.class);
    }
}
