package io.quotagate.example;

import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.servlet.http.HttpServletResponseWrapper;

import java.io.IOException;
import java.util.Arrays;
import java.util.stream.Collectors;

/**
 * A servlet of the example app: never answers TRACE. {@link HttpServlet#doTrace} echoes the request
 * head, {@code Authorization}, cookies and {@code X-Tenant-Id} included, to whoever can make a
 * client send it (cross-site tracing); so TRACE gets 405 with a problem body, and OPTIONS no longer
 * offers it. The other methods are as {@link HttpServlet} makes them from the {@code doX} methods a
 * subclass overrides.
 */
abstract class ApiServlet extends HttpServlet {
    private static final long serialVersionUID = 1L;

    /** The {@code Allow} value, computed on first use (fixed by the class's {@code doX} methods). */
    private transient volatile String allowed;

    @Override
    protected void doTrace(HttpServletRequest req, HttpServletResponse resp) throws ServletException, IOException {
        resp.setHeader("Allow", allowed(req, resp)); // RFC 9110 section 15.5.6: a 405 says what is allowed
        ExampleServlets.json(resp, 405, "{\"type\":\"about:blank\",\"title\":\"Method Not Allowed\",\"status\":405,"
                + "\"detail\":\"TRACE is not served: it would echo the request's credentials.\","
                + "\"reason\":\"method_not_allowed\"}", "application/problem+json");
    }

    @Override
    protected void doOptions(HttpServletRequest req, HttpServletResponse resp) throws ServletException, IOException {
        resp.setHeader("Allow", allowed(req, resp));
    }

    /** What {@link HttpServlet#doOptions} would offer for this class, without TRACE. */
    private String allowed(HttpServletRequest req, HttpServletResponse resp) throws ServletException, IOException {
        String a = allowed;
        if (a != null) return a;
        String[] offered = {""};
        super.doOptions(req, new HttpServletResponseWrapper(resp) { // only to read the value: nothing reaches resp
            @Override
            public void setHeader(String name, String value) {
                if ("Allow".equalsIgnoreCase(name)) offered[0] = value;
            }

            @Override
            public void addHeader(String name, String value) {
                setHeader(name, value);
            }
        });
        a = Arrays.stream(offered[0].split(",")).map(String::strip)
                .filter(m -> !m.isEmpty() && !m.equalsIgnoreCase("TRACE")).collect(Collectors.joining(", "));
        allowed = a;
        return a;
    }
}
