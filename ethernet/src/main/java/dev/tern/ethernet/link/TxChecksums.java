package dev.tern.ethernet.link;

import dev.tern.core.checksum.InternetChecksum;
import dev.tern.core.memory.BigEndian;

import java.lang.foreign.MemorySegment;

/**
 * The checksums a {@link TxFrame} asks its link to fill in, done in software: by a link whose device does not offload
 * them (a packet socket without the vnet header), and by a capture that records frames as they leave the wire
 * rather than as the stack handed them over. Frames are Ethernet, with at most one 802.1Q tag.
 *
 * <p>Stateless; any thread.
 */
public final class TxChecksums {
    private static final int ETH_HLEN = 14;
    private static final int ETHERTYPE_IPV4 = 0x0800;
    private static final int ETHERTYPE_VLAN = 0x8100;

    private TxChecksums() {
    }

    /** The EtherType after at most one 802.1Q tag, or -1 when the frame is too short to say. */
    public static int etherType(MemorySegment segment, long frame, int length) {
        final int outer = BigEndian.u16(segment, frame + 12);
        if (outer != ETHERTYPE_VLAN) {
            return outer;
        }
        return length >= 18 ? BigEndian.u16(segment, frame + 16) : -1;
    }

    /** Computes an IPv4 frame's header checksum in place; false when the frame is not IPv4 or its header is cut. */
    public static boolean fillIpv4HeaderChecksum(MemorySegment segment, long frame, int length) {
        if (length < ETH_HLEN || etherType(segment, frame, length) != ETHERTYPE_IPV4) {
            return false;
        }
        final long ip = frame + (BigEndian.u16(segment, frame + 12) == ETHERTYPE_VLAN ? 18 : ETH_HLEN);
        if (ip + 20 > frame + length) {
            return false;
        }
        final int headerLength = (BigEndian.u8(segment, ip) & 0xF) * 4;
        if (headerLength < 20 || ip + headerLength > frame + length) {
            return false;
        }
        BigEndian.u16(segment, ip + 10, 0);
        BigEndian.u16(segment, ip + 10, InternetChecksum.compute(segment, ip, headerLength));
        return true;
    }

    /**
     * Completes a CHECKSUM_PARTIAL request in place: the field at {@code start + field} holds the pseudo-header sum, so
     * summing from {@code start} (the L4 header's frame offset) to the end and complementing gives the checksum. A
     * zero result is written as 0xFFFF (RFC 768; Linux does the same for every protocol in skb_checksum_help).
     */
    public static void completeL4Checksum(MemorySegment segment, long frame, int start, int field, int length) {
        final int checksum = InternetChecksum.finish(InternetChecksum.add(0, segment, frame + start, length - start));
        BigEndian.u16(segment, frame + start + field, checksum == 0 ? 0xFFFF : checksum);
    }
}
