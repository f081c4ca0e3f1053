package dev.tern.rawqp;

import dev.tern.core.memory.BigEndian;
import dev.tern.core.memory.FramePool;
import dev.tern.ethernet.link.FrameHandler;
import dev.tern.ethernet.link.Link;
import dev.tern.ethernet.link.Offloads;
import dev.tern.ethernet.link.TxFrame;
import dev.tern.ethernet.wire.MacAddress;
import dev.tern.rawqp.mlx5.CompletionQueue;
import dev.tern.rawqp.mlx5.Mlx5Cqe64;
import dev.tern.rawqp.mlx5.Mlx5Rings;
import dev.tern.rawqp.mlx5.Mlx5SendWqe;
import dev.tern.rawqp.mlx5.ReceiveQueue;
import dev.tern.rawqp.mlx5.SendQueue;

import java.lang.foreign.MemorySegment;
import java.util.List;

/**
 * A {@link Link} on an mlx5 raw-packet queue pair driven through direct verbs: no library call per packet. Send
 * WQEs are built in the SQ buffer ({@link SendQueue}), the doorbell is one store to the doorbell record and one to
 * the BlueFlame register per batch, received frames are found by reading CQEs ({@link CompletionQueue}) and handed
 * up in place in the receive buffers ({@link ReceiveQueue}).
 *
 * <p>Memory: one registered slab ({@link FramePool}) holds the receive buffers (one per RQ entry, fixed) and the
 * transmit buffers. A received frame is valid until the receive callback returns; a transmit buffer goes back to the
 * pool when a signalled send completion covers its WQE.
 *
 * <pre>
 *   stack ── claim/commit ──► SendQueue ── WQEs, dbrec, BlueFlame ──► NIC ── CQE ──► send CQ ──► buffers back
 *   stack ◄── onFrame ─────── receive CQ ◄── CQE ── NIC ── frame into RQ buffer ◄── ReceiveQueue (replenish)
 * </pre>
 *
 * <p>Transmit always inlines the first 18 bytes of the frame in the Ethernet segment (the L2 minimum some
 * devices need), and all headers for TSO, where the WQE also carries the MSS; the rest of the frame is one data
 * segment. Checksum-offload flags follow the frame's {@link TxFrame} requests.
 *
 * <p>Owned by one stack shard thread; not thread-safe (one QP per shard). The data path (receive, claim, commit,
 * abort, flush) allocates nothing and throws only for bugs; multicast changes and close are control plane.
 */
public final class Mlx5Link implements Link {
    /** Longest header block a TSO WQE inlines: Ethernet + VLAN (18) + IPv4 with options (60) + TCP with options (60), rounded up. */
    static final int MAX_TSO_HEADER = 144;
    private static final int ETHERNET_HEADER = 14;
    private static final int TCP_DATA_OFFSET_OFFSET = 12;
    private static final int TCP_MIN_HEADER = 20;
    /** Until {@link #attach} gives the link real rules (tests on the ring model never do). */
    private static final FlowTable.Installer NO_STEERING = new FlowTable.Installer() {
        @Override
        public long install(FlowRule rule) {
            return 0;
        }

        @Override
        public void remove(long handle) {
        }
    };

    private final String name;
    private final long mac;
    private final int mtu;
    private final int offloads;
    private final FramePool pool;
    private final MemorySegment slab;
    private final SendQueue sendQueue;
    private final ReceiveQueue receiveQueue;
    private final CompletionQueue sendCompletions;
    private final CompletionQueue receiveCompletions;
    private final int maxWqeBlocks;
    private FlowTable flows = new FlowTable(NO_STEERING, List.of());
    private AutoCloseable resources;
    private int claimed;
    private int pending;
    private boolean closed;

    private long rxFrames;
    private long rxBytes;
    private long rxErrors;
    private long rxDropped;
    private long txFrames;
    private long txDropped;
    private long txErrors;
    private long txBusy;

    /**
     * Builds the rings' software side and writes every receive WQE; the device learns of them in
     * {@link #armReceiveQueue()}.
     *
     * @param pool       the registered slab; the link takes {@code rings.receiveWqeCount()} buffers for receive and
     *                   owns the pool from now on (closing the link closes it, after {@code resources})
     * @param lkey       the slab's memory region key
     * @param offloads   what the device does ({@link Offloads} bits): only those requests reach the WQEs
     * @param startIndex the counters' starting value: 0 on hardware; tests start near wraps
     */
    Mlx5Link(String name, long mac, int mtu, int offloads, FramePool pool, int lkey, Mlx5Rings rings, int completionModeration,
             int startIndex) {
        this.name = name;
        this.mac = mac;
        this.mtu = mtu;
        this.offloads = offloads;
        this.pool = pool;
        this.slab = pool.slab();
        this.receiveQueue = new ReceiveQueue(rings, lkey, pool, startIndex);
        this.sendQueue = new SendQueue(rings, lkey, pool, completionModeration, startIndex);
        this.sendCompletions = new CompletionQueue(rings.sendCompletions(), startIndex);
        this.receiveCompletions = new CompletionQueue(rings.receiveCompletions(), startIndex);
        final int maxInline = (offloads & Offloads.TX_TCP_SEGMENTATION) != 0 ? MAX_TSO_HEADER : Mlx5SendWqe.MIN_INLINE_HEADER_SIZE;
        this.maxWqeBlocks = Mlx5SendWqe.basicBlocks(Mlx5SendWqe.ds(maxInline, 1));
        // Unsignalled WQEs hold their blocks until a signalled one completes: a full window of them must fit, or
        // the queue could fill with WQEs that never complete.
        if ((long) completionModeration * maxWqeBlocks > rings.sendWqeCount()) {
            throw new IllegalArgumentException("completion moderation " + completionModeration + " needs up to "
                + (long) completionModeration * maxWqeBlocks + " blocks, more than the " + rings.sendWqeCount() + "-block send queue");
        }
    }

    /** Hands the receive WQEs to the device; call once the QP is in RTR (see {@link ReceiveQueue#arm()}). */
    void armReceiveQueue() {
        receiveQueue.arm();
    }

    /** Gives the link its flow rules and the control-plane objects to destroy on close (QP, CQs, MR, PD, context). */
    void attach(FlowTable steering, AutoCloseable controlPlane) {
        this.flows = steering;
        this.resources = controlPlane;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public long macAddress() {
        return mac;
    }

    @Override
    public int mtu() {
        return mtu;
    }

    @Override
    public int offloads() {
        return offloads;
    }

    @Override
    public int receive(FrameHandler handler, int maxFrames) {
        int delivered = 0;
        int consumed = 0;
        try {
            while (delivered < maxFrames && consumed < receiveQueue.wqeCount()) {
                final Mlx5Cqe64 cqe = receiveCompletions.poll();
                if (cqe == null) {
                    break;
                }
                final int opcode = cqe.opcode();
                final int length = cqe.byteCount();
                final int flags = (offloads & Offloads.RX_CHECKSUM) != 0 && cqe.ipv4ChecksumsOk() ? Offloads.RX_CHECKSUM_OK : 0;
                final int buffer = receiveQueue.nextBuffer();
                // Consume before the callback: the buffer stays ours until replenish() below, and a throwing
                // handler must not leave the CQE to be handed up again.
                receiveCompletions.consume();
                receiveQueue.consume();
                consumed++;
                if (opcode != Mlx5Cqe64.OPCODE_RESP_SEND) {
                    rxErrors++;
                } else if (length < ETHERNET_HEADER || length > pool.bufferSize()) {
                    rxDropped++;
                } else {
                    rxFrames++;
                    rxBytes += length;
                    delivered++;
                    handler.onFrame(slab, pool.offset(buffer), length, flags);
                }
            }
        } finally {
            if (consumed > 0) {
                // CQ first: the entries must be free before the RQ offers the device more buffers to complete.
                receiveCompletions.publishConsumerIndex();
                receiveQueue.replenish();
            }
        }
        return delivered;
    }

    @Override
    public boolean claim(TxFrame frame) {
        if (closed) {
            return false;
        }
        if (!roomForOneMore()) {
            reclaim();
            if (!roomForOneMore()) {
                txBusy++;
                return false;
            }
        }
        final int buffer = pool.acquire();
        claimed++;
        frame.claimed(slab, pool.offset(buffer), pool.bufferSize(), buffer);
        return true;
    }

    private boolean roomForOneMore() {
        return pool.available() > 0 && sendQueue.freeBlocks() >= (claimed + 1) * maxWqeBlocks;
    }

    @Override
    public void commit(TxFrame frame) {
        claimed--;
        final int buffer = (int) frame.token();
        final int length = frame.length();
        if (length < Mlx5SendWqe.MIN_INLINE_HEADER_SIZE) {
            // libmlx5 refuses frames shorter than the inline minimum (EINVAL); an Ethernet frame is 60 bytes anyway.
            pool.release(buffer);
            txDropped++;
            return;
        }
        int csFlags = 0;
        if (frame.ipChecksum() && (offloads & Offloads.TX_IPV4_CHECKSUM) != 0) {
            csFlags |= Mlx5SendWqe.ETH_L3_CSUM;
        }
        if (frame.checksumStart() >= 0 && (offloads & Offloads.TX_L4_CHECKSUM) != 0) {
            csFlags |= Mlx5SendWqe.ETH_L4_CSUM;
        }
        int inline = Mlx5SendWqe.MIN_INLINE_HEADER_SIZE;
        int mss = 0;
        if (frame.segmentSize() != TxFrame.NO_SEGMENTATION && (offloads & Offloads.TX_TCP_SEGMENTATION) != 0) {
            final int headers = tcpHeadersEnd(frame);
            if (headers < 0) {
                pool.release(buffer);
                txDropped++;
                return;
            }
            // A TSO WQE carries every header inline; the device copies them in front of each segment it cuts.
            inline = headers;
            mss = frame.segmentSize();
            csFlags |= Mlx5SendWqe.ETH_L3_CSUM | Mlx5SendWqe.ETH_L4_CSUM;
        }
        sendQueue.post(slab, frame.offset(), length, buffer, inline, csFlags, mss);
        pending++;
    }

    /** End of the TCP header of a TSO frame (frame offset), or -1 when the frame does not describe one we can inline. */
    private int tcpHeadersEnd(TxFrame frame) {
        final int tcp = frame.checksumStart();
        if (tcp < ETHERNET_HEADER || tcp + TCP_MIN_HEADER > frame.length()) {
            return -1;
        }
        final int tcpHeader = (BigEndian.u8(slab, frame.offset() + tcp + TCP_DATA_OFFSET_OFFSET) >>> 4) * 4;
        final int end = tcp + tcpHeader;
        return tcpHeader < TCP_MIN_HEADER || end > MAX_TSO_HEADER || end >= frame.length() ? -1 : end;
    }

    @Override
    public void abort(TxFrame frame) {
        claimed--;
        pool.release((int) frame.token());
    }

    @Override
    public int flush() {
        final int sent = pending;
        if (sent > 0) {
            sendQueue.ringDoorbell();
            pending = 0;
            txFrames += sent;
        }
        reclaim();
        return sent;
    }

    /** Reads send completions and gives their buffers back. */
    private void reclaim() {
        int polled = 0;
        Mlx5Cqe64 cqe;
        while ((cqe = sendCompletions.poll()) != null) {
            final int opcode = cqe.opcode();
            if (opcode == Mlx5Cqe64.OPCODE_REQ) {
                sendQueue.complete(cqe.wqeCounter());
            } else if (opcode == Mlx5Cqe64.OPCODE_REQ_ERR) {
                // The QP is in error now: the WQE failed and later ones will be flushed, each with its own error CQE.
                txErrors++;
                sendQueue.complete(cqe.errorWqeCounter());
            } else {
                txErrors++;
            }
            sendCompletions.consume();
            polled++;
        }
        if (polled > 0) {
            sendCompletions.publishConsumerIndex();
        }
    }

    @Override
    public void addMulticast(long groupMac) {
        flows.addMulticast(groupMac);
    }

    @Override
    public void removeMulticast(long groupMac) {
        flows.removeMulticast(groupMac);
    }

    /** The flow rules in force (for tools and tests). */
    public List<FlowRule> flowRules() {
        return flows.rules();
    }

    /**
     * Removes the flow rules, destroys the QP and the rest of the control plane, then frees the slab. Buffers the
     * device still held are simply forgotten: nothing can complete after the QP is gone.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        // Steps run last-added first: flows, then the QP and the rest of the control plane, then the slab.
        final Teardown teardown = new Teardown();
        teardown.add(pool);
        if (resources != null) {
            teardown.add(resources);
        }
        teardown.add(() -> {
            sendQueue.releaseAll();
            receiveQueue.releaseAll();
        });
        teardown.add(flows);
        teardown.close();
    }

    public long rxFrames() {
        return rxFrames;
    }

    public long rxBytes() {
        return rxBytes;
    }

    /** Receive error CQEs (for example a frame longer than the buffer: LOCAL_LENGTH). */
    public long rxErrors() {
        return rxErrors;
    }

    /** Receive CQEs whose byte count no Ethernet frame in our buffers can have. */
    public long rxDropped() {
        return rxDropped;
    }

    public long txFrames() {
        return txFrames;
    }

    /** Frames committed but not sent: too short, or a TSO request we cannot describe. */
    public long txDropped() {
        return txDropped;
    }

    /** Send error CQEs. */
    public long txErrors() {
        return txErrors;
    }

    /** Claims refused for lack of buffers or send-queue room. */
    public long txBusy() {
        return txBusy;
    }

    /** Doorbells rung: one per flush that had frames. */
    public long doorbells() {
        return sendQueue.doorbells();
    }

    /** Send WQEs that asked for a completion. */
    public long signalledWqes() {
        return sendQueue.signalled();
    }

    /** Buffers of the slab in use now: receive buffers, claimed and in-flight transmit buffers. */
    public int buffersInUse() {
        return pool.inUse();
    }

    @Override
    public String toString() {
        return name + " " + MacAddress.format(mac) + " (mlx5 direct verbs, SQ " + sendQueue.wqeCount() + " blocks, RQ " + receiveQueue.wqeCount() + ")";
    }
}
