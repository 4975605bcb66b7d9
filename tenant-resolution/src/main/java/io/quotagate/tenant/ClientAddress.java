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
 * right to left, skipping trusted hops, and the first untrusted address is the client. Entries a
 * client could have forged (left of the first untrusted hop) are never believed, and an entry that is
 * not a numeric address stops the walk at the last hop that can be trusted to have reported it. No
 * name is ever resolved through DNS.
 *
 * <p>An IPv6 client is keyed by its {@code /64} network: one host usually owns a whole /64 and could
 * otherwise take a fresh bucket with every address in it.
 */
public final class ClientAddress {
    /** At most this many {@code X-Forwarded-For} hops are examined. */
    static final int MAX_HOPS = 32;
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

        List<String> hops = new ArrayList<>();
        Enumeration<String> values = request.getHeaders(FORWARDED_FOR);
        while (values != null && values.hasMoreElements()) {
            for (String hop : values.nextElement().split(",", MAX_HOPS + 1)) hops.add(hop.strip());
        }
        byte[] client = peer;
        for (int i = hops.size() - 1, seen = 0; i >= 0 && seen < MAX_HOPS; i--, seen++) {
            byte[] hop = AddressRange.parseAddress(hops.get(i));
            if (hop == null) break; // garbage: the last trusted hop is as far as we can see
            client = hop;
            if (!isTrusted(hop)) break;
        }
        return key(client);
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
