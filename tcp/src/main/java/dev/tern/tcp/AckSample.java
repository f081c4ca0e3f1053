package dev.tern.tcp;

/**
 * What one arriving ACK did, as the sender's plug points see it ({@link CongestionControl},
 * {@link LossDetection}, {@link LossRecovery}): bytes newly acknowledged and SACKed, the RTT sample it gave, the
 * data in the network before and after. One reusable instance per layer, filled per ACK (Linux's
 * {@code struct rate_sample} plays the same part). Valid only during the call it is passed to.
 *
 * <p>Owned by the shard thread; not thread-safe.
 */
public final class AckSample {
    long nowNs;
    int mss;
    int ackedBytes;
    int deliveredBytes;
    int rttUs;
    int priorInFlight;
    int inFlight;
    int newlyLostBytes;
    int newlyLostSegments;
    boolean duplicate;
    boolean dsack;
    boolean windowLimited;
    boolean retransmittedAcked;
    boolean originalDelivered;
    boolean ece;
    int senderState;

    AckSample reset(long nowNs, int mss) {
        this.nowNs = nowNs;
        this.mss = mss;
        ackedBytes = 0;
        deliveredBytes = 0;
        rttUs = -1;
        priorInFlight = 0;
        inFlight = 0;
        newlyLostBytes = 0;
        newlyLostSegments = 0;
        duplicate = false;
        dsack = false;
        windowLimited = false;
        retransmittedAcked = false;
        originalDelivered = false;
        ece = false;
        senderState = SenderState.OPEN;
        return this;
    }

    /** When the ACK arrived. */
    public long nowNs() {
        return nowNs;
    }

    /** The sender's segment size (SMSS, before options). */
    public int mss() {
        return mss;
    }

    /** Sequence space newly covered by the cumulative acknowledgment (SND.UNA's move). */
    public int ackedBytes() {
        return ackedBytes;
    }

    /** RFC 9937's DeliveredData: SND.UNA's move plus the change in SACKed bytes. */
    public int deliveredBytes() {
        return deliveredBytes;
    }

    /** RTT measured by this ACK in µs (a segment never retransmitted, or the echoed timestamp), or -1. */
    public int rttUs() {
        return rttUs;
    }

    /** Bytes in the network (RFC 6675 pipe) before this ACK. */
    public int priorInFlight() {
        return priorInFlight;
    }

    /** Bytes in the network after this ACK and the losses it revealed. */
    public int inFlight() {
        return inFlight;
    }

    /** Bytes the loss detection newly marked lost on this ACK. */
    public int newlyLostBytes() {
        return newlyLostBytes;
    }

    /** Marks segment {@code i} of {@code sent} lost and counts it here (for loss detections and recoveries). */
    public void markLost(SentSegments sent, int i) {
        final int bytes = sent.markLost(i);
        if (bytes > 0) {
            newlyLostBytes += bytes;
            newlyLostSegments++;
        }
    }

    /** Segments newly marked lost on this ACK. */
    public int newlyLostSegments() {
        return newlyLostSegments;
    }

    /** The ACK carried ECE on a connection that negotiated ECN (RFC 3168 §6.1.2; DCTCP counts its bytes). */
    public boolean ece() {
        return ece;
    }

    /** A duplicate ACK in RFC 5681 §2's sense. */
    public boolean duplicate() {
        return duplicate;
    }

    /** The ACK carried a D-SACK block (RFC 2883). */
    public boolean dsack() {
        return dsack;
    }

    /**
     * The sender was limited by its congestion window before this ACK (not by the application or the receiver's
     * window): RFC 7661 lets only such a window grow.
     */
    public boolean windowLimited() {
        return windowLimited;
    }

    /** {@link SenderState#OPEN}, {@link SenderState#RECOVERY} or {@link SenderState#LOSS} when the ACK arrived. */
    public int senderState() {
        return senderState;
    }
}
