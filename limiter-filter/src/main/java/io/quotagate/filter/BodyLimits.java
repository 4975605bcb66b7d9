package io.quotagate.filter;

import java.time.Duration;
import java.util.Objects;

/**
 * How much of a request body the filter reads for a {@link CostEstimator}, and for how long.
 *
 * @param maxBytes    the largest body read; a larger one is answered with 413
 * @param readTimeout the longest the whole body may take to arrive; a slower one is answered with 408
 */
record BodyLimits(int maxBytes, Duration readTimeout) {
    BodyLimits {
        Objects.requireNonNull(readTimeout, "readTimeout");
    }
}
