package io.quotagate.containers;

import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.http2.server.HTTP2CServerConnectionFactory;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;

import java.util.Set;

/** Embedded Jetty 12 (ee10): the registration of docs/installation.md runs as a ServletContainerInitializer. */
class JettyContainerTest extends ContainerBehaviourContract {
    private Server server;

    @Override
    protected int start() throws Exception {
        server = newServer();
        HttpConfiguration http = new HttpConfiguration();
        // h2c beside HTTP/1.1
        ServerConnector connector = new ServerConnector(server, new HttpConnectionFactory(http),
                new HTTP2CServerConnectionFactory(http));
        connector.setHost("127.0.0.1");
        connector.setPort(0);
        server.addConnector(connector);
        ServletContextHandler context = new ServletContextHandler("/");
        context.addServletContainerInitializer(new TestApp.Initializer());
        server.setHandler(context);
        server.start();
        return connector.getLocalPort();
    }

    /** The server, before its connector and handler are added: the virtual-thread leg gives it its thread pool. */
    protected Server newServer() {
        return new Server();
    }

    /**
     * Jetty 12's default URI compliance answers {@code /reports//1} itself (400 "Ambiguous URI empty
     * segment") before any filter; a server configured with a laxer {@code UriCompliance} would pass it on,
     * and the filter charges it to the reports route (429). {@code /reports/./1} reaches the filter: 429.
     */
    @Override
    protected Set<Integer> pathVariantOutcomes(String path) {
        return path.contains("//") ? Set.of(400, 429) : super.pathVariantOutcomes(path);
    }

    @Override
    protected void stop() throws Exception {
        server.stop();
    }
}
