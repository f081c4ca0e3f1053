package dev.tern.tcp;

import dev.tern.core.io.ByteRing;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;

/**
 * Per-connection off-heap memory: socket buffers ({@link ByteRing}s) and records of sent segments
 * ({@link SentSegments}), carved from off-heap slabs, pooled by size (a power of two) and reused, so steady connection
 * churn allocates nothing.
 *
 * <pre>
 *   slab (1 MiB, or one ring when rings are larger)
 *   +------------+------------+------------+-----+
 *   | ring 4 KiB | ring 4 KiB | ring 4 KiB | ... |     a ring never straddles two slabs
 *   +------------+------------+------------+-----+
 * </pre>
 *
 * <p>A ring given back is emptied (the stack thread consumes what is left, on both rings: the owner released the
 * handle, so nobody else touches it) and kept for the next connection of that size. Ring memory is not returned to
 * the system until the layer closes.
 *
 * <p>Owned by the shard thread; not thread-safe.
 */
final class RingPool implements AutoCloseable {
    private static final int SLAB_BYTES = 1 << 20;
    private static final int CLASSES = 31;

    private final Arena arena = Arena.ofShared();
    private final FreeLists<ByteRing> rings = new FreeLists<>();
    private final FreeLists<SentSegments> records = new FreeLists<>();
    private MemorySegment slab;
    private long slabUsed;
    private long allocatedBytes;
    private long inUseBytes;

    /** Objects given back, by size class (log2 of their memory's size), reused before anything new is carved. */
    private static final class FreeLists<T> {
        private final Object[][] stacks = new Object[CLASSES][];
        private final int[] counts = new int[CLASSES];

        @SuppressWarnings("unchecked")
        T take(int sizeClass) {
            if (counts[sizeClass] == 0) {
                return null;
            }
            final Object[] stack = stacks[sizeClass];
            final T item = (T) stack[--counts[sizeClass]];
            stack[counts[sizeClass]] = null;
            return item;
        }

        void give(int sizeClass, T item) {
            Object[] stack = stacks[sizeClass];
            if (stack == null) {
                stack = new Object[64];
                stacks[sizeClass] = stack;
            } else if (counts[sizeClass] == stack.length) {
                stack = Arrays.copyOf(stack, stack.length * 2);
                stacks[sizeClass] = stack;
            }
            stack[counts[sizeClass]++] = item;
        }
    }

    /** A ring of {@code size} bytes (a power of two). */
    ByteRing acquire(int size) {
        inUseBytes += size;
        final ByteRing ring = rings.take(Integer.numberOfTrailingZeros(size));
        return ring != null ? ring : new ByteRing(carve(size));
    }

    /** Takes a ring back, empty. */
    void release(ByteRing ring) {
        ring.consume(ring.available());
        inUseBytes -= ring.capacity();
        rings.give(Integer.numberOfTrailingZeros(ring.capacity()), ring);
    }

    /** A record of {@code entries} sent segments (a power of two), empty. */
    SentSegments acquireRecord(int entries) {
        final int size = entries * SentSegments.ENTRY_BYTES;
        inUseBytes += size;
        final SentSegments record = records.take(Integer.numberOfTrailingZeros(size));
        if (record == null) {
            return new SentSegments(carve(size));
        }
        record.clear();
        return record;
    }

    void releaseRecord(SentSegments record) {
        final int size = record.capacity() * SentSegments.ENTRY_BYTES;
        inUseBytes -= size;
        records.give(Integer.numberOfTrailingZeros(size), record);
    }

    /** Memory of {@code size} bytes (a power of two) from the current slab, or its own when it is a slab or more. */
    private MemorySegment carve(int size) {
        if (size >= SLAB_BYTES) {
            allocatedBytes += size;
            return arena.allocate(size, 64);
        }
        if (slab == null || slabUsed + size > SLAB_BYTES) {
            slab = arena.allocate(SLAB_BYTES, 4096);
            slabUsed = 0;
            allocatedBytes += SLAB_BYTES;
        }
        final MemorySegment memory = slab.asSlice(slabUsed, size);
        slabUsed += size;
        return memory;
    }

    /** Off-heap bytes taken from the system for rings and records so far. */
    long allocatedBytes() {
        return allocatedBytes;
    }

    /** Ring and record bytes attached to connections now. */
    long inUseBytes() {
        return inUseBytes;
    }

    @Override
    public void close() {
        arena.close();
    }
}
