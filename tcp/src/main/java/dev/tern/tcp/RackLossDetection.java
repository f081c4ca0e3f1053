package dev.tern.tcp;

/**
 * RACK-TLP loss detection (RFC 8985), the default, as in Linux: a segment is lost when a segment sent later was
 * delivered and more than an RTT plus a reordering window has passed since it was sent. Time order instead of
 * sequence order makes it work for retransmissions and tails alike; tail loss probes (§7, sent by {@link TcpSender})
 * turn a lost tail into an ACK that RACK can read.
 *
 * <p>Per connection (the row): RACK.xmit_ts and RACK.end_seq ({@code rackXmitNs}, {@code rackEndSeq}, valid with
 * {@link SenderState#S_RACK_VALID}), RACK.rtt, RACK.fack, the windowed minimum RTT, the reordering window's multiplier,
 * persistence and D-SACK round, and whether reordering was seen ({@link SenderState#S_REORDERING_SEEN}).
 *
 * <p>Stateless; shared by every connection of a layer.
 */
public final class RackLossDetection implements LossDetection {
    public static final String NAME = "rack";
    /** RFC 8985 §6.2: the duplicate threshold DupThresh, 3. */
    static final int DUP_THRESH = 3;
    /** §6.2 step 4: RACK.reo_wnd_persist starts at 16 recoveries after a D-SACK widened the window. */
    static final int REO_WND_PERSIST = 16;

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public boolean tailLossProbes() {
        return true;
    }

    /** RFC 8985 §6.2 steps 2 and 3: RACK_update() and the reordering check for one delivered segment. */
    @Override
    public void onDelivered(TcpControlBlocks tcb, int c, SentSegments sent, int i, AckSample ack) {
        final long sentNs = sent.sentNs(i);
        final int end = sent.end(i);
        final int flags = sent.flags(i);
        final long rttNs = ack.nowNs() - sentNs;
        // Step 2: for a retransmitted segment the ACK may answer the original; an RTT below the minimum says so.
        if ((flags & SentSegments.RETRANSMITTED) == 0 || rttNs >= tcb.minRttUs(c) * 1000L) {
            tcb.rackRttUs(c, (int) Math.min(Integer.MAX_VALUE, Math.max(1, rttNs / 1000)));
            if (!tcb.hasSenderFlag(c, SenderState.S_RACK_VALID) || sentAfter(sentNs, end, tcb.rackXmitNs(c),
                tcb.rackEndSeq(c))) {
                tcb.rackXmitNs(c, sentNs);
                tcb.rackEndSeq(c, end);
                tcb.setSenderFlag(c, SenderState.S_RACK_VALID);
            }
        }
        // Step 3: a segment never retransmitted that is delivered below the highest delivered one was reordered.
        if (SeqNum.gt(end, tcb.fack(c))) {
            tcb.fack(c, end);
        } else if ((flags & SentSegments.RETRANSMITTED) == 0) {
            tcb.setSenderFlag(c, SenderState.S_REORDERING_SEEN);
        }
    }

    /** RFC 8985 §6.2 step 1: t1 after t2, or at the same time with a higher end sequence number. */
    static boolean sentAfter(long t1, int seq1, long t2, int seq2) {
        return t1 - t2 > 0 || (t1 == t2 && SeqNum.gt(seq1, seq2));
    }

    @Override
    public long detectLosses(TcpControlBlocks tcb, int c, SentSegments sent, AckSample ack) {
        return detect(tcb, c, sent, ack);
    }

    @Override
    public long onReorderTimeout(TcpControlBlocks tcb, int c, SentSegments sent, AckSample ack) {
        return detect(tcb, c, sent, ack);
    }

    /**
     * RFC 8985 §6.2 step 5, RACK_detect_loss(): every segment sent before RACK.xmit_ts is lost once RACK.rtt plus the
     * reordering window has passed since it was sent; returns the time until the next such segment would be, or 0.
     *
     * <p>The walk is in sequence order, and stops at the first segment never retransmitted that was sent after
     * RACK.xmit_ts: every later segment was first sent even later, and any retransmission of it later still.
     */
    private static long detect(TcpControlBlocks tcb, int c, SentSegments sent, AckSample ack) {
        if (!tcb.hasSenderFlag(c, SenderState.S_RACK_VALID)) {
            return 0;
        }
        final long nowNs = ack.nowNs();
        final long rackXmitNs = tcb.rackXmitNs(c);
        final int rackEnd = tcb.rackEndSeq(c);
        final long windowNs = tcb.rackRttUs(c) * 1000L + reorderingWindowNs(tcb, c, sent, ack.mss());
        long timeout = 0;
        final int count = sent.count();
        for (int i = 0; i < count; i++) {
            final int flags = sent.flags(i);
            if ((flags & SentSegments.SACKED) != 0
                || (flags & (SentSegments.LOST | SentSegments.RETRANS_IN_FLIGHT)) == SentSegments.LOST) {
                continue;
            }
            final long sentNs = sent.sentNs(i);
            if (!sentAfter(rackXmitNs, rackEnd, sentNs, sent.end(i))) {
                if ((flags & SentSegments.RETRANSMITTED) == 0) {
                    break;
                }
                continue;
            }
            final long remaining = sentNs + windowNs - nowNs;
            if (remaining <= 0) {
                ack.markLost(sent, i);
            } else {
                timeout = Math.max(timeout, remaining);
            }
        }
        return timeout;
    }

    /**
     * RFC 8985 §6.2 step 4, RACK.reo_wnd: none while no reordering was seen and the sender is already recovering
     * or DupThresh segments were SACKed above a hole (the first loss is then as quick as three duplicate ACKs);
     * else a quarter of the minimum RTT times the multiplier D-SACKs raised, at most SRTT.
     */
    static long reorderingWindowNs(TcpControlBlocks tcb, int c, SentSegments sent, int mss) {
        if (!tcb.hasSenderFlag(c, SenderState.S_REORDERING_SEEN)) {
            if (tcb.senderState(c) != SenderState.OPEN) {
                return 0;
            }
            if (sent.sackedBytes() >= DUP_THRESH * mss) {
                return 0;
            }
        }
        final long window = (long) Math.max(1, tcb.reoWndMult(c)) * tcb.minRttUs(c) * 1000L / 4;
        return Math.min(window, tcb.srttUs(c) * 1000L);
    }

    /** §6.3: the first segment is lost; the others if they were sent longer than RACK.rtt + reo_wnd ago. */
    @Override
    public void onRetransmitTimeout(TcpControlBlocks tcb, int c, SentSegments sent, long nowNs) {
        final int count = sent.count();
        if (count == 0) {
            return;
        }
        sent.markLost(0);
        final long windowNs = tcb.rackRttUs(c) * 1000L + reorderingWindowNs(tcb, c, sent, tcb.sndMss(c));
        for (int i = 1; i < count; i++) {
            if (sent.sentNs(i) + windowNs - nowNs <= 0) {
                sent.markLost(i);
            }
        }
    }

    /** §6.2 step 4: a D-SACK widens the reordering window by one step per round trip, for 16 recoveries. */
    @Override
    public void onDsack(TcpControlBlocks tcb, int c) {
        if (tcb.hasSenderFlag(c, SenderState.S_DSACK_ROUND) && SeqNum.lt(tcb.sndUna(c), tcb.dsackRound(c))) {
            return;
        }
        tcb.setSenderFlag(c, SenderState.S_DSACK_ROUND);
        tcb.dsackRound(c, tcb.sndMax(c));
        tcb.reoWndMult(c, Math.min(tcb.reoWndMult(c) + 1, 1 << 10));
        tcb.reoWndPersist(c, REO_WND_PERSIST);
    }

    @Override
    public void onRecoveryExit(TcpControlBlocks tcb, int c) {
        final int persist = tcb.reoWndPersist(c) - 1;
        tcb.reoWndPersist(c, Math.max(0, persist));
        if (persist <= 0) {
            tcb.reoWndMult(c, 1);
        }
    }
}
