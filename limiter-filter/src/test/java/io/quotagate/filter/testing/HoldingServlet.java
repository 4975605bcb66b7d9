package io.quotagate.filter.testing;

import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import java.io.IOException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Answers {@code ok}; a path ending in {@code /hold} first counts down {@link #entered} and waits until the
 * test counts down {@link #proceed} (at most 30 s): a request that holds its concurrency slot as long as the
 * test wants.
 */
public final class HoldingServlet extends HttpServlet {
    private static final long serialVersionUID = 1L;

    /** Counted down when a {@code /hold} request runs. */
    public final transient CountDownLatch entered = new CountDownLatch(1);
    /** Counted down by the test to let the {@code /hold} requests end. */
    public final transient CountDownLatch proceed = new CountDownLatch(1);

    @Override
    protected void service(HttpServletRequest req, HttpServletResponse resp) throws IOException {
        if (req.getRequestURI().endsWith("/hold")) {
            entered.countDown();
            try {
                proceed.await(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        resp.getWriter().write("ok");
    }
}
