package io.quotagate.example;

import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import java.io.IOException;
import java.io.InputStream;
import java.util.Map;

/** {@code GET /metrics} (Prometheus text) and {@code GET /dashboard} (a live page, offline-ready). */
final class ObservabilityServlets {
    private ObservabilityServlets() {
    }

    /** Prometheus text exposition of every meter. */
    static final class Metrics extends ApiServlet {
        private static final long serialVersionUID = 1L;
        private final transient PrometheusMeterRegistry registry;

        Metrics(PrometheusMeterRegistry registry) {
            this.registry = registry;
        }

        @Override
        protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
            resp.setContentType("text/plain; version=0.0.4; charset=utf-8");
            resp.getWriter().write(registry.scrape());
        }
    }

    /**
     * The dashboard: {@code /dashboard} the page, {@code /dashboard/data} its JSON, and the uPlot
     * script and style from the WebJar on the class path (no CDN).
     */
    static final class Dashboard extends ApiServlet {
        private static final long serialVersionUID = 1L;
        private static final String UPLOT = "META-INF/resources/webjars/uplot/1.6.30/dist/";
        private static final Map<String, String[]> FILES = Map.of(
                "/", new String[]{"dashboard/index.html", "text/html; charset=utf-8"},
                "/uplot.js", new String[]{UPLOT + "uPlot.iife.min.js", "text/javascript; charset=utf-8"},
                "/uplot.css", new String[]{UPLOT + "uPlot.min.css", "text/css; charset=utf-8"});
        private final transient DashboardHistory history;

        Dashboard(DashboardHistory history) {
            this.history = history;
        }

        @Override
        protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
            String path = req.getPathInfo() == null ? "/" : req.getPathInfo();
            resp.setHeader("Cache-Control", "no-store");
            if (path.equals("/data")) {
                resp.setContentType("application/json");
                resp.getWriter().write(history.json());
                return;
            }
            String[] file = FILES.get(path);
            if (file == null) {
                resp.sendError(404);
                return;
            }
            try (InputStream in = Dashboard.class.getClassLoader().getResourceAsStream(file[0])) {
                if (in == null) {
                    resp.sendError(500, "missing resource " + file[0]);
                    return;
                }
                resp.setContentType(file[1]);
                in.transferTo(resp.getOutputStream());
            }
        }
    }
}
