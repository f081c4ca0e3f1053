package dev.tern.rawqp;

import dev.tern.core.memory.FramePool;
import dev.tern.ethernet.link.FrameHandler;
import dev.tern.ethernet.link.Link;
import dev.tern.ethernet.link.Offloads;
import dev.tern.ethernet.link.TxFrame;
import dev.tern.rawqp.ffm.VerbsConstants;
import dev.tern.rawqp.ffm.VerbsException;
import dev.tern.rawqp.ffm.VerbsLayouts.IbvRecvWr;
import dev.tern.rawqp.ffm.VerbsLayouts.IbvSendWr;
import dev.tern.rawqp.ffm.VerbsLayouts.IbvSge;
import dev.tern.rawqp.ffm.VerbsLayouts.IbvWc;
import dev.tern.rawqp.ffm.VerbsOps;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * A {@link Link} on a raw-packet queue pair through plain verbs: {@code ibv_post_send}, {@code ibv_post_recv} and
 * {@code ibv_poll_cq}, which are the provider's function pointers ({@link VerbsOps}). Works with any provider that
 * supports {@code IBV_QPT_RAW_PACKET}; {@link Mlx5Link} is the faster path on mlx5.
 *
 * <p>Work requests live off-heap in this link's own arena and are rewritten in place:
 * <pre>
 *   receive: rqSize x (ibv_recv_wr 32 | ibv_sge 16), entry i always points at slab buffer i; wr_id = i
 *   send:    sqSize x (ibv_send_wr 128 | ibv_sge 16), entry k is the k-th frame of the current batch;
 *            wr_id = the frame's sequence number, which indexes inFlight[] (its slab buffer)
 *   wc:      64 x ibv_wc 48, filled by poll_cq
 * </pre>
 * A flush chains the batch's send WRs through {@code next} and posts them with one {@code post_send} call: one
 * doorbell per batch. Frames no longer than the QP's {@code max_inline_data} go with {@code IBV_SEND_INLINE}:
 * the provider copies them into the WQE during the call, so their buffers are free when it returns. Every
 * {@code completionModeration}-th WR is {@code IBV_SEND_SIGNALED}; its completion frees it and every WR before it.
 * Received buffers are re-posted in one chained {@code post_recv} per batch, after the frames were handled. A
 * completion whose length no Ethernet frame in our buffers can have is counted as dropped and not handed up.
 *
 * <p>Owned by one stack shard thread; not thread-safe. Nothing on the data path allocates Java objects; the
 * provider's post and poll are non-blocking.
 */
public final class RawQpLink extends QueuePairLink {
    private static final int WC_BATCH = 64;
    private static final int NO_BUFFER = -1;
    /** Statistics after {@link QueuePairLink}'s: post_send calls, frames sent inline, refused receive re-posts. */
    private static final String[] OWN_STATISTICS = {"tx.post_send_calls", "tx.inline", "rx.post_failures"};

    private final int lkey;
    private final VerbsOps ops;
    private final int maxInline;
    private final int moderation;
    private final Arena arena = Arena.ofShared();

    private final int receiveSize;
    private final MemorySegment receiveWrs;
    private final MemorySegment receiveSges;
    private final int[] receiveBuffer;
    /** The receive slot of the frame being handed up, for {@link #replaceReceiveBuffer}. */
    private int handingSlot;
    /** Pointers to each receive WR, made once: a chain can start at any of them without allocating. */
    private final MemorySegment[] receiveWrAt;

    private final int sendSize;
    private final MemorySegment sendWrs;
    private final MemorySegment sendSges;
    private final int[] inFlight;
    private final MemorySegment badWr;
    private final MemorySegment completions;

    private long nextSequence;
    private long completedSequence;
    private int pending;
    private int sinceSignal;

    private long rxPostFailures;
    private long txInline;
    private long postCalls;

    /**
     * @param pool        the registered slab; owned by the link from now on
     * @param ops         the provider's post/poll functions for the QP and its CQs
     * @param maxInline   the QP's granted {@code cap.max_inline_data}
     */
    RawQpLink(String name, long mac, int mtu, int offloads, FramePool pool, int lkey, VerbsOps ops, int sendQueueSize,
              int receiveQueueSize, int maxInline, int completionModeration) {
        super(name, mac, mtu, offloads, pool, OWN_STATISTICS);
        this.lkey = lkey;
        this.ops = ops;
        this.maxInline = maxInline;
        this.moderation = completionModeration;
        this.receiveSize = receiveQueueSize;
        this.receiveWrs = arena.allocate((long) IbvRecvWr.SIZE * receiveSize, 8);
        this.receiveSges = arena.allocate((long) IbvSge.SIZE * receiveSize, 8);
        this.receiveBuffer = new int[receiveSize];
        lendLimit(receiveSize);
        this.receiveWrAt = new MemorySegment[receiveSize];
        for (int slot = 0; slot < receiveSize; slot++) {
            final int buffer = pool.acquire();
            if (buffer < 0) {
                throw new IllegalArgumentException("frame pool of " + pool.capacity() + " buffers cannot fill a " + receiveSize + "-entry receive queue");
            }
            pointSlotAt(slot, buffer);
            final long sge = (long) slot * IbvSge.SIZE;
            receiveSges.set(JAVA_INT, sge + IbvSge.LENGTH_OFFSET, pool.bufferSize());
            receiveSges.set(JAVA_INT, sge + IbvSge.LKEY_OFFSET, lkey);
            final long wr = (long) slot * IbvRecvWr.SIZE;
            receiveWrs.set(JAVA_LONG, wr + IbvRecvWr.WR_ID_OFFSET, slot);
            receiveWrs.set(JAVA_LONG, wr + IbvRecvWr.NEXT_OFFSET, 0);
            receiveWrs.set(JAVA_LONG, wr + IbvRecvWr.SG_LIST_OFFSET, receiveSges.address() + sge);
            receiveWrs.set(JAVA_INT, wr + IbvRecvWr.NUM_SGE_OFFSET, 1);
            receiveWrAt[slot] = receiveWrs.asSlice(wr, IbvRecvWr.SIZE);
        }
        this.sendSize = sendQueueSize;
        this.sendWrs = arena.allocate((long) IbvSendWr.SIZE * sendSize, 8);
        this.sendSges = arena.allocate((long) IbvSge.SIZE * sendSize, 8);
        this.inFlight = new int[sendSize];
        Arrays.fill(inFlight, NO_BUFFER);
        this.badWr = arena.allocate(ADDRESS);
        this.completions = arena.allocate((long) IbvWc.SIZE * WC_BATCH, 8);
    }

    /** Posts every receive buffer; call once the QP is in RTR. Control plane: a failure throws. */
    void postAllReceives() {
        for (int slot = 0; slot < receiveSize; slot++) {
            chainReceive(slot, slot + 1 < receiveSize ? slot + 1 : -1);
        }
        final int status = ops.postRecv(receiveWrs, badWr);
        if (status != 0) {
            throw new VerbsException("ibv_post_recv", status, "posting " + receiveSize + " receive buffers");
        }
    }

    @Override
    public int receive(FrameHandler handler, int maxFrames) {
        final int polled = ops.pollRecvCq(Math.min(maxFrames, WC_BATCH), completions);
        if (polled <= 0) {
            if (polled < 0) {
                rxErrors++;
            }
            return 0;
        }
        // Chain the completed buffers for re-posting first, so a throwing handler cannot lose them.
        int first = -1;
        int previous = -1;
        for (int i = 0; i < polled; i++) {
            final int slot = (int) completions.get(JAVA_LONG, (long) i * IbvWc.SIZE + IbvWc.WR_ID_OFFSET);
            if (previous >= 0) {
                chainReceive(previous, slot);
            } else {
                first = slot;
            }
            previous = slot;
        }
        chainReceive(previous, -1);
        int delivered = 0;
        try {
            for (int i = 0; i < polled; i++) {
                final long wc = (long) i * IbvWc.SIZE;
                final int slot = (int) completions.get(JAVA_LONG, wc + IbvWc.WR_ID_OFFSET);
                if (completions.get(JAVA_INT, wc + IbvWc.STATUS_OFFSET) != VerbsConstants.IBV_WC_SUCCESS) {
                    rxErrors++;
                    continue;
                }
                final int length = completions.get(JAVA_INT, wc + IbvWc.BYTE_LEN_OFFSET);
                final int wcFlags = completions.get(JAVA_INT, wc + IbvWc.WC_FLAGS_OFFSET);
                handingSlot = slot;
                if (handUp(handler, receiveBuffer[slot], length, (wcFlags & VerbsConstants.IBV_WC_IP_CSUM_OK) != 0)) {
                    delivered++;
                }
            }
        } finally {
            if (ops.postRecv(receiveWrAt[first], badWr) != 0) {
                rxPostFailures++;
            }
        }
        return delivered;
    }

    /** The slot's scatter entry points at the fresh buffer before the slot is re-posted (after the batch). */
    @Override
    void replaceReceiveBuffer(int fresh) {
        pointSlotAt(handingSlot, fresh);
    }

    /** Receive slot {@code slot} receives into slab buffer {@code buffer}: its scatter entry points there. */
    private void pointSlotAt(int slot, int buffer) {
        receiveBuffer[slot] = buffer;
        receiveSges.set(JAVA_LONG, (long) slot * IbvSge.SIZE + IbvSge.ADDR_OFFSET, slab.address() + pool.offset(buffer));
    }

    private void chainReceive(int slot, int nextSlot) {
        receiveWrs.set(JAVA_LONG, (long) slot * IbvRecvWr.SIZE + IbvRecvWr.NEXT_OFFSET,
            nextSlot < 0 ? 0 : receiveWrs.address() + (long) nextSlot * IbvRecvWr.SIZE);
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
        return pool.available() > 0 && nextSequence - completedSequence + claimed < sendSize;
    }

    @Override
    public void commit(TxFrame frame) {
        claimed--;
        final int buffer = (int) frame.token();
        final int length = frame.length();
        final long sequence = nextSequence++;
        inFlight[(int) (sequence & (sendSize - 1))] = buffer;
        final int k = pending++;
        final long sge = (long) k * IbvSge.SIZE;
        sendSges.set(JAVA_LONG, sge + IbvSge.ADDR_OFFSET, slab.address() + frame.offset());
        sendSges.set(JAVA_INT, sge + IbvSge.LENGTH_OFFSET, length);
        sendSges.set(JAVA_INT, sge + IbvSge.LKEY_OFFSET, lkey);
        int sendFlags = 0;
        if (length <= maxInline) {
            sendFlags |= VerbsConstants.IBV_SEND_INLINE;
        }
        if (++sinceSignal >= moderation) {
            sinceSignal = 0;
            sendFlags |= VerbsConstants.IBV_SEND_SIGNALED;
        }
        if ((frame.ipChecksum() || frame.checksumStart() >= 0) && (offloads & Offloads.TX_IPV4_CHECKSUM) != 0) {
            // One flag for both: the device computes the IPv4 header checksum and the TCP/UDP checksum.
            sendFlags |= VerbsConstants.IBV_SEND_IP_CSUM;
        }
        final long wr = (long) k * IbvSendWr.SIZE;
        sendWrs.set(JAVA_LONG, wr + IbvSendWr.WR_ID_OFFSET, sequence);
        sendWrs.set(JAVA_LONG, wr + IbvSendWr.SG_LIST_OFFSET, sendSges.address() + sge);
        sendWrs.set(JAVA_INT, wr + IbvSendWr.NUM_SGE_OFFSET, 1);
        sendWrs.set(JAVA_INT, wr + IbvSendWr.OPCODE_OFFSET, VerbsConstants.IBV_WR_SEND);
        sendWrs.set(JAVA_INT, wr + IbvSendWr.SEND_FLAGS_OFFSET, sendFlags);
    }

    @Override
    public int flush() {
        final int batch = pending;
        if (batch == 0) {
            reclaim();
            return 0;
        }
        for (int k = 0; k < batch; k++) {
            final long next = k + 1 < batch ? sendWrs.address() + (long) (k + 1) * IbvSendWr.SIZE : 0;
            sendWrs.set(JAVA_LONG, (long) k * IbvSendWr.SIZE + IbvSendWr.NEXT_OFFSET, next);
        }
        pending = 0;
        postCalls++;
        final int status = ops.postSend(sendWrs, badWr);
        final long firstSequence = nextSequence - batch;
        int posted = batch;
        if (status != 0) {
            // post_send stopped at *bad_wr: that WR and every later one were not queued.
            txErrors++;
            final long bad = badWr.get(JAVA_LONG, 0) - sendWrs.address();
            posted = bad >= 0 && bad < (long) batch * IbvSendWr.SIZE ? (int) (bad / IbvSendWr.SIZE) : 0;
            for (int k = posted; k < batch; k++) {
                final int index = (int) ((firstSequence + k) & (sendSize - 1));
                pool.release(inFlight[index]);
                inFlight[index] = NO_BUFFER;
            }
            txDropped += batch - posted;
            nextSequence = firstSequence + posted;
            // A signalled WR may have been among those dropped: make the next one signalled.
            sinceSignal = moderation - 1;
        }
        for (int k = 0; k < posted; k++) {
            if ((sendWrs.get(JAVA_INT, (long) k * IbvSendWr.SIZE + IbvSendWr.SEND_FLAGS_OFFSET) & VerbsConstants.IBV_SEND_INLINE) != 0) {
                final int index = (int) ((firstSequence + k) & (sendSize - 1));
                pool.release(inFlight[index]);
                inFlight[index] = NO_BUFFER;
                txInline++;
            }
        }
        txFrames += posted;
        reclaim();
        return posted;
    }

    /** Polls send completions; each names a signalled WR, which stands for itself and every earlier WR. */
    private void reclaim() {
        int polled;
        do {
            polled = ops.pollSendCq(WC_BATCH, completions);
            for (int i = 0; i < polled; i++) {
                final long wc = (long) i * IbvWc.SIZE;
                if (completions.get(JAVA_INT, wc + IbvWc.STATUS_OFFSET) != VerbsConstants.IBV_WC_SUCCESS) {
                    txErrors++;
                }
                final long sequence = completions.get(JAVA_LONG, wc + IbvWc.WR_ID_OFFSET);
                if (sequence - completedSequence < 0 || sequence - nextSequence >= 0) {
                    txErrors++;
                    continue;
                }
                while (completedSequence - sequence <= 0) {
                    final int index = (int) (completedSequence & (sendSize - 1));
                    if (inFlight[index] != NO_BUFFER) {
                        pool.release(inFlight[index]);
                        inFlight[index] = NO_BUFFER;
                    }
                    completedSequence++;
                }
            }
        } while (polled == WC_BATCH);
        if (polled < 0) {
            txErrors++;
        }
    }

    @Override
    void releaseDataPath() {
        arena.close();
    }

    @Override
    void ownStatistics(long[] values, int from) {
        values[from] = postCalls;
        values[from + 1] = txInline;
        values[from + 2] = rxPostFailures;
    }

    /** Re-posts of received buffers that the provider refused (the RQ shrinks by that batch). */
    public long rxPostFailures() {
        return rxPostFailures;
    }

    /** Frames sent with IBV_SEND_INLINE. */
    public long txInline() {
        return txInline;
    }

    /** post_send calls made: one per flush with frames. */
    public long postSendCalls() {
        return postCalls;
    }

    @Override
    String dataPath() {
        return "verbs, max inline " + maxInline;
    }
}
