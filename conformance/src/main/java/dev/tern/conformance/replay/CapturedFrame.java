package dev.tern.conformance.replay;

import java.util.HexFormat;

/**
 * One frame of a capture: when it was seen (nanoseconds since the Unix epoch, as pcap timestamps are) and its bytes,
 * Ethernet header first, without FCS. A value for tests and tools; never built per packet on a data path.
 */
public record CapturedFrame(long timestampNs, byte[] bytes) {
    public static final int ETHERTYPE_IPV4 = 0x0800;
    public static final int ETHERTYPE_ARP = 0x0806;
    private static final int ETHERNET_HEADER = 14;

    public int length() {
        return bytes.length;
    }

    public long destination() {
        return u48(0);
    }

    public long source() {
        return u48(6);
    }

    /** The EtherType at offset 12 (an 802.1Q tag shows as 0x8100). */
    public int etherType() {
        return u16(12);
    }

    public boolean isArp() {
        return bytes.length >= ETHERNET_HEADER + 28 && etherType() == ETHERTYPE_ARP;
    }

    public boolean isIpv4() {
        return bytes.length >= ETHERNET_HEADER + 20 && etherType() == ETHERTYPE_IPV4 && (bytes[ETHERNET_HEADER] & 0xF0) == 0x40;
    }

    /** The IPv4 protocol number, or -1 for other frames. */
    public int ipProtocol() {
        return isIpv4() ? u8(ETHERNET_HEADER + 9) : -1;
    }

    /** True for an IPv4 fragment other than the first (its transport header is elsewhere). */
    public boolean isLaterFragment() {
        return isIpv4() && (u16(ETHERNET_HEADER + 6) & 0x1FFF) != 0;
    }

    /** The ICMP type of an IPv4/ICMP frame that starts a datagram, or -1. */
    public int icmpType() {
        if (ipProtocol() != 1 || isLaterFragment()) {
            return -1;
        }
        final int at = ETHERNET_HEADER + (u8(ETHERNET_HEADER) & 0x0F) * 4;
        return at < bytes.length ? u8(at) : -1;
    }

    /** ARP operation (1 request, 2 reply), or -1 for other frames. */
    public int arpOperation() {
        return isArp() ? u16(ETHERNET_HEADER + 6) : -1;
    }

    /** ARP sender protocol address, or 0 for other frames. */
    public int arpSenderIp() {
        return isArp() ? i32(ETHERNET_HEADER + 14) : 0;
    }

    /** ARP target protocol address, or 0 for other frames. */
    public int arpTargetIp() {
        return isArp() ? i32(ETHERNET_HEADER + 24) : 0;
    }

    public int u8(int offset) {
        return bytes[offset] & 0xFF;
    }

    public int u16(int offset) {
        return (u8(offset) << 8) | u8(offset + 1);
    }

    public int i32(int offset) {
        return (u16(offset) << 16) | u16(offset + 2);
    }

    public long u48(int offset) {
        return ((long) u16(offset) << 32) | (i32(offset + 2) & 0xFFFF_FFFFL);
    }

    @Override
    public String toString() {
        return "frame@" + timestampNs + " " + bytes.length + " bytes " + HexFormat.of().formatHex(bytes, 0, Math.min(bytes.length, 64))
            + (bytes.length > 64 ? "..." : "");
    }
}
