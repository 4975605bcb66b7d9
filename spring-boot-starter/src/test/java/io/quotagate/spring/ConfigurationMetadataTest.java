package io.quotagate.spring;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.quotagate.plans.InvalidPlansException;
import io.quotagate.plans.PlansFile;
import org.junit.jupiter.api.Test;

import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/** The metadata an IDE completes {@code quotagate.*} from, written by the configuration processor at build time. */
class ConfigurationMetadataTest {

    @Test
    void listsEveryQuotagatePropertyWithItsDefault() throws Exception {
        JsonNode metadata;
        try (InputStream in = getClass().getResourceAsStream("/META-INF/spring-configuration-metadata.json")) {
            assertThat(in).as("META-INF/spring-configuration-metadata.json").isNotNull();
            metadata = new ObjectMapper().readTree(in);
        }
        List<String> names = new ArrayList<>();
        metadata.get("properties").forEach(p -> names.add(p.get("name").asText()));
        assertThat(names).contains("quotagate.plans", "quotagate.enabled", "quotagate.url-patterns",
                "quotagate.order", "quotagate.watch-plans", "quotagate.limits", "quotagate.max-delayed-requests");
        metadata.get("properties").forEach(p -> {
            if (p.get("name").asText().equals("quotagate.order")) {
                assertThat(p.get("defaultValue").asInt()).isEqualTo(QuotagateProperties.DEFAULT_ORDER);
                assertThat(p.get("description").asText()).contains("Spring Security");
            }
            if (p.get("name").asText().equals("quotagate.max-delayed-requests")) {
                assertThat(p.get("defaultValue").asInt()).isEqualTo(QuotagateProperties.DEFAULT_MAX_DELAYED_REQUESTS);
                assertThat(p.get("description").asText()).contains("throttle_full");
            }
        });
    }

    @Test
    void describesTheInlineLimitsAsAMapWhoseKeysAreThePlansFilesSections() throws Exception {
        JsonNode metadata;
        try (InputStream in = getClass().getResourceAsStream("/META-INF/spring-configuration-metadata.json")) {
            metadata = new ObjectMapper().readTree(in);
        }
        JsonNode limits = null;
        for (JsonNode p : metadata.get("properties")) {
            if (p.get("name").asText().equals("quotagate.limits")) limits = p;
        }
        assertThat(limits).as("quotagate.limits (additional-spring-configuration-metadata.json)").isNotNull();
        // a map: an IDE accepts any key below it instead of flagging quotagate.limits.plans.free... as unknown
        assertThat(limits.get("type").asText()).startsWith("java.util.Map<");
        assertThat(limits.get("description").asText()).contains("quotagate.plans", "brackets");

        Set<String> hinted = new TreeSet<>();
        for (JsonNode hint : metadata.get("hints")) {
            if (hint.get("name").asText().equals("quotagate.limits.keys")) {
                hint.get("values").forEach(v -> hinted.add(v.get("value").asText()));
            }
        }
        // the keys a plans file takes at its top, as its parser lists them when it refuses another
        String reason = catchThrowableOfType(InvalidPlansException.class, () -> PlansFile.parse("x", "nope: 1"))
                .reason();
        Set<String> sections = new TreeSet<>(List.of(reason.substring(reason.indexOf('[') + 1, reason.indexOf(']'))
                .split(", ")));
        assertThat(hinted).isEqualTo(sections);
        // each limit's algorithm, with the names the parser accepts
        for (JsonNode hint : metadata.get("hints")) {
            if (!hint.get("name").asText().equals("quotagate.limits.keys")) continue;
            hint.get("values").forEach(v -> {
                if (v.get("value").asText().equals("plans") || v.get("value").asText().equals("global")) {
                    assertThat(v.get("description").asText()).contains("algorithm", "token-bucket", "gcra",
                            "sliding-window");
                }
            });
        }
    }
}
