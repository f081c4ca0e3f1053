package dev.tern.tcp;

/**
 * Loss detection by counting: with SACK, RFC 6675's IsLost() (a segment is lost when DupThresh discontiguous SACKed
 * segments, or more than (DupThresh - 1) SMSS bytes, were SACKed above it); without SACK, RFC 5681 §3.2's third
 * duplicate ACK marks the first unacknowledged segment lost (and RFC 6582's partial acknowledgments the next ones,
 * in {@link NewRenoRecovery}). After a timeout everything outstanding and not SACKed is lost (RFC 6675 §5.1).
 *
 * <p>No tail loss probes: a lost tail waits for the retransmission timer, as before RACK.
 *
 * <p>Stateless; shared by every connection of a layer.
 */
public final class DupAckLossDetection implements LossDetection {
    public static final String NAME = "dupack";
    /** RFC 5681 §3.2 and RFC 6675 §2: DupThresh. */
    static final int DUP_THRESH = 3;

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public boolean tailLossProbes() {
        return false;
    }

    @Override
    public void onDelivered(TcpControlBlocks tcb, int c, SentSegments sent, int i, AckSample ack) {
        if (SeqNum.gt(sent.end(i), tcb.fack(c))) {
            tcb.fack(c, sent.end(i));
        }
    }

    @Override
    public long detectLosses(TcpControlBlocks tcb, int c, SentSegments sent, AckSample ack) {
        if (tcb.hasFlag(c, TcpControlBlocks.F_SACK)) {
            if (sent.sackedBytes() > 0) {
                markIsLost(sent, ack);
            }
        } else if (ack.duplicate() && tcb.dupAcks(c) == DUP_THRESH && !sent.isEmpty()
            && SeqNum.ge(tcb.sndUna(c), tcb.recover(c))) {
            // RFC 6582 §3.2 step 2: only when the cumulative ACK covers the last recovery point, else these duplicates
            // may come from segments retransmitted after a timeout.
            ack.markLost(sent, 0);
        }
        return 0;
    }

    /**
     * RFC 6675 §4 IsLost() for every unSACKed segment, walking down from the highest: counts SACKed segments and
     * bytes above each one.
     */
    private static void markIsLost(SentSegments sent, AckSample ack) {
        int sackedSegments = 0;
        int sackedBytes = 0;
        final int threshold = (DUP_THRESH - 1) * ack.mss();
        for (int i = sent.count() - 1; i >= 0; i--) {
            final int flags = sent.flags(i);
            if ((flags & SentSegments.SACKED) != 0) {
                sackedSegments++;
                sackedBytes += sent.length(i);
            } else if (sackedSegments >= DUP_THRESH || sackedBytes > threshold) {
                // RFC 6675 NextSeg (1.a): only above HighRxt; a segment sent again is not called lost by counting
                // (only RACK's clock can tell a lost retransmission).
                if ((flags & (SentSegments.LOST | SentSegments.RETRANS_IN_FLIGHT)) == 0) {
                    ack.markLost(sent, i);
                }
            }
        }
    }

    @Override
    public long onReorderTimeout(TcpControlBlocks tcb, int c, SentSegments sent, AckSample ack) {
        return 0;
    }

    /** RFC 6675 §5.1 (and RFC 5681 go-back-N): after a timeout every outstanding unSACKed segment is lost. */
    @Override
    public void onRetransmitTimeout(TcpControlBlocks tcb, int c, SentSegments sent, long nowNs) {
        for (int i = 0; i < sent.count(); i++) {
            sent.markLost(i);
        }
    }
}
