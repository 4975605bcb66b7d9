package io.quotagate.plans;

import java.util.Arrays;
import java.util.Objects;

/**
 * An IPv4 or IPv6 address or CIDR block ({@code 10.0.0.0/8}, {@code 127.0.0.1}, {@code fd00::/8}),
 * as listed in {@code tenants.trusted-proxies}.
 *
 * <p>Parsing never consults DNS: only numeric literals are accepted, so a hostile
 * {@code X-Forwarded-For} value can never cause a lookup.
 *
 * @param network the network address, 4 or 16 bytes, with the host bits cleared
 * @param prefix  the number of leading bits that must match (32 or 128 for a single address)
 */
public record AddressRange(byte[] network, int prefix) {
    public AddressRange {
        Objects.requireNonNull(network, "network");
        if (network.length != 4 && network.length != 16) throw new IllegalArgumentException("an address has 4 or 16 bytes");
        if (prefix < 0 || prefix > network.length * 8) throw new IllegalArgumentException("prefix out of range: " + prefix);
        network = mask(network.clone(), prefix);
    }

    /**
     * Parses {@code address} or {@code address/prefix}.
     *
     * @throws IllegalArgumentException with a reason, if the text is not a numeric address or block
     */
    public static AddressRange parse(String text) {
        Objects.requireNonNull(text, "text");
        int slash = text.indexOf('/');
        String addr = slash < 0 ? text : text.substring(0, slash);
        byte[] bytes = parseAddress(addr);
        if (bytes == null) throw new IllegalArgumentException("not an IPv4 or IPv6 address: '" + text + "'");
        int prefix = bytes.length * 8;
        if (slash >= 0) {
            String p = text.substring(slash + 1);
            if (p.isEmpty() || p.length() > 3 || !p.chars().allMatch(Character::isDigit)) {
                throw new IllegalArgumentException("not a prefix length: '" + text + "'");
            }
            prefix = Integer.parseInt(p);
            if (prefix > bytes.length * 8) {
                throw new IllegalArgumentException("prefix /" + prefix + " is longer than the address in '" + text + "'");
            }
        }
        return new AddressRange(bytes, prefix);
    }

    /** True if {@code address} (4 or 16 bytes) lies in this block. IPv4-mapped IPv6 matches IPv4 blocks. */
    public boolean contains(byte[] address) {
        if (address == null) return false;
        byte[] a = address;
        if (a.length == 16 && network.length == 4 && isV4Mapped(a)) a = Arrays.copyOfRange(a, 12, 16);
        if (a.length != network.length) return false;
        int full = prefix / 8;
        for (int i = 0; i < full; i++) if (a[i] != network[i]) return false;
        int rest = prefix % 8;
        if (rest == 0) return true;
        int m = (0xff << (8 - rest)) & 0xff;
        return (a[full] & m) == (network[full] & m);
    }

    /**
     * The bytes of a numeric IPv4 ({@code 1.2.3.4}) or IPv6 ({@code ::1}, {@code [::1]}) literal, or
     * null if {@code text} is neither. Never resolves names; ignores an IPv6 zone ({@code %eth0}).
     */
    public static byte[] parseAddress(String text) {
        if (text == null || text.isEmpty() || text.length() > 64) return null;
        String t = text;
        if (t.startsWith("[") && t.endsWith("]")) t = t.substring(1, t.length() - 1);
        int zone = t.indexOf('%');
        if (zone >= 0) t = t.substring(0, zone);
        if (t.indexOf(':') >= 0) return parseV6(t);
        return parseV4(t);
    }

    private static byte[] parseV4(String t) {
        byte[] out = new byte[4];
        int part = 0;
        int value = -1;
        int digits = 0;
        for (int i = 0; i <= t.length(); i++) {
            char c = i < t.length() ? t.charAt(i) : '.';
            if (c >= '0' && c <= '9') {
                if (++digits > 3) return null;
                value = (value < 0 ? 0 : value * 10) + (c - '0');
            } else if (c == '.') {
                if (value < 0 || value > 255 || part > 3) return null;
                out[part++] = (byte) value;
                value = -1;
                digits = 0;
            } else {
                return null;
            }
        }
        return part == 4 ? out : null;
    }

    private static byte[] parseV6(String t) {
        int dbl = t.indexOf("::");
        if (dbl >= 0 && t.indexOf("::", dbl + 1) >= 0) return null;
        String head = dbl >= 0 ? t.substring(0, dbl) : t;
        String tail = dbl >= 0 ? t.substring(dbl + 2) : "";
        int[] h = groups(head);
        int[] tl = groups(tail);
        if (h == null || tl == null) return null;
        int total = h.length + tl.length;
        if (dbl < 0 ? total != 8 : total > 7) return null;
        int[] all = new int[8];
        System.arraycopy(h, 0, all, 0, h.length);
        System.arraycopy(tl, 0, all, 8 - tl.length, tl.length);
        byte[] out = new byte[16];
        for (int i = 0; i < 8; i++) {
            out[2 * i] = (byte) (all[i] >>> 8);
            out[2 * i + 1] = (byte) all[i];
        }
        return out;
    }

    /** Hex groups separated by ':', the last of which may be a dotted IPv4 (two groups). */
    private static int[] groups(String s) {
        if (s.isEmpty()) return new int[0];
        String[] parts = s.split(":", -1);
        int[] out = new int[parts.length + 1];
        int n = 0;
        for (int i = 0; i < parts.length; i++) {
            String p = parts[i];
            if (i == parts.length - 1 && p.indexOf('.') >= 0) {
                byte[] v4 = parseV4(p);
                if (v4 == null) return null;
                out[n++] = ((v4[0] & 0xff) << 8) | (v4[1] & 0xff);
                out[n++] = ((v4[2] & 0xff) << 8) | (v4[3] & 0xff);
                continue;
            }
            if (p.isEmpty() || p.length() > 4) return null;
            int v = 0;
            for (int j = 0; j < p.length(); j++) {
                int d = Character.digit(p.charAt(j), 16);
                if (d < 0) return null;
                v = v * 16 + d;
            }
            out[n++] = v;
        }
        return Arrays.copyOf(out, n);
    }

    /**
     * True if the 16-byte IPv6 address {@code a} is IPv4-mapped ({@code ::ffff:a.b.c.d}); its IPv4
     * address is then bytes 12 to 15. The caller checks that {@code a} has 16 bytes.
     */
    public static boolean isV4Mapped(byte[] a) {
        for (int i = 0; i < 10; i++) if (a[i] != 0) return false;
        return a[10] == (byte) 0xff && a[11] == (byte) 0xff;
    }

    private static byte[] mask(byte[] bytes, int prefix) {
        for (int i = 0; i < bytes.length; i++) {
            int keep = Math.max(0, Math.min(8, prefix - i * 8));
            bytes[i] &= (byte) ((0xff << (8 - keep)) & 0xff);
        }
        return bytes;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof AddressRange r && r.prefix == prefix && Arrays.equals(r.network, network);
    }

    @Override
    public int hashCode() {
        return 31 * Arrays.hashCode(network) + prefix;
    }

    @Override
    public String toString() {
        StringBuilder b = new StringBuilder();
        if (network.length == 4) {
            for (int i = 0; i < 4; i++) b.append(i == 0 ? "" : ".").append(network[i] & 0xff);
        } else {
            for (int i = 0; i < 8; i++) {
                b.append(i == 0 ? "" : ":").append(Integer.toHexString(((network[2 * i] & 0xff) << 8) | (network[2 * i + 1] & 0xff)));
            }
        }
        return b.append('/').append(prefix).toString();
    }
}
