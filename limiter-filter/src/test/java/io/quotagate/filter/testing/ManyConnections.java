package io.quotagate.filter.testing;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

/**
 * Many HTTP/1.1 requests in flight at once, each on a connection of its own, sent from a child JVM: a
 * process's open files are limited (20,000 here), and 10,000 connections counted on both ends in one
 * process would pass that limit. One thread and one selector for every connection, so the child holds no
 * thread per request either.
 *
 * <p>The child prints {@code sent} once every request is written, then {@code <status> <count>} lines and
 * {@code done} once every response has arrived (or {@code timeout} after three minutes).
 */
public final class ManyConnections implements AutoCloseable {
    private final Process child;
    private final BufferedReader out;

    private ManyConnections(Process child) {
        this.child = child;
        this.out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.US_ASCII));
    }

    /** Starts the child, which opens {@code n} connections to 127.0.0.1:{@code port} and sends {@code GET path}. */
    public static ManyConnections start(int port, int n, String path, String tenant) throws IOException {
        Process child = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx256m", "-cp", System.getProperty("java.class.path"), ManyConnections.class.getName(),
                Integer.toString(port), Integer.toString(n), path, tenant)
                .redirectError(ProcessBuilder.Redirect.INHERIT).start();
        return new ManyConnections(child);
    }

    /** Blocks until the child has written every request; fails if it ends first. */
    public void awaitSent() throws IOException {
        String line = out.readLine();
        if (!"sent".equals(line)) throw new AssertionError("the client process did not send its requests: " + line);
    }

    /** Blocks until every response has arrived: status code → how many. */
    public Map<Integer, Integer> awaitResponses() throws IOException {
        Map<Integer, Integer> statuses = new TreeMap<>();
        for (String line; (line = out.readLine()) != null; ) {
            if (line.equals("done")) return statuses;
            if (line.equals("timeout")) throw new AssertionError("responses still missing after 3 min: " + statuses);
            String[] f = line.split(" ");
            statuses.put(Integer.parseInt(f[0]), Integer.parseInt(f[1]));
        }
        throw new AssertionError("the client process ended without its count");
    }

    @Override
    public void close() throws InterruptedException {
        child.destroyForcibly();
        child.waitFor(1, TimeUnit.MINUTES);
    }

    /** The child: {@code port n path tenant}. */
    public static void main(String[] args) throws IOException {
        int port = Integer.parseInt(args[0]);
        int n = Integer.parseInt(args[1]);
        byte[] request = ("GET " + args[2] + " HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Tenant-Id: " + args[3]
                + "\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII);
        Map<Integer, Integer> statuses = new TreeMap<>();
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(3);
        try (Selector selector = Selector.open()) {
            for (int i = 0; i < n; i++) {
                SocketChannel c = SocketChannel.open();
                c.configureBlocking(false);
                c.connect(new InetSocketAddress("127.0.0.1", port));
                c.register(selector, SelectionKey.OP_CONNECT, new Exchange(ByteBuffer.wrap(request)));
            }
            int unsent = n;
            int open = n;
            while (open > 0 && System.nanoTime() < deadline) {
                selector.select(1_000);
                for (SelectionKey key : selector.selectedKeys()) {
                    SocketChannel c = (SocketChannel) key.channel();
                    Exchange x = (Exchange) key.attachment();
                    try {
                        if (key.isConnectable() && c.finishConnect()) key.interestOps(SelectionKey.OP_WRITE);
                        if (key.isValid() && key.isWritable()) {
                            c.write(x.request);
                            if (!x.request.hasRemaining()) {
                                key.interestOps(SelectionKey.OP_READ);
                                if (--unsent == 0) System.out.println("sent");
                            }
                        }
                        if (key.isValid() && key.isReadable() && x.read(c)) {
                            statuses.merge(x.status(), 1, Integer::sum);
                            key.cancel();
                            c.close();
                            open--;
                        }
                    } catch (IOException e) {
                        statuses.merge(-1, 1, Integer::sum); // no response: counted as -1
                        key.cancel();
                        c.close();
                        open--;
                    }
                }
                selector.selectedKeys().clear();
            }
            statuses.forEach((status, count) -> System.out.println(status + " " + count));
            System.out.println(open == 0 ? "done" : "timeout");
        }
    }

    /** One connection's request left to write and the start of its response. */
    private static final class Exchange {
        final ByteBuffer request;
        final ByteBuffer head = ByteBuffer.allocate(16);
        private final ByteBuffer scratch = ByteBuffer.allocate(4096);

        Exchange(ByteBuffer request) {
            this.request = request;
        }

        /** Reads what arrived; true once the server has closed the connection (the response is whole). */
        boolean read(SocketChannel c) throws IOException {
            scratch.clear();
            int read = c.read(scratch);
            scratch.flip();
            while (scratch.hasRemaining() && head.hasRemaining()) head.put(scratch.get());
            return read < 0;
        }

        /** The status code of "HTTP/1.1 200 ...", or -1 if the response did not start so. */
        int status() {
            String line = new String(head.array(), 0, head.position(), StandardCharsets.US_ASCII);
            return line.matches("(?s)HTTP/1\\.1 \\d{3}\\D.*") ? Integer.parseInt(line.substring(9, 12)) : -1;
        }
    }
}
