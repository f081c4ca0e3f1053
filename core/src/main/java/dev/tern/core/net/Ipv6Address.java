package dev.tern.core.net;

import dev.tern.core.memory.BigEndian;

import java.lang.foreign.MemorySegment;
import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;

/**
 * An IPv6 address (RFC 4291) as two {@code long}s in network order: {@code high} holds bytes 0-7, {@code low} bytes
 * 8-15. The data path reads and compares addresses as these two words, with the static helpers below, and never
 * makes an object; the record itself is for configuration and for text.
 *
 * <p>Text is read as RFC 4291 §2.2 allows (with the JDK's literal parser, which never looks a name up) and written
 * as RFC 5952 §4 recommends: lower case, no leading zeros, the longest run of two or more zero groups as {@code ::}
 * (the first of equal runs).
 *
 * @param high the first 64 bits (the routing prefix and subnet ID of a unicast address)
 * @param low  the last 64 bits (the interface identifier)
 */
public record Ipv6Address(long high, long low) {
    public static final Ipv6Address UNSPECIFIED = new Ipv6Address(0, 0);
    /** ff02::1, all nodes on the link (RFC 4291 §2.7.1). */
    public static final Ipv6Address ALL_NODES = new Ipv6Address(0xff02_0000_0000_0000L, 1);
    /** ff02::2, all routers on the link. */
    public static final Ipv6Address ALL_ROUTERS = new Ipv6Address(0xff02_0000_0000_0000L, 2);
    /** ff02::16, MLDv2-capable routers (RFC 3810 §5.2.14). */
    public static final Ipv6Address ALL_MLDV2_ROUTERS = new Ipv6Address(0xff02_0000_0000_0000L, 0x16);
    /** The high word of every link-scope multicast address in ff02::/16 used here. */
    public static final long LINK_SCOPE_MULTICAST_HIGH = 0xff02_0000_0000_0000L;
    /** fe80::/64: the high word of a link-local address. */
    public static final long LINK_LOCAL_HIGH = 0xfe80_0000_0000_0000L;
    /** ff02::1:ff00:0/104, the solicited-node prefix (RFC 4291 §2.7.1); the low 24 bits come from the address. */
    private static final long SOLICITED_NODE_LOW = 0x0000_0001_ff00_0000L;

    /** Reads {@code text}; throws {@link IllegalArgumentException} quoting it when it is not an IPv6 address. */
    public static Ipv6Address parse(String text) {
        if (text == null || text.isBlank()) {
            throw new IllegalArgumentException("IPv6 address missing");
        }
        final String literal = text.strip();
        if (literal.indexOf(':') < 0 || literal.indexOf('%') >= 0) {
            throw new IllegalArgumentException("bad IPv6 address '" + text + "': expected hex groups like 2001:db8::2"
                + (literal.indexOf('%') >= 0 ? " (no zone index)" : ""));
        }
        final InetAddress address;
        try {
            address = Inet6Address.ofLiteral(literal);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("bad IPv6 address '" + text + "': expected hex groups like 2001:db8::2");
        }
        final byte[] bytes = address.getAddress();
        if (address instanceof Inet4Address) { // the JDK hands an IPv4-mapped literal back as IPv4
            return new Ipv6Address(0, 0xffff_0000_0000L | (Ipv4Address.parse(address.getHostAddress()) & 0xffff_ffffL));
        }
        return new Ipv6Address(word(bytes, 0), word(bytes, 8));
    }

    private static long word(byte[] bytes, int from) {
        long value = 0;
        for (int i = from; i < from + 8; i++) {
            value = (value << 8) | (bytes[i] & 0xff);
        }
        return value;
    }

    /** RFC 5952 §4 text. */
    @Override
    public String toString() {
        return format(high, low);
    }

    /** RFC 5952 §4 text for the address {@code high}, {@code low}. */
    public static String format(long high, long low) {
        final int[] groups = new int[8];
        for (int i = 0; i < 4; i++) {
            groups[i] = (int) (high >>> (48 - 16 * i)) & 0xffff;
            groups[4 + i] = (int) (low >>> (48 - 16 * i)) & 0xffff;
        }
        int bestStart = -1;
        int bestLength = 1; // §4.2.2: a single zero group is not shortened
        for (int i = 0; i < 8; ) {
            if (groups[i] != 0) {
                i++;
                continue;
            }
            int j = i;
            while (j < 8 && groups[j] == 0) {
                j++;
            }
            if (j - i > bestLength) { // §4.2.3: the first of equally long runs
                bestStart = i;
                bestLength = j - i;
            }
            i = j;
        }
        final StringBuilder text = new StringBuilder(39);
        for (int i = 0; i < 8; i++) {
            if (i == bestStart) {
                text.append("::");
                i += bestLength - 1;
                continue;
            }
            if (i > 0 && i != bestStart + bestLength) {
                text.append(':');
            }
            text.append(Integer.toHexString(groups[i]));
        }
        return text.toString();
    }

    /** Reads an address from 16 bytes at {@code offset}. */
    public static Ipv6Address read(MemorySegment segment, long offset) {
        return new Ipv6Address(BigEndian.i64(segment, offset), BigEndian.i64(segment, offset + 8));
    }

    /** The address in 16 network-order bytes ({@code java.net.Inet6Address.getAddress()}'s form). */
    public static Ipv6Address of(byte[] bytes) {
        if (bytes.length != 16) {
            throw new IllegalArgumentException("an IPv6 address is 16 bytes, got " + bytes.length);
        }
        return read(MemorySegment.ofArray(bytes), 0);
    }

    /** This address as 16 network-order bytes. */
    public byte[] toBytes() {
        final byte[] bytes = new byte[16];
        write(MemorySegment.ofArray(bytes), 0);
        return bytes;
    }

    /** Writes this address to 16 bytes at {@code offset}. */
    public void write(MemorySegment segment, long offset) {
        BigEndian.i64(segment, offset, high);
        BigEndian.i64(segment, offset + 8, low);
    }

    public boolean isUnspecified() {
        return high == 0 && low == 0;
    }

    public boolean isMulticast() {
        return isMulticast(high);
    }

    public boolean isLinkLocal() {
        return isLinkLocal(high);
    }

    /** ff00::/8 (RFC 4291 §2.7). */
    public static boolean isMulticast(long high) {
        return (high >>> 56) == 0xff;
    }

    /** fe80::/10 (RFC 4291 §2.5.6). */
    public static boolean isLinkLocal(long high) {
        return (high & 0xffc0_0000_0000_0000L) == LINK_LOCAL_HIGH;
    }

    /** ::1. */
    public static boolean isLoopback(long high, long low) {
        return high == 0 && low == 1;
    }

    /** ::ffff:0:0/96, an IPv4 address written as IPv6 (RFC 4291 §2.5.5.2). */
    public static boolean isIpv4Mapped(long high, long low) {
        return high == 0 && (low >>> 32) == 0xffff;
    }

    /** The low word of the solicited-node group of an address whose low word is {@code low} (its high word is ff02::). */
    public static long solicitedNodeLow(long low) {
        return SOLICITED_NODE_LOW | (low & 0xff_ffffL);
    }

    /** The solicited-node multicast group of this address. */
    public Ipv6Address solicitedNode() {
        return new Ipv6Address(LINK_SCOPE_MULTICAST_HIGH, solicitedNodeLow(low));
    }

    /** The Ethernet MAC of the multicast group whose low word is {@code low}: 33:33 and its last 32 bits (RFC 2464 §7). */
    public static long multicastMac(long low) {
        return 0x3333_0000_0000L | (low & 0xffff_ffffL);
    }

    /**
     * The link-local address formed from an Ethernet MAC by the modified EUI-64 interface identifier (RFC 4291
     * Appendix A, RFC 2464 §4): ff:fe in the middle, the universal/local bit inverted. Linux's default
     * ({@code addr_gen_mode} 0) forms the same address, so a peer's neighbour table reads alike for both.
     */
    public static Ipv6Address linkLocal(long mac) {
        return new Ipv6Address(LINK_LOCAL_HIGH, interfaceIdentifier(mac));
    }

    /**
     * A stable, opaque interface identifier (RFC 7217 §5): the first 64 bits of SHA-256 over the prefix's high word,
     * the interface (its MAC), the DAD counter and a secret key, so that it is stable for one host and interface and
     * says nothing of the MAC. One that RFC 5453 reserves (the subnet-router anycast identifier 0, the subnet
     * anycast range fdff:ffff:ffff:ff80 and above) is formed again with the next counter (§5). Cold path.
     */
    public static long opaqueInterfaceIdentifier(long prefixHigh, long mac, int dadCounter, byte[] secretKey) {
        final java.security.MessageDigest sha256;
        try {
            sha256 = java.security.MessageDigest.getInstance("SHA-256");
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
        for (int counter = dadCounter; ; counter++) {
            final java.nio.ByteBuffer input = java.nio.ByteBuffer.allocate(8 + 8 + 4);
            input.putLong(prefixHigh).putLong(mac).putInt(counter);
            sha256.update(input.array());
            final long identifier = java.nio.ByteBuffer.wrap(sha256.digest(secretKey)).getLong();
            if (identifier != 0 && Long.compareUnsigned(identifier, 0xfdff_ffff_ffff_ff80L) < 0) {
                return identifier;
            }
        }
    }

    /** The modified EUI-64 interface identifier of {@code mac}. */
    public static long interfaceIdentifier(long mac) {
        final long upper = (mac >>> 24) & 0xff_ffffL;
        final long lower = mac & 0xff_ffffL;
        return ((upper ^ 0x02_0000L) << 40) | 0xff_fe00_0000L | lower;
    }

    /** True when the first {@code prefixLength} bits of ({@code high}, {@code low}) equal this address's. */
    public boolean samePrefix(long otherHigh, long otherLow, int prefixLength) {
        return samePrefix(high, low, otherHigh, otherLow, prefixLength);
    }

    /** True when the first {@code prefixLength} bits of the two addresses are equal. */
    public static boolean samePrefix(long aHigh, long aLow, long bHigh, long bLow, int prefixLength) {
        if (prefixLength <= 0) {
            return true;
        }
        if (prefixLength <= 64) {
            final long mask = prefixLength == 64 ? -1L : ~(-1L >>> prefixLength);
            return ((aHigh ^ bHigh) & mask) == 0;
        }
        final long mask = prefixLength == 128 ? -1L : ~(-1L >>> (prefixLength - 64));
        return aHigh == bHigh && ((aLow ^ bLow) & mask) == 0;
    }

    /** True when this address is ({@code high}, {@code low}). */
    public boolean is(long otherHigh, long otherLow) {
        return high == otherHigh && low == otherLow;
    }
}
