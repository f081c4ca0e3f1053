package dev.tern.tcp;

/**
 * Loss detection, chosen per connection: decides which sent segments are lost, so that the sender retransmits them
 * and enters recovery. {@code "rack"} (RFC 8985 RACK-TLP, the default, as in Linux) and {@code "dupack"} (RFC 6675's
 * IsLost over the SACK scoreboard; RFC 5681's three duplicate ACKs without SACK). Without SACK every connection
 * falls back to {@code "dupack"}: RACK's time order needs to know which segments arrived.
 *
 * <p>A stateless strategy: its state lives in the connection's row (RACK's fields) and marks in the
 * {@link SentSegments}. Called on the stack thread; implementations must not allocate.
 */
public interface LossDetection {
    String name();

    /**
     * Segment {@code i} of {@code sent} was delivered by this ACK (newly SACKed or cumulatively acknowledged, not
     * delivered before), called before it leaves the record.
     */
    void onDelivered(TcpControlBlocks tcb, int c, SentSegments sent, int i, AckSample ack);

    /**
     * The ACK is in the scoreboard: mark what is lost ({@link SentSegments#markLost}), adding the bytes to
     * {@link AckSample#newlyLostBytes}. Returns how long until the segments not yet old enough to call lost should be
     * looked at again (RACK's reordering timer), in ns, or 0.
     */
    long detectLosses(TcpControlBlocks tcb, int c, SentSegments sent, AckSample ack);

    /** The reordering timer fired: as {@link #detectLosses} with no new ACK. */
    long onReorderTimeout(TcpControlBlocks tcb, int c, SentSegments sent, AckSample ack);

    /** The retransmission timer expired: mark lost what the timeout shows lost (at least the first segment). */
    void onRetransmitTimeout(TcpControlBlocks tcb, int c, SentSegments sent, long nowNs);

    /** A D-SACK arrived (RFC 2883): a retransmission was unneeded, or the path reorders. */
    default void onDsack(TcpControlBlocks tcb, int c) {
    }

    /** Fast or timeout recovery ended. */
    default void onRecoveryExit(TcpControlBlocks tcb, int c) {
    }

    /** Whether the sender sends tail loss probes (RFC 8985 §7) with this detection. */
    boolean tailLossProbes();
}
