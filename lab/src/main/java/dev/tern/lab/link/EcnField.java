package dev.tern.lab.link;

import dev.tern.core.memory.BigEndian;

import java.lang.foreign.MemorySegment;

/** The ECN field of an IPv4 packet in an Ethernet frame (RFC 3168 §5), read and marked in place. */
public final class EcnField {
    public static final int NOT_ECT = 0;
    public static final int ECT1 = 1;
    public static final int ECT0 = 2;
    public static final int CE = 3;
    /** An untagged Ethernet header, then IPv4's first 16-bit word holds the ECN bits. */
    private static final int ETHERNET_HEADER = 14;
    private static final int ETHERTYPE_IPV4 = 0x0800;
    private static final int IPV4_CHECKSUM_OFFSET = 10;

    private EcnField() {
    }

    /** The codepoint, or {@link #NOT_ECT} for a frame that is not IPv4. */
    public static int codepoint(MemorySegment slab, long frame, int length) {
        if (length < ETHERNET_HEADER + 20 || BigEndian.u16(slab, frame + 12) != ETHERTYPE_IPV4) {
            return NOT_ECT;
        }
        return BigEndian.u16(slab, frame + ETHERNET_HEADER) & 0b11;
    }

    /**
     * Sets CE on an ECT(0) or ECT(1) packet and mends the header checksum incrementally (RFC 1624). A router never
     * marks Not-ECT; CE stays CE and counts as marked. Returns whether the packet now carries CE.
     */
    public static boolean markCe(MemorySegment slab, long frame, int length) {
        final int ecn = codepoint(slab, frame, length);
        if (ecn == NOT_ECT) {
            return false;
        }
        if (ecn == CE) {
            return true;
        }
        final long ip = frame + ETHERNET_HEADER;
        final int word = BigEndian.u16(slab, ip);
        final int marked = word | CE;
        BigEndian.u16(slab, ip, marked);
        final int checksum = BigEndian.u16(slab, ip + IPV4_CHECKSUM_OFFSET);
        int sum = (~checksum & 0xFFFF) + (~word & 0xFFFF) + marked;
        sum = (sum & 0xFFFF) + (sum >>> 16);
        sum = (sum & 0xFFFF) + (sum >>> 16);
        BigEndian.u16(slab, ip + IPV4_CHECKSUM_OFFSET, ~sum & 0xFFFF);
        return true;
    }
}
