package io.quotagate.example;

import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import java.io.IOException;
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
    static final class Items extends HttpServlet {
        private static final long serialVersionUID = 1L;

        @Override
        protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
            String id = id(req, resp);
            if (id != null) json(resp, 200, "{\"id\":\"" + id + "\",\"name\":\"item " + id + "\"}", "application/json");
        }
    }

    /** {@code GET /reports/{id}}: a heavy report (cost 5 in the default plans). */
    static final class Reports extends HttpServlet {
        private static final long serialVersionUID = 1L;

        @Override
        protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
            String id = id(req, resp);
            if (id != null) json(resp, 200, "{\"id\":\"" + id + "\",\"rows\":42}", "application/json");
        }
    }

    /** {@code GET /health}: never limited. */
    static final class Health extends HttpServlet {
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
