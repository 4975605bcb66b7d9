package io.quotagate.example.readme;

import io.quotagate.plans.Plans;
import io.quotagate.plans.PlansFile;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** The plans file of the README's 5-minute start is a valid plans file that says what the README says of it. */
class ReadmeQuickStartTest {
    private static final String STEP = "**3. A plans file**";

    @Test
    void theQuickStartPlansFileLoadsAsDescribed() throws IOException {
        String readme = Files.readString(Path.of("..", "README.md"));
        int step = readme.indexOf(STEP);
        assertThat(step).as("README step " + STEP).isPositive();
        int start = readme.indexOf("```yaml\n", step) + "```yaml\n".length();
        String yaml = readme.substring(start, readme.indexOf("\n```\n", start) + 1);

        Plans plans = PlansFile.parse("README.md", yaml);
        assertThat(plans.plans()).containsOnlyKeys("free", "pro");
        assertThat(plans.tenants().defaultPlan()).isEqualTo("free");
        assertThat(plans.tenants().assignments()).isEqualTo(Map.of("acme", "pro"));
        assertThat(plans.routes()).extracting(r -> r.name()).containsExactly("ops", "reports");
    }
}
