package dev.tern.tcp;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.doubles;
import static org.quicktheories.generators.SourceDSL.integers;

/** CUBIC (RFC 9438): its equations as properties, and its window over time from the connection's row. */
class CubicCongestionControlTest {
    private static final int MSS = 1448;
    private static final long MS = 1_000_000L;
    private static final CubicCongestionControl CUBIC = new CubicCongestionControl();

    @Test
    void theCurvePassesThroughTheLossPlateauAtK() {
        // RFC 9438 eq. 1 at t = K is W_max; eq. 2: C K^3 = W_max - cwnd_epoch (in segments).
        qt().forAll(integers().between(2, 100_000), integers().between(1, 100_000)).checkAssert((wMaxSegments, cwndSegments) -> {
            final int wMax = wMaxSegments * MSS;
            final int cwnd = Math.min(cwndSegments, wMaxSegments) * MSS;
            final double k = CubicCongestionControl.k(wMax, cwnd, MSS);
            assertEquals(wMax, CubicCongestionControl.windowAt(k, k, wMax, MSS), 1e-6 * wMax);
            assertEquals((double) (wMax - cwnd) / MSS, CubicCongestionControl.C * k * k * k, 1e-6 * wMaxSegments);
            assertEquals(cwnd, CubicCongestionControl.windowAt(0, k, wMax, MSS), 1e-6 * wMax + 1e-6);
        });
    }

    @Test
    void theCurveIsConcaveBelowThePlateauAndConvexAboveAndAlwaysRising() {
        qt().forAll(integers().between(10, 10_000), doubles().between(0.01, 20)).checkAssert((wMaxSegments, k) -> {
            final int wMax = wMaxSegments * MSS;
            final double h = k / 100;
            double previous = CubicCongestionControl.windowAt(0, k, wMax, MSS);
            for (int i = 1; i <= 200; i++) {
                final double t = i * h;
                final double w = CubicCongestionControl.windowAt(t, k, wMax, MSS);
                assertTrue(w >= previous - 1e-9, "rising");
                final double secondDifference = CubicCongestionControl.windowAt(t + h, k, wMax, MSS) - 2 * w
                    + CubicCongestionControl.windowAt(t - h, k, wMax, MSS);
                if (t < k - h) {
                    assertTrue(secondDifference <= 1e-6 * wMax, "concave before K");
                } else if (t > k + h) {
                    assertTrue(secondDifference >= -1e-6 * wMax, "convex after K");
                }
                previous = w;
            }
        });
    }

    @Test
    void aLossSetsSsthreshToBetaTimesTheWindowAndRemembersThePlateau() {
        try (TcpControlBlocks tcb = new TcpControlBlocks(2)) {
            final int c = tcb.allocate();
            CUBIC.init(tcb, c, MSS, 10, 0);
            tcb.cwnd(c, 100 * MSS);
            CUBIC.onCongestion(tcb, c, 100 * MSS, MSS, 0);
            assertEquals((int) (100 * MSS * 0.7), tcb.ssthresh(c), "RFC 9438 §4.6: beta_cubic = 0.7");
            assertEquals(100 * MSS, tcb.ccInt1(c), "W_max is the window at the loss");
        }
    }

    @Test
    void fastConvergenceLowersThePlateauWhenLossesComeBelowTheLastOne() {
        try (TcpControlBlocks tcb = new TcpControlBlocks(2)) {
            final int c = tcb.allocate();
            CUBIC.init(tcb, c, MSS, 10, 0);
            tcb.cwnd(c, 100 * MSS);
            CUBIC.onCongestion(tcb, c, 100 * MSS, MSS, 0);
            tcb.cwnd(c, 80 * MSS);
            CUBIC.onCongestion(tcb, c, 80 * MSS, MSS, 0);
            // RFC 9438 §4.7: W_max = cwnd (1 + beta) / 2 when cwnd < the last W_max.
            assertEquals((int) (80 * MSS * 1.7 / 2), tcb.ccInt1(c));
            assertEquals((int) (80 * MSS * 0.7), tcb.ssthresh(c));
        }
    }

    /** Drives onAck once per RTT with a full window delivered; returns the window after {@code rtts} round trips. */
    private static int grow(TcpControlBlocks tcb, int c, int rtts, long rttNs, long startNs) {
        tcb.srttUs(c, (int) (rttNs / 1000));
        final AckSample ack = new AckSample();
        long now = startNs;
        for (int i = 0; i < rtts; i++) {
            now += rttNs;
            ack.reset(now, MSS);
            ack.windowLimited = true;
            ack.ackedBytes = tcb.cwnd(c);
            ack.deliveredBytes = tcb.cwnd(c);
            CUBIC.onAck(tcb, c, ack);
        }
        return tcb.cwnd(c);
    }

    @Test
    void onALongPathTheWindowClimbsBackToThePlateauInAboutKSeconds() {
        try (TcpControlBlocks tcb = new TcpControlBlocks(2)) {
            final int c = tcb.allocate();
            CUBIC.init(tcb, c, MSS, 10, 0);
            tcb.cwnd(c, 1000 * MSS);
            CUBIC.onCongestion(tcb, c, 1000 * MSS, MSS, 0);
            tcb.cwnd(c, tcb.ssthresh(c));
            final double k = CubicCongestionControl.k(1000 * MSS, 700 * MSS, MSS);
            final long rtt = 100 * MS;
            final int roundsToK = (int) Math.round(k * 1e9 / rtt);
            final int atK = grow(tcb, c, roundsToK, rtt, 0);
            assertTrue(Math.abs(atK - 1000 * MSS) < 30 * MSS, "near W_max at K (" + k + " s): " + atK / MSS);
            final int later = grow(tcb, c, roundsToK, rtt, roundsToK * rtt);
            assertTrue(later > 1050 * MSS, "convex beyond the plateau: " + later / MSS);
        }
    }

    @Test
    void onAShortPathTheRenoFriendlyEstimateLeadsAtAlphaSegmentsPerRoundTrip() {
        try (TcpControlBlocks tcb = new TcpControlBlocks(2)) {
            final int c = tcb.allocate();
            CUBIC.init(tcb, c, MSS, 10, 0);
            tcb.cwnd(c, 100 * MSS);
            CUBIC.onCongestion(tcb, c, 100 * MSS, MSS, 0);
            tcb.cwnd(c, tcb.ssthresh(c));
            final int start = tcb.cwnd(c);
            // 100 µs round trips: the cubic term moves by far less than a segment in 40 of them.
            final int after = grow(tcb, c, 40, 100_000, 0);
            final double perRtt = (after - start) / 40.0 / MSS;
            assertEquals(CubicCongestionControl.ALPHA, perRtt, 0.1, "RFC 9438 §4.3: W_est grows alpha_cubic per RTT");
        }
    }

    @Test
    void anApplicationLimitedSenderDoesNotGrowItsWindow() {
        try (TcpControlBlocks tcb = new TcpControlBlocks(2)) {
            final int c = tcb.allocate();
            CUBIC.init(tcb, c, MSS, 10, 0);
            final AckSample ack = new AckSample().reset(MS, MSS);
            ack.ackedBytes = 5 * MSS;
            ack.deliveredBytes = 5 * MSS;
            CUBIC.onAck(tcb, c, ack);
            assertEquals(10 * MSS, tcb.cwnd(c), "RFC 7661 / RFC 9438 §5.8");
        }
    }

    @Test
    void undoRestoresTheWindowTheThresholdAndThePlateau() {
        try (TcpControlBlocks tcb = new TcpControlBlocks(2)) {
            final int c = tcb.allocate();
            CUBIC.init(tcb, c, MSS, 10, 0);
            tcb.cwnd(c, 100 * MSS);
            tcb.priorCwnd(c, 100 * MSS);
            tcb.priorSsthresh(c, tcb.ssthresh(c));
            CUBIC.onCongestion(tcb, c, 100 * MSS, MSS, 0);
            tcb.cwnd(c, tcb.ssthresh(c));
            CUBIC.onUndo(tcb, c, MS);
            assertEquals(100 * MSS, tcb.cwnd(c));
            assertEquals(1 << 30, tcb.ssthresh(c));
            assertEquals(0, tcb.ccInt1(c), "the plateau before the spurious loss");
        }
    }
}
