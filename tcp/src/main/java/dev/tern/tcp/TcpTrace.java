package dev.tern.tcp;

import dev.tern.core.io.ByteRing;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * A per-connection trace of the sender for research: one fixed-size record on every ACK and every retransmission
 * timeout (time, the send sequence space, cwnd, ssthresh, bytes in flight and pipe, SRTT, RTTVAR, RTO, the minimum
 * RTT, SACKed, lost and retransmitted bytes, bytes delivered, the recovery state, the pacing rate, the peer's
 * window, and ECN: negotiated, the receiver echoing a CE, the window reductions ECEs caused), written by the
 * stack thread into an off-heap ring without allocating, and read by any one other thread ({@link #drainCsv}).
 * Enabled per connection with {@link TcpLayer#trace}.
 *
 * <pre>
 *  record (88 bytes), little-endian, in a ByteRing (single producer: the stack; single consumer: the reader)
 *    0 timeNs     8 delivered   16 pacingRate  24 sndUna  28 sndMax  32 cwnd  36 ssthresh  40 pipe  44 srttUs
 *   48 rttvarUs  52 rtoUs      56 minRttUs    60 sacked  64 lost    68 retransmitted  72 state  76 sndWnd
 *   80 ecnState  84 (zero)
 * </pre>
 *
 * <p>When the reader falls behind and the ring is full, new records are dropped and counted ({@link #dropped}), never
 * blocking the stack. The ring's memory lives until {@link #close}.
 */
public final class TcpTrace implements AutoCloseable {
    /** Columns of {@link #drainCsv}, in order. */
    public static final String CSV_HEADER = "time_us,snd_una,snd_nxt,cwnd,ssthresh,in_flight,pipe,srtt_us,rttvar_us,"
        + "rto_us,min_rtt_us,sacked,lost,retrans,delivered,state,pacing_bps,snd_wnd,ecn,ecn_echo,ecn_reductions";
    public static final int RECORD_BYTES = 88;
    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED;
    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED;

    private final Arena arena = Arena.ofShared();
    private final ByteRing ring;
    /** Where the stack builds a record before it enters the ring; the reader's copy of one. */
    private final MemorySegment scratch;
    private final MemorySegment readScratch;
    private volatile long dropped;
    private long originNs = Long.MIN_VALUE;

    /** A trace holding up to {@code records} unread records (rounded up to a power of two of bytes). */
    public TcpTrace(int records) {
        if (records < 1 || records > (1 << 23)) {
            throw new IllegalArgumentException("trace records must be 1.." + (1 << 23) + ", got " + records);
        }
        final long bytes = Long.highestOneBit((long) records * RECORD_BYTES * 2 - 1);
        this.ring = new ByteRing(arena.allocate(Math.max(bytes, 1024), 64));
        this.scratch = arena.allocate(RECORD_BYTES, 8);
        this.readScratch = arena.allocate(RECORD_BYTES, 8);
    }

    /** Appends one record (stack thread). */
    void record(TcpControlBlocks tcb, int c, SentSegments sent, long rtoNs, long nowNs) {
        if (ring.freeSpace() < RECORD_BYTES) {
            dropped++;
            return;
        }
        final int sndUna = tcb.sndUna(c);
        final int sndMax = tcb.sndMax(c);
        scratch.set(LONG, 0, nowNs);
        scratch.set(LONG, 8, tcb.delivered(c));
        scratch.set(LONG, 16, tcb.pacingRate(c));
        scratch.set(INT, 24, sndUna);
        scratch.set(INT, 28, sndMax);
        scratch.set(INT, 32, tcb.cwnd(c));
        scratch.set(INT, 36, tcb.ssthresh(c));
        scratch.set(INT, 40, sent == null ? sndMax - sndUna : sent.pipe(sndMax - sndUna));
        scratch.set(INT, 44, tcb.srttUs(c));
        scratch.set(INT, 48, tcb.rttvarUs(c));
        scratch.set(INT, 52, (int) Math.min(Integer.MAX_VALUE, rtoNs / 1000));
        scratch.set(INT, 56, tcb.minRttUs(c));
        scratch.set(INT, 60, sent == null ? 0 : sent.sackedBytes());
        scratch.set(INT, 64, sent == null ? 0 : sent.lostBytes());
        scratch.set(INT, 68, sent == null ? 0 : sent.retransmittedBytes());
        scratch.set(INT, 72, tcb.senderState(c));
        scratch.set(INT, 76, tcb.sndWnd(c));
        scratch.set(INT, 80, tcb.ecnState(c));
        scratch.set(INT, 84, 0);
        ring.write(scratch, 0, RECORD_BYTES);
    }

    /** Records dropped because the reader fell behind. */
    public long dropped() {
        return dropped;
    }

    /** Records waiting to be read. */
    public int available() {
        return ring.available() / RECORD_BYTES;
    }

    /**
     * Reads every waiting record and appends it to {@code out} as a CSV line ({@link #CSV_HEADER}'s columns; time in
     * µs since the first record this reader saw). Returns the number of records. One reader thread only; cold path
     * (it builds text).
     */
    public int drainCsv(Appendable out) throws IOException {
        int count = 0;
        final StringBuilder line = new StringBuilder(160);
        while (ring.available() >= RECORD_BYTES) {
            ring.read(readScratch, 0, RECORD_BYTES);
            final long timeNs = readScratch.get(LONG, 0);
            if (originNs == Long.MIN_VALUE) {
                originNs = timeNs;
            }
            final int sndUna = readScratch.get(INT, 24);
            final int sndMax = readScratch.get(INT, 28);
            final int state = readScratch.get(INT, 72);
            final int ecn = readScratch.get(INT, 80);
            line.setLength(0);
            line.append((timeNs - originNs) / 1000).append(',')
                .append(Integer.toUnsignedLong(sndUna)).append(',')
                .append(Integer.toUnsignedLong(sndMax)).append(',')
                .append(readScratch.get(INT, 32)).append(',')
                .append(readScratch.get(INT, 36)).append(',')
                .append(sndMax - sndUna).append(',')
                .append(readScratch.get(INT, 40)).append(',')
                .append(readScratch.get(INT, 44)).append(',')
                .append(readScratch.get(INT, 48)).append(',')
                .append(readScratch.get(INT, 52)).append(',')
                .append(readScratch.get(INT, 56)).append(',')
                .append(readScratch.get(INT, 60)).append(',')
                .append(readScratch.get(INT, 64)).append(',')
                .append(readScratch.get(INT, 68)).append(',')
                .append(readScratch.get(LONG, 8)).append(',')
                .append(state >= 0 && state < SenderState.STATE_NAMES.length ? SenderState.STATE_NAMES[state] : "open")
                .append(',')
                .append(readScratch.get(LONG, 16)).append(',')
                .append(readScratch.get(INT, 76)).append(',')
                .append((ecn & Ecn.NEGOTIATED) != 0 ? "on" : "off").append(',')
                .append((ecn & Ecn.ECHOING) != 0 ? 1 : 0).append(',')
                .append(Ecn.reductions(ecn)).append('\n');
            out.append(line);
            count++;
        }
        return count;
    }

    @Override
    public void close() {
        arena.close();
    }
}
