package dev.tern.tcp;

/**
 * RFC 6675 loss recovery with proportional rate reduction (RFC 9937, which obsoletes RFC 6937), the default, as in
 * Linux: while more than ssthresh is in the network, the sender sends in proportion to what is delivered, ssthresh /
 * RecoverFS bytes per byte, so the window reaches ssthresh as recovery ends instead of halving at once and then
 * waiting; once the network holds less than ssthresh, it sends what was delivered (the conservative reduction bound,
 * PRR-CRB), and one segment more only on a safe ACK, one that advances SND.UNA and shows no further loss (the slow
 * start reduction bound, PRR-SSRB).
 *
 * <pre>
 *   at the start:   prr_delivered = prr_out = 0, RecoverFS = SND.MAX - SND.UNA
 *   on every ACK:   prr_delivered += DeliveredData
 *     pipe &gt; ssthresh:  sndcnt = CEIL(prr_delivered * ssthresh / RecoverFS) - prr_out
 *     else:             sndcnt = MIN(ssthresh - pipe, MAX(prr_delivered - prr_out, DeliveredData) + (safe ? MSS : 0))
 *   cwnd = pipe + sndcnt;  every byte sent adds to prr_out;  at the end cwnd = ssthresh
 *   safe: SND.UNA advanced and no new loss, or (a deviation) nothing was delivered: RACK's reordering timer
 * </pre>
 *
 * <p>As Linux, the first ACK of a recovery always lets one segment go (the fast retransmit of RFC 6675 (4.3)), even
 * where the formula rounds to nothing.
 *
 * <p>Stateless; shared by every connection of a layer.
 */
public final class PrrRecovery implements LossRecovery {
    public static final String NAME = "prr";

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public boolean usesRescueRules() {
        return true;
    }

    @Override
    public void enter(TcpControlBlocks tcb, int c, SentSegments sent, AckSample ack) {
        tcb.prrDelivered(c, 0);
        tcb.prrOut(c, 0);
        tcb.recoverFs(c, Math.max(1, tcb.sndMax(c) - tcb.sndUna(c)));
        onAck(tcb, c, sent, ack);
    }

    @Override
    public boolean onAck(TcpControlBlocks tcb, int c, SentSegments sent, AckSample ack) {
        final int delivered = Math.max(0, ack.deliveredBytes());
        final int prrDelivered = tcb.prrDelivered(c) + delivered;
        tcb.prrDelivered(c, prrDelivered);
        // RFC 9937: a safe ACK advances SND.UNA and indicates no further loss. An ACK that only SACKs, or that
        // reveals a loss, gets no extra segment: RFC 6937's +MSS on every ACK sent the four holes of a ten-segment
        // flight two per SACK, and the room left went to a rescue of the tail that the next SACK covered.
        // Deviation: an event that delivered nothing (RACK's reordering timer marking losses) keeps the extra segment,
        // as before: without it, what the timer marked lost would wait for the next ACK, or for the RTO when nothing
        // else is in flight. Linux leaves the window alone there instead; not measured against this.
        final boolean safe = delivered == 0 || (ack.ackedBytes() > 0 && ack.newlyLostBytes() == 0);
        final int sndcnt = sendCount(prrDelivered, tcb.prrOut(c), tcb.recoverFs(c), tcb.ssthresh(c), ack.inFlight(),
            delivered, ack.mss(), safe);
        tcb.cwnd(c, ack.inFlight() + sndcnt);
        return false;
    }

    /**
     * RFC 9937's sndcnt: how many bytes may be sent on this ACK, never negative, in whole segments: a positive count is
     * rounded up to the next segment, as Linux's PRR counts packets (a fraction of a segment would only let a runt go,
     * or nothing). Below ssthresh, one segment more than was delivered only on a {@code safe} ACK. Before anything was
     * sent, one segment.
     */
    static int sendCount(int prrDelivered, int prrOut, int recoverFs, int ssthresh, int pipe, int delivered, int mss,
                         boolean safe) {
        long sndcnt;
        if (pipe > ssthresh) {
            sndcnt = ((long) prrDelivered * ssthresh + recoverFs - 1) / recoverFs - prrOut;
        } else {
            final long limit = Math.max((long) prrDelivered - prrOut, delivered) + (safe ? mss : 0);
            sndcnt = Math.min((long) ssthresh - pipe, limit);
        }
        if (sndcnt > 0) {
            sndcnt = (sndcnt + mss - 1) / mss * mss;
        }
        if (prrOut == 0 && sndcnt < mss) {
            sndcnt = mss;
        }
        return (int) Math.max(0, sndcnt);
    }

    @Override
    public void exit(TcpControlBlocks tcb, int c, AckSample ack) {
        // RFC 9937: cwnd = ssthresh when recovery ends.
        tcb.cwnd(c, tcb.ssthresh(c));
    }
}
