package dev.tern.tcp;

/**
 * How far the path has reordered this connection's segments, in segments, as Linux keeps tp->reordering for
 * TCP_INFO's {@code tcpi_reordering} and {@code tcpi_reord_seen} (tcp_check_sack_reordering): it starts at
 * {@link #INITIAL} (net.ipv4.tcp_reordering) and grows when a segment never sent twice is delivered, SACKed or
 * cumulatively acknowledged, below the highest sequence number already delivered: the distance from its start to
 * that highest delivered byte, in whole segments, up to {@link #MAX} (net.ipv4.tcp_max_reordering). RFC 8985 §6.2
 * step 3 calls the same event reordering; RACK itself only needs that it happened
 * ({@link SenderState#S_REORDERING_SEEN}). A timeout in the open state with {@link #INITIAL} or more segments SACKed
 * says the degree was overestimated, and brings it back to {@link #INITIAL} (Linux's tcp_enter_loss). Without SACK
 * the degree is not measured.
 *
 * <p>Per connection (the row): the degree and the count of reorderings; per ACK ({@link AckSample}): the lowest start
 * of a reordered segment it delivered. Stateless; nothing here allocates.
 */
final class ReorderingDegree {
    /** Linux's net.ipv4.tcp_reordering default: the degree assumed before any is seen. */
    static final int INITIAL = 3;
    /** Linux's net.ipv4.tcp_max_reordering default. */
    static final int MAX = 300;

    private final TcpControlBlocks tcb;

    ReorderingDegree(TcpControlBlocks tcb) {
        this.tcb = tcb;
    }

    /** A new connection: nothing seen yet. */
    void init(int c) {
        tcb.reordering(c, INITIAL);
        tcb.reorderings(c, 0);
    }

    /**
     * Entry {@code i} is about to be delivered for the first time; call before the loss detection moves the highest
     * delivered sequence number past it. A segment sent once that starts below that number was overtaken.
     */
    void delivered(int c, SentSegments sent, int i, AckSample s) {
        final int start = sent.start(i);
        if (!sent.has(i, SentSegments.RETRANSMITTED) && SeqNum.lt(start, tcb.fack(c))
            && (!s.reordered || SeqNum.lt(start, s.reorderedStart))) {
            s.reordered = true;
            s.reorderedStart = start;
        }
    }

    /**
     * After the SACK blocks, and again after the cumulative acknowledgment, of one ACK: a reordering it delivered
     * raises the degree to its distance from the highest delivered byte (at least SND.UNA), in segments of
     * {@code mss}, and is counted.
     */
    void check(int c, AckSample s, int mss) {
        if (!s.reordered) {
            return;
        }
        s.reordered = false;
        final int highest = SeqNum.max(tcb.fack(c), tcb.sndUna(c));
        if (!SeqNum.lt(s.reorderedStart, highest)) {
            return;
        }
        final long distance = highest - s.reorderedStart;
        if (mss > 0 && distance > (long) tcb.reordering(c) * mss) {
            tcb.reordering(c, (int) Math.min(MAX, (distance + mss - 1) / mss));
        }
        tcb.reorderings(c, tcb.reorderings(c) + 1);
    }

    /** A retransmission timeout while open, with {@code sackedSegments} SACKed: the degree was overestimated. */
    void timedOut(int c, int sackedSegments) {
        if (sackedSegments >= INITIAL) {
            tcb.reordering(c, Math.min(tcb.reordering(c), INITIAL));
        }
    }
}
