package io.quotagate.containers;

import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.eclipse.jetty.util.thread.VirtualThreadPool;

/**
 * The matrix's suite on Jetty 12 with virtual threads (JDK 21+), set up as Jetty's documentation does: a
 * {@link QueuedThreadPool} for the selectors and acceptors whose virtual-threads executor is a
 * {@link VirtualThreadPool}, so every request (its filters, its servlet, a resumed throttled request) runs on a
 * virtual thread. Skipped, saying why, on a JDK before 21.
 */
class JettyVirtualThreadsTest extends JettyContainerTest {
    @Override
    protected boolean virtualThreads() {
        return true;
    }

    @Override
    protected Server newServer() {
        QueuedThreadPool threads = new QueuedThreadPool();
        VirtualThreadPool virtual = new VirtualThreadPool();
        virtual.setMaxConcurrentTasks(256); // at most this many requests in the application at once, as a platform pool
        threads.setVirtualThreadsExecutor(virtual);
        return new Server(threads);
    }
}
