package dev.tern.rawqp.mlx5;

import dev.tern.core.memory.FramePool;
import dev.tern.rawqp.ffm.Mlx5DvLayouts;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * The software side of an mlx5 receive queue (a plain cyclic RQ): each WQE points at one frame buffer of the
 * registered slab, and the device fills them in order.
 *
 * <pre>
 *   RQ buffer: wqeCount WQEs of stride bytes
 *   +--------------------------------------+----------------------------------+
 *   | data seg: bufferSize, lkey, &buf[i]  | (stride > 16) data seg: 0, INVALID_LKEY, 0 |
 *   +--------------------------------------+----------------------------------+
 *   doorbell record [MLX5_RCV_DBR] = head & 0xffff: WQEs handed to the device so far
 * </pre>
 *
 * <p>Slot {@code i} owns buffer {@code i} of the ring for the link's lifetime: a frame is handed up in place and is
 * done with when the receive callback returns, so "replenishing" a consumed WQE means only giving the same WQE
 * back by advancing {@code head}; the WQE bytes never change after construction. Frames complete in posting order
 * on a cyclic RQ (rdma-core reads the slot from its own tail counter, {@code handle_responder}), so the tail
 * counter names the slot of each receive CQE.
 *
 * <p>Owned by the link's shard thread; not thread-safe. Allocation-free after construction.
 */
public final class ReceiveQueue {
    private static final VarHandle DOORBELL_RECORD = ValueLayout.JAVA_INT.withOrder(ByteOrder.BIG_ENDIAN).varHandle();
    private static final long RECEIVE_DOORBELL_OFFSET = Mlx5DvLayouts.MLX5_RCV_DBR * 4L;

    private final MemorySegment doorbellRecord;
    private final FramePool pool;
    private final MemorySegment queue;
    private final int stride;
    private final int lkey;
    private final int wqeCount;
    private final int[] bufferAt;
    private int head;
    private int tail;
    private boolean armed;

    /**
     * Takes {@code rq.wqe_cnt} buffers from {@code pool} and writes every receive WQE. The device is not told yet:
     * see {@link #arm()}.
     *
     * @param startIndex the counter to start from: 0 on hardware; tests start near the 16-bit wrap
     */
    public ReceiveQueue(Mlx5Rings rings, int lkey, FramePool pool, int startIndex) {
        this.doorbellRecord = rings.doorbellRecord();
        this.pool = pool;
        this.wqeCount = rings.receiveWqeCount();
        this.bufferAt = new int[wqeCount];
        this.queue = rings.receiveQueue();
        this.stride = rings.receiveStride();
        this.lkey = lkey;
        for (int slot = 0; slot < wqeCount; slot++) {
            final int buffer = pool.acquire();
            if (buffer < 0) {
                throw new IllegalArgumentException("frame pool of " + pool.capacity() + " buffers cannot fill a " + wqeCount + "-entry receive queue");
            }
            pointAt(slot, buffer);
            if (stride > Mlx5DataSegment.SIZE) {
                // The WQE has room for more scatter entries than we use: end the list (rdma-core mlx5_post_recv).
                Mlx5DataSegment.write(queue, (long) slot * stride + Mlx5DataSegment.SIZE, 0, Mlx5DataSegment.INVALID_LKEY, 0);
            }
        }
        this.tail = startIndex;
        this.head = startIndex + wqeCount;
    }

    /**
     * Hands every WQE to the device by writing the doorbell record. For a raw-packet QP this must wait until the
     * QP is in RTR: its RQ is ready already in INIT, so libmlx5 itself holds the record back until the RTR
     * transition (rawqp.md §1.1); we do the same.
     */
    public void arm() {
        armed = true;
        publishHead();
    }

    /** The pool buffer of the WQE the next receive CQE completes. */
    public int nextBuffer() {
        return bufferAt[tail & (wqeCount - 1)];
    }

    /** The counter of the WQE the next receive CQE completes (what the device reports as {@code wqe_counter}). */
    public int tail() {
        return tail;
    }

    /** The device filled the WQE at the tail. */
    public void consume() {
        tail++;
    }

    /**
     * Puts slab buffer {@code fresh} in the WQE consumed last (the frame being handed up keeps its own buffer, lent
     * to the stack): its data segment points at the fresh buffer before {@link #replenish} gives it back to the
     * device.
     */
    public void replaceLastConsumed(int fresh) {
        pointAt((tail - 1) & (wqeCount - 1), fresh);
    }

    /** The WQE in {@code slot} receives into slab buffer {@code buffer}: its first data segment points there. */
    private void pointAt(int slot, int buffer) {
        bufferAt[slot] = buffer;
        Mlx5DataSegment.write(queue, (long) slot * stride, pool.bufferSize(), lkey, pool.slab().address() + pool.offset(buffer));
    }

    /** Gives every consumed WQE back to the device; once per batch, after the frames were handled. */
    public void replenish() {
        head = tail + wqeCount;
        if (armed) {
            publishHead();
        }
    }

    private void publishHead() {
        // The frames in these buffers were handled before this point; release ordering keeps those reads (and,
        // were the WQEs rewritten, those stores) before the record that lets the device reuse the buffers.
        DOORBELL_RECORD.setRelease(doorbellRecord, RECEIVE_DOORBELL_OFFSET, head & 0xFFFF);
    }

    /** Returns every buffer to the pool, when the QP is being destroyed. */
    public void releaseAll() {
        for (int slot = 0; slot < wqeCount; slot++) {
            if (bufferAt[slot] >= 0) {
                pool.release(bufferAt[slot]);
                bufferAt[slot] = -1;
            }
        }
    }

    public int wqeCount() {
        return wqeCount;
    }

    public int head() {
        return head;
    }
}
