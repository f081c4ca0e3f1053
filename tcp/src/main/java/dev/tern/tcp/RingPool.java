package dev.tern.tcp;

import dev.tern.core.io.ByteRing;
import dev.tern.core.memory.PageMemory;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;

/**
 * Per-connection off-heap memory: socket buffers ({@link ByteRing}s) and records of sent segments
 * ({@link SentSegments}), carved from slabs of pages mapped from the system ({@link PageMemory}), pooled by size (a
 * power of two) and reused, so steady connection churn allocates nothing.
 *
 * <pre>
 *   slab (1 MiB, or one ring when rings are larger), page-aligned
 *   +------------+------------+------------+-----+
 *   | ring 4 KiB | ring 4 KiB | ring 4 KiB | ... |     a ring never straddles two slabs
 *   +------------+------------+------------+-----+
 * </pre>
 *
 * <p>Memory follows use. A slab's pages become resident only when a connection writes into them (the kernel fills
 * them with zeros on first touch), so an idle connection that carried one request costs the pages it touched, not
 * its buffer sizes. A ring given back is emptied (the stack thread consumes what is left, on both rings: the owner
 * released the handle, so nobody else touches it) and kept for the next connection of that size: up to
 * {@link #WARM_BYTES} of them with their pages (reused without a page fault); beyond that its pages go back to the
 * system ({@code madvise(MADV_DONTNEED)}) and the ring waits, costing address space only. The pages go at the end of
 * the layer's poll ({@link #flushDiscards}), all that poll released together, adjacent ones in one call: a call costs
 * a flush of every other thread's address translations whatever its length, about 45 µs on a 2-vCPU VM, so a ring
 * at a time cost a server 80 µs per idle connection let go and held its stack 0.4-0.6 s a second while thousands of
 * new connections went idle each second. Objects smaller
 * than a page (the records of sent segments of small send buffers: 512 bytes for 4 KiB) share pages and are not
 * handed back. After a burst of ten thousand connections closes, resident memory returns to where it was, give or
 * take the warm pool and those small records.
 *
 * <p>Owned by the shard thread; not thread-safe.
 */
final class RingPool implements AutoCloseable {
    private static final int SLAB_BYTES = 1 << 20;
    private static final int CLASSES = 31;
    /** Released ring and record memory kept resident for reuse; the rest goes back to the system. */
    static final long WARM_BYTES = 16L << 20;

    private final Arena arena = Arena.ofShared();
    private final FreeLists<ByteRing> warmRings = new FreeLists<>();
    private final FreeLists<ByteRing> coldRings = new FreeLists<>();
    private final FreeLists<SentSegments> warmRecords = new FreeLists<>();
    private final FreeLists<SentSegments> coldRecords = new FreeLists<>();
    private final ArrayList<MemorySegment> slabs = new ArrayList<>();
    /** The slab being carved for objects smaller than a page [0] and for page-sized and larger ones [1]. */
    private final MemorySegment[] current = new MemorySegment[2];
    private final long[] used = new long[2];
    private long allocatedBytes;
    private long inUseBytes;
    private long warmBytes;
    private long discardedBytes;
    /**
     * Rings and records released beyond the warm pool whose pages have not gone back yet: not reused before
     * {@link #flushDiscards}, which moves them to the cold lists.
     */
    private final FreeLists<ByteRing> coolingRings = new FreeLists<>();
    private final FreeLists<SentSegments> coolingRecords = new FreeLists<>();
    /**
     * Page ranges waiting to go back to the system: each its page-aligned address with log2 of its length in the low
     * bits, so that sorting them sorts by address and adjacent ranges join.
     */
    private long[] pendingRanges = new long[64];
    private int pendingCount;
    private long discardCalls;

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

        /** Moves every item to {@code other}, class by class. */
        void moveAllTo(FreeLists<T> other) {
            for (int sizeClass = 0; sizeClass < CLASSES; sizeClass++) {
                T item;
                while ((item = take(sizeClass)) != null) {
                    other.give(sizeClass, item);
                }
            }
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
        final int sizeClass = Integer.numberOfTrailingZeros(size);
        ByteRing ring = warmRings.take(sizeClass);
        if (ring != null) {
            warmBytes -= size;
            return ring;
        }
        ring = coldRings.take(sizeClass);
        if (ring == null && pendingCount > 0) {
            flushDiscards(); // rings released this poll become reusable rather than new memory being carved
            ring = coldRings.take(sizeClass);
        }
        return ring != null ? ring : new ByteRing(carve(size));
    }

    /** Takes a ring back, empty. */
    void release(ByteRing ring) {
        ring.consume(ring.available());
        final int size = ring.capacity();
        inUseBytes -= size;
        if (keepWarm(size)) {
            warmRings.give(Integer.numberOfTrailingZeros(size), ring);
        } else if (discardLater(ring.memory())) {
            coolingRings.give(Integer.numberOfTrailingZeros(size), ring);
        } else {
            coldRings.give(Integer.numberOfTrailingZeros(size), ring);
        }
    }

    /** A record of {@code entries} sent segments (a power of two), empty. */
    SentSegments acquireRecord(int entries) {
        final int size = entries * SentSegments.ENTRY_BYTES;
        inUseBytes += size;
        final int sizeClass = Integer.numberOfTrailingZeros(size);
        SentSegments record = warmRecords.take(sizeClass);
        if (record != null) {
            warmBytes -= size;
        } else {
            record = coldRecords.take(sizeClass);
            if (record == null && pendingCount > 0) {
                flushDiscards();
                record = coldRecords.take(sizeClass);
            }
        }
        if (record == null) {
            return new SentSegments(carve(size));
        }
        record.clear();
        return record;
    }

    void releaseRecord(SentSegments record) {
        final int size = record.capacity() * SentSegments.ENTRY_BYTES;
        inUseBytes -= size;
        if (keepWarm(size)) {
            warmRecords.give(Integer.numberOfTrailingZeros(size), record);
        } else if (discardLater(record.memory())) {
            coolingRecords.give(Integer.numberOfTrailingZeros(size), record);
        } else {
            coldRecords.give(Integer.numberOfTrailingZeros(size), record);
        }
    }

    /**
     * Queues {@code memory}'s pages to go back to the system at the next {@link #flushDiscards}; false when it is no
     * whole page (a record smaller than a page shares its page), and nothing is queued.
     */
    private boolean discardLater(MemorySegment memory) {
        final long size = memory.byteSize();
        if (!PageMemory.available() || size < PageMemory.pageSize()) {
            return false;
        }
        // Every object of a page or more starts on a page and is a power of two long (see carve).
        if (pendingCount == pendingRanges.length) {
            pendingRanges = Arrays.copyOf(pendingRanges, pendingCount * 2);
        }
        pendingRanges[pendingCount++] = memory.address() | Long.numberOfTrailingZeros(size);
        return true;
    }

    /**
     * Hands the pages of everything released beyond the warm pool since the last flush back to the system, adjacent
     * ranges in one call, and makes those rings and records reusable. The layer calls it once per poll (and
     * {@link #acquire} when only they could serve). Returns the bytes discarded.
     */
    long flushDiscards() {
        if (pendingCount == 0) {
            return 0;
        }
        Arrays.sort(pendingRanges, 0, pendingCount);
        final long lowBits = PageMemory.pageSize() - 1;
        long discarded = 0;
        long runStart = 0;
        long runEnd = 0;
        for (int i = 0; i < pendingCount; i++) {
            final long start = pendingRanges[i] & ~lowBits;
            final long end = start + (1L << (pendingRanges[i] & lowBits));
            if (start != runEnd) {
                discardCalls++;
                discarded += PageMemory.discard(runStart, runEnd - runStart);
                runStart = start;
            }
            runEnd = end;
        }
        discarded += PageMemory.discard(runStart, runEnd - runStart);
        pendingCount = 0;
        coolingRings.moveAllTo(coldRings);
        coolingRecords.moveAllTo(coldRecords);
        discardedBytes += discarded;
        return discarded;
    }

    /**
     * Queues the pages of a ring still attached to go back to the system at the next {@link #flushDiscards} (it must
     * hold nothing anyone will read, then and until the flush: an empty receive ring, whose producer is the caller's
     * thread, flushed before that thread stores into it again); counted as returned then. Returns the bytes queued.
     */
    long discardInPlace(ByteRing ring) {
        return discardLater(ring.memory()) ? ring.capacity() : 0;
    }

    private boolean keepWarm(int size) {
        if (warmBytes + size > WARM_BYTES) {
            return false;
        }
        warmBytes += size;
        return true;
    }

    /**
     * Memory of {@code size} bytes (a power of two) from a slab, or its own mapping when it is a slab or more. Objects
     * of a page or more come from one slab and smaller ones from another, so every ring of whole pages starts on a
     * page and its pages can go back to the system on their own.
     */
    private MemorySegment carve(int size) {
        if (size >= SLAB_BYTES) {
            allocatedBytes += size;
            final MemorySegment own = PageMemory.map(size, arena);
            slabs.add(own);
            return own;
        }
        final int kind = size >= PageMemory.pageSize() ? 1 : 0;
        if (current[kind] == null || used[kind] + size > SLAB_BYTES) {
            current[kind] = PageMemory.map(SLAB_BYTES, arena);
            slabs.add(current[kind]);
            used[kind] = 0;
            allocatedBytes += SLAB_BYTES;
        }
        final MemorySegment memory = current[kind].asSlice(used[kind], size);
        used[kind] += size;
        return memory;
    }

    /** Bytes of all slabs resident now (system calls over every slab: for statistics and tests, not per packet). */
    long residentBytes() {
        long resident = 0;
        for (MemorySegment s : slabs) {
            resident += PageMemory.residentBytes(s);
        }
        return resident;
    }

    /** System calls that handed pages back so far (each a run of adjacent ranges). */
    long discardCalls() {
        return discardCalls;
    }

    /** Bytes handed back to the system so far, by rings and records released beyond the warm pool. */
    long discardedBytes() {
        return discardedBytes;
    }

    /** Off-heap bytes mapped for rings and records so far (address space; see {@link #residentBytes}). */
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
