package io.quotagate.loadtest.scenario;

import java.util.Arrays;
import java.util.Locale;

/** How a scenario's workers limit themselves. */
enum Mode {
    /** no limiter; a 429 is retried up to 3 times after Retry-After */
    NONE("none", "No limiter, retry only"),
    /** a fixed-rate token bucket */
    FIXED("fixed", "Fixed rate"),
    /** AIMD rate controller */
    AIMD("aimd", "AIMD"),
    /** CUBIC rate controller */
    CUBIC("cubic", "CUBIC"),
    /** paced from the published RateLimit fields */
    HEADERS("headers", "Published RateLimit fields");

    final String id;
    final String label;

    Mode(String id, String label) {
        this.id = id;
        this.label = label;
    }

    static Mode parse(String id) {
        String wanted = id.trim().toLowerCase(Locale.ROOT);
        return Arrays.stream(values()).filter(m -> m.id.equals(wanted)).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("unknown mode '" + id + "'; known: "
                        + String.join(", ", Arrays.stream(values()).map(m -> m.id).toList())));
    }
}
