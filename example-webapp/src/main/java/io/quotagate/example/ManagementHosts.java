package io.quotagate.example;

import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import java.io.IOException;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.net.UnknownHostException;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * The management port answers only requests addressed to it by one of its own names, whatever the
 * port in {@code Host}: a DNS-rebinding page (its name re-pointed at 127.0.0.1 while an operator's
 * browser has it open) reaches the port, but its requests still carry its own name, so it cannot read
 * {@code /dashboard/data} or {@code /metrics}. Allowed: the bind address as given and the addresses it
 * resolves to; for a loopback bind (the default) {@code localhost}, {@code 127.0.0.1} and {@code [::1]};
 * for a wildcard bind ({@code 0.0.0.0}, {@code ::}) those and every address of this machine's
 * interfaces at start; and the names given with {@code --management-allowed-hosts}. Anything else:
 * 421 Misdirected Request with a problem body. A request without a Host (HTTP/1.0) is judged by the
 * address it reached, as the container reports it.
 */
final class ManagementHosts implements Filter {
    private static final Pattern NAME = Pattern.compile("[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*");
    private static final Pattern IPV4 = Pattern.compile("(\\d{1,3})\\.(\\d{1,3})\\.(\\d{1,3})\\.(\\d{1,3})");
    private static final Pattern IPV6 = Pattern.compile("[0-9a-f:.]+");
    private static final List<String> LOOPBACK = List.of("localhost", "127.0.0.1", "::1");

    private final Set<String> allowed;

    private ManagementHosts(Set<String> allowed) {
        this.allowed = allowed;
    }

    /**
     * The hosts a management port bound to {@code bindHost} answers to, plus {@code extra}.
     *
     * @throws IllegalArgumentException naming an entry of {@code extra} that is not a host name or address
     * @throws UnknownHostException     if {@code bindHost} does not resolve (the port could not bind it either)
     */
    static ManagementHosts of(String bindHost, List<String> extra) throws UnknownHostException {
        Set<String> allowed = new TreeSet<>();
        for (String e : extra) {
            String c = canonical(e);
            if (c == null) {
                throw new IllegalArgumentException("'" + e + "' is not a host name or IP address (no scheme, port or path)");
            }
            allowed.add(c);
        }
        String given = canonical(bindHost);
        if (given != null) allowed.add(given);
        for (InetAddress a : InetAddress.getAllByName(bindHost)) {
            allowed.add(canonical(a));
            if (a.isLoopbackAddress() || a.isAnyLocalAddress()) {
                for (String name : LOOPBACK) allowed.add(canonical(name));
            }
            if (a.isAnyLocalAddress()) allowed.addAll(interfaceAddresses());
        }
        return new ManagementHosts(Collections.unmodifiableSet(allowed));
    }

    private static Set<String> interfaceAddresses() {
        Set<String> out = new TreeSet<>();
        try {
            for (NetworkInterface n : Collections.list(NetworkInterface.getNetworkInterfaces())) {
                for (InetAddress a : Collections.list(n.getInetAddresses())) out.add(canonical(a));
            }
        } catch (SocketException e) {
            // none listed: the loopback names and --management-allowed-hosts still work
        }
        return out;
    }

    /** Whether a request naming {@code host} (a Host header's host part, IPv6 in brackets or not) is answered. */
    boolean allows(String host) {
        String c = canonical(host);
        return c != null && allowed.contains(c);
    }

    /**
     * A host as compared: a name in lower case without a final dot, an IPv4 address in dotted decimal,
     * an IPv6 address in Java's full form; null if it is neither. Never a DNS lookup.
     */
    static String canonical(String host) {
        if (host == null) return null;
        String h = host.trim().toLowerCase(Locale.ROOT);
        boolean bracketed = h.startsWith("[") && h.endsWith("]");
        if (bracketed) {
            h = h.substring(1, h.length() - 1);
            if (h.indexOf(':') < 0) return null; // brackets hold an IPv6 address only
        }
        if (h.endsWith(".")) h = h.substring(0, h.length() - 1); // an absolute name: the same host
        if (h.isEmpty()) return null;
        var v4 = IPV4.matcher(h);
        if (v4.matches()) {
            StringBuilder b = new StringBuilder();
            for (int i = 1; i <= 4; i++) {
                int octet = Integer.parseInt(v4.group(i));
                if (octet > 255) return null;
                b.append(i > 1 ? "." : "").append(octet);
            }
            return b.toString();
        }
        if (h.indexOf(':') >= 0) {
            if (!IPV6.matcher(h).matches()) return null;
            try {
                // in brackets, the JDK parses a literal or refuses it: it never looks the text up
                return canonical(InetAddress.getByName("[" + h + "]"));
            } catch (UnknownHostException e) {
                return null;
            }
        }
        return NAME.matcher(h).matches() ? h : null;
    }

    private static String canonical(InetAddress a) {
        String s = a.getHostAddress();
        int zone = s.indexOf('%'); // fe80::1%eth0: a Host header cannot carry the zone
        return zone < 0 ? s : s.substring(0, zone);
    }

    /** The hosts answered, in canonical form (tests, the start-up line). */
    Set<String> allowed() {
        return allowed;
    }

    @Override
    public void doFilter(ServletRequest request, ServletResponse response, FilterChain chain)
            throws IOException, ServletException {
        HttpServletRequest req = (HttpServletRequest) request;
        // getServerName: the authority the container took (absolute URI or Host), else the address reached
        String host = req.getServerName();
        if (allows(host)) {
            chain.doFilter(request, response);
            return;
        }
        var o = JsonBody.JSON.createObjectNode();
        o.put("type", "about:blank");
        o.put("title", "Misdirected Request");
        o.put("status", 421);
        o.put("detail", "The management port does not answer to host " + JsonBody.JSON.getNodeFactory().textNode(host)
                + " (a guard against DNS rebinding); name it in --management-allowed-hosts to allow it.");
        ExampleServlets.json((HttpServletResponse) response, 421, JsonBody.JSON.writeValueAsString(o), "application/problem+json");
    }
}
