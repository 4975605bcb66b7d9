package io.quotagate.containers;

/**
 * The Tomcat 11 test's code on Tomcat 10.1 (the embedded API and Servlet 6.0 are the same); this
 * module's class path has tomcat-embed-core 10.1 only.
 */
class Tomcat10ContainerTest extends TomcatContainerTest {
}
