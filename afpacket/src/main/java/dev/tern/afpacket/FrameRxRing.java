package dev.tern.afpacket;

import dev.tern.afpacket.libc.LinuxAbi;
import dev.tern.ethernet.link.FrameHandler;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;

/**
 * The TPACKET_V2 receive ring: fixed-size frame slots, each handed to user space by the kernel as soon as a frame
 * is in it. Unlike the V3 block ring ({@link RxRing}) there is no block to fill and no block timer, so a frame is
 * visible at once: this is the ring for latency. It wastes space on small frames and cannot hold a frame larger
 * than a slot (such a frame is counted as truncated and dropped).
 *
 * <pre>
 *   ring: block_nr blocks of block_size bytes, each holding block_size / frame_size slots (a slot never crosses a block)
 *   +-----------------------------------+-----------------------------------+-----
 *   | tpacket2_hdr | sockaddr_ll | gap | frame (at tp_mac)          | ...  | slot 1 ...
 *   +-----------------------------------+-----------------------------------+-----
 *     0 tp_status (TP_STATUS_USER: ours until we write TP_STATUS_KERNEL back), 4 tp_len, 8 tp_snaplen,
 *     12 tp_mac, 24 tp_vlan_tci, 26 tp_vlan_tpid
 * </pre>
 *
 * <p>tp_status is read with acquire and written back with release semantics, pairing with the kernel's barriers.
 * A VLAN tag the kernel stripped is put back in front of the payload, as {@link RxRing} does. Owned by the link's
 * thread; a frame is valid until the handler returns.
 */
final class FrameRxRing extends ReceiveRing {
    private static final VarHandle STATUS = ValueLayout.JAVA_INT.varHandle();

    private final int frameSize;
    private final int blockSize;
    private final int framesPerBlock;
    private final int frameCount;
    private int next;

    /** Slots of {@code frameSize} bytes, {@code framesPerBlock} to each block of {@code blockSize} bytes (the kernel
     * never lets a slot cross a block, so a block may end in unused bytes). */
    FrameRxRing(MemorySegment ring, int frameSize, int blockSize, int framesPerBlock, int blockCount, boolean vnetHeader) {
        super(ring, HeaderLayout.TPACKET_V2, vnetHeader);
        this.frameSize = frameSize;
        this.blockSize = blockSize;
        this.framesPerBlock = framesPerBlock;
        this.frameCount = framesPerBlock * blockCount;
    }

    private long slotOffset(int slot) {
        return (long) (slot / framesPerBlock) * blockSize + (long) (slot % framesPerBlock) * frameSize;
    }

    @Override
    boolean ready() {
        return userOwns(next);
    }

    @Override
    boolean backlogged() {
        final int ahead = next + frameCount / 2;
        return userOwns(ahead >= frameCount ? ahead - frameCount : ahead);
    }

    private boolean userOwns(int slot) {
        return ((int) STATUS.getAcquire(ring, slotOffset(slot) + LinuxAbi.TPACKET2_HDR_STATUS_OFFSET)
            & LinuxAbi.TP_STATUS_USER) != 0;
    }

    @Override
    int receive(FrameHandler handler, int maxFrames) {
        int delivered = 0;
        while (delivered < maxFrames && userOwns(next)) {
            final long header = slotOffset(next);
            try {
                delivered += deliver(handler, header, frameSize);
            } finally {
                STATUS.setRelease(ring, header + LinuxAbi.TPACKET2_HDR_STATUS_OFFSET, LinuxAbi.TP_STATUS_KERNEL);
                next = next + 1 == frameCount ? 0 : next + 1;
            }
        }
        return delivered;
    }
}
