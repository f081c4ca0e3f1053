package dev.tern.tcp;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Out-of-order data received ahead of RCV.NXT (RFC 9293 §3.10.7.4, "segment text": segments beyond RCV.NXT "may be
 * held for later processing"), as sequence ranges.
 *
 * <p>The bytes themselves are already in place: a segment beyond RCV.NXT is copied into the connection's receive
 * ring at its final position (RCV.NXT maps to the ring's producer position), which the advertised window guarantees
 * is free. What is kept here is which ranges arrived, so that RCV.NXT can jump over them when the hole fills, and
 * so that SACK blocks (RFC 2018) can report them, most recent first.
 *
 * <p>Bounded twice: a connection holds at most {@code rangesPerBlock} disjoint ranges (a segment that would need
 * one more is dropped, the sender retransmits it), and only {@code blocks} connections hold out-of-order data at
 * once (the others drop such segments until a block frees). Both drops are counted by the caller.
 *
 * <pre>
 *  blocks: one off-heap region, blocks x (8 + 12 x rangesPerBlock) bytes
 *   +-------+-------+-------+-------+-------+-------+-------+-------+-----
 *   | count | clock | start0| end0  |stamp0 | start1| end1  |stamp1 | ...     ranges sorted by start;
 *   +-------+-------+-------+-------+-------+-------+-------+-------+-----    stamp = clock when last grown
 * </pre>
 *
 * <p>Owned by the shard thread; not thread-safe.
 */
public final class ReassemblyQueue implements AutoCloseable {
    /** {@link #add} results. A new range, disjoint from every range held. */
    public static final int ADDED = 0;
    /** Every byte of the range was already held (a duplicate: report it as D-SACK). */
    public static final int DUPLICATE = 1;
    /** No room for another disjoint range: the segment is dropped. */
    public static final int FULL = 2;
    /** The range overlapped or touched held ranges and merged with them (new bytes, no new range). */
    public static final int MERGED = 3;

    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT;
    // Block header fields, then RANGE_BYTES per range; ReassemblyQueueLayoutTest checks both layouts.
    private static final int COUNT_OFFSET = 0;
    private static final int CLOCK_OFFSET = 4;
    private static final int HEADER_BYTES = 8;
    private static final int RANGE_START_OFFSET = 0;
    private static final int RANGE_END_OFFSET = 4;
    private static final int RANGE_STAMP_OFFSET = 8;
    private static final int RANGE_BYTES = 12;

    private final Arena arena;
    private final MemorySegment memory;
    private final int rangesPerBlock;
    private final int blockBytes;
    private final int[] free;
    private int freeCount;

    public ReassemblyQueue(int blocks, int rangesPerBlock) {
        this.rangesPerBlock = rangesPerBlock;
        this.blockBytes = HEADER_BYTES + RANGE_BYTES * rangesPerBlock;
        this.arena = Arena.ofShared();
        this.memory = arena.allocate((long) blocks * blockBytes, 64);
        this.free = new int[blocks];
        for (int i = 0; i < blocks; i++) {
            free[i] = blocks - 1 - i;
        }
        this.freeCount = blocks;
    }

    /** Takes an empty block; returns its index or -1 when all are taken. */
    public int acquire() {
        if (freeCount == 0) {
            return -1;
        }
        final int block = free[--freeCount];
        memory.set(INT, base(block) + COUNT_OFFSET, 0);
        memory.set(INT, base(block) + CLOCK_OFFSET, 0);
        return block;
    }

    public void release(int block) {
        free[freeCount++] = block;
    }

    public int available() {
        return freeCount;
    }

    public int capacity() {
        return free.length;
    }

    /** Bytes of the off-heap region. */
    public long memoryBytes() {
        return memory.byteSize();
    }

    private long base(int block) {
        return (long) block * blockBytes;
    }

    private long range(int block, int i) {
        return base(block) + HEADER_BYTES + (long) i * RANGE_BYTES;
    }

    public int count(int block) {
        return memory.get(INT, base(block) + COUNT_OFFSET);
    }

    public int start(int block, int i) {
        return memory.get(INT, range(block, i) + RANGE_START_OFFSET);
    }

    public int end(int block, int i) {
        return memory.get(INT, range(block, i) + RANGE_END_OFFSET);
    }

    /** When range {@code i} last grew (larger is more recent). */
    public int stamp(int block, int i) {
        return memory.get(INT, range(block, i) + RANGE_STAMP_OFFSET);
    }

    private void set(int block, int i, int start, int end, int stamp) {
        final long at = range(block, i);
        memory.set(INT, at + RANGE_START_OFFSET, start);
        memory.set(INT, at + RANGE_END_OFFSET, end);
        memory.set(INT, at + RANGE_STAMP_OFFSET, stamp);
    }

    private void copy(int block, int from, int to) {
        set(block, to, start(block, from), end(block, from), stamp(block, from));
    }

    /**
     * Records that {@code [start, end)} arrived (a non-empty range). Ranges it overlaps or touches merge with it.
     * Returns {@link #ADDED}, {@link #MERGED}, {@link #DUPLICATE} or {@link #FULL}.
     */
    public int add(int block, int start, int end) {
        final int count = count(block);
        // First range that ends at or after start (it may overlap or touch the new one).
        int first = 0;
        while (first < count && SeqNum.lt(end(block, first), start)) {
            first++;
        }
        // Ranges first..last-1 overlap or touch [start, end).
        int last = first;
        while (last < count && SeqNum.le(start(block, last), end)) {
            last++;
        }
        final int stamp = memory.get(INT, base(block) + CLOCK_OFFSET) + 1;
        memory.set(INT, base(block) + CLOCK_OFFSET, stamp);
        if (last - first == 1 && SeqNum.le(start(block, first), start) && SeqNum.ge(end(block, first), end)) {
            // RFC 2883 §4: the range holding a duplicate is reported right after its D-SACK block, so it counts as
            // the most recent.
            set(block, first, start(block, first), end(block, first), stamp);
            return DUPLICATE;
        }
        if (last == first) {
            if (count == rangesPerBlock) {
                return FULL;
            }
            for (int i = count; i > first; i--) {
                copy(block, i - 1, i);
            }
            set(block, first, start, end, stamp);
            memory.set(INT, base(block) + COUNT_OFFSET, count + 1);
            return ADDED;
        }
        final int mergedStart = SeqNum.min(start, start(block, first));
        final int mergedEnd = SeqNum.max(end, end(block, last - 1));
        set(block, first, mergedStart, mergedEnd, stamp);
        final int removed = last - first - 1;
        if (removed > 0) {
            for (int i = last; i < count; i++) {
                copy(block, i, i - removed);
            }
            memory.set(INT, base(block) + COUNT_OFFSET, count - removed);
        }
        return MERGED;
    }

    /** The first range (lowest in sequence) sharing a byte with {@code [start, end)}, or -1 when none does. */
    public int firstOverlap(int block, int start, int end) {
        final int count = count(block);
        for (int i = 0; i < count; i++) {
            if (SeqNum.lt(start(block, i), end) && SeqNum.gt(end(block, i), start)) {
                return i;
            }
        }
        return -1;
    }

    /** How many bytes of {@code [start, end)} are held. */
    public int heldBytes(int block, int start, int end) {
        final int count = count(block);
        int held = 0;
        for (int i = 0; i < count; i++) {
            final int from = SeqNum.max(start, start(block, i));
            final int to = SeqNum.min(end, end(block, i));
            if (SeqNum.gt(to, from)) {
                held += to - from;
            }
        }
        return held;
    }

    /** True when every byte of {@code [start, end)} is held. */
    public boolean covers(int block, int start, int end) {
        final int count = count(block);
        for (int i = 0; i < count; i++) {
            if (SeqNum.le(start(block, i), start) && SeqNum.ge(end(block, i), end)) {
                return true;
            }
        }
        return false;
    }

    /**
     * RCV.NXT moved to {@code rcvNxt}: drops what it passed and, if the first range now touches it, returns that
     * range's end (the new RCV.NXT); else returns {@code rcvNxt}.
     */
    public int advance(int block, int rcvNxt) {
        int count = count(block);
        int next = rcvNxt;
        int consumed = 0;
        while (consumed < count && SeqNum.le(start(block, consumed), next)) {
            next = SeqNum.max(next, end(block, consumed));
            consumed++;
        }
        if (consumed > 0) {
            for (int i = consumed; i < count; i++) {
                copy(block, i, i - consumed);
            }
            memory.set(INT, base(block) + COUNT_OFFSET, count - consumed);
        }
        return next;
    }

    /**
     * Writes up to {@code max} ranges, most recently grown or repeated first (RFC 2018 §4: "the first SACK block MUST
     * specify the contiguous block of data containing the segment which triggered this ACK"; after a D-SACK, RFC 2883
     * §4's block holding the duplicate), as left/right pairs into {@code out} from index {@code at}; returns how many.
     */
    public int recentBlocks(int block, int max, int[] out, int at) {
        final int count = count(block);
        int written = 0;
        int below = Integer.MAX_VALUE;
        while (written < max) {
            int best = -1;
            int bestStamp = Integer.MIN_VALUE;
            for (int i = 0; i < count; i++) {
                final int stamp = stamp(block, i);
                if (stamp < below && stamp > bestStamp) {
                    best = i;
                    bestStamp = stamp;
                }
            }
            if (best < 0) {
                break;
            }
            out[at + 2 * written] = start(block, best);
            out[at + 2 * written + 1] = end(block, best);
            written++;
            below = bestStamp;
        }
        return written;
    }

    @Override
    public void close() {
        arena.close();
    }
}
