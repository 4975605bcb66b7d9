package io.quotagate.filter.redis;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * A TCP proxy on 127.0.0.1 in front of a real Redis that hands each reply over late: every chunk Redis
 * sends is delivered a random 0 to {@code maxDelayMillis} after it came (in order), as a busy machine or
 * network delays replies. Requests go to Redis at once, so Redis executes every command; only its answer
 * is slow.
 */
final class DelayingProxy implements AutoCloseable {
    private final ServerSocket listener;
    private final int targetPort;
    private final long maxDelayMillis;
    private final List<Socket> sockets = new ArrayList<>();
    private volatile boolean closed;

    DelayingProxy(int targetPort, long maxDelayMillis) throws IOException {
        this.targetPort = targetPort;
        this.maxDelayMillis = maxDelayMillis;
        this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread accept = new Thread(this::accept, "delaying-proxy-accept");
        accept.setDaemon(true);
        accept.start();
    }

    /** The proxy's URI, as a Redis store connects to it. */
    String uri() {
        return "redis://127.0.0.1:" + listener.getLocalPort();
    }

    private void accept() {
        while (!closed) {
            try {
                Socket client = listener.accept();
                Socket server = new Socket();
                server.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), targetPort), 2_000);
                client.setTcpNoDelay(true);
                server.setTcpNoDelay(true);
                synchronized (sockets) {
                    sockets.add(client);
                    sockets.add(server);
                }
                daemon(() -> pump(client, server), "delaying-proxy-up");
                BlockingQueue<Chunk> late = new LinkedBlockingQueue<>();
                daemon(() -> read(server, late), "delaying-proxy-read");
                daemon(() -> deliver(late, client), "delaying-proxy-deliver");
            } catch (IOException e) {
                if (!closed) throw new IllegalStateException(e);
            }
        }
    }

    private record Chunk(long dueNanos, byte[] bytes) {
    }

    /** Client to Redis: at once. */
    private static void pump(Socket from, Socket to) {
        try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
            in.transferTo(out);
        } catch (IOException ignored) {
            // one side closed
        }
    }

    /** Redis's replies, each due a random delay after it came, never before the one ahead of it. */
    private void read(Socket server, BlockingQueue<Chunk> late) {
        byte[] buffer = new byte[16 * 1024];
        long lastDue = 0;
        try (InputStream in = server.getInputStream()) {
            for (int n; (n = in.read(buffer)) > 0; ) {
                long due = System.nanoTime()
                        + TimeUnit.MILLISECONDS.toNanos(ThreadLocalRandom.current().nextLong(maxDelayMillis + 1));
                lastDue = Math.max(lastDue, due);
                late.add(new Chunk(lastDue, Arrays.copyOf(buffer, n)));
            }
        } catch (IOException ignored) {
            // closed
        }
        late.add(new Chunk(0, null));
    }

    private static void deliver(BlockingQueue<Chunk> late, Socket client) {
        try (OutputStream out = client.getOutputStream()) {
            while (true) {
                Chunk c = late.take();
                if (c.bytes() == null) return;
                long wait = c.dueNanos() - System.nanoTime();
                if (wait > 0) TimeUnit.NANOSECONDS.sleep(wait);
                out.write(c.bytes());
                out.flush();
            }
        } catch (IOException | InterruptedException ignored) {
            // closed
        }
    }

    private static void daemon(Runnable r, String name) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        t.start();
    }

    @Override
    public void close() throws IOException {
        closed = true;
        listener.close();
        synchronized (sockets) {
            for (Socket s : sockets) {
                try {
                    s.close();
                } catch (IOException ignored) {
                    // closing anyway
                }
            }
        }
    }
}
