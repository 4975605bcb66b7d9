package io.quotagate.tenant;

import jakarta.servlet.http.HttpServletRequest;

import java.util.Enumeration;

/**
 * Reads a header that must carry exactly one credential. A second value makes the request ambiguous:
 * a gateway that appends its own {@code X-Tenant-Id} instead of replacing the client's would
 * otherwise be bypassed whenever the container hands out the client's copy first. Such a request is
 * refused with 400 {@value #AMBIGUOUS}, never resolved by picking one of the values.
 */
final class SingleHeader {
    /** The reason of a request that names more than one credential in one header. */
    static final String AMBIGUOUS = "ambiguous_tenant";

    private SingleHeader() {
    }

    /**
     * The header's one value, or null if it is absent.
     *
     * @param commaSeparates whether a comma in the value separates values: true for headers whose value
     *                       can never hold one (a proxy folds repeated fields into one comma-separated
     *                       line, RFC 9110 section 5.3), false where a comma is part of the syntax
     * @throws TenantRejectedException 400 {@value #AMBIGUOUS} if the header is repeated or holds a list
     */
    static String value(HttpServletRequest request, String name, boolean commaSeparates) {
        Enumeration<String> values = request.getHeaders(name);
        String first;
        if (values == null) { // a container may deny access to the header list: then only the first is known
            first = request.getHeader(name);
        } else {
            if (!values.hasMoreElements()) return null;
            first = values.nextElement();
            if (values.hasMoreElements()) {
                throw new TenantRejectedException(400, AMBIGUOUS, "The " + name + " header must be sent once; it was repeated.");
            }
        }
        if (first != null && commaSeparates && first.indexOf(',') >= 0) {
            throw new TenantRejectedException(400, AMBIGUOUS, "The " + name + " header must hold one value, not a list.");
        }
        return first;
    }
}
