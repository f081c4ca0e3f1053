package dev.tern.tcp;

/**
 * A congestion control algorithm (RFC 5681 and its successors), chosen per connection by {@link #name()}.
 *
 * <p>An implementation is a stateless strategy shared by every connection of a layer: its state lives in the
 * connection's row of the {@link TcpControlBlocks} ({@code cwnd}, {@code ssthresh}, plus the private fields
 * {@code ccInt0}, {@code ccInt1}, {@code ccLong0}, {@code ccLong1}). Windows are in bytes.
 *
 * <p>Loss detection and recovery (duplicate ACK counting, NewReno's window inflation during fast recovery, partial
 * ACKs) belong to {@link LossRecovery}; this interface decides only how the window grows and how far it falls. Called
 * on the stack thread; implementations must not allocate.
 */
public interface CongestionControl {
    /** The name connections select it by ({@code "newreno"}). */
    String name();

    /** The connection is established: set the initial window (RFC 5681 §3.1, RFC 6928) and ssthresh. */
    void init(TcpControlBlocks tcb, int c, int mss, int initialSegments, long nowNs);

    /**
     * New data was acknowledged outside recovery, while the sender was using its window (RFC 7661: an
     * application-limited sender does not grow it). {@code acked} bytes, {@code mss} the sender's segment size.
     */
    void onAck(TcpControlBlocks tcb, int c, int acked, int mss, long nowNs);

    /**
     * Loss inferred from duplicate ACKs (fast retransmit): set ssthresh, and cwnd as recovery starts (RFC 5681 §3.2
     * step 2-3 before the inflation by three segments, which {@link LossRecovery} adds).
     */
    void onCongestion(TcpControlBlocks tcb, int c, int flightSize, int mss, long nowNs);

    /** Fast recovery ended with a full acknowledgment (RFC 6582 §3.2 step 3): deflate the window. */
    void onRecoveryExit(TcpControlBlocks tcb, int c, int flightSize, int mss, long nowNs);

    /** The retransmission timer expired (RFC 5681 §3.1 eq. 4 and the loss window). */
    void onRetransmitTimeout(TcpControlBlocks tcb, int c, int flightSize, int mss, long nowNs);

    /** The connection was idle longer than an RTO (RFC 5681 §4.1): restart from at most the initial window. */
    default void onIdleRestart(TcpControlBlocks tcb, int c, int mss, int initialSegments, long nowNs) {
        tcb.cwnd(c, Math.min(tcb.cwnd(c), initialSegments * mss));
    }
}
