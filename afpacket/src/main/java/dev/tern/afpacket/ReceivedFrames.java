package dev.tern.afpacket;

import dev.tern.afpacket.libc.LinuxAbi;
import dev.tern.core.memory.BigEndian;
import dev.tern.ethernet.link.Offloads;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/** What both receive rings ({@link RxRing}, {@link FrameRxRing}) do to a frame the kernel handed over. Stateless. */
final class ReceivedFrames {
    static final int VLAN_TAG_LENGTH = 4;
    static final int TPID_8021Q = 0x8100;

    private ReceivedFrames() {
    }

    /**
     * The kernel's verdict on the L4 checksum, as {@link Offloads} receive flags. {@code TP_STATUS_CSUMNOTREADY}
     * ({@code CHECKSUM_PARTIAL}: the field holds only the pseudo-header sum, the sender was local, e.g. a veth peer)
     * and {@code TP_STATUS_CSUM_VALID} come in every mode; the vnet header before the frame says the same in virtio
     * terms.
     */
    static int checksumFlags(MemorySegment ring, int status, long frame, boolean vnetHeader) {
        int flags = 0;
        if ((status & LinuxAbi.TP_STATUS_CSUMNOTREADY) != 0) {
            flags |= Offloads.RX_CHECKSUM_PARTIAL;
        } else if ((status & LinuxAbi.TP_STATUS_CSUM_VALID) != 0) {
            flags |= Offloads.RX_CHECKSUM_OK;
        }
        if (vnetHeader) {
            final int vnetFlags = ring.get(ValueLayout.JAVA_BYTE,
                frame - LinuxAbi.VIRTIO_NET_HDR_SIZE + LinuxAbi.VIRTIO_NET_HDR_FLAGS_OFFSET);
            if ((vnetFlags & LinuxAbi.VIRTIO_NET_HDR_F_NEEDS_CSUM) != 0) {
                flags = Offloads.RX_CHECKSUM_PARTIAL;
            } else if ((vnetFlags & LinuxAbi.VIRTIO_NET_HDR_F_DATA_VALID) != 0) {
                flags = Offloads.RX_CHECKSUM_OK;
            }
        }
        return flags;
    }

    /**
     * Puts back an 802.1Q tag the kernel stripped: the destination and source MACs move 4 bytes down into the gap
     * before the frame and the tag goes after them. Returns the new start of the frame.
     */
    static long reinsertVlanTag(MemorySegment ring, long frame, int tci, int tpid) {
        final long tagged = frame - VLAN_TAG_LENGTH;
        MemorySegment.copy(ring, frame, ring, tagged, 12);
        BigEndian.u16(ring, tagged + 12, tpid);
        BigEndian.u16(ring, tagged + 14, tci);
        return tagged;
    }
}
