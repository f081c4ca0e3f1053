package dev.tern.afpacket;

import dev.tern.ethernet.wire.MacAddress;

/**
 * How to open an {@link AfPacketLink}. Immutable; start from {@link #defaults()} and change what you need:
 * {@code AfPacketOptions.defaults().vnetHeader(true).fanoutGroup(7)}.
 *
 * @param vnetHeader        use {@code PACKET_VNET_HDR}: a {@code virtio_net_hdr} before every frame, which gives
 *                          the stack checksum offload and TSO on transmit and checksum status on receive
 * @param fanoutGroup       join {@code PACKET_FANOUT} group (0..65535, hash mode) so several shards share the
 *                          interface; {@link #NO_FANOUT} for none
 * @param mac               the MAC the stack uses; {@link #INTERFACE_MAC} for the interface's own. A different MAC
 *                          is added as a {@code PACKET_MR_UNICAST} membership so a real NIC accepts frames to it
 * @param promiscuous       add a {@code PACKET_MR_PROMISC} membership (receive every frame on the wire)
 * @param rxBlockSize       bytes per receive block (a multiple of the page size); a frame larger than a block
 *                          (minus about 100 bytes of headers) is truncated by the kernel and counted, not delivered
 * @param rxBlockCount      number of receive blocks
 * @param rxBlockTimeoutMs  how long the kernel keeps a partly filled block before handing it over (latency bound
 *                          under light load; the kernel's timer granularity is 1 ms)
 * @param txFrameCount      transmit slots; {@link #DEFAULT_TX_FRAMES} picks 256, or 64 with the vnet header, whose
 *                          slots are 64 KiB so that TSO super-frames fit
 * @param rxFrameSize       0: receive through the TPACKET_V3 block ring; otherwise the slot size of a TPACKET_V2
 *                          frame ring used instead (no block timer: lower latency), see {@link #rxFrameRing}
 * @param fanoutShards      0: the fanout group (if any) hashes as the kernel does ({@code PACKET_FANOUT_HASH});
 *                          N &gt; 0: the group runs Tern's steering program for N shards ({@code PACKET_FANOUT_CBPF},
 *                          see {@code ShardSteering}), and the sockets of a sharded stack must join it in shard order
 */
public record AfPacketOptions(
    boolean vnetHeader,
    int fanoutGroup,
    long mac,
    boolean promiscuous,
    int rxBlockSize,
    int rxBlockCount,
    int rxBlockTimeoutMs,
    int txFrameCount,
    int rxFrameSize,
    int fanoutShards) {

    public static final int NO_FANOUT = -1;
    public static final long INTERFACE_MAC = 0;
    public static final int DEFAULT_TX_FRAMES = 0;
    /** {@link #rxFrameRing} value: a frame ring whose slots fit the interface's MTU, chosen when the link opens. */
    public static final int RX_FRAME_SIZE_AUTO = -1;
    /**
     * {@link #rxFrameRing} value: slots of the smallest power of two that holds a frame of the interface's MTU, as
     * many as fit the configured blocks (see {@link #datagrams()}); merged super-frames do not fit.
     */
    public static final int RX_FRAME_SIZE_MTU = -2;

    public AfPacketOptions {
        if (fanoutGroup < NO_FANOUT || fanoutGroup > 0xFFFF) {
            throw new IllegalArgumentException("fanout group " + fanoutGroup + " outside 0..65535 (or -1 for none)");
        }
        if (mac != INTERFACE_MAC && !MacAddress.isUnicast(mac)) {
            throw new IllegalArgumentException("link MAC " + MacAddress.format(mac) + " is not a unicast address");
        }
        if (rxBlockSize < 4096 || rxBlockSize % 4096 != 0 || Integer.bitCount(rxBlockSize) != 1) {
            throw new IllegalArgumentException("receive block size " + rxBlockSize + " must be a power of two of at least 4096");
        }
        if (rxBlockCount < 2) {
            throw new IllegalArgumentException("receive block count " + rxBlockCount + " must be at least 2");
        }
        if (rxBlockTimeoutMs < 1 || rxBlockTimeoutMs > 1000) {
            throw new IllegalArgumentException("receive block timeout " + rxBlockTimeoutMs + " ms outside 1..1000");
        }
        if (rxFrameSize != 0 && rxFrameSize != RX_FRAME_SIZE_AUTO && rxFrameSize != RX_FRAME_SIZE_MTU
            && (rxFrameSize < 2048 || Integer.bitCount(rxFrameSize) != 1 || rxFrameSize > rxBlockSize)) {
            throw new IllegalArgumentException("receive frame size " + rxFrameSize
                + " must be 0 (block ring), -1 (frame ring for merged frames), -2 (frame ring sized for the MTU) or a"
                + " power of two from 2048 to the block size");
        }
        if (fanoutShards < 0 || fanoutShards > 0xFFFF || fanoutShards > 0 && fanoutGroup == NO_FANOUT) {
            throw new IllegalArgumentException("fanout steering for " + fanoutShards + " shards needs a fanout group and 1..65535 shards");
        }
        if (txFrameCount < 0 || txFrameCount > 65536) {
            throw new IllegalArgumentException("transmit frame count " + txFrameCount + " outside 0..65536");
        }
    }

    /** No vnet header, no fanout, the interface's MAC, 16 receive blocks of 256 KiB retired after 1 ms, 256 TX slots. */
    public static AfPacketOptions defaults() {
        return new AfPacketOptions(false, NO_FANOUT, INTERFACE_MAC, false, 256 * 1024, 16, 1, DEFAULT_TX_FRAMES, 0, 0);
    }

    /**
     * The configuration for TCP throughput, which the veth benchmark measures and the {@code tern} command opens:
     * the vnet header (the kernel completes checksums and cuts TCP's 64 KiB segments, in software when the interface
     * cannot, or hands them to a NIC with TSO whole), and a TPACKET_V2 frame ring of 64 KiB slots, 1024 of them
     * (256 blocks of four; about 65 MiB of the kernel's memory), so that received GSO/GRO super-frames fit and a TCP
     * window of MTU-sized frames (a peer without segmentation offload) waits in the ring while the stack's thread waits
     * for the processor. With 256 slots (16 MiB) a Linux sender into {@code tern nc} over veth with offloads off lost
     * 8 % of its frames to the full ring (46,942 {@code link.rx.kernel_drops} in 5 s), with 512 0.3 %, with 1024 none.
     * A kernel that refuses the vnet header is opened again with {@code vnetHeader(false)} by the caller.
     */
    public static AfPacketOptions throughput() {
        return defaults().vnetHeader(true).rxBlocks(256 * 1024, 256).rxFrameRing(RX_FRAME_SIZE_AUTO);
    }

    /**
     * The configuration for receiving datagrams (a multicast feed, UDP at a high packet rate): no vnet header and a
     * TPACKET_V2 ring of slots sized for the interface's MTU ({@link #RX_FRAME_SIZE_MTU}: 2 KiB at 1500), 8192 of
     * them in 16 MiB (a quarter of what {@link #throughput()} spends on 1024 slots of 64 KiB), so a burst of small
     * frames waits in the ring 8 times longer than there while the stack is busy. A merged super-frame (a TCP peer's GSO on veth, a
     * NIC's GRO) does not fit such a slot and is counted as {@code rx.truncated}: for datagram traffic only.
     */
    public static AfPacketOptions datagrams() {
        return defaults().rxBlocks(256 * 1024, 64).rxFrameRing(RX_FRAME_SIZE_MTU);
    }

    public AfPacketOptions vnetHeader(boolean enabled) {
        return new AfPacketOptions(enabled, fanoutGroup, mac, promiscuous, rxBlockSize, rxBlockCount, rxBlockTimeoutMs, txFrameCount, rxFrameSize, fanoutShards);
    }

    public AfPacketOptions fanoutGroup(int group) {
        return new AfPacketOptions(vnetHeader, group, mac, promiscuous, rxBlockSize, rxBlockCount, rxBlockTimeoutMs, txFrameCount, rxFrameSize, fanoutShards);
    }

    /**
     * Joins fanout group {@code group} with Tern's steering program for {@code shards} shards: each TCP or UDP flow
     * reaches the socket of the shard {@code ShardSteering.shardOf} names, everything else the first socket. Open the
     * shards' links in shard order (the kernel numbers a group's sockets in the order they join).
     */
    public AfPacketOptions fanoutSteering(int group, int shards) {
        return new AfPacketOptions(vnetHeader, group, mac, promiscuous, rxBlockSize, rxBlockCount, rxBlockTimeoutMs, txFrameCount,
            rxFrameSize, shards);
    }

    public AfPacketOptions mac(long address) {
        return new AfPacketOptions(vnetHeader, fanoutGroup, address, promiscuous, rxBlockSize, rxBlockCount, rxBlockTimeoutMs, txFrameCount, rxFrameSize, fanoutShards);
    }

    public AfPacketOptions promiscuous(boolean enabled) {
        return new AfPacketOptions(vnetHeader, fanoutGroup, mac, enabled, rxBlockSize, rxBlockCount, rxBlockTimeoutMs, txFrameCount, rxFrameSize, fanoutShards);
    }

    public AfPacketOptions rxBlocks(int blockSize, int blockCount) {
        return new AfPacketOptions(vnetHeader, fanoutGroup, mac, promiscuous, blockSize, blockCount, rxBlockTimeoutMs, txFrameCount, rxFrameSize, fanoutShards);
    }

    public AfPacketOptions rxBlockTimeoutMs(int timeoutMs) {
        return new AfPacketOptions(vnetHeader, fanoutGroup, mac, promiscuous, rxBlockSize, rxBlockCount, timeoutMs, txFrameCount, rxFrameSize, fanoutShards);
    }

    /**
     * Receives through a TPACKET_V2 ring of {@code frameSize}-byte slots (a power of two; it must hold the largest
     * frame plus about 100 bytes of headers) instead of V3 blocks: each frame reaches the stack at once, with no
     * block timer, at the cost of space. For latency. 0 goes back to the block ring; {@link #RX_FRAME_SIZE_AUTO}
     * sizes the slots for the interface's MTU.
     */
    public AfPacketOptions rxFrameRing(int frameSize) {
        return new AfPacketOptions(vnetHeader, fanoutGroup, mac, promiscuous, rxBlockSize, rxBlockCount, rxBlockTimeoutMs,
            txFrameCount, frameSize, fanoutShards);
    }

    public AfPacketOptions txFrameCount(int count) {
        return new AfPacketOptions(vnetHeader, fanoutGroup, mac, promiscuous, rxBlockSize, rxBlockCount, rxBlockTimeoutMs, count, rxFrameSize, fanoutShards);
    }
}
