package io.quotagate.containers;

import org.apache.catalina.connector.Connector;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The matrix's suite on Tomcat 11 (and, in container-tests-tomcat10, 10.1) with the connector's
 * {@code useVirtualThreads}: Tomcat runs every request on a virtual thread of its own. Skipped, saying why, on a JDK
 * before 21.
 */
class TomcatVirtualThreadsTest extends TomcatContainerTest {
    @Override
    protected boolean virtualThreads() {
        return true;
    }

    @Override
    protected void configure(Connector connector) {
        assertThat(connector.setProperty("useVirtualThreads", "true")).as("Tomcat knows useVirtualThreads").isTrue();
    }
}
