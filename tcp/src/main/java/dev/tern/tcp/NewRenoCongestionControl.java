package dev.tern.tcp;

/**
 * Reno's window rules (RFC 5681 §3.1) as NewReno uses them (RFC 6582): slow start below ssthresh, congestion avoidance
 * of one segment per window above it, ssthresh at half the flight size after a loss.
 *
 * <p>Deviation: in slow start cwnd grows by every byte delivered (RFC 3465's byte counting without its limit
 * L = 2 SMSS), as Linux does: Tern acknowledges a whole receive batch with one ACK, and a limit per ACK would slow
 * start down for it. Congestion avoidance counts bytes (RFC 5681 §3.1, "appropriate byte counting"): one SMSS per
 * cwnd bytes acknowledged; {@code ccInt0} holds the bytes counted so far.
 *
 * <p>Stateless; shared by every connection of a layer.
 */
public final class NewRenoCongestionControl implements CongestionControl {
    public static final String NAME = "newreno";

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public void init(TcpControlBlocks tcb, int c, int mss, int initialSegments, long nowNs) {
        tcb.cwnd(c, initialSegments * mss);
        // RFC 5681 §3.1: "The initial value of ssthresh SHOULD be set arbitrarily high".
        tcb.ssthresh(c, TcpControlBlocks.MAX_CWND);
        tcb.ccInt0(c, 0);
        tcb.pacingRate(c, 0);
    }

    @Override
    public void onAck(TcpControlBlocks tcb, int c, AckSample ack) {
        if (ack.windowLimited()) {
            grow(tcb, c, ack.deliveredBytes(), ack.mss());
        }
    }

    /** Slow start below ssthresh, one segment per window of bytes above it (shared with CUBIC's slow start). */
    static void grow(TcpControlBlocks tcb, int c, int delivered, int mss) {
        if (delivered <= 0) {
            return;
        }
        final int cwnd = tcb.cwnd(c);
        final int ssthresh = tcb.ssthresh(c);
        if (cwnd < ssthresh) {
            tcb.cwnd(c, (int) Math.min((long) cwnd + delivered, Math.max(ssthresh, mss)));
            return;
        }
        final int counted = tcb.ccInt0(c) + delivered;
        if (counted >= cwnd) {
            tcb.ccInt0(c, counted - cwnd);
            tcb.cwnd(c, Math.min(cwnd + mss, TcpControlBlocks.MAX_CWND));
        } else {
            tcb.ccInt0(c, counted);
        }
    }

    @Override
    public void onCongestion(TcpControlBlocks tcb, int c, int flightSize, int mss, long nowNs) {
        // RFC 5681 §3.2 (4): ssthresh = max(FlightSize / 2, 2 * SMSS).
        tcb.ssthresh(c, Math.max(flightSize / 2, 2 * mss));
        tcb.ccInt0(c, 0);
    }

    @Override
    public void onRetransmitTimeout(TcpControlBlocks tcb, int c, int flightSize, int mss, long nowNs) {
        // RFC 5681 §3.1: ssthresh = max(FlightSize / 2, 2 * SMSS), then cwnd = the loss window, one segment. A
        // second timeout for the same data keeps the ssthresh of the first (flight has collapsed meanwhile).
        if (tcb.backoff(c) == 0) {
            tcb.ssthresh(c, Math.max(flightSize / 2, 2 * mss));
        }
        tcb.cwnd(c, mss);
        tcb.ccInt0(c, 0);
    }
}
