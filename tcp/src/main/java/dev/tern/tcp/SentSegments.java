package dev.tern.tcp;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The record of one connection's sent and not yet acknowledged segments: the SACK scoreboard of RFC 6675, the
 * per-segment transmit times RACK needs (RFC 8985 §6.1, "xmit_ts"), the retransmission marks that undo and
 * pipe (RFC 6675 §4, SetPipe) are computed from, and the connection's delivery state at each send that a delivery
 * rate sample starts from (draft-cheng-iccrg-delivery-rate-estimation §3.2, BBR's tx_in_flight and lost).
 *
 * <p>Entries cover the sequence space from SND.UNA to SND.MAX without gaps, in order: entry {@code i} covers
 * {@code [start(i), end(i))}, and {@code start(i + 1) == end(i)}. A segment is recorded as it is first sent, one entry
 * per segment of at most one MSS (a TSO frame becomes several entries), so SACK blocks, which a receiver reports in
 * whole segments, never need an entry split. The FIN takes the last sequence number of its entry. The cumulative
 * acknowledgment removes entries from the head (or trims the head when it lands inside one).
 *
 * <pre>
 *  memory: capacity x 32-byte entries (capacity a power of two), a ring from head; index i is head + i
 *
 *    0        4        8        12       16                24               32
 *    +--------+--------+--------+--------+-----------------+-----------------+
 *    | start  |  end   | flags  | sends  |   sentNs        | delivered       |
 *    +--------+--------+--------+--------+-----------------+-----------------+
 *    flags: SACKED, LOST, RETRANSMITTED (ever), RETRANS_IN_FLIGHT (sent again since last marked lost), FIN, PUSH
 * </pre>
 *
 * <p>Three byte totals are kept as entries change, so that pipe is a subtraction, not a walk (as Linux keeps
 * sacked_out, lost_out and retrans_out): {@code pipe = (SND.MAX - SND.UNA) - sacked - lost + retransmitted}. An entry
 * lost and sent again counts once, one sent again without being lost (RFC 6675's rescue) twice, as SetPipe counts.
 *
 * <p>Bounded: a connection records at most {@link #capacity()} segments in flight; when full the sender waits for
 * acknowledgments (counted). Nothing here allocates. Owned by the shard thread; not thread-safe.
 */
public final class SentSegments {
    public static final int ENTRY_BYTES = 64;
    /** Delivered out of order, reported by a SACK block (RFC 2018). */
    public static final int SACKED = 1;
    /** Presumed lost by the loss detection (RFC 6675 IsLost, RFC 8985 RACK), not yet delivered. */
    public static final int LOST = 1 << 1;
    /** Sent more than once. */
    public static final int RETRANSMITTED = 1 << 2;
    /** A retransmission of it is in the network (counts in pipe; cleared when it is marked lost again). */
    public static final int RETRANS_IN_FLIGHT = 1 << 3;
    /** Ends with our FIN. */
    public static final int FIN = 1 << 4;
    /** Was sent with PSH (it ended what the application had written), and is sent again so. */
    public static final int PUSH = 1 << 5;
    /** Sent while the application, not the network, limited the sender (the delivery rate sample's P.is_app_limited). */
    public static final int APP_LIMITED = 1 << 6;

    /**
     * How many segments a connection may have in flight: one per KiB of send buffer (a full-sized segment is 1.4 KiB,
     * so full windows never fill it; a stream of tiny unacknowledged segments does, and waits), 16 at least.
     */
    static int entriesFor(int sendBufferSize) {
        return Math.max(16, Math.min(1 << 20, sendBufferSize >>> 10));
    }

    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT;
    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG;
    // Entry fields; SentSegmentsLayoutTest checks them (no overlap, aligned, inside ENTRY_BYTES).
    private static final int START_OFFSET = 0;
    private static final int END_OFFSET = 4;
    private static final int FLAGS_OFFSET = 8;
    private static final int SENDS_OFFSET = 12;
    private static final int SENT_NS_OFFSET = 16;
    private static final int DELIVERED_OFFSET = 24;
    private static final int DELIVERED_AT_OFFSET = 32;
    private static final int FIRST_SENT_OFFSET = 40;
    private static final int TX_IN_FLIGHT_OFFSET = 48;
    private static final int LOST_OFFSET = 52;

    private final MemorySegment memory;
    private final int capacity;
    private final int mask;
    private int head;
    private int count;
    private int sackedBytes;
    private int lostBytes;
    private int retransmittedBytes;
    /** With lostPending: no entry before this sequence number is lost and not yet sent again (where a search starts). */
    private int lostHint;
    /** Some entry may be lost and not yet sent again. */
    private boolean lostPending;

    /** A record over {@code memory}, whose size must be a power-of-two number of entries. */
    public SentSegments(MemorySegment memory) {
        final long entries = memory.byteSize() / ENTRY_BYTES;
        if (entries < 1 || Long.bitCount(entries) != 1 || entries > (1 << 24)) {
            throw new IllegalArgumentException("record needs a power of two of entries, got " + entries);
        }
        this.memory = memory;
        this.capacity = (int) entries;
        this.mask = capacity - 1;
    }

    /** The memory the record lives in (its pool hands the pages back to the system when it is not reused soon). */
    MemorySegment memory() {
        return memory;
    }

    public int capacity() {
        return capacity;
    }

    public int count() {
        return count;
    }

    public boolean isEmpty() {
        return count == 0;
    }

    public boolean isFull() {
        return count == capacity;
    }

    /** Forgets every entry (a new connection in this memory). */
    public void clear() {
        head = 0;
        count = 0;
        sackedBytes = 0;
        lostBytes = 0;
        retransmittedBytes = 0;
        lostPending = false;
    }

    /** Sequence space SACKed and not yet cumulatively acknowledged. */
    public int sackedBytes() {
        return sackedBytes;
    }

    /** Sequence space marked lost (sent again or not) and not delivered. */
    public int lostBytes() {
        return lostBytes;
    }

    /** Sequence space retransmitted and presumably still in the network. */
    public int retransmittedBytes() {
        return retransmittedBytes;
    }

    /** RFC 6675 §4 SetPipe: the bytes presumed in the network, of {@code outstanding} (SND.MAX - SND.UNA). */
    public int pipe(int outstanding) {
        return Math.max(0, outstanding - sackedBytes - lostBytes + retransmittedBytes);
    }

    private long at(int i) {
        return (long) ((head + i) & mask) * ENTRY_BYTES;
    }

    public int start(int i) {
        return memory.get(INT, at(i) + START_OFFSET);
    }

    public int end(int i) {
        return memory.get(INT, at(i) + END_OFFSET);
    }

    /** Sequence space of entry {@code i}. */
    public int length(int i) {
        return end(i) - start(i);
    }

    public int flags(int i) {
        return memory.get(INT, at(i) + FLAGS_OFFSET);
    }

    public boolean has(int i, int flag) {
        return (flags(i) & flag) != 0;
    }

    private void flags(int i, int value) {
        memory.set(INT, at(i) + FLAGS_OFFSET, value);
    }

    /** How many times the segment was sent. */
    public int sends(int i) {
        return memory.get(INT, at(i) + SENDS_OFFSET);
    }

    /** When the segment was last sent. */
    public long sentNs(int i) {
        return memory.get(LONG, at(i) + SENT_NS_OFFSET);
    }

    /** The connection's delivered bytes when the segment was last sent (for delivery rate samples). */
    public long deliveredAtSend(int i) {
        return memory.get(LONG, at(i) + DELIVERED_OFFSET);
    }

    /** The connection's C.delivered_time when the segment was last sent. */
    public long deliveredAtNs(int i) {
        return memory.get(LONG, at(i) + DELIVERED_AT_OFFSET);
    }

    /** The connection's C.first_sent_time when the segment was last sent: the start of its send interval. */
    public long firstSentNs(int i) {
        return memory.get(LONG, at(i) + FIRST_SENT_OFFSET);
    }

    /** Bytes in flight just after the segment was last sent, itself included (BBR's tx_in_flight). */
    public int txInFlight(int i) {
        return memory.get(INT, at(i) + TX_IN_FLIGHT_OFFSET);
    }

    /** The connection's lost bytes (wrapping) when the segment was last sent. */
    public int lostAtSend(int i) {
        return memory.get(INT, at(i) + LOST_OFFSET);
    }

    /**
     * Records the delivery state the segment {@code i} was (last) sent in, after {@link #append} or
     * {@link #retransmitted}: what a rate sample measured from its acknowledgment starts from.
     */
    public void stampRate(int i, long deliveredAtNs, long firstSentNs, int txInFlight, int lost, boolean appLimited) {
        final long a = at(i);
        memory.set(LONG, a + DELIVERED_AT_OFFSET, deliveredAtNs);
        memory.set(LONG, a + FIRST_SENT_OFFSET, firstSentNs);
        memory.set(INT, a + TX_IN_FLIGHT_OFFSET, txInFlight);
        memory.set(INT, a + LOST_OFFSET, lost);
        final int flags = flags(i);
        flags(i, appLimited ? flags | APP_LIMITED : flags & ~APP_LIMITED);
    }

    /** Entries with {@code flag} set: a walk, for cold paths (a timeout, TCP_INFO). */
    public int countFlagged(int flag) {
        int n = 0;
        for (int i = 0; i < count(); i++) {
            if (has(i, flag)) {
                n++;
            }
        }
        return n;
    }

    /** The end of the last entry (SND.MAX once anything is recorded). */
    public int highEnd() {
        return end(count - 1);
    }

    /** Records a segment sent for the first time, {@code [start, end)}, after the last entry. */
    public void append(int start, int end, boolean fin, boolean push, long nowNs, long delivered) {
        final long a = at(count);
        memory.set(INT, a + START_OFFSET, start);
        memory.set(INT, a + END_OFFSET, end);
        memory.set(INT, a + FLAGS_OFFSET, (fin ? FIN : 0) | (push ? PUSH : 0));
        memory.set(INT, a + SENDS_OFFSET, 1);
        memory.set(LONG, a + SENT_NS_OFFSET, nowNs);
        memory.set(LONG, a + DELIVERED_OFFSET, delivered);
        memory.set(LONG, a + DELIVERED_AT_OFFSET, 0);
        memory.set(LONG, a + FIRST_SENT_OFFSET, 0);
        memory.set(INT, a + TX_IN_FLIGHT_OFFSET, 0);
        memory.set(INT, a + LOST_OFFSET, 0);
        count++;
    }

    /**
     * Entry {@code i} was sent again: it is in the network once more (RETRANS_IN_FLIGHT), whether or not it was
     * marked lost, and its transmit time is now.
     */
    public void retransmitted(int i, long nowNs, long delivered) {
        final int flags = flags(i);
        if ((flags & RETRANS_IN_FLIGHT) == 0) {
            retransmittedBytes += length(i);
        }
        flags(i, flags | RETRANSMITTED | RETRANS_IN_FLIGHT);
        final long a = at(i);
        memory.set(INT, a + SENDS_OFFSET, memory.get(INT, a + SENDS_OFFSET) + 1);
        memory.set(LONG, a + SENT_NS_OFFSET, nowNs);
        memory.set(LONG, a + DELIVERED_OFFSET, delivered);
    }

    /**
     * Marks entry {@code i} lost unless it was SACKed; a retransmission of it that was in the network is lost too
     * (RFC 8985 treats retransmissions alike), so it is due to be sent again. Returns the bytes that became due, 0 when
     * nothing changed.
     */
    public int markLost(int i) {
        final int flags = flags(i);
        if ((flags & SACKED) != 0 || (flags & (LOST | RETRANS_IN_FLIGHT)) == LOST) {
            return 0;
        }
        final int length = length(i);
        if ((flags & LOST) == 0) {
            lostBytes += length;
        }
        if ((flags & RETRANS_IN_FLIGHT) != 0) {
            retransmittedBytes -= length;
        }
        flags(i, (flags | LOST) & ~RETRANS_IN_FLIGHT);
        final int start = start(i);
        if (!lostPending || SeqNum.lt(start, lostHint)) {
            lostHint = start;
            lostPending = true;
        }
        return length;
    }

    /** Marks entry {@code i} SACKed; returns the bytes newly SACKed (0 if it already was). */
    public int markSacked(int i) {
        final int flags = flags(i);
        if ((flags & SACKED) != 0) {
            return 0;
        }
        final int length = length(i);
        if ((flags & LOST) != 0) {
            lostBytes -= length;
        }
        if ((flags & RETRANS_IN_FLIGHT) != 0) {
            retransmittedBytes -= length;
        }
        flags(i, (flags | SACKED) & ~(LOST | RETRANS_IN_FLIGHT));
        sackedBytes += length;
        return length;
    }

    /** The first entry that is lost and not yet sent again, or -1. */
    public int firstLostNotRetransmitted() {
        if (!lostPending) {
            return -1;
        }
        for (int i = Math.max(0, indexOf(lostHint)); i < count; i++) {
            if ((flags(i) & (LOST | RETRANS_IN_FLIGHT | SACKED)) == LOST) {
                lostHint = start(i);
                return i;
            }
        }
        lostPending = false;
        return -1;
    }

    /** The index of the entry holding {@code seq}, or -1 when it lies outside the record. */
    public int indexOf(int seq) {
        if (count == 0 || SeqNum.lt(seq, start(0)) || SeqNum.ge(seq, end(count - 1))) {
            return -1;
        }
        int low = 0;
        int high = count - 1;
        while (low < high) {
            final int mid = (low + high + 1) >>> 1;
            if (SeqNum.le(start(mid), seq)) {
                low = mid;
            } else {
                high = mid - 1;
            }
        }
        return low;
    }

    /**
     * Removes entry 0 (cumulatively acknowledged). Returns its flags as they were, so the caller may account for
     * what the acknowledgment delivered.
     */
    public int removeHead() {
        final int flags = flags(0);
        final int length = length(0);
        if ((flags & SACKED) != 0) {
            sackedBytes -= length;
        }
        if ((flags & LOST) != 0) {
            lostBytes -= length;
        }
        if ((flags & RETRANS_IN_FLIGHT) != 0) {
            retransmittedBytes -= length;
        }
        head = (head + 1) & mask;
        count--;
        return flags;
    }

    /**
     * The cumulative acknowledgment {@code ack} lies inside entry 0: what it covers leaves the entry. A well-behaved
     * receiver acknowledges whole segments; one that trims to its window, or lies, lands here.
     */
    public void trimHead(int ack) {
        final int start = start(0);
        final int cut = ack - start;
        if (cut <= 0 || cut >= length(0)) {
            return;
        }
        final int flags = flags(0);
        if ((flags & SACKED) != 0) {
            sackedBytes -= cut;
        }
        if ((flags & LOST) != 0) {
            lostBytes -= cut;
        }
        if ((flags & RETRANS_IN_FLIGHT) != 0) {
            retransmittedBytes -= cut;
        }
        memory.set(INT, at(0) + START_OFFSET, ack);
    }

    /** Clears the LOST marks of every entry (a spurious retransmission was undone). */
    public void unmarkLost() {
        if (lostBytes == 0) {
            return;
        }
        for (int i = 0; i < count; i++) {
            final int flags = flags(i);
            if ((flags & LOST) != 0) {
                flags(i, flags & ~LOST);
            }
        }
        lostBytes = 0;
        lostPending = false;
    }

    /**
     * Forgets every SACK mark: the receiver reneged (RFC 2018 §8 lets it discard what it SACKed), so nothing it
     * reported can be trusted to have arrived.
     */
    public void unmarkSacked() {
        if (sackedBytes == 0) {
            return;
        }
        for (int i = 0; i < count; i++) {
            final int flags = flags(i);
            if ((flags & SACKED) != 0) {
                flags(i, flags & ~SACKED);
            }
        }
        sackedBytes = 0;
    }

    /** Sum of flags over the record (for tests and invariants): the three totals match the entries, which tile the space. */
    boolean totalsConsistent() {
        int sacked = 0;
        int lost = 0;
        int resent = 0;
        for (int i = 0; i < count; i++) {
            final int flags = flags(i);
            final int length = length(i);
            if ((flags & SACKED) != 0) {
                sacked += length;
            }
            if ((flags & LOST) != 0) {
                lost += length;
            }
            if ((flags & RETRANS_IN_FLIGHT) != 0) {
                resent += length;
            }
            if (i > 0 && start(i) != end(i - 1)) {
                return false;
            }
        }
        return sacked == sackedBytes && lost == lostBytes && resent == retransmittedBytes;
    }
}
