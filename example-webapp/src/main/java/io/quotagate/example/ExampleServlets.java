package io.quotagate.example;

import jakarta.servlet.AsyncContext;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import java.io.IOException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

/** The demo endpoints. They do little: the point is what the filter lets through. */
final class ExampleServlets {
    private static final Pattern ID = Pattern.compile("[A-Za-z0-9_-]{1,64}");

    private ExampleServlets() {
    }

    /** Reads {@code {id}} from {@code /<resource>/{id}}, or answers 404 and returns null. */
    static String id(HttpServletRequest req, HttpServletResponse resp) throws IOException {
        String info = req.getPathInfo();
        String id = info == null ? "" : info.substring(1);
        if (!ID.matcher(id).matches()) {
            json(resp, 404, "{\"type\":\"about:blank\",\"title\":\"Not Found\",\"status\":404,"
                    + "\"detail\":\"expected /" + req.getServletPath().substring(1) + "/{id}\"}", "application/problem+json");
            return null;
        }
        return id;
    }

    static void json(HttpServletResponse resp, int status, String body, String type) throws IOException {
        resp.setStatus(status);
        resp.setContentType(type);
        resp.setCharacterEncoding("UTF-8");
        resp.getWriter().write(body);
    }

    /** {@code GET /items/{id}}: a cheap lookup. */
    static final class Items extends ApiServlet {
        private static final long serialVersionUID = 1L;

        @Override
        protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
            String id = id(req, resp);
            if (id != null) json(resp, 200, "{\"id\":\"" + id + "\",\"name\":\"item " + id + "\"}", "application/json");
        }
    }

    /**
     * {@code GET /reports/{id}?ms=N}: a heavy report (cost 5, concurrency group {@code reports} in the
     * default plans). Asynchronous: the request thread returns at once and a scheduler finishes the
     * report after N ms of simulated work (default {@value #DEFAULT_MS}, at most {@value #MAX_MS}),
     * so a slow report holds its concurrency slot, not a server thread.
     */
    static final class Reports extends ApiServlet {
        private static final long serialVersionUID = 1L;
        static final int DEFAULT_MS = 1000;
        static final int MAX_MS = 30_000;
        private static final Pattern MS = Pattern.compile("\\d{1,5}");

        private transient ScheduledExecutorService work;

        @Override
        public void init() {
            ScheduledThreadPoolExecutor pool = new ScheduledThreadPoolExecutor(1, r -> {
                Thread t = new Thread(r, "reports-work");
                t.setDaemon(true);
                return t;
            });
            pool.setRemoveOnCancelPolicy(true);
            work = pool;
        }

        @Override
        public void destroy() {
            work.shutdownNow();
        }

        @Override
        protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
            String id = id(req, resp);
            if (id == null) return;
            String msParam = req.getParameter("ms");
            int ms = DEFAULT_MS;
            if (msParam != null) {
                if (!MS.matcher(msParam).matches() || Integer.parseInt(msParam) > MAX_MS) {
                    json(resp, 400, "{\"type\":\"about:blank\",\"title\":\"Bad Request\",\"status\":400,"
                            + "\"detail\":\"ms must be a whole number of milliseconds from 0 to " + MAX_MS + "\","
                            + "\"reason\":\"invalid_ms\"}", "application/problem+json");
                    return;
                }
                ms = Integer.parseInt(msParam);
            }
            AsyncContext async = req.startAsync();
            async.setTimeout(ms + 10_000L);
            int workMs = ms;
            work.schedule(() -> {
                try {
                    json(resp, 200, "{\"id\":\"" + id + "\",\"rows\":42,\"ms\":" + workMs + "}", "application/json");
                } catch (IOException | RuntimeException clientGone) {
                    // the client went away; the request still ends here
                } finally {
                    async.complete();
                }
            }, ms, TimeUnit.MILLISECONDS);
        }
    }

    /** {@code GET /health}: never limited. */
    static final class Health extends ApiServlet {
        private static final long serialVersionUID = 1L;

        @Override
        protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
            json(resp, 200, "{\"status\":\"UP\"}", "application/json");
        }
    }

    /** Answers 404 to every method: an endpoint that is switched off. */
    static final class NotFound extends HttpServlet {
        private static final long serialVersionUID = 1L;

        @Override
        protected void service(HttpServletRequest req, HttpServletResponse resp) throws IOException {
            json(resp, 404, "{\"type\":\"about:blank\",\"title\":\"Not Found\",\"status\":404}", "application/problem+json");
        }
    }
}
