package io.quotagate.filter.signals;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.time.Duration;
import java.util.HexFormat;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.atomic.LongAdder;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Sends every {@link QuotaEvent} to a URL: {@code POST} of a JSON object ({@code type}, {@code at}, the
 * event's fields, {@code instance}: always there, see {@link Builder#instance}), signed so the receiver
 * can tell it comes from this filter:
 * <pre>
 * Content-Type: application/json
 * X-Quotagate-Event: near_limit
 * X-Quotagate-Delivery: 5f0c…          (the same on every attempt: deduplicate on it)
 * X-Quotagate-Signature: sha256=&lt;hex HMAC-SHA256 of the body under the shared secret&gt;
 * </pre>
 * A 2xx answer delivers it. A connection failure, a timeout, a 429 or a 5xx is retried after a
 * back-off that doubles each time ({@link Builder#backoff}, {@link Builder#retries}); any other answer
 * (refused), or the last failed attempt (given up), gives it up ({@link #failed()}, logged at most
 * once per 10 s). Events wait in a bounded queue of their own, sent by one daemon thread: a slow
 * receiver delays only the webhook, and a full queue drops new events ({@link #dropped()}), never
 * blocking the filter's other listeners. So every event handed to it is, in the end, delivered or
 * counted once as dropped, given up or refused (except those still queued when it is closed); a filter
 * reports the three in {@code quotagate.events.dropped{listener="webhook"}}.
 */
public final class WebhookListener implements QuotaListener, AutoCloseable {
    private static final System.Logger LOG = System.getLogger(WebhookListener.class.getName());
    /** The header with the body's signature, {@code sha256=<lower-case hex>}. */
    public static final String SIGNATURE_HEADER = "X-Quotagate-Signature";

    private final URI url;
    private final byte[] secret;
    private final Duration timeout;
    private final int retries;
    private final Duration backoff;
    private final String instance;
    private final HttpClient client;
    private final BlockingQueue<QuotaEvent> queue;
    private final Thread thread;
    private final LongAdder delivered = new LongAdder();
    private final LongAdder gaveUp = new LongAdder();
    private final LongAdder refused = new LongAdder();
    private final LongAdder dropped = new LongAdder();
    private volatile boolean closed;
    private long nextFailureLog = System.nanoTime();

    private WebhookListener(Builder b) {
        this.url = b.url;
        this.secret = b.secret.clone();
        this.timeout = b.timeout;
        this.retries = b.retries;
        this.backoff = b.backoff;
        this.instance = b.instance != null ? b.instance : processInstance();
        this.client = HttpClient.newBuilder().connectTimeout(timeout).followRedirects(HttpClient.Redirect.NEVER).build();
        this.queue = new ArrayBlockingQueue<>(b.queue);
        this.thread = new Thread(this::run, "quotagate-webhook");
        thread.setDaemon(true);
        thread.start();
    }

    /**
     * A webhook to {@code url} (http or https), signing with {@code secret}.
     *
     * @throws IllegalArgumentException if the URL is not http(s) or the secret is empty
     */
    public static Builder builder(URI url, byte[] secret) {
        return new Builder(url, secret);
    }

    /** Queues the event; never blocks (a full queue drops it, counted in {@link #dropped()}). */
    @Override
    public void onEvent(QuotaEvent event) {
        if (closed || !queue.offer(event)) dropped.increment();
    }

    /** Events the receiver accepted (2xx). */
    public long delivered() {
        return delivered.sum();
    }

    /** Events given up after the last attempt, or refused by the receiver (a 4xx other than 429). */
    public long failed() {
        return gaveUp.sum() + refused.sum();
    }

    /** Events none of whose attempts got a 2xx: connection failures, timeouts, 429 or 5xx each time. */
    public long gaveUp() {
        return gaveUp.sum();
    }

    /** Events the receiver refused with a 4xx other than 429 (not retried). */
    public long refused() {
        return refused.sum();
    }

    /** Events dropped because the webhook's queue was full. */
    public long dropped() {
        return dropped.sum();
    }

    /** The HMAC-SHA256 signature of {@code body} under {@code secret}, as sent: {@code sha256=<hex>}. */
    public static String sign(byte[] secret, byte[] body) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(secret, "HmacSHA256"));
            return "sha256=" + HexFormat.of().formatHex(mac.doFinal(body));
        } catch (GeneralSecurityException impossible) {
            throw new IllegalStateException("HmacSHA256 is missing from this JVM", impossible);
        }
    }

    private void run() {
        while (!closed) {
            QuotaEvent event;
            try {
                event = queue.take();
            } catch (InterruptedException stop) {
                return;
            }
            try {
                deliver(event);
            } catch (InterruptedException stop) {
                return;
            }
        }
    }

    private void deliver(QuotaEvent event) throws InterruptedException {
        byte[] body = EventText.json(event, instance).getBytes(StandardCharsets.UTF_8);
        HttpRequest request = HttpRequest.newBuilder(url).timeout(timeout)
                .header("Content-Type", "application/json")
                .header("X-Quotagate-Event", event.type())
                .header("X-Quotagate-Delivery", UUID.randomUUID().toString())
                .header(SIGNATURE_HEADER, sign(secret, body))
                .POST(HttpRequest.BodyPublishers.ofByteArray(body)).build();
        long wait = backoff.toMillis();
        String last = null;
        boolean refusal = false;
        for (int attempt = 0; attempt <= retries && !closed; attempt++) {
            if (attempt > 0) {
                Thread.sleep(wait);
                wait = Math.min(wait * 2, Duration.ofMinutes(1).toMillis());
            }
            try {
                int status = client.send(request, HttpResponse.BodyHandlers.discarding()).statusCode();
                if (status / 100 == 2) {
                    delivered.increment();
                    return;
                }
                last = "HTTP " + status;
                if (status != 429 && status < 500) { // the receiver refuses it: another try gets the same
                    refusal = true;
                    break;
                }
            } catch (IOException e) {
                last = e.toString();
            }
        }
        (refusal ? refused : gaveUp).increment();
        long now = System.nanoTime();
        if (now - nextFailureLog >= 0) {
            nextFailureLog = now + Duration.ofSeconds(10).toNanos();
            LOG.log(System.Logger.Level.WARNING, "quotagate: webhook " + url + " did not take a " + event.type()
                    + " event (" + last + "); " + failed() + " given up so far");
        }
    }

    /** Stops the sending thread; events still queued are not sent. */
    @Override
    public void close() {
        closed = true;
        thread.interrupt();
    }

    /** {@code host:pid:random}: the host tells the machine (a pod's name), the random part two filters of one JVM. */
    private static String processInstance() {
        String host;
        try {
            host = java.net.InetAddress.getLocalHost().getHostName();
        } catch (IOException | RuntimeException unknown) {
            host = "localhost";
        }
        return host + ":" + ProcessHandle.current().pid() + ":" + UUID.randomUUID().toString().substring(0, 8);
    }

    @Override
    public String toString() {
        return "WebhookListener[" + url + "]";
    }

    /** Builds a {@link WebhookListener}; every setter checks its value at once. */
    public static final class Builder {
        private final URI url;
        private final byte[] secret;
        private Duration timeout = Duration.ofSeconds(2);
        private int retries = 3;
        private Duration backoff = Duration.ofMillis(500);
        private int queue = 1000;
        private String instance;

        private Builder(URI url, byte[] secret) {
            Objects.requireNonNull(url, "url");
            Objects.requireNonNull(secret, "secret");
            if (url.getHost() == null || !("http".equals(url.getScheme()) || "https".equals(url.getScheme()))) {
                throw new IllegalArgumentException("webhook url must be http:// or https://, was " + url);
            }
            if (secret.length == 0) throw new IllegalArgumentException("webhook secret must not be empty");
            this.url = url;
            this.secret = secret.clone();
        }

        /** Connect and response timeout of one attempt (default 2 s, at most 1 min). */
        public Builder timeout(Duration timeout) {
            if (timeout.isZero() || timeout.isNegative() || timeout.compareTo(Duration.ofMinutes(1)) > 0) {
                throw new IllegalArgumentException("webhook timeout must be > 0 and at most 1m, was " + timeout);
            }
            this.timeout = timeout;
            return this;
        }

        /** Attempts after the first (default 3, at most 10). */
        public Builder retries(int retries) {
            if (retries < 0 || retries > 10) throw new IllegalArgumentException("webhook retries must be 0 to 10, was " + retries);
            this.retries = retries;
            return this;
        }

        /** The wait before the first retry, doubled before each next (default 500 ms). */
        public Builder backoff(Duration backoff) {
            if (backoff.isNegative() || backoff.compareTo(Duration.ofMinutes(1)) > 0) {
                throw new IllegalArgumentException("webhook backoff must be 0 to 1m, was " + backoff);
            }
            this.backoff = backoff;
            return this;
        }

        /** Events waiting to be sent at most (default 1000). */
        public Builder queue(int events) {
            if (events <= 0) throw new IllegalArgumentException("webhook queue must be > 0, was " + events);
            this.queue = events;
            return this;
        }

        /**
         * Names this instance in every body ({@code instance}), so a receiver can tell instances apart.
         * Default: {@code <host>:<pid>:<8 random hex digits>}, made at {@link #build()}, the same form as a
         * Redis store's instance id (a filter on Redis passes that id, so its webhook and its heartbeat
         * name it alike).
         *
         * @throws IllegalArgumentException if it is blank
         */
        public Builder instance(String instance) {
            Objects.requireNonNull(instance, "instance");
            if (instance.isBlank()) throw new IllegalArgumentException("webhook instance must not be blank");
            this.instance = instance;
            return this;
        }

        /** Starts the webhook's sending thread. */
        public WebhookListener build() {
            return new WebhookListener(this);
        }
    }
}
