package io.quotagate.tenant;

import io.quotagate.plans.AddressRange;
import jakarta.servlet.http.HttpServletRequest;

import java.util.ArrayList;
import java.util.Enumeration;
import java.util.List;

/**
 * Finds the address an anonymous client is keyed by.
 *
 * <p>The connection's peer address ({@link HttpServletRequest#getRemoteAddr()}) is used, unless the
 * peer is a trusted proxy ({@code tenants.trusted-proxies}): then {@code X-Forwarded-For} is read from
 * right to left, skipping trusted hops, and the first untrusted address is the client, however many
 * entries the header holds. Several header lines are one list, in the order they came (RFC 9110
 * section 5.3). Entries a client could have forged (left of the first untrusted hop) are never
 * believed, nor even read: the walk stops there, so a client that pads the header with a thousand
 * entries costs no more than one that sends one. An entry that is not a numeric address stops the
 * walk at the last hop that can be trusted to have reported it; empty entries ({@code a,,b}) are
 * skipped, as RFC 9110 section 5.6.1 asks of list recipients. No name is ever resolved through DNS.
 *
 * <p>An IPv6 client is keyed by its {@code /64} network: one host usually owns a whole /64 and could
 * otherwise take a fresh bucket with every address in it.
 */
public final class ClientAddress {
    private static final String FORWARDED_FOR = "X-Forwarded-For";

    private final List<AddressRange> trusted;

    private ClientAddress(List<AddressRange> trusted) {
        this.trusted = List.copyOf(trusted);
    }

    /** Believes {@code X-Forwarded-For} only from these proxies (none: the peer address is always used). */
    public static ClientAddress behind(List<AddressRange> trustedProxies) {
        return new ClientAddress(trustedProxies);
    }

    /** The client's key: a canonical IPv4 address, or an IPv6 /64 network ({@code 2001:db8:0:1::/64}). */
    public String of(HttpServletRequest request) {
        String remote = request.getRemoteAddr();
        byte[] peer = AddressRange.parseAddress(remote);
        if (peer == null) return remote == null ? "unknown" : remote; // the container always gives a literal
        if (trusted.isEmpty() || !isTrusted(peer)) return key(peer);
        return key(client(forwardedLines(request), peer));
    }

    /** The header's lines, first to last (usually one, so no list is made for it). */
    private static String[] forwardedLines(HttpServletRequest request) {
        Enumeration<String> values = request.getHeaders(FORWARDED_FOR);
        if (values == null) { // a container may deny access to the header list: then only the first is known
            String one = request.getHeader(FORWARDED_FOR);
            return one == null ? new String[0] : new String[]{one};
        }
        if (!values.hasMoreElements()) return new String[0];
        String first = values.nextElement();
        if (!values.hasMoreElements()) return new String[]{first};
        List<String> lines = new ArrayList<>();
        lines.add(first);
        while (values.hasMoreElements()) lines.add(values.nextElement());
        return lines.toArray(new String[0]);
    }

    /**
     * Walks the entries from the rightmost (the hop next to the trusted peer) to the left: each trusted
     * hop reported the one to its left, so the first untrusted entry is the client. Only the entries
     * up to it are cut out and parsed.
     */
    private byte[] client(String[] lines, byte[] peer) {
        byte[] client = peer;
        for (int line = lines.length - 1; line >= 0; line--) {
            String value = lines[line];
            int end = value.length();
            while (end >= 0) {
                int comma = value.lastIndexOf(',', end - 1);
                String entry = value.substring(comma + 1, end).strip();
                end = comma; // -1 after the line's first entry
                if (entry.isEmpty()) continue;
                byte[] hop = AddressRange.parseAddress(entry);
                if (hop == null) return client; // garbage: the last trusted hop is as far as we can see
                client = hop;
                if (!isTrusted(hop)) return client;
            }
        }
        return client;
    }

    private boolean isTrusted(byte[] address) {
        for (AddressRange r : trusted) if (r.contains(address)) return true;
        return false;
    }

    private static String key(byte[] a) {
        if (a.length == 16 && AddressRange.isV4Mapped(a)) a = java.util.Arrays.copyOfRange(a, 12, 16);
        if (a.length == 4) return (a[0] & 0xff) + "." + (a[1] & 0xff) + "." + (a[2] & 0xff) + "." + (a[3] & 0xff);
        byte[] net = java.util.Arrays.copyOf(a, 16);
        java.util.Arrays.fill(net, 8, 16, (byte) 0);
        return new AddressRange(net, 64).toString().replace(":0:0:0:0/64", "::/64");
    }
}
