package dev.tern.tcp;

/**
 * Loss recovery, chosen per connection: how the congestion window moves while lost segments are repaired, between
 * the first loss and the acknowledgment of everything sent before it (the recovery point). {@code "prr"} (RFC 6675
 * with RFC 9937's proportional rate reduction, the default), {@code "rfc6675"} (cwnd falls to ssthresh at once), and
 * {@code "newreno"} (RFC 6582), which a connection whose peer does not do SACK always uses.
 *
 * <p>What is retransmitted is the scoreboard's business (RFC 6675 NextSeg, in {@link TcpSender}); this decides how
 * much may be in flight. The congestion control has already set ssthresh when {@link #enter} is called. A stateless
 * strategy over the connection's row; called on the stack thread; must not allocate.
 */
public interface LossRecovery {
    String name();

    /**
     * Recovery begins on this ACK (ssthresh is set; the recovery point is SND.MAX). The sender then retransmits the
     * first lost segment at once, whatever the window (RFC 6675 §5 (4.3), RFC 5681 §3.2 step 2: fast retransmit).
     */
    void enter(TcpControlBlocks tcb, int c, SentSegments sent, AckSample ack);

    /**
     * An ACK during recovery that does not end it (for the entering ACK, {@link #enter} does this): set cwnd for what
     * may go now. Returns true when the first lost segment must go at once whatever the window says (RFC 6582 §3.2
     * step 5: a partial acknowledgment's retransmission).
     */
    boolean onAck(TcpControlBlocks tcb, int c, SentSegments sent, AckSample ack);

    /** {@code bytes} were sent (new or again) during recovery. */
    default void onSent(TcpControlBlocks tcb, int c, int bytes) {
        tcb.prrOut(c, tcb.prrOut(c) + bytes);
    }

    /** The recovery point was acknowledged: the window after recovery. */
    void exit(TcpControlBlocks tcb, int c, AckSample ack);

    /** Whether RFC 6675 NextSeg's rules 3 and 4 (retransmitting what is not yet known lost) apply. */
    boolean usesRescueRules();
}
