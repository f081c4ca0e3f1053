package dev.tern.tcp;

/**
 * A congestion control algorithm, chosen per connection by {@link #name()}: how large the congestion window is, how
 * fast the sender may pace, how far the window falls on loss and how it grows back.
 *
 * <p>An implementation is a strategy shared by every connection of a layer: its state lives in the connection's row
 * of the {@link TcpControlBlocks} ({@code cwnd}, {@code ssthresh}, {@code pacingRate}, plus the private fields
 * {@code ccInt0..5} and {@code ccLong0..3}), or, when that is too little, in a table of its own that
 * {@link #forLayer} makes for the layer (BBR). Windows are in bytes, rates in bytes per second.
 *
 * <p>The interface does not assume a loss-based algorithm: {@link #onAck} sees every ACK that delivered data outside
 * fast recovery with its RTT sample and the data in flight, and an algorithm may set {@code pacingRate} (the sender
 * then spaces segments by it). During fast recovery the {@link LossRecovery} (PRR by default) moves cwnd towards
 * ssthresh. Loss detection is the {@link LossDetection}'s business. Called on the stack thread; implementations
 * must not allocate.
 */
public interface CongestionControl {
    /** The name connections select it by ({@code "cubic"}). */
    String name();

    /** The connection is established: the initial window (RFC 5681 §3.1, RFC 6928), ssthresh, private state. */
    void init(TcpControlBlocks tcb, int c, int mss, int initialSegments, long nowNs);

    /**
     * An ACK delivered data outside fast recovery (in the OPEN state, or in LOSS: slow start after a timeout).
     * Loss-based algorithms grow the window only when {@link AckSample#windowLimited()} (RFC 7661).
     */
    void onAck(TcpControlBlocks tcb, int c, AckSample ack);

    /**
     * A congestion event: fast recovery begins, or a tail loss probe repaired a loss (RFC 8985 §7.4.2). Sets
     * ssthresh; the recovery brings cwnd down to it. {@code flightSize} is the data outstanding before the reduction.
     */
    void onCongestion(TcpControlBlocks tcb, int c, int flightSize, int mss, long nowNs);

    /**
     * An ECE answered (RFC 3168 §6.1.2): at most once per window of data, outside fast recovery. Sets ssthresh; the
     * sender then lowers cwnd to it. By default the same response as to a loss ({@link #onCongestion}), which is what
     * RFC 3168 asks of loss-based algorithms (CUBIC's beta, NewReno's half).
     */
    default void onEcn(TcpControlBlocks tcb, int c, int flightSize, int mss, long nowNs) {
        onCongestion(tcb, c, flightSize, mss, nowNs);
    }

    /**
     * Whether the algorithm needs ECN and the receiver's exact echo of each segment's CE mark (DCTCP, RFC 8257 §3.2):
     * its connections then ask for ECN whatever {@link TcpConfig#ecn} says, and their receivers echo CE per segment
     * instead of until CWR. Read when the connection negotiates ECN.
     */
    default boolean needsEcn() {
        return false;
    }

    /** Fast recovery ended with a full acknowledgment; the recovery already set cwnd (to ssthresh with PRR). */
    default void onRecoveryExit(TcpControlBlocks tcb, int c, int mss, long nowNs) {
    }

    /** The retransmission timer expired (RFC 5681 §3.1 equation 4 and the loss window of one segment). */
    void onRetransmitTimeout(TcpControlBlocks tcb, int c, int flightSize, int mss, long nowNs);

    /**
     * The last reduction was spurious (RFC 3708 D-SACK, RFC 3522 timestamps): restore what it took. By default the
     * window and threshold come back to at least their values before the reduction ({@code priorCwnd},
     * {@code priorSsthresh}), as Linux's {@code tcp_undo_cwnd_reduction} does.
     */
    default void onUndo(TcpControlBlocks tcb, int c, long nowNs) {
        tcb.cwnd(c, Math.max(tcb.cwnd(c), tcb.priorCwnd(c)));
        tcb.ssthresh(c, Math.max(tcb.ssthresh(c), tcb.priorSsthresh(c)));
    }

    /** The connection was idle longer than an RTO (RFC 5681 §4.1): restart from at most the initial window. */
    default void onIdleRestart(TcpControlBlocks tcb, int c, int mss, int initialSegments, long nowNs) {
        tcb.cwnd(c, Math.min(tcb.cwnd(c), initialSegments * mss));
    }

    /**
     * Whether {@link #onAck} sees every ACK that delivered data or revealed a loss, in fast recovery and after a
     * timeout too, after the recovery set its window: a model-based control (BBR) keeps its model and its window
     * through recovery itself (draft-ietf-ccwg-bbr §4.6.4.4), where a loss-based one leaves that to the recovery.
     */
    default boolean seesEveryAck() {
        return false;
    }

    /**
     * Whether the algorithm sets the pacing rate itself (BBR). One that does not (the default) is paced, when the
     * connection's settings ask for pacing ({@link TcpConfig#pacing}) or its owner caps the rate, at Linux's rate
     * from cwnd and the smoothed RTT, which then replaces whatever it set.
     */
    default boolean pacesItself() {
        return false;
    }

    /**
     * The instance a layer of {@code connections} slots uses: this one when the state fits the row's cc cells; a
     * control with per-connection state of its own returns a new instance with a table for that many connections.
     * Cold path: called once as the layer registers the control.
     */
    default CongestionControl forLayer(int connections) {
        return this;
    }
}
