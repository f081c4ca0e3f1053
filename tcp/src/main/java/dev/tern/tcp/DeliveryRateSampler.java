package dev.tern.tcp;

import org.agrona.concurrent.status.AtomicCounter;

/**
 * Delivery rate samples (draft-cheng-iccrg-delivery-rate-estimation, as draft-ietf-ccwg-bbr §4.5.2 uses them): each
 * segment sent remembers the connection's delivered count and time and the start of its send interval; an ACK that
 * delivers segments measures, from the newest of them, the bytes delivered over the longer of the send interval and
 * the ACK interval. The connection's side lives in the row ({@code delivered}, {@code deliveredAtNs},
 * {@code firstSentNs}, {@code appLimited}, {@code lostTotal}), the segment's in {@link SentSegments}, the sample in
 * the {@link AckSample}.
 *
 * <p>BBRv3 also wants, per sample, the data in flight when the segment was sent and what was lost since
 * (draft-ietf-ccwg-bbr §4.5.10.2, {@code rs.tx_in_flight} and {@code rs.lost}): both come from the same stamp.
 *
 * <p>Nothing here allocates. Owned by the shard thread; not thread-safe.
 */
final class DeliveryRateSampler {
    private static final long NS_PER_S = 1_000_000_000L;

    private final TcpControlBlocks tcb;
    private final AtomicCounter discarded;

    DeliveryRateSampler(TcpControlBlocks tcb, TcpCounters counters) {
        this.tcb = tcb;
        this.discarded = counters.rateSamplesDiscarded;
    }

    /**
     * Entry {@code i} was just sent (for the first time or again), and is counted in pipe: the stamp of §3.2
     * "Transmitting or retransmitting". A flight that starts from empty starts both intervals now, so the idle time
     * before it is not measured as slow delivery.
     */
    void onSent(int c, SentSegments sent, int i, long nowNs) {
        final int inFlight = sent.pipe(sent.highEnd() - tcb.sndUna(c));
        if (inFlight <= sent.length(i)) {
            tcb.firstSentNs(c, nowNs);
            tcb.deliveredAtNs(c, nowNs);
        }
        sent.stampRate(i, tcb.deliveredAtNs(c), tcb.firstSentNs(c), inFlight, tcb.lostTotal(c),
            tcb.appLimited(c) != 0);
    }

    /**
     * Entry {@code i} was delivered (cumulatively acknowledged or SACKed) by this ACK, for the first time: §3.3's
     * UpdateRateSample. The sample follows the most recently sent of the segments the ACK delivered, whose stamps
     * are the freshest; the next send interval starts at its send time.
     */
    void onDelivered(int c, SentSegments sent, int i, AckSample s) {
        tcb.deliveredAtNs(c, s.nowNs);
        final long sentNs = sent.sentNs(i);
        if (s.rateHasData && sentNs - s.rateSentNs < 0
            || s.rateHasData && sentNs == s.rateSentNs && !SeqNum.gt(sent.end(i), s.rateEnd)) {
            return;
        }
        s.rateHasData = true;
        s.rateSentNs = sentNs;
        s.rateEnd = sent.end(i);
        s.priorDelivered = sent.deliveredAtSend(i);
        s.priorNs = sent.deliveredAtNs(i);
        s.rateAppLimited = sent.has(i, SentSegments.APP_LIMITED);
        s.sendElapsedNs = sentNs - sent.firstSentNs(i);
        s.ackElapsedNs = s.nowNs - sent.deliveredAtNs(i);
        s.txInFlight = sent.txInFlight(i);
        s.priorLost = sent.lostAtSend(i);
        tcb.firstSentNs(c, sentNs);
    }

    /** Bytes newly marked lost (by an ACK, a timer, or a timeout), for the next samples' {@code rs.lost}. */
    void lost(int c, int bytes) {
        if (bytes > 0) {
            tcb.lostTotal(c, tcb.lostTotal(c) + bytes);
        }
    }

    /**
     * After the ACK's deliveries and losses are counted: §3.3's GenerateRateSample. An application-limited period
     * ends once what was in flight at its start is delivered. A sample with no forward progress, or an interval
     * empty or shorter than the minimum RTT (ACK compression or a stretched ACK would overstate the rate, §3.3), is
     * discarded and counted.
     */
    void generate(int c, AckSample s) {
        lost(c, s.newlyLostBytes);
        final long delivered = tcb.delivered(c);
        final int appLimited = tcb.appLimited(c);
        if (appLimited != 0 && (int) delivered - appLimited > 0) {
            tcb.appLimited(c, 0);
        }
        if (!s.rateHasData) {
            return;
        }
        s.lostOfThatFlight = tcb.lostTotal(c) - s.priorLost;
        final long interval = Math.max(s.sendElapsedNs, s.ackElapsedNs);
        final long bytes = delivered - s.priorDelivered;
        if (interval <= 0 || bytes <= 0 || interval < tcb.minRttUs(c) * 1000L) {
            discarded.incrementRelease();
            return;
        }
        s.rateIntervalNs = interval;
        s.rateDelivered = bytes;
        s.deliveryRate = rate(bytes, interval);
        s.hasRate = true;
    }

    /** Bytes per second, without overflow for any byte count a connection delivers in one interval. */
    static long rate(long bytes, long intervalNs) {
        return bytes < Long.MAX_VALUE / NS_PER_S ? bytes * NS_PER_S / intervalNs
            : (long) ((double) bytes * NS_PER_S / intervalNs);
    }

    /**
     * After a send pass: §3.3.1's app-limited check. With less than a segment left to send, nothing lost waiting to
     * go again and room in the window, the application is what keeps the sender back; the mark lasts until the
     * data now in flight is delivered (0 is "not limited", so the mark is never 0).
     */
    void checkAppLimited(int c, SentSegments sent, int unsent, int mss) {
        final int pipe = sent.pipe(tcb.sndMax(c) - tcb.sndUna(c));
        if (unsent < mss && pipe < tcb.cwnd(c) && sent.firstLostNotRetransmitted() < 0) {
            final int mark = (int) tcb.delivered(c) + pipe;
            tcb.appLimited(c, mark != 0 ? mark : 1);
        }
    }
}
