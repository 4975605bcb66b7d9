package io.quotagate.spring;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

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
                "quotagate.order", "quotagate.watch-plans");
        metadata.get("properties").forEach(p -> {
            if (p.get("name").asText().equals("quotagate.order")) {
                assertThat(p.get("defaultValue").asInt()).isEqualTo(QuotagateProperties.DEFAULT_ORDER);
                assertThat(p.get("description").asText()).contains("Spring Security");
            }
        });
    }
}
