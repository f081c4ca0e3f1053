package dev.tern.core.memory;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * Fixed-size frame buffers carved from one off-heap slab.
 *
 * <p>The slab is a single {@link MemorySegment} aligned to a page, so a NIC driver (rawqp) can register it once as
 * one memory region and refer to every buffer by offset. A buffer is named by its index; acquire and release move
 * indices on an int stack and never allocate.
 *
 * <pre>
 *  slab (page aligned)
 *  +----------------+----------------+-----+--------------------+
 *  | buffer 0       | buffer 1       | ... | buffer count-1     |
 *  +----------------+----------------+-----+--------------------+
 *  |<- bufferSize ->|   bufferSize is a multiple of 64 (one cache line)
 *  offset(i) = i * bufferSize
 * </pre>
 *
 * <p>Each buffer's state (free or in use) is tracked, so a double release fails at once and a test can ask for
 * buffers that were never returned ({@link #inUse()}, {@link #assertNoLeaks()}).
 *
 * <p>Owned by one thread; not thread-safe. A structure shared between threads guards its pool itself.
 */
public final class FramePool implements AutoCloseable {
    public static final int ALIGNMENT = 4096;
    private static final int BUFFER_ALIGNMENT = 64;

    private final Arena arena;
    private final MemorySegment slab;
    private final int bufferSize;
    private final int count;
    private final int[] freeStack;
    private final long[] inUseBits;
    private int freeTop;

    private FramePool(int count, int bufferSize) {
        if (count <= 0 || bufferSize <= 0) {
            throw new IllegalArgumentException("frame pool needs count > 0 and bufferSize > 0, got " + count + " x " + bufferSize);
        }
        this.bufferSize = (bufferSize + BUFFER_ALIGNMENT - 1) & -BUFFER_ALIGNMENT;
        this.count = count;
        this.arena = Arena.ofShared();
        this.slab = arena.allocate((long) this.bufferSize * count, ALIGNMENT);
        this.freeStack = new int[count];
        this.inUseBits = new long[(count + 63) >>> 6];
        for (int i = 0; i < count; i++) {
            freeStack[i] = count - 1 - i;
        }
        this.freeTop = count;
    }

    /** A pool of {@code count} buffers of at least {@code bufferSize} bytes each. */
    public static FramePool allocate(int count, int bufferSize) {
        return new FramePool(count, bufferSize);
    }

    /** Takes a free buffer; returns its index, or -1 when every buffer is in use. */
    public int acquire() {
        if (freeTop == 0) {
            return -1;
        }
        final int index = freeStack[--freeTop];
        inUseBits[index >>> 6] |= 1L << index;
        return index;
    }

    /** Returns a buffer taken by {@link #acquire()}. Releasing a free buffer is a bug and throws. */
    public void release(int index) {
        final long bit = 1L << index;
        if ((inUseBits[index >>> 6] & bit) == 0) {
            throw new IllegalStateException("frame buffer " + index + " released but not in use");
        }
        inUseBits[index >>> 6] &= ~bit;
        freeStack[freeTop++] = index;
    }

    public boolean isInUse(int index) {
        return (inUseBits[index >>> 6] & (1L << index)) != 0;
    }

    /** Offset of buffer {@code index} in {@link #slab()}. */
    public long offset(int index) {
        return (long) index * bufferSize;
    }

    public MemorySegment slab() {
        return slab;
    }

    public int bufferSize() {
        return bufferSize;
    }

    public int capacity() {
        return count;
    }

    public int available() {
        return freeTop;
    }

    public int inUse() {
        return count - freeTop;
    }

    /** For tests: fails, naming the first leaked buffers, unless every buffer has been released. */
    public void assertNoLeaks() {
        if (inUse() != 0) {
            final StringBuilder leaked = new StringBuilder();
            for (int i = 0, shown = 0; i < count && shown < 8; i++) {
                if (isInUse(i)) {
                    leaked.append(shown++ == 0 ? "" : ", ").append(i);
                }
            }
            throw new IllegalStateException(inUse() + " frame buffer(s) never released, e.g. " + leaked);
        }
    }

    @Override
    public void close() {
        arena.close();
    }
}
