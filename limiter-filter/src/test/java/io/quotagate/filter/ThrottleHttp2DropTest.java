package io.quotagate.filter;

import io.quotagate.filter.testing.Await;
import io.quotagate.filter.testing.HeldScheduler;
import io.quotagate.filter.testing.JettyServer;
import io.quotagate.filter.testing.ManualClock;
import io.quotagate.plans.PlansFile;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpURI;
import org.eclipse.jetty.http.HttpVersion;
import org.eclipse.jetty.http.MetaData;
import org.eclipse.jetty.http2.ErrorCode;
import org.eclipse.jetty.http2.api.Session;
import org.eclipse.jetty.http2.api.Stream;
import org.eclipse.jetty.http2.client.HTTP2Client;
import org.eclipse.jetty.http2.frames.HeadersFrame;
import org.eclipse.jetty.http2.frames.ResetFrame;
import org.eclipse.jetty.http2.server.HTTP2CServerConnectionFactory;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Callback;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A delayed request whose client resets its HTTP/2 stream gives its reservation back at once, on a real
 * Jetty 12 speaking h2c. Unlike a closed HTTP/1.1 socket, which no container notices while a suspended
 * request waits (docs/throttling.md), a reset is a frame the server reads and reports to the request.
 * The async timeout is set far beyond the test, so only the reset can explain the give-back.
 */
class ThrottleHttp2DropTest {
    private static final Duration PATIENCE = Duration.ofSeconds(100);
    private static final String PLANS = """
            plans:
              small:
                limits: [ { capacity: 1, refill: 10, period: 1s } ]
                throttle: { max-delay: 1s, queue: 2 }
            tenants:
              default-plan: small
            """;

    private final ManualClock clock = new ManualClock();
    private final HeldScheduler scheduler = new HeldScheduler();
    private final HTTP2Client client = new HTTP2Client();
    private QuotaFilter filter;
    /** Dispatches that have left the filter: a suspended request's first one has. */
    private final AtomicInteger dispatchesReturned = new AtomicInteger();
    private Server server;

    @AfterEach
    void stop() throws Exception {
        scheduler.shutdownNow();
        client.stop();
        if (server != null) server.stop();
        if (filter != null) filter.destroy();
    }

    @Test
    void aDelayedRequestWhoseClientResetsItsStreamGivesItsReservationBack() throws Exception {
        QuotaFilter.Builder b = QuotaFilter.builder().plans(PlansFile.parse("t.yml", PLANS)).clock(clock)
                .throttleScheduler(scheduler);
        b.throttleGrace = Duration.ofMinutes(10);
        filter = b.build();
        int port = startH2c();
        client.start();
        Session session = client.connect(new InetSocketAddress("127.0.0.1", port), new Session.Listener() { })
                .get(1, TimeUnit.MINUTES);

        get(session, port);
        Await.within(PATIENCE, "the first request admitted and done", () -> filter.control().statistics().delayedNow() == 0
                && filter.control().tenantLimits("t").get(0).remaining() == 0);
        long full = filter.control().tenantLimits("t").get(0).nanosToFull();

        Stream delayed = get(session, port);
        Await.within(PATIENCE, "delayed", () -> scheduler.delays.size() == 1);
        // suspended: its first dispatch has left the filter. A reset that arrives before, while the request is
        // still on its way into suspension, Jetty 12 never reports to it (measured: docs/throttling.md)
        Await.within(PATIENCE, "the delayed request suspended", () -> dispatchesReturned.get() == 2);
        assertThat(filter.control().tenantLimits("t").get(0).nanosToFull()).as("reserved")
                .isEqualTo(full + TimeUnit.MILLISECONDS.toNanos(100));

        delayed.reset(new ResetFrame(delayed.getId(), ErrorCode.CANCEL_STREAM_ERROR.code), Callback.NOOP);
        Await.within(PATIENCE, "the reservation given back", () -> filter.control().statistics().delayedNow() == 0);
        assertThat(filter.control().tenantLimits("t").get(0).nanosToFull()).isEqualTo(full);
        scheduler.release(); // a late resumption of the dropped request does nothing
        assertThat(filter.control().tenantLimits("t").get(0).nanosToFull()).isEqualTo(full);
    }

    private static Stream get(Session session, int port) throws Exception {
        MetaData.Request request = new MetaData.Request("GET", HttpURI.from("http://127.0.0.1:" + port + "/items"),
                HttpVersion.HTTP_2, HttpFields.build().put("X-Tenant-Id", "t"));
        return session.newStream(new HeadersFrame(request, null, true), new Stream.Listener() { })
                .get(1, TimeUnit.MINUTES);
    }

    private int startH2c() throws Exception {
        server = new Server();
        HttpConfiguration http = new HttpConfiguration();
        ServerConnector connector = new ServerConnector(server, new HttpConnectionFactory(http),
                new HTTP2CServerConnectionFactory(http));
        connector.setHost("127.0.0.1");
        connector.setPort(0);
        server.addConnector(connector);
        server.setHandler(JettyServer.asyncContext(new Filter() {
            @Override
            public void doFilter(ServletRequest request, ServletResponse response, FilterChain chain)
                    throws IOException, ServletException {
                filter.doFilter(request, response, chain);
                dispatchesReturned.incrementAndGet();
            }
        }));
        server.start();
        return connector.getLocalPort();
    }
}
