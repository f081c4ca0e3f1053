package dev.tern.rawqp;

import dev.tern.core.memory.BigEndian;
import dev.tern.core.memory.FramePool;
import dev.tern.ethernet.link.FrameHandler;
import dev.tern.ethernet.link.Link;
import dev.tern.ethernet.link.Offloads;
import dev.tern.ethernet.link.TxFrame;
import dev.tern.rawqp.mlx5.CompletionQueue;
import dev.tern.rawqp.mlx5.Mlx5Cqe64;
import dev.tern.rawqp.mlx5.Mlx5Rings;
import dev.tern.rawqp.mlx5.Mlx5SendWqe;
import dev.tern.rawqp.mlx5.ReceiveQueue;
import dev.tern.rawqp.mlx5.SendQueue;

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
public final class Mlx5Link extends QueuePairLink {
    /** Longest header block a TSO WQE inlines: Ethernet + VLAN (18) + IPv4 with options (60) + TCP with options (60), rounded up. */
    static final int MAX_TSO_HEADER = 144;
    private static final int TCP_DATA_OFFSET_OFFSET = 12;
    private static final int TCP_MIN_HEADER = 20;
    /** Statistics after {@link QueuePairLink}'s: doorbells rung, send WQEs that asked for a completion. */
    private static final String[] OWN_STATISTICS = {"tx.doorbells", "tx.signalled_wqes"};

    private final SendQueue sendQueue;
    private final ReceiveQueue receiveQueue;
    private final CompletionQueue sendCompletions;
    private final CompletionQueue receiveCompletions;
    private final int maxWqeBlocks;
    private int pending;

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
        super(name, mac, mtu, offloads, pool, OWN_STATISTICS);
        this.receiveQueue = new ReceiveQueue(rings, lkey, pool, startIndex);
        lendLimit(receiveQueue.wqeCount());
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

    /** The frame being handed up lies in the WQE consumed last (consume() comes before the callback). */
    @Override
    void replaceReceiveBuffer(int fresh) {
        receiveQueue.replaceLastConsumed(fresh);
    }

    /** Hands the receive WQEs to the device; call once the QP is in RTR (see {@link ReceiveQueue#arm()}). */
    void armReceiveQueue() {
        receiveQueue.arm();
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
                final boolean checksumsOk = cqe.ipv4ChecksumsOk();
                final int buffer = receiveQueue.nextBuffer();
                // Consume before the callback: the buffer stays ours until replenish() below, and a throwing
                // handler must not leave the CQE to be handed up again.
                receiveCompletions.consume();
                receiveQueue.consume();
                consumed++;
                if (opcode != Mlx5Cqe64.OPCODE_RESP_SEND) {
                    rxErrors++;
                } else if (handUp(handler, buffer, length, checksumsOk)) {
                    delivered++;
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
        return !closed && claimIf(roomForOneMore() || roomAfterReclaim(), frame);
    }

    /** Reads send completions first: they may have given back buffers and queue room since the last flush. */
    private boolean roomAfterReclaim() {
        reclaim();
        return roomForOneMore();
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
    void releaseDataPath() {
        sendQueue.releaseAll();
        receiveQueue.releaseAll();
    }

    @Override
    void ownStatistics(long[] values, int from) {
        values[from] = sendQueue.doorbells();
        values[from + 1] = sendQueue.signalled();
    }

    /** Doorbells rung: one per flush that had frames. */
    public long doorbells() {
        return sendQueue.doorbells();
    }

    /** Send WQEs that asked for a completion. */
    public long signalledWqes() {
        return sendQueue.signalled();
    }

    @Override
    String dataPath() {
        return "mlx5 direct verbs, SQ " + sendQueue.wqeCount() + " blocks, RQ " + receiveQueue.wqeCount();
    }
}
