package dev.tern.rawqp.mlx5;

import dev.tern.core.memory.FramePool;
import dev.tern.rawqp.ffm.Mlx5DvLayouts;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.Arrays;

/**
 * The software side of an mlx5 send queue: builds one WQE per frame in the SQ buffer, rings the doorbell once per
 * batch, and reclaims frame buffers when the device reports completions.
 *
 * <pre>
 *   SQ buffer: wqeCount basic blocks (64 bytes); a WQE takes 1..n consecutive blocks, wrapping at the end
 *   +-------+-------+-------+-------+-------+-------+-------+-------+
 *   |  done |  done | WQE a | WQE b (2 BBs) | WQE c |  free | free  |
 *   +-------+-------+-------+-------+-------+-------+-------+-------+
 *                   ^ consumerIndex                  ^ producerIndex   (both count basic blocks, mod 2^32)
 *   bufferAt[slot], blocksAt[slot]: for the WQE starting at that block, its frame buffer and size in blocks
 *   doorbell record [MLX5_SND_DBR] = producerIndex & 0xffff, written at each doorbell
 * </pre>
 *
 * <p>Completion moderation: only every {@code moderation}-th WQE asks for a CQE ({@code MLX5_WQE_CTRL_CQ_UPDATE});
 * its {@code wqe_counter} then stands for it and every WQE before it. Unsignalled WQEs keep their buffers until
 * the next signalled one completes, so at most {@code moderation - 1} buffers wait when traffic stops.
 *
 * <p>Owned by the link's shard thread; not thread-safe (one SQ per thread: doorbells are never batched across
 * threads). Allocation-free.
 */
public final class SendQueue {
    private static final VarHandle DOORBELL_RECORD = ValueLayout.JAVA_INT.withOrder(ByteOrder.BIG_ENDIAN).varHandle();
    private static final long SEND_DOORBELL_OFFSET = Mlx5DvLayouts.MLX5_SND_DBR * 4L;
    /** The BlueFlame register takes one aligned 64-bit store, in the CPU's byte order (the bytes are already right). */
    private static final VarHandle BLUE_FLAME = ValueLayout.JAVA_LONG.varHandle();
    private static final int NO_BUFFER = -1;

    private final MemorySegment queue;
    private final int wqeCount;
    private final int qpn;
    private final int lkey;
    private final MemorySegment doorbellRecord;
    private final MemorySegment blueFlame;
    private final FramePool pool;
    private final int moderation;
    private final Mlx5SendWqe wqe = new Mlx5SendWqe();
    private final int[] bufferAt;
    private final int[] blocksAt;

    private int producerIndex;
    private int consumerIndex;
    private int doorbellIndex;
    private long lastWqeStart = -1;
    private int sinceSignal;

    private long wqesPosted;
    private long doorbells;
    private long signalled;
    private long badCompletions;

    /**
     * @param rings      the QP's memory
     * @param lkey       the memory region key of {@code pool}'s slab, where frames live
     * @param pool       frame buffers; completed WQEs give theirs back here
     * @param moderation ask for a CQE every this many WQEs
     * @param startIndex the producer index to start from: 0 on hardware; tests start near the 16-bit wrap
     */
    public SendQueue(Mlx5Rings rings, int lkey, FramePool pool, int moderation, int startIndex) {
        if (moderation < 1 || moderation > rings.sendWqeCount()) {
            throw new IllegalArgumentException("completion moderation " + moderation + " outside 1.." + rings.sendWqeCount());
        }
        this.queue = rings.sendQueue();
        this.wqeCount = rings.sendWqeCount();
        this.qpn = rings.qpn();
        this.lkey = lkey;
        this.doorbellRecord = rings.doorbellRecord();
        this.blueFlame = rings.blueFlame();
        this.pool = pool;
        this.moderation = moderation;
        this.bufferAt = new int[wqeCount];
        this.blocksAt = new int[wqeCount];
        Arrays.fill(bufferAt, NO_BUFFER);
        this.producerIndex = startIndex;
        this.consumerIndex = startIndex;
        this.doorbellIndex = startIndex;
    }

    /** Basic blocks free for new WQEs. */
    public int freeBlocks() {
        return wqeCount - (producerIndex - consumerIndex);
    }

    /**
     * Builds the WQE for one frame at the producer index. The caller has checked {@link #freeBlocks()} against the
     * WQE's size.
     *
     * @param slab         the registered memory holding the frame
     * @param frameOffset  where the frame starts in {@code slab}
     * @param length       frame length, at least {@code inlineLength}
     * @param buffer       the frame's buffer in the pool, given back when the WQE completes
     * @param inlineLength bytes copied into the Ethernet segment (at least the 18-byte L2 minimum; all headers for TSO)
     * @param csFlags      {@link Mlx5SendWqe#ETH_L3_CSUM} / {@link Mlx5SendWqe#ETH_L4_CSUM}
     * @param mss          0, or the TCP segment size for a TSO WQE
     * @return the basic blocks the WQE took
     */
    public int post(MemorySegment slab, long frameOffset, int length, int buffer, int inlineLength, int csFlags, int mss) {
        final boolean gather = length > inlineLength;
        final int ds = Mlx5SendWqe.ds(inlineLength, gather ? 1 : 0);
        final int blocks = Mlx5SendWqe.basicBlocks(ds);
        final int slot = producerIndex & (wqeCount - 1);
        final long start = (long) slot << Mlx5SendWqe.BASIC_BLOCK_SHIFT;
        final int opcode = mss > 0 ? Mlx5SendWqe.OPCODE_TSO : Mlx5SendWqe.OPCODE_SEND;
        wqe.wrap(queue, start).control(producerIndex, opcode, qpn, ds, signalThisOne() ? Mlx5SendWqe.CTRL_CQ_UPDATE : 0);
        final int ethernetDs = wqe.ethernet(csFlags, mss, slab, frameOffset, inlineLength);
        if (gather) {
            wqe.data(Mlx5SendWqe.ETH_DS + ethernetDs, length - inlineLength, lkey, slab.address() + frameOffset + inlineLength);
            bufferAt[slot] = buffer;
        } else {
            // The whole frame is inline: the device never reads the buffer, so it can go back now.
            pool.release(buffer);
            bufferAt[slot] = NO_BUFFER;
        }
        blocksAt[slot] = blocks;
        lastWqeStart = start;
        producerIndex += blocks;
        wqesPosted++;
        return blocks;
    }

    private boolean signalThisOne() {
        if (++sinceSignal >= moderation) {
            sinceSignal = 0;
            signalled++;
            return true;
        }
        return false;
    }

    /**
     * Tells the device about every WQE posted since the last doorbell; one call per batch. Returns false when
     * there was nothing new. The order of stores is the doorbell protocol of rawqp.md §2.3 (rdma-core
     * {@code post_send_db}, XLIO {@code ring_doorbell}, DPDK {@code mlx5_tx_dbrec_cond_wmb}).
     */
    public boolean ringDoorbell() {
        if (producerIndex == doorbellIndex) {
            return false;
        }
        // Step 2, udma_to_device_barrier: every WQE store must be visible before the doorbell record says the WQEs
        // exist. x86 never reorders stores with stores, so this only keeps the JIT from sinking WQE stores past
        // the record; on arm64 it is the dmb the device needs.
        VarHandle.releaseFence();
        // Step 3: the doorbell record (ordinary write-back memory the device reads) gets the new producer index.
        DOORBELL_RECORD.setRelease(doorbellRecord, SEND_DOORBELL_OFFSET, producerIndex & 0xFFFF);
        // Step 4, mmio_wc_start (sfence on x86): the record must be globally visible before the doorbell register
        // write, which goes through a write-combining mapping that can pass ordinary stores. Java has no sfence; a
        // full fence is a locked instruction on x86, which drains the store buffer and, per the Intel SDM (vol. 3
        // §11.3.1), evicts write-combining buffers: at least as strong.
        VarHandle.fullFence();
        // Step 5: the doorbell itself, the first 8 bytes of the last WQE's control segment in one 64-bit store, so
        // the device never sees half a value. We do not copy whole WQEs into the BlueFlame buffer (libmlx5's
        // mlx5_bf_copy), so, as XLIO does, the same register offset is used every time.
        // Step 6, mmio_flush_writes (sfence): a volatile store on x86 is the store followed by a locked
        // instruction, which flushes the write-combining buffer so the doorbell leaves now.
        BLUE_FLAME.setVolatile(blueFlame, 0L, wqe.wrap(queue, lastWqeStart).controlQword());
        doorbellIndex = producerIndex;
        doorbells++;
        return true;
    }

    /**
     * A send CQE (or error CQE) named WQE {@code wqeCounter} (16 bits): that WQE and every one before it are done
     * and their buffers go back to the pool. Returns the number of WQEs completed, or -1 when the counter names no
     * WQE in flight (counted, ignored).
     */
    public int complete(int wqeCounter) {
        final int inFlight = producerIndex - consumerIndex;
        if (((wqeCounter - consumerIndex) & 0xFFFF) >= inFlight) {
            badCompletions++;
            return -1;
        }
        int completed = 0;
        while (producerIndex != consumerIndex) {
            final int started = consumerIndex;
            final int slot = started & (wqeCount - 1);
            releaseBuffer(slot);
            consumerIndex += blocksAt[slot];
            completed++;
            if ((started & 0xFFFF) == wqeCounter) {
                return completed;
            }
        }
        // The counter pointed inside a multi-block WQE: no real device does that. Everything is reclaimed.
        badCompletions++;
        return completed;
    }

    private void releaseBuffer(int slot) {
        final int buffer = bufferAt[slot];
        if (buffer != NO_BUFFER) {
            pool.release(buffer);
            bufferAt[slot] = NO_BUFFER;
        }
    }

    /** Gives back the buffers of every WQE still in flight, when the QP is being destroyed. */
    public void releaseAll() {
        while (producerIndex != consumerIndex) {
            final int slot = consumerIndex & (wqeCount - 1);
            releaseBuffer(slot);
            consumerIndex += Math.max(1, blocksAt[slot]);
        }
    }

    public int producerIndex() {
        return producerIndex;
    }

    public int consumerIndex() {
        return consumerIndex;
    }

    public int wqeCount() {
        return wqeCount;
    }

    /** WQEs built since the queue was created. */
    public long wqesPosted() {
        return wqesPosted;
    }

    /** Doorbells rung: one per batch that had WQEs. */
    public long doorbells() {
        return doorbells;
    }

    /** WQEs that asked for a CQE. */
    public long signalled() {
        return signalled;
    }

    /** Completions whose wqe_counter named no WQE in flight. */
    public long badCompletions() {
        return badCompletions;
    }
}
