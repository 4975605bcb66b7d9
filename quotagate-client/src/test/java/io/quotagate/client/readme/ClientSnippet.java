package io.quotagate.client.readme;

// README snippet
import io.quotagate.client.AdaptiveHttpClient;
import io.quotagate.client.AdaptiveLimiter;
import io.quotagate.client.InstanceCountSource;
import io.quotagate.client.RateController;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpResponse.BodyHandlers;
// README snippet end
import java.io.IOException;
import java.net.URI;

/** docs/client.md: compiled here, held verbatim by that page. */
class ClientSnippet {
    void start(URI uri) throws IOException, InterruptedException {
        // README snippet
        AdaptiveLimiter limiter = AdaptiveLimiter.builder()
                .name("billing-api")
                .controller(RateController.aimd())                 // or cubic(), publishedPacing()
                .initialRate(900).minRate(300).maxRate(6000)       // units per minute, for the whole app
                .instanceCount(InstanceCountSource.fixed(3))       // each instance takes rate / 3
                .build();
        AdaptiveHttpClient api = AdaptiveHttpClient.of(HttpClient.newHttpClient(), limiter);
        HttpResponse<String> r = api.send(HttpRequest.newBuilder(uri).build(), BodyHandlers.ofString());
        // Spring: RestClient.builder().requestInterceptor(new AdaptiveClientHttpRequestInterceptor(limiter)).build()
        // README snippet end
    }
}
