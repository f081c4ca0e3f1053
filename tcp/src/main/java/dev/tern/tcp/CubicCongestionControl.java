package dev.tern.tcp;

/**
 * CUBIC (RFC 9438), the default, as in Linux: after a congestion event the window follows a cubic function of the
 * time since the event, concave up to the window where the loss happened (W_max) and convex beyond it, never slower
 * than a Reno flow would grow in the same conditions (the Reno-friendly estimate W_est).
 *
 * <pre>
 *   W_cubic(t) = C (t - K)^3 + W_max                      RFC 9438 §4.2, eq. 1 (segments, seconds)
 *   K          = cbrt((W_max - cwnd_epoch) / C)           eq. 2
 *   W_est     += alpha_cubic * segments_acked / cwnd      §4.3, eq. 4; alpha_cubic = 3 (1 - beta) / (1 + beta)
 *   on loss:     W_max = cwnd, or cwnd (1 + beta) / 2 below the last W_max (fast convergence, §4.7);
 *                ssthresh = cwnd * beta                   §4.6
 * </pre>
 * with C = 0.4 and beta_cubic = 0.7. Computed in bytes (one segment = SMSS bytes) and nanoseconds; doubles are
 * plain values in registers, nothing allocates.
 *
 * <p>State in the connection's row: {@code ccLong0} the epoch start (ns, 0 = none), {@code ccLong1} K (ns),
 * {@code ccLong2} W_est (bytes, as double bits), {@code ccLong3} the fraction of a byte of growth carried to the next
 * ACK (double bits), {@code ccInt0} bytes counted in Reno slow start's congestion avoidance (unused by CUBIC's own
 * growth), {@code ccInt1} W_max, {@code ccInt2} the origin point (the plateau the curve centres on), {@code ccInt3}
 * cwnd_prior (cwnd when ssthresh was last set), {@code ccInt4} and {@code ccInt5} W_max and cwnd_prior before the last
 * reduction (undo, §4.9).
 *
 * <p>Deviations: slow start counts every byte delivered, as {@link NewRenoCongestionControl} does, and HyStart++
 * (RFC 9406) is not implemented, so slow start ends only at the first loss. An application-limited sender does not
 * grow its window (RFC 9438 §5.8, RFC 7661), and the epoch moves forward over idle time so a flow does not jump
 * ahead on the curve after a pause (as Linux does).
 *
 * <p>Stateless; shared by every connection of a layer.
 */
public final class CubicCongestionControl implements CongestionControl {
    public static final String NAME = "cubic";
    /** RFC 9438 §5.1: C = 0.4 (segments per second cubed). */
    static final double C = 0.4;
    /** RFC 9438 §4.6: beta_cubic = 0.7. */
    static final double BETA = 0.7;
    /** RFC 9438 §4.3: the Reno-friendly increase per RTT while W_est is below cwnd_prior. */
    static final double ALPHA = 3 * (1 - BETA) / (1 + BETA);
    private static final double NS_PER_S = 1e9;

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public void init(TcpControlBlocks tcb, int c, int mss, int initialSegments, long nowNs) {
        tcb.cwnd(c, initialSegments * mss);
        tcb.ssthresh(c, TcpControlBlocks.MAX_CWND);
        tcb.pacingRate(c, 0);
        tcb.ccInt0(c, 0);
        tcb.ccInt1(c, 0);
        tcb.ccInt2(c, 0);
        tcb.ccInt3(c, 0);
        tcb.ccInt4(c, 0);
        tcb.ccInt5(c, 0);
        tcb.ccLong0(c, 0);
        tcb.ccLong1(c, 0);
        tcb.ccLong2(c, 0);
        tcb.ccLong3(c, 0);
    }

    @Override
    public void onAck(TcpControlBlocks tcb, int c, AckSample ack) {
        if (!ack.windowLimited() || ack.deliveredBytes() <= 0) {
            return;
        }
        final int cwnd = tcb.cwnd(c);
        final int mss = ack.mss();
        if (cwnd < tcb.ssthresh(c)) {
            NewRenoCongestionControl.grow(tcb, c, ack.deliveredBytes(), mss);
            return;
        }
        final long nowNs = ack.nowNs();
        if (tcb.ccLong0(c) == 0) {
            startEpoch(tcb, c, cwnd, mss, nowNs);
        }
        final double delivered = ack.deliveredBytes();
        // §4.3: W_est grows by alpha segments per window's worth of acknowledged segments.
        final double alpha = Double.longBitsToDouble(tcb.ccLong2(c)) >= tcb.ccInt3(c) ? 1.0 : ALPHA;
        final double wEst = Double.longBitsToDouble(tcb.ccLong2(c)) + alpha * delivered * mss / cwnd;
        tcb.ccLong2(c, Double.doubleToRawLongBits(wEst));
        // §4.2: t is the time since the epoch began; the target is where the curve will be one RTT from now.
        final long rttNs = Math.max(1, tcb.srttUs(c)) * 1000L;
        final double t = (nowNs - tcb.ccLong0(c)) / NS_PER_S;
        final double cubic = windowAt(t, tcb.ccLong1(c) / NS_PER_S, tcb.ccInt2(c), mss);
        if (cubic < wEst) {
            // §4.3: the Reno-friendly region: grow as Reno would.
            tcb.cwnd(c, (int) Math.min(Math.max(cwnd, wEst), TcpControlBlocks.MAX_CWND));
            return;
        }
        double target = windowAt(t + rttNs / NS_PER_S, tcb.ccLong1(c) / NS_PER_S, tcb.ccInt2(c), mss);
        // §4.4 and §4.5: the target is kept within [cwnd, 1.5 cwnd]; cwnd moves (target - cwnd) / cwnd per segment.
        target = Math.max(cwnd, Math.min(target, 1.5 * cwnd));
        final double growth = (target - cwnd) / cwnd * delivered + Double.longBitsToDouble(tcb.ccLong3(c));
        final int whole = (int) growth;
        tcb.ccLong3(c, Double.doubleToRawLongBits(growth - whole));
        tcb.cwnd(c, (int) Math.min((long) cwnd + whole, TcpControlBlocks.MAX_CWND));
    }

    /** RFC 9438 eq. 1 in bytes: C (t - K)^3 + W_max, with t and K in seconds and the plateau {@code origin} in bytes. */
    static double windowAt(double tSeconds, double kSeconds, int origin, int mss) {
        final double d = tSeconds - kSeconds;
        return C * mss * d * d * d + origin;
    }

    /**
     * RFC 9438 eq. 2: the time the curve takes from {@code cwnd} back to the plateau {@code wMax} (bytes), in
     * seconds; 0 when the window is already at or above it (the curve then starts convex, from cwnd).
     */
    static double k(int wMax, int cwnd, int mss) {
        // StrictMath: Math.cbrt may differ by an ulp between the interpreter and compiled code, and a simulation must
        // replay exactly from its seed whatever the JIT did.
        return wMax <= cwnd ? 0 : StrictMath.cbrt((double) (wMax - cwnd) / (C * mss));
    }

    /** The first ACK in congestion avoidance after a reduction (or after slow start): the curve starts now. */
    private static void startEpoch(TcpControlBlocks tcb, int c, int cwnd, int mss, long nowNs) {
        tcb.ccLong0(c, nowNs);
        final int wMax = tcb.ccInt1(c);
        tcb.ccLong1(c, (long) (k(wMax, cwnd, mss) * NS_PER_S));
        tcb.ccInt2(c, Math.max(wMax, cwnd));
        tcb.ccLong2(c, Double.doubleToRawLongBits(cwnd));
        tcb.ccLong3(c, 0);
        if (tcb.ccInt3(c) == 0) {
            tcb.ccInt3(c, cwnd);
        }
    }

    @Override
    public void onCongestion(TcpControlBlocks tcb, int c, int flightSize, int mss, long nowNs) {
        reduce(tcb, c, mss);
    }

    /** §4.6 and §4.7: remember where the loss came (W_max, with fast convergence) and set ssthresh = beta cwnd. */
    private static void reduce(TcpControlBlocks tcb, int c, int mss) {
        final int cwnd = tcb.cwnd(c);
        tcb.ccInt4(c, tcb.ccInt1(c));
        tcb.ccInt5(c, tcb.ccInt3(c));
        final int lastMax = tcb.ccInt1(c);
        // §4.7: a flow whose plateau keeps falling releases bandwidth to newer flows sooner.
        tcb.ccInt1(c, cwnd < lastMax ? (int) (cwnd * (1 + BETA) / 2) : cwnd);
        tcb.ccInt3(c, cwnd);
        tcb.ssthresh(c, Math.max((int) (cwnd * BETA), 2 * mss));
        tcb.ccLong0(c, 0);
    }

    @Override
    public void onRetransmitTimeout(TcpControlBlocks tcb, int c, int flightSize, int mss, long nowNs) {
        // §4.8: as Reno (RFC 5681), but ssthresh from beta_cubic; a repeated timeout keeps the first one's ssthresh.
        if (tcb.backoff(c) == 0) {
            reduce(tcb, c, mss);
        }
        tcb.cwnd(c, mss);
        tcb.ccLong0(c, 0);
    }

    @Override
    public void onUndo(TcpControlBlocks tcb, int c, long nowNs) {
        // §4.9: a spurious reduction is undone, W_max and cwnd_prior included; the curve restarts at the next ACK.
        CongestionControl.super.onUndo(tcb, c, nowNs);
        tcb.ccInt1(c, tcb.ccInt4(c));
        tcb.ccInt3(c, tcb.ccInt5(c));
        tcb.ccLong0(c, 0);
    }

    @Override
    public void onIdleRestart(TcpControlBlocks tcb, int c, int mss, int initialSegments, long nowNs) {
        CongestionControl.super.onIdleRestart(tcb, c, mss, initialSegments, nowNs);
        final long epoch = tcb.ccLong0(c);
        if (epoch != 0) {
            tcb.ccLong0(c, epoch + Math.max(0, nowNs - tcb.lastSendNs(c)));
        }
    }
}
