package dev.tern.afpacket;

import dev.tern.afpacket.libc.LinuxAbi;
import dev.tern.ethernet.link.FrameHandler;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * A receive ring shared with the kernel: {@link RxRing} (TPACKET_V3 blocks, for throughput) or
 * {@link FrameRxRing} (TPACKET_V2 frames, for latency). The two differ in how they find the next packet header
 * and give memory back to the kernel; what they do with one header is the same and lives here, parameterised by
 * where the header version keeps each field. Owned by the link's thread.
 */
abstract sealed class ReceiveRing permits RxRing, FrameRxRing {
    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT;
    private static final ValueLayout.OfShort SHORT = ValueLayout.JAVA_SHORT;

    /** Where one header version keeps the fields {@link #deliver} reads. */
    record HeaderLayout(int status, int length, int snapLength, int mac, int vlanTci, boolean vlanTciIsU32,
                        int vlanTpid, int headerLength) {
        static final HeaderLayout TPACKET_V2 = new HeaderLayout(LinuxAbi.TPACKET2_HDR_STATUS_OFFSET,
            LinuxAbi.TPACKET2_HDR_LEN_OFFSET, LinuxAbi.TPACKET2_HDR_SNAPLEN_OFFSET, LinuxAbi.TPACKET2_HDR_MAC_OFFSET,
            LinuxAbi.TPACKET2_HDR_VLAN_TCI_OFFSET, false, LinuxAbi.TPACKET2_HDR_VLAN_TPID_OFFSET,
            LinuxAbi.TPACKET2_HDRLEN);
        static final HeaderLayout TPACKET_V3 = new HeaderLayout(LinuxAbi.TPACKET3_HDR_STATUS_OFFSET,
            LinuxAbi.TPACKET3_HDR_LEN_OFFSET, LinuxAbi.TPACKET3_HDR_SNAPLEN_OFFSET, LinuxAbi.TPACKET3_HDR_MAC_OFFSET,
            LinuxAbi.TPACKET3_HDR_VLAN_TCI_OFFSET, true, LinuxAbi.TPACKET3_HDR_VLAN_TPID_OFFSET,
            LinuxAbi.TPACKET3_HDRLEN);
    }

    final MemorySegment ring;
    private final boolean vnetHeader;
    // The layout's offsets, copied into final fields so the per-frame path reads no record.
    private final int statusOffset;
    private final int lengthOffset;
    private final int snapLengthOffset;
    private final int macOffsetOffset;
    private final int vlanTciOffset;
    private final boolean vlanTciIsU32;
    private final int vlanTpidOffset;
    private final int headerLength;

    private long frames;
    private long bytes;
    private long truncated;
    private long vlanTagsRestored;

    ReceiveRing(MemorySegment ring, HeaderLayout layout, boolean vnetHeader) {
        this.ring = ring;
        this.vnetHeader = vnetHeader;
        this.statusOffset = layout.status();
        this.lengthOffset = layout.length();
        this.snapLengthOffset = layout.snapLength();
        this.macOffsetOffset = layout.mac();
        this.vlanTciOffset = layout.vlanTci();
        this.vlanTciIsU32 = layout.vlanTciIsU32();
        this.vlanTpidOffset = layout.vlanTpid();
        this.headerLength = layout.headerLength();
    }

    /** True when {@link #receive} would hand something up now. */
    abstract boolean ready();

    abstract int receive(FrameHandler handler, int maxFrames);

    /**
     * True when at least half the ring waits for us. The kernel fills slots (blocks) in ring order from where we
     * stand, so the slot (block) half a ring ahead of ours being ours means everything before it is too: one load.
     */
    abstract boolean backlogged();

    /**
     * Hands the packet whose header is at {@code header} to the handler; returns 1, or 0 when it was counted as
     * truncated and dropped. {@code room} is the most bytes from the header to the end of the frame that the slot
     * holds.
     */
    final int deliver(FrameHandler handler, long header, long room) {
        final int status = ring.get(INT, header + statusOffset);
        final int wireLength = ring.get(INT, header + lengthOffset);
        final int snapLength = ring.get(INT, header + snapLengthOffset);
        final int macOffset = Short.toUnsignedInt(ring.get(SHORT, header + macOffsetOffset));
        if (snapLength != wireLength || snapLength < LinuxAbi.ETH_HLEN || macOffset + (long) snapLength > room) {
            // A frame larger than the slot or block (or a runt) would reach the stack cut short: count it instead.
            truncated++;
            return 0;
        }
        long frame = header + macOffset;
        int length = snapLength;
        final int flags = ReceivedFrames.checksumFlags(ring, status, frame, vnetHeader);
        if ((status & LinuxAbi.TP_STATUS_VLAN_VALID) != 0) {
            // The kernel moved the 802.1Q tag out of band; the tag goes back in front of the payload so the stack
            // sees the frame as it was on the wire. That needs 4 bytes of gap in front of the frame.
            if (macOffset - ReceivedFrames.VLAN_TAG_LENGTH < headerLength) {
                truncated++;
                return 0;
            }
            final int tci = vlanTciIsU32 ? ring.get(INT, header + vlanTciOffset) & 0xFFFF
                : Short.toUnsignedInt(ring.get(SHORT, header + vlanTciOffset));
            final int tpid = (status & LinuxAbi.TP_STATUS_VLAN_TPID_VALID) != 0
                ? Short.toUnsignedInt(ring.get(SHORT, header + vlanTpidOffset))
                : ReceivedFrames.TPID_8021Q;
            frame = ReceivedFrames.reinsertVlanTag(ring, frame, tci, tpid);
            length += ReceivedFrames.VLAN_TAG_LENGTH;
            vlanTagsRestored++;
        }
        frames++;
        bytes += length;
        handler.onFrame(ring, frame, length, flags);
        return 1;
    }

    final long frames() {
        return frames;
    }

    final long bytes() {
        return bytes;
    }

    final long truncated() {
        return truncated;
    }

    /** Frames whose 802.1Q tag the kernel had stripped and this ring put back (for tests and curiosity). */
    final long vlanTagsRestored() {
        return vlanTagsRestored;
    }
}
