package io.quotagate.loadtest.bench;

import org.HdrHistogram.Histogram;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * Drives a {@link BenchServer} from a fixed number of keep-alive connections, one platform thread
 * each, every thread sending its next request as soon as the previous response is read (a closed
 * loop), for a fixed time. Latencies go into an HdrHistogram in microseconds.
 *
 * <p>The server's CPU is read just before the first request and just after the last response, while
 * every connection is open, so connecting and closing are not counted.
 */
final class LoadGenerator {
    /** Longest latency recorded exactly; anything longer is recorded as this. */
    private static final long MAX_LATENCY_MICROS = TimeUnit.MINUTES.toMicros(1);
    private static final String PATH = "/items/42";

    private final int connections;

    LoadGenerator(int connections) {
        if (connections <= 0) throw new IllegalArgumentException("connections must be > 0, was " + connections);
        this.connections = connections;
    }

    /** Most tenants the five digits of a {@link #tenantId} can tell apart. */
    static final int MAX_TENANTS = 100_000;

    /** The request of tenant 0; a client rewrites the tenant's digits in place ({@link #forTenant}). */
    static byte[] request(InetSocketAddress address) {
        return RawHttpConnection.get(address.getHostString(), address.getPort(), PATH, "X-Tenant-Id: " + tenantId(0));
    }

    /** Where the tenant's five digits start in {@code request}. */
    static int digitsAt(byte[] request) {
        String text = new String(request, java.nio.charset.StandardCharsets.US_ASCII);
        return text.indexOf("X-Tenant-Id: " + tenantId(0)) + "X-Tenant-Id: tenant-".length();
    }

    /**
     * Makes {@code request} (built by {@link #request}) carry tenant {@code i}: one array per client,
     * rewritten per request, rather than one per tenant, so the load generator itself reads no
     * 10,000-tenant table that would compete with the server for the CPU caches.
     */
    static void forTenant(byte[] request, int digitsAt, int i) {
        for (int d = digitsAt + 4; d >= digitsAt; d--) {
            request[d] = (byte) ('0' + i % 10);
            i /= 10;
        }
    }

    /** The id of the i-th benchmark tenant; all ids have the same length. */
    static String tenantId(int i) {
        return String.format("tenant-%05d", i);
    }

    /** One measured run against {@code server} for {@code duration}. */
    RunResult run(BenchServer server, Duration duration) throws InterruptedException {
        InetSocketAddress address = server.address();
        int tenants = server.mode().tenants();
        if (tenants > MAX_TENANTS) throw new IllegalArgumentException("at most " + MAX_TENANTS + " tenants, was " + tenants);
        byte[] request = request(address);
        int digitsAt = digitsAt(request); // the same in every client's copy
        CountDownLatch connected = new CountDownLatch(connections);
        CountDownLatch go = new CountDownLatch(1);
        CountDownLatch measured = new CountDownLatch(1);
        long durationNanos = duration.toNanos();
        List<Client> clients = new ArrayList<>();
        for (int i = 0; i < connections; i++) {
            Client c = new Client(address, request.clone(), digitsAt, tenants, connected, go, measured, durationNanos);
            Thread t = new Thread(c, "bench-client-" + i);
            t.setDaemon(true);
            c.thread = t;
            clients.add(c);
            t.start();
        }

        connected.await();
        Map<Long, Long> cpuBefore = server.cpuByThread();
        long start = System.nanoTime();
        for (Client c : clients) c.start = start;
        go.countDown();
        long joinDeadline = start + durationNanos + TimeUnit.SECONDS.toNanos(30);
        for (Client c : clients) {
            long left = joinDeadline - System.nanoTime();
            c.finished.await(Math.max(left, 1), TimeUnit.NANOSECONDS);
        }
        long end = System.nanoTime();
        Map<Long, Long> cpuAfter = server.cpuByThread();
        measured.countDown();

        Histogram latency = new Histogram(MAX_LATENCY_MICROS, 3);
        long ok = 0;
        long non200 = 0;
        long ioErrors = 0;
        for (Client c : clients) {
            if (c.finished.getCount() > 0) {
                ioErrors++; // stuck past the deadline: count it, do not wait for ever
                c.thread.interrupt();
                continue;
            }
            latency.add(c.latency);
            ok += c.ok;
            non200 += c.non200;
            ioErrors += c.ioErrors;
        }
        return new RunResult(server.mode(), ok, non200, ioErrors, end - start, latency,
                BenchServer.cpuBetween(cpuBefore, cpuAfter));
    }

    private static final class Client implements Runnable {
        private final InetSocketAddress address;
        private final byte[] request;
        private final int digitsAt;
        private final int tenants;
        private final CountDownLatch connected;
        private final CountDownLatch go;
        private final CountDownLatch measured;
        private final long durationNanos;
        final CountDownLatch finished = new CountDownLatch(1);
        final Histogram latency = new Histogram(MAX_LATENCY_MICROS, 3);
        Thread thread;
        /** Written before {@code go} opens. */
        long start;
        long ok;
        long non200;
        long ioErrors;

        Client(InetSocketAddress address, byte[] request, int digitsAt, int tenants, CountDownLatch connected,
               CountDownLatch go, CountDownLatch measured, long durationNanos) {
            this.address = address;
            this.request = request;
            this.digitsAt = digitsAt;
            this.tenants = tenants;
            this.connected = connected;
            this.go = go;
            this.measured = measured;
            this.durationNanos = durationNanos;
        }

        @Override
        public void run() {
            RawHttpConnection connection = null;
            try {
                try {
                    connection = new RawHttpConnection(address);
                } catch (IOException e) {
                    ioErrors++;
                } finally {
                    connected.countDown();
                }
                go.await();
                if (connection == null) return;
                long deadline = start + durationNanos;
                ThreadLocalRandom random = ThreadLocalRandom.current();
                while (true) {
                    long t0 = System.nanoTime();
                    if (t0 - deadline >= 0) break;
                    if (tenants > 1) forTenant(request, digitsAt, random.nextInt(tenants));
                    int status;
                    try {
                        status = connection.exchange(request);
                    } catch (IOException e) {
                        ioErrors++; // the connection reconnects on the next exchange
                        continue;
                    }
                    latency.recordValue(Math.min((System.nanoTime() - t0) / 1000, MAX_LATENCY_MICROS));
                    if (status == 200) ok++;
                    else non200++;
                }
                finished.countDown();
                measured.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                finished.countDown();
                if (connection != null) connection.close();
            }
        }
    }
}
