package io.quotagate.containers;

/**
 * The Tomcat 11 virtual-thread leg's code on Tomcat 10.1 ({@code useVirtualThreads} on the connector, JDK 21+;
 * skipped, saying why, on an older JDK).
 */
class Tomcat10VirtualThreadsTest extends TomcatVirtualThreadsTest {
}
