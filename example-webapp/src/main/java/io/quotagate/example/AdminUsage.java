package io.quotagate.example;

import io.quotagate.filter.QuotaControl;
import io.quotagate.filter.QuotaFilter;
import io.quotagate.filter.status.UsagePage;
import io.quotagate.filter.store.StoreUnavailableException;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Objects;

/**
 * The usage export on the management port, behind the admin bearer token ({@link AdminQuota}): every tenant's
 * use of its calendar quotas, the current period and the closed ones kept, read from the store (every instance
 * sharing it answers the same).
 * <ul>
 *   <li>{@code GET /admin/usage?size=500&cursor=...}: one page as JSON, {@code next} the cursor of the next
 *       (null on the last);</li>
 *   <li>{@code GET /admin/usage?format=csv}: the whole export as CSV (header line, then one line per tenant,
 *       quota and period), written a page at a time (with {@code cursor}: from there on, no header).</li>
 * </ul>
 * A bad cursor, size or format answers 400; a store that cannot be reached 503.
 */
final class AdminUsage extends HttpServlet {
    private static final long serialVersionUID = 1L;
    /** Default page size. */
    static final int DEFAULT_SIZE = 1_000;

    private final transient QuotaFilter filter;
    private final transient AdminQuota auth;

    AdminUsage(QuotaFilter filter, AdminQuota auth) {
        this.filter = Objects.requireNonNull(filter, "filter");
        this.auth = Objects.requireNonNull(auth, "auth");
    }

    @Override
    protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
        if (!auth.authorized(req, resp)) return;
        String format = req.getParameter("format") == null ? "json" : req.getParameter("format");
        if (!format.equals("json") && !format.equals("csv")) {
            AdminQuota.problem(resp, 400, "format must be json or csv.");
            return;
        }
        int size;
        try {
            size = req.getParameter("size") == null ? DEFAULT_SIZE : Integer.parseInt(req.getParameter("size"));
        } catch (NumberFormatException e) {
            AdminQuota.problem(resp, 400, "size must be a whole number from 1 to 10000.");
            return;
        }
        String cursor = req.getParameter("cursor");
        QuotaControl control = filter.control();
        UsagePage page;
        try {
            page = control.usage(cursor, size);
        } catch (IllegalArgumentException e) {
            AdminQuota.problem(resp, 400, e.getMessage().startsWith("not a cursor") ? "cursor: not one an export gave."
                    : "size must be a whole number from 1 to 10000.");
            return;
        } catch (StoreUnavailableException e) {
            resp.setHeader("Retry-After", Long.toString(e.retryAfterSeconds()));
            AdminQuota.problem(resp, 503, "The store cannot be read now; retry later.");
            return;
        }
        resp.setHeader("Cache-Control", "no-store");
        if (format.equals("json")) {
            byte[] body = page.json().getBytes(StandardCharsets.UTF_8);
            resp.setStatus(200);
            resp.setContentType("application/json");
            resp.setContentLength(body.length);
            resp.getOutputStream().write(body);
            return;
        }
        resp.setStatus(200);
        resp.setContentType("text/csv; charset=utf-8");
        resp.setHeader("Content-Disposition", "attachment; filename=\"quotagate-usage.csv\"");
        OutputStream out = resp.getOutputStream();
        out.write(page.csv(cursor == null).getBytes(StandardCharsets.UTF_8));
        // a page at a time: the export is never held whole; a store failing midway cuts the download short
        while (page.next() != null) {
            page = control.usage(page.next(), size);
            out.write(page.csv(false).getBytes(StandardCharsets.UTF_8));
        }
    }
}
