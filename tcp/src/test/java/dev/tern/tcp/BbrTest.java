package dev.tern.tcp;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static dev.tern.tcp.BbrCongestionControl.DRAIN;
import static dev.tern.tcp.BbrCongestionControl.PROBE_BW_CRUISE;
import static dev.tern.tcp.BbrCongestionControl.PROBE_RTT;
import static dev.tern.tcp.BbrCongestionControl.STARTUP;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * BBR's filters and state machine (draft-ietf-ccwg-bbr), driven ACK by ACK on virtual time with hand-made samples:
 * each ACK here ends a round unless it says otherwise, so a round is one call.
 */
class BbrTest {
    private static final int MSS = 1000;
    private static final long MS = 1_000_000L;
    private static final long SECOND = 1_000_000_000L;
    /** 10 MB/s and 10 ms: a BDP of 100 segments. */
    private static final long BW = 10_000_000;
    private static final int RTT_US = 10_000;
    private static final int BDP = (int) (BW * RTT_US / 1_000_000);

    private TcpControlBlocks tcb;
    private BbrCongestionControl bbr;
    private BbrState t;
    private final AckSample ack = new AckSample();
    private int c;
    private long now;

    @BeforeEach
    void setUp() {
        tcb = new TcpControlBlocks(4);
        c = tcb.allocate();
        tcb.srttUs(c, RTT_US);
        bbr = (BbrCongestionControl) new BbrCongestionControl().forLayer(tcb.capacity());
        t = bbr.state();
        now = SECOND;
        bbr.init(tcb, c, MSS, 10, now);
    }

    @AfterEach
    void tearDown() {
        tcb.close();
    }

    /** An ACK {@code afterNs} after the last delivering {@code delivered} bytes, measured at {@code rate}. */
    private AckSample ack(long afterNs, int delivered, long rate, int rttUs, int inFlight, boolean newRound) {
        return ack(afterNs, delivered, rate, rttUs, inFlight, newRound, 0, 0);
    }

    /**
     * As above, revealing {@code lost} newly lost bytes, with {@code lostOfFlight} lost since the sample's segment
     * was sent.
     */
    private AckSample ack(long afterNs, int delivered, long rate, int rttUs, int inFlight, boolean newRound, int lost,
                          int lostOfFlight) {
        now += afterNs;
        ack.reset(now, MSS);
        ack.ackedBytes = delivered;
        ack.deliveredBytes = delivered;
        ack.rttUs = rttUs;
        ack.inFlight = inFlight;
        ack.priorInFlight = inFlight + delivered;
        ack.windowLimited = true;
        ack.rateHasData = true;
        ack.priorDelivered = newRound ? tcb.delivered(c) : t.nextRoundDelivered(c) - 1;
        tcb.delivered(c, tcb.delivered(c) + delivered);
        if (rate > 0) {
            ack.hasRate = true;
            ack.deliveryRate = rate;
            ack.rateDelivered = delivered;
            ack.rateIntervalNs = RTT_US * 1000L;
            ack.txInFlight = inFlight + delivered;
            ack.lostOfThatFlight = lostOfFlight;
        }
        ack.newlyLostBytes = lost;
        bbr.onAck(tcb, c, ack);
        return ack;
    }

    /** One round of the path at {@code rate}, with the window's worth in flight. */
    private void round(long rate, int inFlight) {
        ack(RTT_US * 1000L, 10 * MSS, rate, RTT_US, inFlight, true);
    }

    /** Startup on a path that gives BW: the rate doubles per round until the path's. */
    private void fillThePipe() {
        for (long rate = BW / 16; rate < BW; rate *= 2) {
            round(rate, 2 * BDP);
        }
        // The first round at BW still grew by more than a quarter; three more without growth fill the pipe.
        for (int i = 0; i < 4; i++) {
            round(BW, 3 * BDP);
        }
    }

    @Test
    void startupRaisesThePacingRateAndWindowUntilTheBandwidthStopsGrowing() {
        assertEquals(STARTUP, t.state(c));
        final long initial = tcb.pacingRate(c);
        assertEquals((long) (BbrCongestionControl.STARTUP_PACING_GAIN * 10 * MSS * 1_000_000 / RTT_US), initial, 2,
            "before any sample: the initial window over the handshake's RTT, at Startup's gain");
        round(BW / 16, 10 * MSS);
        assertEquals(initial, tcb.pacingRate(c), "a lower first sample does not slow Startup down");
        round(BW, 10 * MSS);
        assertEquals((long) (BbrCongestionControl.STARTUP_PACING_GAIN * BW * 0.99), tcb.pacingRate(c), 2,
            "Startup's gain over the estimate, less the margin");
        assertTrue(tcb.cwnd(c) > 10 * MSS, "the window grows by what is delivered");
        assertEquals(TcpControlBlocks.MAX_CWND, tcb.ssthresh(c), "ssthresh stays open");
    }

    @Test
    void startupExitsAfterThreeRoundsWithoutAQuarterMoreBandwidth() {
        for (long rate = BW / 16; rate < BW; rate *= 2) {
            round(rate, 2 * BDP);
            assertEquals(STARTUP, t.state(c), "growing");
        }
        round(BW, 3 * BDP);
        // Growth below 25 %: the rounds count; growth above resets the count.
        round(BW + BW / 5, 3 * BDP);
        round(BW + BW / 5, 3 * BDP);
        assertEquals(STARTUP, t.state(c), "two rounds without growth");
        round(BW + BW / 5, 3 * BDP);
        assertEquals(DRAIN, t.state(c), "the third round without growth fills the pipe");
        assertEquals(BW + BW / 5, bbr.maxBw(c));
    }

    @Test
    void drainLastsUntilTheDataInFlightIsDownToTheBdp() {
        fillThePipe();
        assertEquals(DRAIN, t.state(c));
        assertEquals((long) (BbrCongestionControl.DRAIN_PACING_GAIN * BW * 0.99), tcb.pacingRate(c), 2);
        round(BW, 2 * BDP);
        round(BW, BDP + 10 * MSS);
        assertEquals(DRAIN, t.state(c), "still above the BDP");
        round(BW, BDP);
        assertTrue(BbrCongestionControl.isInProbeBw(t.state(c)), "drained: ProbeBW");
        assertEquals(PROBE_BW_CRUISE, t.state(c), "down to the BDP already: Down gives way to Cruise at once");
        assertEquals((long) (BW * 0.99), tcb.pacingRate(c), 2, "cruising at the estimate");
    }

    @Test
    void startupExitsOnARoundWithManyLossesFromAFlightThatLostTooMuch() {
        round(BW / 16, 2 * BDP);
        round(BW / 8, 2 * BDP);
        for (int i = 0; i < BbrCongestionControl.FULL_LOSS_COUNT; i++) {
            // Six ACKs of one round, each revealing a loss.
            ack(MS, MSS, BW / 8, RTT_US, 2 * BDP, false, MSS, 0);
            assertEquals(STARTUP, t.state(c));
        }
        // The loss round ends with a sample whose flight lost a tenth of what it carried.
        ack(MS, MSS, BW / 8, RTT_US, 2 * BDP, true, MSS, BDP / 5);
        assertEquals(DRAIN, t.state(c), "the queue overflowed: Startup is over");
        assertTrue(t.inflightHi(c) >= 10 * MSS && t.inflightHi(c) < Integer.MAX_VALUE, "inflight_hi is set");
    }

    @Test
    void fewLossesDoNotEndStartup() {
        round(BW / 16, 2 * BDP);
        ack(RTT_US * 1000L, 10 * MSS, BW / 8, RTT_US, 2 * BDP, true, MSS, BDP / 5);
        round(BW / 4, 2 * BDP);
        assertEquals(STARTUP, t.state(c), "one loss event is not a full queue");
    }

    @Test
    void anEcnMarkInStartupEndsIt() {
        round(BW / 16, 2 * BDP);
        bbr.onEcn(tcb, c, 2 * BDP, MSS, now);
        assertEquals(STARTUP, t.state(c), "answered at the end of the loss round");
        round(BW / 8, 2 * BDP);
        assertEquals(DRAIN, t.state(c));
    }

    @Test
    void probeRttComesAfterFiveSecondsWithoutANewMinimumAndHoldsFourSegmentsFor200Ms() {
        // A small BDP (7 segments at 1 MB/s), so that half of it is under the minimum window of 4 segments.
        final long bw = 700_000;
        for (long rate = bw / 16; rate < bw; rate *= 2) {
            round(rate, 20 * MSS);
        }
        for (int i = 0; i < 3; i++) {
            round(bw, 20 * MSS);
        }
        round(bw, 5 * MSS);
        assertTrue(BbrCongestionControl.isInProbeBw(t.state(c)));
        final long since = t.probeRttMinStampNs(c);
        // Rounds at the same RTT (no new minimum) until five seconds have passed.
        while (now + RTT_US * 1000L - since <= BbrCongestionControl.PROBE_RTT_INTERVAL_NS) {
            round(bw, 5 * MSS);
            assertNotEquals(PROBE_RTT, t.state(c), "before five seconds");
        }
        round(bw, 5 * MSS);
        assertEquals(PROBE_RTT, t.state(c), "five seconds without a lower RTT");
        assertEquals(4 * MSS, tcb.cwnd(c), "the ProbeRTT window: four segments");
        assertTrue(tcb.appLimited(c) != 0, "its samples count as application limited");
        // The flight is down to the window: 200 ms from now, and at least a round, ProbeRTT ends.
        final long heldFrom = now;
        ack(MS, MSS, bw, RTT_US, 4 * MSS, false);
        while (now + RTT_US * 1000L - heldFrom < BbrCongestionControl.PROBE_RTT_DURATION_NS) {
            round(bw, 4 * MSS);
            assertEquals(PROBE_RTT, t.state(c), "held for 200 ms");
            assertEquals(4 * MSS, tcb.cwnd(c));
        }
        round(bw, 4 * MSS);
        round(bw, 4 * MSS);
        assertEquals(PROBE_BW_CRUISE, t.state(c), "back to ProbeBW, cruising");
        assertTrue(tcb.cwnd(c) > 4 * MSS, "the window before ProbeRTT is back");
        assertTrue(t.probeRttMinStampNs(c) > since, "the ProbeRTT filter restarted");
    }

    @Test
    void aLowerRttPostponesProbeRtt() {
        fillThePipe();
        round(BW, BDP);
        for (int i = 0; i < 600; i++) {
            // Every round a little faster: a new minimum each time.
            ack(RTT_US * 1000L, 10 * MSS, BW, RTT_US - 1 - i, BDP, true);
        }
        assertTrue(now - SECOND > BbrCongestionControl.PROBE_RTT_INTERVAL_NS);
        assertNotEquals(PROBE_RTT, t.state(c));
    }

    @Test
    void theMinRttFilterForgetsAMinimumAfterTenSeconds() {
        fillThePipe();
        round(BW, BDP);
        final long start = now;
        ack(MS, MSS, BW, RTT_US / 2, BDP, false);
        assertEquals(RTT_US / 2 * 1000L, t.minRttNs(c));
        while (now - start < BbrCongestionControl.MIN_RTT_FILTER_NS - 50 * MS) {
            ack(RTT_US * 1000L, 10 * MSS, BW, RTT_US, BDP, true);
            assertEquals(RTT_US / 2 * 1000L, t.minRttNs(c), "kept for ten seconds");
        }
        for (int i = 0; i < 20; i++) {
            ack(RTT_US * 1000L, 10 * MSS, BW, RTT_US, BDP, true);
        }
        assertEquals(RTT_US * 1000L, t.minRttNs(c), "then the samples since");
    }

    @Test
    void theMaxBwFilterKeepsAPeakForTwoProbeBwCycles() {
        fillThePipe();
        round(BW, BDP);
        assertEquals(BW, bbr.maxBw(c));
        // A window-limited sender cycles through ProbeBW (Down, Cruise, Refill, Up); the filter moves on once the
        // ACKs of each cycle's probe are in. A cycle at BW, then the path slows to half.
        assertTrue(runUntilTheFilterAdvances(BW), "a cycle at BW");
        final long cycleStart = now;
        int acks = 0;
        while (!advances(BW / 2)) {
            assertEquals(BW, bbr.maxBw(c), "the next cycle still has the peak of the last");
            acks++;
            assertTrue(now - cycleStart < 60 * SECOND);
        }
        assertTrue(acks > 10, "a whole cycle ran");
        assertEquals(BW / 2, bbr.maxBw(c), "two cycles later the peak is gone");
        assertTrue(runUntilTheFilterAdvances(BW / 2));
        assertEquals(BW / 2, bbr.maxBw(c));
    }

    /** Rounds at {@code rate} until the max_bw filter advances (a minute at most); whether it did. */
    private boolean runUntilTheFilterAdvances(long rate) {
        final long start = now;
        while (now - start < 60 * SECOND) {
            if (advances(rate)) {
                return true;
            }
        }
        return false;
    }

    /** One round at {@code rate} with the window in flight; whether it ended a ProbeBW cycle (the filter moved). */
    private boolean advances(long rate) {
        final int before = t.ackPhase(c);
        ack(RTT_US * 1000L, 5 * MSS, rate, RTT_US, Math.min(tcb.cwnd(c), 3 * BDP), true);
        return before == BbrCongestionControl.ACKS_PROBE_STOPPING && t.ackPhase(c) == BbrCongestionControl.ACKS_INIT
            && BbrCongestionControl.isInProbeBw(t.state(c));
    }

    @Test
    void lossesOutsideAProbeLowerTheLowerBoundsByBeta() {
        fillThePipe();
        round(BW, BDP);
        assertEquals(PROBE_BW_CRUISE, t.state(c));
        assertEquals(Long.MAX_VALUE, t.bwLo(c));
        // A loss round at half the rate, with a loss of a tenth of what it carried.
        round(BW / 2, BDP);
        ack(MS, MSS, BW / 2, RTT_US, BDP, false, MSS, 0);
        assertEquals(Long.MAX_VALUE, t.bwLo(c), "answered when the loss round ends");
        round(BW / 2, BDP);
        assertEquals((long) (BbrCongestionControl.BETA * BW), t.bwLo(c), 1, "bw_lo: beta times max_bw");
        assertEquals((long) (BbrCongestionControl.BETA * BW * 0.99), tcb.pacingRate(c), 2, "paced at bw_lo");
        assertTrue(t.inflightLo(c) < Integer.MAX_VALUE, "inflight_lo is set too");
    }

    @Test
    void aRoundWithLossUnderTheThresholdLeavesTheLowerBoundsAlone() {
        fillThePipe();
        round(BW, BDP);
        round(BW / 2, BDP);
        // One segment lost in a round that delivered a hundred: under BBRLossThresh, random loss, not congestion.
        ack(MS, 100 * MSS, BW / 2, RTT_US, BDP, false, MSS, 0);
        round(BW / 2, BDP);
        assertEquals(Long.MAX_VALUE, t.bwLo(c), "no lower bound from light loss");
    }

    @Test
    void anEceOutsideStartupLowersTheLowerBoundsOnceAtTheRoundsEnd() {
        fillThePipe();
        round(BW, BDP);
        round(BW / 2, BDP);
        bbr.onEcn(tcb, c, BDP, MSS, now);
        assertEquals(PROBE_BW_CRUISE, t.state(c), "ECN does not end ProbeBW");
        round(BW / 2, BDP);
        assertEquals((long) (BbrCongestionControl.BETA * BW), t.bwLo(c), 1, "the ECE's round: beta times max_bw");
        // The next round loses a little: the ECE was answered and is not counted again.
        ack(MS, 100 * MSS, BW / 2, RTT_US, BDP, false, MSS, 0);
        round(BW / 2, BDP);
        assertEquals((long) (BbrCongestionControl.BETA * BW), t.bwLo(c), 1, "unchanged");
    }
}
