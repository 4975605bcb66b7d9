package io.quotagate.loadtest.scenario;

import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.Request;
import org.eclipse.jetty.util.thread.Scheduler;

import java.net.URI;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;

/**
 * One scenario client's HTTP/1.1 connections to its server, as a client library keeps them: a
 * fixed pool of at most {@link #CONNECTIONS} keep-alive connections, one request in flight on each,
 * and at most {@link #QUEUED} requests waiting for a free connection. A request beyond that is
 * refused at once ({@link #refusedByPool}) and never reaches the network.
 *
 * <p>So when the server or the machine lags, requests wait (and the run reports the lag) instead
 * of opening connection after connection: the descriptors a client holds are bounded by
 * {@link #CONNECTIONS} plus its selector's, whatever the speed.
 */
final class ClientConnections implements AutoCloseable {
    /** Keep-alive connections per client: about 8 times what {@code race --speed 15} keeps busy. */
    static final int CONNECTIONS = 8;
    /** Requests per client that may wait for a connection before the pool refuses more. */
    static final int QUEUED = 256;

    private final HttpClient http;

    /** Started at once; {@code executor} and {@code scheduler} are shared, started, and not stopped by {@link #close}. */
    ClientConnections(String name, Executor executor, Scheduler scheduler) {
        http = new HttpClient();
        http.setName(name);
        http.setExecutor(executor);
        http.setScheduler(scheduler);
        http.setMaxConnectionsPerDestination(CONNECTIONS);
        http.setMaxRequestsQueuedPerDestination(QUEUED);
        http.setConnectTimeout(5_000);
        http.setFollowRedirects(false);
        http.setUserAgentField(null);
        try {
            http.start();
        } catch (Exception e) {
            throw new IllegalStateException("starting the HTTP client " + name + " failed", e);
        }
    }

    Request newRequest(URI uri) {
        return http.newRequest(uri);
    }

    /** Whether a request failed because the pool's queue was full (it was never sent). */
    static boolean refusedByPool(Throwable failure) {
        return failure instanceof RejectedExecutionException;
    }

    @Override
    public void close() {
        try {
            http.stop();
        } catch (Exception e) {
            System.err.println("scenario: stopping the HTTP client failed: " + e);
        }
    }
}
