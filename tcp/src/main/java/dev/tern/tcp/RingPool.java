package dev.tern.tcp;

import dev.tern.core.io.ByteRing;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;

/**
 * Socket buffers for connections: {@link ByteRing}s whose memory is carved from off-heap slabs, pooled by size (a
 * power of two) and reused, so steady connection churn allocates nothing.
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
    private final ByteRing[][] free = new ByteRing[CLASSES][];
    private final int[] freeCount = new int[CLASSES];
    private MemorySegment slab;
    private long slabUsed;
    private long allocatedBytes;
    private long inUseBytes;

    /** A ring of {@code size} bytes (a power of two). */
    ByteRing acquire(int size) {
        final int sizeClass = Integer.numberOfTrailingZeros(size);
        if (freeCount[sizeClass] > 0) {
            final ByteRing ring = free[sizeClass][--freeCount[sizeClass]];
            free[sizeClass][freeCount[sizeClass]] = null;
            inUseBytes += size;
            return ring;
        }
        final MemorySegment memory;
        if (size >= SLAB_BYTES) {
            memory = arena.allocate(size, 64);
            allocatedBytes += size;
        } else {
            if (slab == null || slabUsed + size > SLAB_BYTES) {
                slab = arena.allocate(SLAB_BYTES, 4096);
                slabUsed = 0;
                allocatedBytes += SLAB_BYTES;
            }
            memory = slab.asSlice(slabUsed, size);
            slabUsed += size;
        }
        inUseBytes += size;
        return new ByteRing(memory);
    }

    /** Takes a ring back, empty. */
    void release(ByteRing ring) {
        ring.consume(ring.available());
        final int size = ring.capacity();
        final int sizeClass = Integer.numberOfTrailingZeros(size);
        ByteRing[] stack = free[sizeClass];
        if (stack == null) {
            stack = new ByteRing[64];
            free[sizeClass] = stack;
        } else if (freeCount[sizeClass] == stack.length) {
            stack = Arrays.copyOf(stack, stack.length * 2);
            free[sizeClass] = stack;
        }
        stack[freeCount[sizeClass]++] = ring;
        inUseBytes -= size;
    }

    /** Off-heap bytes taken from the system for rings so far. */
    long allocatedBytes() {
        return allocatedBytes;
    }

    /** Ring bytes attached to connections now. */
    long inUseBytes() {
        return inUseBytes;
    }

    @Override
    public void close() {
        arena.close();
    }
}
