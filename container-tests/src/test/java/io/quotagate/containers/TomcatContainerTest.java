package io.quotagate.containers;

import org.apache.catalina.Context;
import org.apache.catalina.connector.Connector;
import org.apache.catalina.startup.Tomcat;
import org.apache.coyote.http2.Http2Protocol;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Embedded Tomcat 11 (Tomcat 10.1 in the module container-tests-tomcat10, same code): the registration of docs/installation.md runs as a ServletContainerInitializer of the context.
 * Tomcat merges {@code //} and drops {@code /./} before the filter, which charges both to reports (429).
 */
class TomcatContainerTest extends ContainerBehaviourContract {
    private Tomcat tomcat;

    @Override
    protected int start() throws Exception {
        // Tomcat's work files stay in the build directory
        Path baseDir = Files.createTempDirectory(Path.of("target"), "tomcat-");
        tomcat = new Tomcat();
        tomcat.setBaseDir(baseDir.toString());
        Connector connector = new Connector();
        connector.setPort(0);
        connector.setProperty("address", "127.0.0.1");
        connector.addUpgradeProtocol(new Http2Protocol()); // h2c beside HTTP/1.1
        configure(connector);
        tomcat.setConnector(connector);
        Context context = tomcat.addContext("", null);
        context.addServletContainerInitializer(new TestApp.Initializer(), null);
        tomcat.start();
        return connector.getLocalPort();
    }

    /** Sets what a leg changes on the connector (the virtual-thread leg: {@code useVirtualThreads}). */
    protected void configure(Connector connector) {
    }

    @Override
    protected void stop() throws Exception {
        tomcat.stop();
        tomcat.destroy();
    }
}
