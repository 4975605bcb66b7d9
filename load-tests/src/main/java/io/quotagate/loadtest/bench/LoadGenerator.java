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

    /** The requests for a mode: one per tenant, each with its own {@code X-Tenant-Id}. */
    static byte[][] requests(InetSocketAddress address, int tenants) {
        byte[][] requests = new byte[tenants][];
        for (int i = 0; i < tenants; i++) {
            requests[i] = RawHttpConnection.get(address.getHostString(), address.getPort(), PATH,
                    "X-Tenant-Id: " + tenantId(i));
        }
        return requests;
    }

    /** The id of the i-th benchmark tenant; all ids have the same length. */
    static String tenantId(int i) {
        return String.format("tenant-%05d", i);
    }

    /** One measured run against {@code server} for {@code duration}. */
    RunResult run(BenchServer server, Duration duration) throws InterruptedException {
        InetSocketAddress address = server.address();
        byte[][] requests = requests(address, server.mode().tenants());
        CountDownLatch connected = new CountDownLatch(connections);
        CountDownLatch go = new CountDownLatch(1);
        CountDownLatch measured = new CountDownLatch(1);
        long durationNanos = duration.toNanos();
        List<Client> clients = new ArrayList<>();
        for (int i = 0; i < connections; i++) {
            Client c = new Client(address, requests, connected, go, measured, durationNanos);
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
        private final byte[][] requests;
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

        Client(InetSocketAddress address, byte[][] requests, CountDownLatch connected, CountDownLatch go,
               CountDownLatch measured, long durationNanos) {
            this.address = address;
            this.requests = requests;
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
                int n = requests.length;
                while (true) {
                    long t0 = System.nanoTime();
                    if (t0 - deadline >= 0) break;
                    byte[] request = n == 1 ? requests[0] : requests[random.nextInt(n)];
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
