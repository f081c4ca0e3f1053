package dev.tern.lab.link;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * Fixed-size frame buffers off-heap, with a stack of free ones, for frames the lab holds: queued at the bottleneck or
 * in a delay line. Each slot also carries the frame's length, the instant it entered the queue and its flow.
 * Nothing is allocated after construction. Owned by one thread.
 */
public final class FrameSlots implements AutoCloseable {
    public static final int SLOT_BYTES = 2048;

    private final Arena arena = Arena.ofConfined();
    private final MemorySegment slab;
    private final int[] free;
    private int freeCount;
    private final int[] length;
    private final long[] enqueuedNs;
    private final int[] flow;

    public FrameSlots(int count) {
        if (count < 1) {
            throw new IllegalArgumentException("frame slots must be at least 1, got " + count);
        }
        this.slab = arena.allocate((long) count * SLOT_BYTES, 64);
        this.free = new int[count];
        this.length = new int[count];
        this.enqueuedNs = new long[count];
        this.flow = new int[count];
        for (int i = 0; i < count; i++) {
            free[i] = count - 1 - i;
        }
        this.freeCount = count;
    }

    /** A free slot, or -1 when all are held. */
    public int acquire() {
        return freeCount == 0 ? -1 : free[--freeCount];
    }

    public void release(int slot) {
        free[freeCount++] = slot;
    }

    /** Copies a frame into a free slot and returns it, or -1 when none is free or the frame does not fit. */
    public int copyIn(MemorySegment from, long offset, int frameLength, int flowIndex) {
        if (frameLength > SLOT_BYTES) {
            return -1;
        }
        final int slot = acquire();
        if (slot >= 0) {
            MemorySegment.copy(from, offset, slab, offset(slot), frameLength);
            length[slot] = frameLength;
            flow[slot] = flowIndex;
        }
        return slot;
    }

    public MemorySegment slab() {
        return slab;
    }

    public long offset(int slot) {
        return (long) slot * SLOT_BYTES;
    }

    public int length(int slot) {
        return length[slot];
    }

    public void length(int slot, int bytes) {
        length[slot] = bytes;
    }

    public long enqueuedNs(int slot) {
        return enqueuedNs[slot];
    }

    public void enqueuedNs(int slot, long ns) {
        enqueuedNs[slot] = ns;
    }

    public int flow(int slot) {
        return flow[slot];
    }

    public void flow(int slot, int flowIndex) {
        flow[slot] = flowIndex;
    }

    public int capacity() {
        return free.length;
    }

    public int inUse() {
        return free.length - freeCount;
    }

    @Override
    public void close() {
        arena.close();
    }
}
