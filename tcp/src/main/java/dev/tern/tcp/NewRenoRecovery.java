package dev.tern.tcp;

/**
 * NewReno fast recovery (RFC 6582), for peers that do not do SACK (and on request): the window is inflated by one
 * segment per duplicate ACK, each partial acknowledgment marks the next unacknowledged segment lost (so it is
 * retransmitted at once) and deflates the window by what it acknowledged, and a full acknowledgment ends recovery.
 *
 * <p>Stateless; shared by every connection of a layer.
 */
public final class NewRenoRecovery implements LossRecovery {
    public static final String NAME = "newreno";

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public boolean usesRescueRules() {
        return false;
    }

    /** RFC 6582 §3.2 step 2 (RFC 5681 §3.2 step 3): cwnd = ssthresh + 3 SMSS, for the segments that left. */
    @Override
    public void enter(TcpControlBlocks tcb, int c, SentSegments sent, AckSample ack) {
        tcb.cwnd(c, (int) Math.min((long) tcb.ssthresh(c) + 3L * ack.mss(), TcpControlBlocks.MAX_CWND));
    }

    @Override
    public boolean onAck(TcpControlBlocks tcb, int c, SentSegments sent, AckSample ack) {
        final int mss = ack.mss();
        if (ack.ackedBytes() > 0) {
            // Step 5, a partial acknowledgment: retransmit the next hole, deflate by what was acknowledged and add
            // back one segment if at least one was.
            if (!sent.isEmpty()) {
                ack.markLost(sent, 0);
            }
            final long cwnd = (long) tcb.cwnd(c) - ack.ackedBytes() + (ack.ackedBytes() >= mss ? mss : 0);
            tcb.cwnd(c, (int) Math.max(mss, cwnd));
            return true;
        }
        if (ack.duplicate()) {
            // Step 4: each further duplicate ACK means a segment left the network.
            tcb.cwnd(c, (int) Math.min((long) tcb.cwnd(c) + mss, TcpControlBlocks.MAX_CWND));
        }
        return false;
    }

    /** Step 3, option 1: cwnd = min(ssthresh, max(FlightSize, SMSS) + SMSS). */
    @Override
    public void exit(TcpControlBlocks tcb, int c, AckSample ack) {
        final int flight = tcb.sndMax(c) - tcb.sndUna(c);
        tcb.cwnd(c, Math.min(tcb.ssthresh(c), Math.max(flight, ack.mss()) + ack.mss()));
    }
}
