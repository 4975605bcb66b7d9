package io.quotagate.containers;

import io.undertow.servlet.api.DeploymentInfo;

import java.util.concurrent.ExecutorService;

/**
 * The matrix's suite on Undertow 2.3 with virtual threads (JDK 21+). Undertow has no virtual-thread setting of its
 * own; its servlet deployment takes the executor that runs servlet requests ({@link DeploymentInfo#setExecutor},
 * public API), here one virtual thread per request, while XNIO's I/O threads stay platform threads. Skipped, saying
 * why, on a JDK before 21.
 */
class UndertowVirtualThreadsTest extends UndertowContainerTest {
    private ExecutorService requests;

    @Override
    protected boolean virtualThreads() {
        return true;
    }

    @Override
    protected DeploymentInfo configure(DeploymentInfo deployment) {
        requests = VirtualThreadLeg.newVirtualThreadPerTaskExecutor();
        return deployment.setExecutor(requests).setAsyncExecutor(requests);
    }

    @Override
    protected void stop() throws Exception {
        super.stop();
        requests.shutdown();
    }
}
