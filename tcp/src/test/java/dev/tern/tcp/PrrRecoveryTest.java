package dev.tern.tcp;

import dev.tern.tcp.testing.Seg;
import dev.tern.tcp.testing.TcpHarness;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static dev.tern.tcp.testing.Seg.ACK;
import static dev.tern.tcp.testing.Seg.SEG;
import static dev.tern.tcp.testing.TcpHarness.LOCAL_ISS;
import static dev.tern.tcp.testing.TcpHarness.MS;
import static dev.tern.tcp.testing.TcpHarness.REMOTE_ISS;
import static dev.tern.tcp.testing.TcpHarness.bytes;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;

/** Proportional rate reduction (RFC 9937): sndcnt's regimes and the worked example's shape. */
class PrrRecoveryTest {
    static final int MSS = 1460;
    static final int L = LOCAL_ISS + 1;
    static final int R = REMOTE_ISS + 1;

    static int seg(int i) {
        return L + i * MSS;
    }

    @Test
    void whilePipeExceedsSsthreshTheSenderSendsSsthreshOverRecoverFsPerByteDelivered() {
        // RecoverFS 20 segments, ssthresh 10: one segment per two delivered, in whole segments.
        final int fs = 20 * MSS;
        final int ssthresh = 10 * MSS;
        // The first ACK of a recovery lets the fast retransmit go even where the formula rounds to half a segment.
        assertEquals(MSS, PrrRecovery.sendCount(MSS, 0, fs, ssthresh, 18 * MSS, MSS, MSS, false));
        assertEquals(0, PrrRecovery.sendCount(2 * MSS, MSS, fs, ssthresh, 18 * MSS, MSS, MSS, false));
        assertEquals(MSS, PrrRecovery.sendCount(3 * MSS, MSS, fs, ssthresh, 17 * MSS, MSS, MSS, false));
        assertEquals(0, PrrRecovery.sendCount(4 * MSS, 2 * MSS, fs, ssthresh, 17 * MSS, MSS, MSS, false));
        assertEquals(MSS, PrrRecovery.sendCount(5 * MSS, 2 * MSS, fs, ssthresh, 16 * MSS, MSS, MSS, false));
    }

    @Test
    void belowSsthreshASafeAckCatchesUpByOneSegmentMoreThanDelivered() {
        final int fs = 20 * MSS;
        final int ssthresh = 10 * MSS;
        // PRR-SSRB: limit = MAX(prr_delivered - prr_out, DeliveredData) + MSS; sndcnt = MIN(ssthresh - pipe, limit).
        assertEquals(4 * MSS, PrrRecovery.sendCount(5 * MSS, 2 * MSS, fs, ssthresh, 2 * MSS, MSS, MSS, true));
        assertEquals(2 * MSS, PrrRecovery.sendCount(5 * MSS, 5 * MSS, fs, ssthresh, 2 * MSS, MSS, MSS, true));
        assertEquals(2 * MSS, PrrRecovery.sendCount(5 * MSS, 2 * MSS, fs, ssthresh, 8 * MSS, MSS, MSS, true));
        assertEquals(0, PrrRecovery.sendCount(5 * MSS, 5 * MSS, fs, ssthresh, 10 * MSS, MSS, MSS, true));
    }

    @Test
    void belowSsthreshAnAckThatOnlySacksOrShowsALossSendsOnlyWhatWasDelivered() {
        final int fs = 20 * MSS;
        final int ssthresh = 10 * MSS;
        // RFC 9937 PRR-CRB: without a safe ACK, limit = MAX(prr_delivered - prr_out, DeliveredData), no extra segment.
        assertEquals(3 * MSS, PrrRecovery.sendCount(5 * MSS, 2 * MSS, fs, ssthresh, 2 * MSS, MSS, MSS, false));
        assertEquals(MSS, PrrRecovery.sendCount(5 * MSS, 5 * MSS, fs, ssthresh, 2 * MSS, MSS, MSS, false));
        assertEquals(0, PrrRecovery.sendCount(5 * MSS, 5 * MSS, fs, ssthresh, 2 * MSS, 0, MSS, false));
        // The first ACK of a recovery (a loss, so never safe) still lets the fast retransmit go.
        assertEquals(MSS, PrrRecovery.sendCount(MSS, 0, fs, ssthresh, 3 * MSS, MSS, MSS, false));
    }

    /** Over a whole recovery, what PRR lets go never exceeds ssthresh / RecoverFS of what was delivered, plus a segment. */
    @Test
    void theProportionalPartNeverRunsAheadOfItsShare() {
        qt().withExamples(500).forAll(integers().between(4, 400), integers().between(1, 399), integers().between(1, 400))
            .checkAssert((fsSegments, ssthreshSegments, acks) -> {
                final int fs = fsSegments * MSS;
                final int ssthresh = Math.min(ssthreshSegments, fsSegments - 1) * MSS;
                int delivered = 0;
                int out = 0;
                for (int i = 0; i < Math.min(acks, fsSegments); i++) {
                    delivered += MSS;
                    final int sndcnt = PrrRecovery.sendCount(delivered, out, fs, ssthresh, fs, MSS, MSS, false);
                    out += sndcnt;
                    final long share = ((long) delivered * ssthresh + fs - 1) / fs;
                    assertEquals(true, out <= Math.max(MSS, share + MSS),
                        "sent " + out + " of share " + share + " after " + delivered);
                }
            });
    }

    /**
     * The shape of RFC 6937's single-loss example (RFC 9937 keeps it), in segments: 20 in flight, the first lost, Reno's
     * halving; limited transmit sends on the first two duplicate ACKs, the third starts recovery with the fast
     * retransmit, and from then on one new segment goes for every two ACKs, so pipe falls smoothly to ssthresh instead
     * of RFC 6675's wait and burst.
     */
    @Test
    void aSingleLossSendsOneSegmentPerTwoAcksThroughTheRecovery() {
        final TcpConfig config = TcpHarness.config().initialCwndSegments(20).congestionControl("newreno").build();
        try (TcpHarness h = TcpHarness.establishedAfter(10 * MS, config,
            TcpOptions.DEFAULT.withLossDetection("dupack").withRecovery("prr"), Seg.SYN_ACK.sackOk())) {
            h.write(bytes(60 * MSS));
            for (int i = 0; i < 20; i++) {
                h.expect(SEG.seq(seg(i)).len(MSS));
            }
            final List<String> sent = new ArrayList<>();
            for (int ack = 1; ack <= 21; ack++) {
                h.send(ACK.seq(R).ack(seg(0)).sack(seg(1), seg(ack + 1)));
                final var frames = h.pending();
                h.clearReceived();
                sent.add(frames.isEmpty() ? "-" : frames.size() > 1 ? "?" + frames.size()
                    : frames.getFirst().tcp().seq() == seg(0) ? "R" : "N");
            }
            // ssthresh = FlightSize / 2 = 11 segments (22 in flight after limited transmit). Until ACK 16, pipe is above
            // it: one segment per two ACKs. From ACK 17 pipe has reached ssthresh and PRR-SSRB holds it there: one
            // segment per segment delivered.
            assertEquals(List.of("N", "N", "R", "-", "N", "-", "N", "-", "N", "-", "N", "-", "N", "-", "N", "-", "-",
                "N", "N", "N", "N"), sent);
            assertEquals(11 * MSS, h.tcp.ssthresh(h.conn));
            assertEquals(11 * MSS, h.tcp.info(h.conn).pipe());
            h.send(ACK.seq(R).ack(seg(31)));
            assertEquals(h.tcp.ssthresh(h.conn), h.tcp.cwnd(h.conn));
        }
    }
}
