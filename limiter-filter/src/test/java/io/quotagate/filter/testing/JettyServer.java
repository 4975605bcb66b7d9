package io.quotagate.filter.testing;

import jakarta.servlet.Filter;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

import java.io.IOException;
import java.net.URI;
import java.util.EnumSet;

/**
 * A real Jetty 12 server on a free port for integration tests; close it to stop it. The default
 * servlet answers every path with 200 and the text {@code ok}.
 */
public final class JettyServer implements AutoCloseable {
    private final Server server;

    private JettyServer(Server server) {
        this.server = server;
    }

    /** A server whose every path is answered by {@link OkServlet}, behind {@code filter} (if not null). */
    public static JettyServer start(Filter filter) throws Exception {
        ServletContextHandler context = new ServletContextHandler();
        context.setContextPath("/");
        if (filter != null) {
            context.addFilter(new FilterHolder(filter), "/*", EnumSet.of(jakarta.servlet.DispatcherType.REQUEST));
        }
        context.addServlet(new ServletHolder(new OkServlet()), "/");
        return start(context);
    }

    /**
     * A context whose every path is answered by {@link OkServlet}, behind {@code filter}, both able to go
     * async (as docs/installation.md registers the filter): what a throttled, delayed request needs.
     */
    public static ServletContextHandler asyncContext(Filter filter) {
        return asyncContext(filter, new OkServlet());
    }

    /** As {@link #asyncContext(Filter)}, every path answered by {@code servlet}. */
    public static ServletContextHandler asyncContext(Filter filter, jakarta.servlet.Servlet servlet) {
        ServletContextHandler context = new ServletContextHandler();
        context.setContextPath("/");
        FilterHolder holder = new FilterHolder(filter);
        holder.setAsyncSupported(true);
        context.addFilter(holder, "/*", EnumSet.of(jakarta.servlet.DispatcherType.REQUEST));
        ServletHolder all = new ServletHolder(servlet);
        all.setAsyncSupported(true);
        context.addServlet(all, "/");
        return context;
    }

    /** A server running this handler (a configured context, a web app...). */
    public static JettyServer start(Handler handler) throws Exception {
        return start(handler, new HttpConfiguration().getRequestHeaderSize());
    }

    /** As {@link #start(Handler)}, accepting request heads up to {@code requestHeaderSize} bytes (default 8 KiB). */
    public static JettyServer start(Handler handler, int requestHeaderSize) throws Exception {
        return start(new Server(), handler, requestHeaderSize);
    }

    /** As {@link #start(Handler)}, with at most {@code maxThreads} threads (acceptors and selectors included). */
    public static JettyServer startWithThreads(Handler handler, int maxThreads) throws Exception {
        return start(new Server(new QueuedThreadPool(maxThreads, Math.min(8, maxThreads))), handler,
                new HttpConfiguration().getRequestHeaderSize());
    }

    private static JettyServer start(Server server, Handler handler, int requestHeaderSize) throws Exception {
        HttpConfiguration http = new HttpConfiguration();
        http.setRequestHeaderSize(requestHeaderSize);
        ServerConnector connector = new ServerConnector(server, new HttpConnectionFactory(http));
        connector.setHost("127.0.0.1");
        connector.setPort(0);
        // the kernel's bound (net.core.somaxconn) rather than Java's default of 50: a test that opens
        // thousands of connections at once must not have them dropped and retried seconds later
        connector.setAcceptQueueSize(4096);
        server.addConnector(connector);
        server.setHandler(handler);
        server.start();
        return new JettyServer(server);
    }

    public int port() {
        return ((ServerConnector) server.getConnectors()[0]).getLocalPort();
    }

    public URI uri(String path) {
        return URI.create("http://127.0.0.1:" + port() + path);
    }

    public Server server() {
        return server;
    }

    @Override
    public void close() throws Exception {
        server.stop();
    }

    /** Answers 200 {@code ok}. */
    public static final class OkServlet extends HttpServlet {
        private static final long serialVersionUID = 1L;

        @Override
        protected void service(HttpServletRequest req, HttpServletResponse resp) throws IOException {
            resp.setContentType("text/plain");
            resp.getWriter().write("ok");
        }
    }
}
