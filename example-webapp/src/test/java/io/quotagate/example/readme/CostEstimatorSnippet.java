package io.quotagate.example.readme;

// README snippet
import io.quotagate.filter.ActualCost;
import io.quotagate.filter.QuotaFilter;
// README snippet end
import io.quotagate.plans.Plans;
import jakarta.servlet.http.HttpServletRequest;

/** docs/costs.md: compiled here, held verbatim by that page. */
class CostEstimatorSnippet {
    interface Usage {
        long totalTokens();
    }

    void install(Plans plans) {
        // README snippet
        QuotaFilter.builder().plans(plans)
                .costEstimator("completions", (request, body) -> promptTokens(body) + maxTokens(body)) // route name
                .maxEstimatedBodyBytes(1 << 20)
                .build();
        // README snippet end
    }

    void report(HttpServletRequest request, Usage usage) {
        // README snippet
        // in the application, once the real usage is known (any thread, before the request completes):
        ActualCost.report(request, usage.totalTokens());   // or request attribute "io.quotagate.actualCost"
        // README snippet end
    }

    private static long promptTokens(byte[] body) {
        return body.length / 4;
    }

    private static long maxTokens(byte[] body) {
        return 100;
    }
}
