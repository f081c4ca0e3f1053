package dev.tern.afpacket;

import dev.tern.afpacket.libc.LinuxAbi;
import dev.tern.ethernet.link.FrameHandler;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;

/**
 * The TPACKET_V3 receive ring: a walk over kernel-filled blocks that hands each frame to a {@link FrameHandler} in
 * place and gives a block back to the kernel once every frame in it has been handled.
 *
 * <pre>
 * ring (mmap of block_size * block_nr bytes, shared with the kernel)
 * +-------------------+-------------------+-----+-------------------+
 * | block 0           | block 1           | ... | block n-1         |
 * +-------------------+-------------------+-----+-------------------+
 *
 * one block
 *  0       8              12        16                   20      24       48
 * +-------+--------------+---------+--------------------+-------+--------+----------------------------+
 * |version| block_status | num_pkts| offset_to_first_pkt|blk_len| seq/ts | packets ...                |
 * +-------+--------------+---------+--------------------+-------+--------+----------------------------+
 *          TP_STATUS_KERNEL (0): the kernel fills it; TP_STATUS_USER (bit 0): ours until we write 0 back
 *
 * one packet, at block + offset_to_first_pkt, then + tp_next_offset
 *  0            12         16      20         24      26      28..40      48             68      tp_mac
 * +------------+----------+-------+----------+-------+-------+-----------+--------------+-------+--------------+
 * |next_offset,| snaplen  | len   | tp_status| tp_mac| tp_net| hv1: hash,| sockaddr_ll  | (gap, | Ethernet     |
 * |sec, nsec   |          |       | CSUM bits|       |       | vlan tci, |              | vnet  | frame        |
 * |            |          |       |          |       |       | vlan tpid |              | hdr)  | (snaplen)    |
 * +------------+----------+-------+----------+-------+-------+-----------+--------------+-------+--------------+
 * </pre>
 * The frame starts at {@code tp_mac}, which is not a constant (82 here; 92 with the 10-byte {@code virtio_net_hdr},
 * which the kernel writes just before the frame). Block status is read with acquire and written with release
 * semantics, pairing with the kernel's barriers around {@code block_status}.
 *
 * <p>A VLAN tag the kernel stripped into {@code hv1} ({@code TP_STATUS_VLAN_VALID}, as veth and most NICs do) is
 * put back in place: the 12 address bytes move 4 bytes down into the gap before the frame and the tag goes after
 * them, so the stack always sees the frame as it was on the wire.
 *
 * <p>Owned by the link's shard thread; not thread-safe. A frame's memory is valid until the handler returns.
 */
final class RxRing extends ReceiveRing {
    private static final VarHandle STATUS = ValueLayout.JAVA_INT.varHandle();
    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT;

    private final int blockSize;
    private final int blockCount;

    private int block;
    /** Packets not yet handed from the open block; -1 while no block is open. */
    private int remaining = -1;
    /** Ring offset of the next packet header in the open block. */
    private long packet;

    RxRing(MemorySegment ring, int blockSize, int blockCount, boolean vnetHeader) {
        super(ring, HeaderLayout.TPACKET_V3, vnetHeader);
        this.blockSize = blockSize;
        this.blockCount = blockCount;
    }

    /** True when a block is open or the next one is ours: {@link #receive} would hand something up. */
    @Override
    boolean ready() {
        return remaining > 0 || (remaining < 0 && userOwns(block));
    }

    @Override
    int receive(FrameHandler handler, int maxFrames) {
        int delivered = 0;
        while (delivered < maxFrames) {
            if (remaining < 0 && !openBlock()) {
                break;
            }
            if (remaining > 0) {
                final long header = packet;
                remaining--;
                packet = header + Integer.toUnsignedLong(ring.get(INT, header + LinuxAbi.TPACKET3_HDR_NEXT_OFFSET_OFFSET));
                delivered += deliver(handler, header, blockSize);
            }
            if (remaining == 0) {
                releaseBlock();
            }
        }
        return delivered;
    }

    @Override
    boolean backlogged() {
        final int ahead = block + blockCount / 2;
        return userOwns(ahead >= blockCount ? ahead - blockCount : ahead);
    }

    private boolean userOwns(int index) {
        final int status = (int) STATUS.getAcquire(ring, (long) index * blockSize + LinuxAbi.BLOCK_STATUS_OFFSET);
        return (status & LinuxAbi.TP_STATUS_USER) != 0;
    }

    private boolean openBlock() {
        if (!userOwns(block)) {
            return false;
        }
        final long base = (long) block * blockSize;
        remaining = ring.get(INT, base + LinuxAbi.BLOCK_NUM_PKTS_OFFSET);
        packet = base + Integer.toUnsignedLong(ring.get(INT, base + LinuxAbi.BLOCK_OFFSET_TO_FIRST_PKT_OFFSET));
        return true;
    }

    private void releaseBlock() {
        STATUS.setRelease(ring, (long) block * blockSize + LinuxAbi.BLOCK_STATUS_OFFSET, LinuxAbi.TP_STATUS_KERNEL);
        block = block + 1 == blockCount ? 0 : block + 1;
        remaining = -1;
    }
}
