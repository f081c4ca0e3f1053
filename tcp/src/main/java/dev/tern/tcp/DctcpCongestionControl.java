package dev.tern.tcp;

/**
 * DCTCP (RFC 8257), for paths whose queues mark early (an AQM marking at a shallow threshold, Tern to Tern): the
 * window falls in proportion to the share of marked bytes, {@code cwnd * (1 - alpha / 2)} once per window, where
 * Reno-style ECN (RFC 3168) halves it on any mark. Growth, loss and timeouts are NewReno's (RFC 8257 §3.5). DCTCP
 * needs ECN on the connection and the receiver's exact per-segment echo (§3.2): {@link #needsEcn()} asks for both,
 * and {@link Ecn} gives them to connections that start with this control.
 *
 * <p>Not for the Internet (RFC 8257 §1: only where every end and queue is DCTCP's); Linux's kernel here ships no dctcp
 * module, so it runs Tern to Tern.
 *
 * <p>State in the row: {@code ccInt0} NewReno's byte count, {@code ccInt1} alpha (1024 is 1), {@code ccInt2} the
 * window's end (SND.MAX when it began), {@code ccLong0} bytes acknowledged in it, {@code ccLong1} those acknowledged
 * with ECE. Stateless itself; shared by every connection of a layer.
 */
public final class DctcpCongestionControl implements CongestionControl {
    public static final String NAME = "dctcp";
    /** alpha's fixed point: {@code ALPHA_ONE} is 1. */
    static final int ALPHA_ONE = 1024;
    /** RFC 8257 §4.2: g = 1/16. */
    private static final int G_SHIFT = 4;

    private final NewRenoCongestionControl reno = new NewRenoCongestionControl();

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public boolean needsEcn() {
        return true;
    }

    @Override
    public void init(TcpControlBlocks tcb, int c, int mss, int initialSegments, long nowNs) {
        reno.init(tcb, c, mss, initialSegments, nowNs);
        // RFC 8257 §3.3: alpha starts at 1, the cautious end: the first mark halves the window as Reno would.
        tcb.ccInt1(c, ALPHA_ONE);
        startWindow(tcb, c);
    }

    private static void startWindow(TcpControlBlocks tcb, int c) {
        tcb.ccInt2(c, tcb.sndMax(c));
        tcb.ccLong0(c, 0);
        tcb.ccLong1(c, 0);
    }

    @Override
    public void onAck(TcpControlBlocks tcb, int c, AckSample ack) {
        final int acked = ack.ackedBytes();
        final long total = tcb.ccLong0(c) + acked;
        final long marked = tcb.ccLong1(c) + (ack.ece() ? acked : 0);
        if (SeqNum.ge(tcb.sndUna(c), tcb.ccInt2(c)) && total > 0) {
            // RFC 8257 §3.3: once per window, alpha = (1 - g) * alpha + g * F, F the share of bytes marked.
            tcb.ccInt1(c, nextAlpha(tcb.ccInt1(c), marked, total));
            startWindow(tcb, c);
        } else {
            tcb.ccLong0(c, total);
            tcb.ccLong1(c, marked);
        }
        reno.onAck(tcb, c, ack);
    }

    /** alpha after a window of {@code total} bytes acknowledged, {@code marked} of them with ECE (fixed point). */
    static int nextAlpha(int alpha, long marked, long total) {
        final int share = (int) (marked * ALPHA_ONE / total);
        return alpha - (alpha >> G_SHIFT) + (share >> G_SHIFT);
    }

    @Override
    public void onEcn(TcpControlBlocks tcb, int c, int flightSize, int mss, long nowNs) {
        // RFC 8257 §3.4: cwnd = cwnd * (1 - alpha / 2); the sender then lowers cwnd to this ssthresh.
        final int cwnd = tcb.cwnd(c);
        tcb.ssthresh(c, Math.max((int) (cwnd - (long) cwnd * tcb.ccInt1(c) / (2 * ALPHA_ONE)), 2 * mss));
        tcb.ccInt0(c, 0);
    }

    @Override
    public void onCongestion(TcpControlBlocks tcb, int c, int flightSize, int mss, long nowNs) {
        reno.onCongestion(tcb, c, flightSize, mss, nowNs);
    }

    @Override
    public void onRetransmitTimeout(TcpControlBlocks tcb, int c, int flightSize, int mss, long nowNs) {
        reno.onRetransmitTimeout(tcb, c, flightSize, mss, nowNs);
    }
}
