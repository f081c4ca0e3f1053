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
    /** Segments this ACK delivered for the first time, cumulatively or by SACK (TCP_INFO's tcpi_delivered). */
    int deliveredSegments;
    /** A segment sent once was delivered below the highest delivered byte, the lowest such at reorderedStart. */
    boolean reordered;
    int reorderedStart;
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
    // The delivery rate sample (DeliveryRateSampler): the newest segment this ACK delivered, and what it measured.
    boolean rateHasData;
    long rateSentNs;
    int rateEnd;
    long priorDelivered;
    long priorNs;
    long sendElapsedNs;
    long ackElapsedNs;
    boolean rateAppLimited;
    int txInFlight;
    int priorLost;
    int lostOfThatFlight;
    boolean hasRate;
    long rateIntervalNs;
    long rateDelivered;
    long deliveryRate;

    AckSample reset(long nowNs, int mss) {
        this.nowNs = nowNs;
        this.mss = mss;
        ackedBytes = 0;
        deliveredBytes = 0;
        deliveredSegments = 0;
        reordered = false;
        reorderedStart = 0;
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
        rateHasData = false;
        rateSentNs = 0;
        rateEnd = 0;
        priorDelivered = 0;
        priorNs = 0;
        sendElapsedNs = 0;
        ackElapsedNs = 0;
        rateAppLimited = false;
        txInFlight = 0;
        priorLost = 0;
        lostOfThatFlight = 0;
        hasRate = false;
        rateIntervalNs = 0;
        rateDelivered = 0;
        deliveryRate = 0;
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

    /**
     * Whether this ACK gave a delivery rate sample (draft-cheng-iccrg-delivery-rate-estimation §3.3): it delivered a
     * segment sent with the rate state recorded, over an interval no shorter than the minimum RTT.
     */
    public boolean hasRate() {
        return hasRate;
    }

    /** rs.delivery_rate: bytes per second delivered over {@link #rateIntervalNs()}; 0 without a sample. */
    public long deliveryRate() {
        return deliveryRate;
    }

    /** rs.interval: the longer of the send and the ACK interval of the sample, in ns. */
    public long rateIntervalNs() {
        return rateIntervalNs;
    }

    /** rs.delivered: bytes delivered over the sample's interval. */
    public long rateDelivered() {
        return rateDelivered;
    }

    /** rs.prior_delivered: the connection's delivered count when the sample's segment was sent. */
    public long priorDelivered() {
        return priorDelivered;
    }

    /** rs.prior_time: the connection's delivered time when the sample's segment was sent. */
    public long priorNs() {
        return priorNs;
    }

    /** rs.is_app_limited: the sample's segment was sent while the application limited the sender. */
    public boolean rateAppLimited() {
        return rateAppLimited;
    }

    /** BBR's rs.tx_in_flight: bytes in flight when the sample's segment was sent, itself included. */
    public int txInFlight() {
        return txInFlight;
    }

    /** BBR's rs.lost: bytes marked lost between the sample's segment's send and this ACK. */
    public int lostOfThatFlight() {
        return lostOfThatFlight;
    }
}
