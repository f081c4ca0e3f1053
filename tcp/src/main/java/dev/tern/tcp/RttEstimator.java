package dev.tern.tcp;

/**
 * Round-trip time estimation and the retransmission timeout (RFC 6298), on a connection's row.
 *
 * <p>Samples come from a timed segment (one at a time, never a retransmitted one: Karn's rule, RFC 6298 §3) or,
 * with timestamps, from the echoed TSval of an ACK that acknowledges new data (RFC 7323 §4). The RTO is
 * {@code SRTT + max(G, 4 RTTVAR)} clamped to [min, max]; each expiry doubles it ({@code backoff}), until a new sample.
 * Values are kept in microseconds.
 *
 * <p>Owned by the shard thread; stateless apart from its configuration.
 */
final class RttEstimator {
    /** Clock granularity G (RFC 6298 §2): one timer wheel tick, about 1 ms. */
    private static final int GRANULARITY_US = 1049;
    private static final int MAX_BACKOFF = 16;

    private final int rtoMinUs;
    private final int rtoMaxUs;
    private final int rtoInitialUs;

    RttEstimator(TcpConfig config) {
        this.rtoMinUs = (int) (config.rtoMinNs() / 1000);
        this.rtoMaxUs = (int) Math.min(config.rtoMaxNs() / 1000, Integer.MAX_VALUE);
        this.rtoInitialUs = (int) (config.rtoInitialNs() / 1000);
    }

    /** A new connection: no samples, RTO at its initial value (RFC 6298 §2.1). */
    void init(TcpControlBlocks tcb, int c) {
        tcb.srttUs(c, 0);
        tcb.rttvarUs(c, 0);
        tcb.rtoUs(c, rtoInitialUs);
        tcb.backoff(c, 0);
    }

    /** Takes one RTT measurement (RFC 6298 §2.2, §2.3) and clears the backoff (§5.7: a new sample, a new RTO). */
    void sample(TcpControlBlocks tcb, int c, long rttNs) {
        final int r = (int) Math.max(1, Math.min(rttNs / 1000, Integer.MAX_VALUE / 8));
        int srtt = tcb.srttUs(c);
        int rttvar;
        if (srtt == 0) {
            srtt = r;
            rttvar = r / 2;
        } else {
            // RTTVAR <- (1 - beta) * RTTVAR + beta * |SRTT - R'|, SRTT <- (1 - alpha) * SRTT + alpha * R', beta 1/4, alpha 1/8
            rttvar = (3 * tcb.rttvarUs(c) + Math.abs(srtt - r)) / 4;
            srtt = (7 * srtt + r) / 8;
        }
        tcb.srttUs(c, Math.max(1, srtt));
        tcb.rttvarUs(c, rttvar);
        final long rto = (long) srtt + Math.max(GRANULARITY_US, 4L * rttvar);
        tcb.rtoUs(c, (int) Math.max(rtoMinUs, Math.min(rto, rtoMaxUs)));
        tcb.backoff(c, 0);
    }

    /** The RTO now in force, backoff included, in nanoseconds. */
    long rtoNs(TcpControlBlocks tcb, int c) {
        final long rto = (long) tcb.rtoUs(c) << Math.min(tcb.backoff(c), MAX_BACKOFF);
        return Math.min(rto, rtoMaxUs) * 1000L;
    }

    /** One more expiry: the next RTO doubles (RFC 6298 §5.5), up to the maximum. */
    void backOff(TcpControlBlocks tcb, int c) {
        tcb.backoff(c, Math.min(tcb.backoff(c) + 1, MAX_BACKOFF));
    }
}
