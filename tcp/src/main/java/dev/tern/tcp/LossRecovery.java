package dev.tern.tcp;

import static dev.tern.tcp.TcpControlBlocks.F_CWND_LIMITED;
import static dev.tern.tcp.TcpControlBlocks.F_IN_RECOVERY;

/**
 * Loss detection by duplicate ACKs and NewReno fast retransmit / fast recovery (RFC 5681 §3.2, RFC 6582). How far the
 * window falls and how it grows is the connection's {@link CongestionControl}'s business; this class decides when a
 * loss is inferred, what is retransmitted, and NewReno's window inflation and deflation during recovery.
 *
 * <p>{@code recover} holds RFC 6582's "recover": the highest sequence number sent when recovery began (inclusive),
 * initialised to the ISS. SACK-based recovery (RFC 6675) and RACK-TLP (RFC 8985) would replace this class.
 *
 * <p>Owned by the shard thread; not thread-safe.
 */
final class LossRecovery {
    /** RFC 5681 §3.2: the third duplicate ACK starts fast retransmit. */
    static final int DUP_THRESHOLD = 3;

    private final TcpLayer layer;
    private final TcpControlBlocks tcb;
    private final TcpOutput output;
    private final TcpCounters counters;

    LossRecovery(TcpLayer layer, TcpControlBlocks tcb, TcpOutput output, TcpCounters counters) {
        this.layer = layer;
        this.tcb = tcb;
        this.output = output;
        this.counters = counters;
    }

    /** A duplicate ACK (RFC 5681 §2's definition, checked by the caller). */
    void onDuplicateAck(int c, long nowNs) {
        final int dupAcks = tcb.dupAcks(c) + 1;
        tcb.dupAcks(c, dupAcks);
        final int mss = tcb.sndMss(c);
        if (tcb.hasFlag(c, F_IN_RECOVERY)) {
            // RFC 6582 §3.2 step 4 (RFC 5681 step 4): each further duplicate ACK inflates cwnd by one segment.
            tcb.cwnd(c, (int) Math.min((long) tcb.cwnd(c) + mss, NewRenoCongestionControl.MAX_CWND));
            layer.requestOutput(c);
            return;
        }
        if (dupAcks < DUP_THRESHOLD) {
            layer.requestOutput(c); // RFC 3042 limited transmit
            return;
        }
        if (dupAcks > DUP_THRESHOLD) {
            return;
        }
        // RFC 6582 §3.2 step 2: only when the cumulative ACK covers more than "recover", else these duplicates may
        // come from segments retransmitted after a timeout.
        final int ack = tcb.sndUna(c);
        if (!SeqNum.gt(ack, tcb.recover(c))) {
            return;
        }
        final int flight = tcb.sndMax(c) - tcb.sndUna(c);
        tcb.recover(c, tcb.sndMax(c) - 1);
        tcb.setFlag(c, F_IN_RECOVERY);
        layer.congestionControl(c).onCongestion(tcb, c, flight, mss, nowNs);
        tcb.cwnd(c, (int) Math.min((long) tcb.ssthresh(c) + 3L * mss, NewRenoCongestionControl.MAX_CWND));
        counters.txFastRetransmits.incrementRelease();
        counters.recoveries.incrementRelease();
        output.retransmitHead(c, nowNs);
        layer.requestOutput(c);
    }

    /** An ACK of new data: {@code acked} bytes of sequence space, {@code flightBefore} outstanding before it. */
    void onNewAck(int c, int ack, int acked, int flightBefore, long nowNs) {
        final int mss = tcb.sndMss(c);
        if (tcb.hasFlag(c, F_IN_RECOVERY)) {
            if (SeqNum.gt(ack, tcb.recover(c))) {
                // Full acknowledgment (RFC 6582 §3.2 step 3): leave recovery.
                tcb.clearFlag(c, F_IN_RECOVERY);
                tcb.dupAcks(c, 0);
                layer.congestionControl(c).onRecoveryExit(tcb, c, tcb.sndMax(c) - ack, mss, nowNs);
            } else {
                // Partial acknowledgment (step 5): retransmit the next hole, deflate by what was acknowledged and add
                // back one segment if at least one was.
                output.retransmitHead(c, nowNs);
                final long cwnd = (long) tcb.cwnd(c) - acked + (acked >= mss ? mss : 0);
                tcb.cwnd(c, (int) Math.max(mss, cwnd));
                counters.txFastRetransmits.incrementRelease();
            }
            return;
        }
        tcb.dupAcks(c, 0);
        // RFC 7661: grow only a window that is being used (in slow start: at least half of it in flight).
        final int cwnd = tcb.cwnd(c);
        if (tcb.hasFlag(c, F_CWND_LIMITED) || (cwnd < tcb.ssthresh(c) && 2L * flightBefore >= cwnd)) {
            layer.congestionControl(c).onAck(tcb, c, acked, mss, nowNs);
        }
    }

    /** The retransmission timer expired: recovery ends, and duplicate ACKs for data sent so far must not restart it. */
    void onRetransmitTimeout(int c, long nowNs) {
        final int flight = tcb.sndMax(c) - tcb.sndUna(c);
        tcb.clearFlag(c, F_IN_RECOVERY);
        tcb.dupAcks(c, 0);
        tcb.recover(c, tcb.sndMax(c) - 1);
        layer.congestionControl(c).onRetransmitTimeout(tcb, c, flight, tcb.sndMss(c), nowNs);
    }
}
