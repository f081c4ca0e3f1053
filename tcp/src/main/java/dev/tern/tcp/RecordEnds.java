package dev.tern.tcp;

import dev.tern.core.memory.PageMemory;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Where the owner ended a record in each connection's send stream (Linux's MSG_EOR, its TCP_SKB_CB(skb)->eor): the
 * sender never puts bytes of both sides of a record end in one segment, so a record's last segment ends at it, and
 * data written after it starts a segment of its own. Retransmission sends the recorded segments as they first went
 * ({@link SentSegments} keeps one entry per segment and never merges entries), so a mark matters only until
 * SND.MAX passes it, and is dropped then.
 *
 * <p>A mark is a send ring position (the stream offset one past the record's last byte). At most {@link #MARKS}
 * marks wait per connection; the owner hears {@link #full} and waits, as for room in the send ring.
 *
 * <p>Off-heap, {@link #SLOT_BYTES} per slot (the oldest mark's index and the count, then the marks in a ring), mapped
 * by the page, so a slot costs memory only once its connection has ended a record. Owned by the shard thread;
 * nothing here allocates.
 */
final class RecordEnds {
    /** Record ends a connection may have waiting to be sent. */
    static final int MARKS = 63;
    private static final int SLOT_BYTES = 8 + MARKS * Long.BYTES;
    private static final int HEAD_OFFSET = 0;
    private static final int COUNT_OFFSET = 4;
    private static final int MARKS_OFFSET = 8;
    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT;
    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG;

    private final MemorySegment memory;

    RecordEnds(int capacity) {
        final long bytes = (long) Math.max(1, capacity) * SLOT_BYTES;
        final long page = PageMemory.pageSize();
        this.memory = PageMemory.map((bytes + page - 1) / page * page, Arena.ofAuto()).asSlice(0, bytes);
    }

    /** A new connection in slot {@code c}: no record ended. */
    void clear(int c) {
        final long base = (long) c * SLOT_BYTES;
        if (memory.get(INT, base + COUNT_OFFSET) != 0 || memory.get(INT, base + HEAD_OFFSET) != 0) {
            memory.set(INT, base + HEAD_OFFSET, 0);
            memory.set(INT, base + COUNT_OFFSET, 0);
        }
    }

    /** Whether slot {@code c} holds {@link #MARKS} record ends not yet sent. */
    boolean full(int c) {
        return count(c) == MARKS;
    }

    /**
     * The record ends at ring position {@code position}; ignored when no byte lies between it and the previous mark
     * or {@code sent}, the position sent up to. Returns false when {@link #full}.
     */
    boolean end(int c, long position, long sent) {
        final int count = count(c);
        if (position <= sent || count > 0 && position <= mark(c, count - 1)) {
            return true;
        }
        if (count == MARKS) {
            return false;
        }
        final long base = (long) c * SLOT_BYTES;
        memory.set(LONG, base + MARKS_OFFSET + (long) index(c, count) * Long.BYTES, position);
        memory.set(INT, base + COUNT_OFFSET, count + 1);
        return true;
    }

    /**
     * Bytes from ring position {@code sent} (what SND.MAX stands for) to the next record end, dropping the ends
     * already passed; {@link Integer#MAX_VALUE} when none waits.
     */
    int bytesToEnd(int c, long sent) {
        int count = count(c);
        if (count == 0) {
            return Integer.MAX_VALUE;
        }
        final long base = (long) c * SLOT_BYTES;
        while (count > 0 && mark(c, 0) <= sent) {
            memory.set(INT, base + HEAD_OFFSET, index(c, 1));
            memory.set(INT, base + COUNT_OFFSET, --count);
        }
        return count == 0 ? Integer.MAX_VALUE : (int) Math.min(Integer.MAX_VALUE, mark(c, 0) - sent);
    }

    private int count(int c) {
        return memory.get(INT, (long) c * SLOT_BYTES + COUNT_OFFSET);
    }

    /** The {@code i}-th waiting mark, oldest first. */
    private long mark(int c, int i) {
        return memory.get(LONG, (long) c * SLOT_BYTES + MARKS_OFFSET + (long) index(c, i) * Long.BYTES);
    }

    private int index(int c, int i) {
        return (memory.get(INT, (long) c * SLOT_BYTES + HEAD_OFFSET) + i) % MARKS;
    }
}
