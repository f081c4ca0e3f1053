package dev.tern.tcp;

import dev.tern.tcp.testing.Seg;
import dev.tern.tcp.testing.TcpHarness;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

import static dev.tern.tcp.testing.Seg.ACK;
import static dev.tern.tcp.testing.Seg.SEG;
import static dev.tern.tcp.testing.TcpHarness.LOCAL_ISS;
import static dev.tern.tcp.testing.TcpHarness.MS;
import static dev.tern.tcp.testing.TcpHarness.REMOTE_ISS;
import static dev.tern.tcp.testing.TcpHarness.bytes;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * RACK-TLP (RFC 8985), the default loss detection: the time-based loss rule with its reordering window (§6.2), the
 * reordering timer, D-SACK widening the window, and tail loss probes (§7). The path's RTT is 10 ms (the handshake's),
 * so the reordering window is a quarter of that, 2.5 ms, and the probe timeout twice it, 20 ms.
 */
class RackTlpTest {
    static final int L = LOCAL_ISS + 1;
    static final int R = REMOTE_ISS + 1;
    static final int MSS = 1460;
    static final long RTT = 10 * MS;

    static int seg(int i) {
        return L + i * MSS;
    }

    static TcpHarness sackPeer() {
        return TcpHarness.establishedAfter(RTT, TcpHarness.config().build(), TcpOptions.DEFAULT, Seg.SYN_ACK.sackOk());
    }

    /** {@code segments} sent at once, then one RTT passes. */
    static TcpHarness inFlight(int segments, int written) {
        final TcpHarness h = sackPeer();
        h.write(bytes(written * MSS));
        for (int i = 0; i < segments; i++) {
            h.expect(SEG.seq(seg(i)).len(MSS));
        }
        h.expectNothing();
        h.clock.advance(RTT);
        return h;
    }

    @Nested
    class ReorderingWindow {
        @Test
        void aHoleIsLostOnlyAQuarterRttAfterALaterSegmentWasDelivered() {
            try (TcpHarness h = inFlight(10, 10)) {
                h.send(ACK.seq(R).ack(seg(0)).sack(seg(1), seg(2)));
                // RFC 8985 §6.2: segment 0 was sent with segment 1, so it is lost once RACK.rtt + reo_wnd passed since;
                // reo_wnd = min_RTT / 4 = 2.5 ms, and the reordering timer waits for it.
                h.expectNothing();
                final long waited = h.advanceUntilSent(100 * MS);
                assertTrue(waited >= 2 * MS && waited <= 4 * MS, "lost after the reordering window: " + waited / 1e6 + " ms");
                h.expect(SEG.seq(seg(0)).len(MSS));
                assertEquals(1, h.counter("tcp.rack.reorder_timeouts"));
                assertEquals(1, h.counter("tcp.rack.marked_lost"));
            }
        }

        @Test
        void aSegmentDeliveredWithinTheWindowIsNotRetransmitted() {
            try (TcpHarness h = inFlight(10, 10)) {
                h.send(ACK.seq(R).ack(seg(0)).sack(seg(1), seg(2)));
                h.advance(MS);
                h.send(ACK.seq(R).ack(seg(2)));
                h.advance(20 * MS);
                h.send(ACK.seq(R).ack(seg(10)));
                assertEquals(0, h.counter("tcp.tx.retransmits"));
                assertEquals(0, h.counter("tcp.fast_recoveries"));
            }
        }

        @Test
        void withThreeSegmentsSackedAndNoReorderingSeenTheHoleIsLostAtOnce() {
            try (TcpHarness h = inFlight(10, 10)) {
                // §6.2 step 4: while no reordering was seen, DupThresh SACKed segments make the window zero.
                h.send(ACK.seq(R).ack(seg(0)).sack(seg(1), seg(4)));
                h.expect(SEG.seq(seg(0)).len(MSS));
                assertEquals("recovery", h.tcp.info(h.conn).senderState());
            }
        }

        @Test
        void oncePathReorderingIsSeenThreeSackedSegmentsNoLongerSufficeAtOnce() {
            try (TcpHarness h = inFlight(10, 20)) {
                // Segment 2 arrives after segment 3: a segment never retransmitted delivered below RACK.fack.
                h.send(ACK.seq(R).ack(seg(2)).sack(seg(3), seg(4)));
                h.send(ACK.seq(R).ack(seg(4)));
                h.clearReceived();
                // Now a hole with three SACKed segments above waits for the reordering window (new data may go).
                h.send(ACK.seq(R).ack(seg(4)).sack(seg(5), seg(8)));
                assertEquals(0, h.counter("tcp.tx.retransmits"));
                h.advance(10 * MS);
                assertEquals(1, h.counter("tcp.tx.retransmits"));
                assertTrue(h.pending().stream().anyMatch(f -> SEG.seq(seg(4)).len(MSS).check(f) == null),
                    "segment 4 sent again after the window: " + h.pending());
            }
        }

        @Test
        void aLostRetransmissionIsFoundByTimeAndSentAgain() {
            try (TcpHarness h = inFlight(10, 10)) {
                h.send(ACK.seq(R).ack(seg(0)).sack(seg(1), seg(4)));
                h.expect(SEG.seq(seg(0)).len(MSS));
                h.clock.advance(RTT);
                // The retransmission is lost. Segments 4-9 were all sent before it, so their delivery says nothing
                // about it (RFC 8985 orders by transmit time): only the retransmission timer can tell.
                h.send(ACK.seq(R).ack(seg(0)).sack(seg(1), seg(10)));
                h.expectNothing();
                h.advanceUntilSent(1000 * MS);
                h.expect(SEG.seq(seg(0)).len(MSS));
                assertEquals(1, h.counter("tcp.rto_expired"), "a lost retransmission with nothing sent after it: RTO");
            }
        }
    }

    @Nested
    class TailLossProbe {
        @Test
        void aSilentTailIsProbedWithNewDataAfterTwoRtts() {
            try (TcpHarness h = inFlight(10, 12)) {
                // §7.2: PTO = 2 SRTT = 20 ms (more than one segment outstanding), counted from the last send.
                final long waited = h.advanceUntilSent(500 * MS);
                assertTrue(waited >= 9 * MS && waited <= 12 * MS, "probe after 2 SRTT: " + waited / 1e6 + " ms");
                // §7.3: new data when there is some and the receiver's window allows, whatever cwnd says; two segments
                // (Tern's deviation, TcpSender.PROBE_SEGMENTS), so a receiver that delays the ACK of one answers at once.
                h.expect(SEG.seq(seg(10)).len(MSS));
                h.expect(SEG.seq(seg(11)).len(MSS));
                h.expectNothing();
                assertEquals(1, h.counter("tcp.tx.tail_loss_probes"));
                assertEquals(0, h.counter("tcp.tx.retransmits"));
            }
        }

        @Test
        void withOneSegmentOfNewDataTheProbeSendsThatOne() {
            try (TcpHarness h = inFlight(10, 11)) {
                h.advanceUntilSent(500 * MS);
                h.expect(SEG.seq(seg(10)).len(MSS));
                h.expectNothing();
                assertEquals(1, h.counter("tcp.tx.tail_loss_probes"));
                assertEquals(0, h.counter("tcp.tx.retransmits"));
            }
        }

        @Test
        void theLostAckOfAWholeFlightIsRecoveredByTheProbesAck() {
            try (TcpHarness h = inFlight(10, 20)) {
                // Every segment arrived, and the one ACK for all ten was lost: the probe's two new segments are
                // acknowledged with everything before them, and the sender goes on with its window, not a timeout.
                h.advanceUntilSent(500 * MS);
                h.expect(SEG.seq(seg(10)).len(MSS));
                h.expect(SEG.seq(seg(11)).len(MSS));
                h.clock.advance(RTT);
                h.send(ACK.seq(R).ack(seg(12)));
                h.expect(SEG.seq(seg(12)).len(MSS));
                assertEquals(0, h.counter("tcp.rto_expired"));
                assertEquals(0, h.counter("tcp.tx.retransmits"));
                assertEquals("open", h.tcp.info(h.conn).senderState());
            }
        }

        @Test
        void withoutNewDataTheProbeSendsTheLastSegmentAgain() {
            try (TcpHarness h = inFlight(10, 10)) {
                h.advanceUntilSent(500 * MS);
                h.expect(SEG.seq(seg(9)).len(MSS));
                assertEquals(1, h.counter("tcp.tx.retransmits.probe"));
                // The probe's ACK, one RTT later, SACKs the tail: RACK finds the rest lost without waiting for the RTO.
                h.clock.advance(RTT);
                h.send(ACK.seq(R).ack(seg(0)).sack(seg(9), seg(10)));
                h.expect(SEG.seq(seg(0)).len(MSS));
                assertEquals(0, h.counter("tcp.rto_expired"));
            }
        }

        @Test
        void aSingleOutstandingSegmentWaitsForTheWorstCaseDelayedAckToo() {
            try (TcpHarness h = inFlight(1, 1)) {
                // §7.2: PTO = 2 SRTT + WCDelAckT (200 ms) with one segment in flight, but never beyond the RTO (here
                // its 200 ms floor), counted from the send.
                final long expected = Math.min(2 * RTT + 200 * MS, h.tcp.rtoNs(h.conn));
                final long waited = h.advanceUntilSent(2000 * MS) + RTT;
                assertTrue(Math.abs(waited - expected) <= 2 * MS, "probe after " + waited / 1e6 + " ms, expected "
                    + expected / 1e6);
                h.expect(SEG.seq(seg(0)).len(MSS));
                assertEquals(1, h.counter("tcp.tx.tail_loss_probes"));
                assertEquals(0, h.counter("tcp.rto_expired"));
            }
        }

        @Test
        void aDsackForTheProbeShowsNothingWasLostAndTheWindowStays() {
            try (TcpHarness h = inFlight(10, 10)) {
                h.advanceUntilSent(500 * MS);
                h.expect(SEG.seq(seg(9)).len(MSS));
                final int cwnd = h.tcp.cwnd(h.conn);
                // Both the original tail and the probe arrived: the ACK carries a D-SACK for the probe.
                h.send(ACK.seq(R).ack(seg(10)).sack(seg(9), seg(10)));
                assertEquals(1, h.counter("tcp.rx.dsack"));
                assertEquals(0, h.counter("tcp.tail_loss_probes.repaired"));
                assertTrue(h.tcp.cwnd(h.conn) >= cwnd, "no reduction");
            }
        }

        @Test
        void aProbeOfNewDataNeedsNoCongestionResponse() {
            try (TcpHarness h = inFlight(10, 20)) {
                h.advanceUntilSent(500 * MS);
                h.expect(SEG.seq(seg(10)).len(MSS));
                h.expect(SEG.seq(seg(11)).len(MSS));
                h.send(ACK.seq(R).ack(seg(12)));
                assertEquals(0, h.counter("tcp.tail_loss_probes.repaired"));
                assertEquals("open", h.tcp.info(h.conn).senderState());
                assertEquals(1 << 30, h.tcp.ssthresh(h.conn));
            }
        }

        @Test
        void aRetransmittedProbeThatRepairedTheTailReducesTheWindowWhenLaterDataIsAcknowledged() {
            try (TcpHarness h = inFlight(10, 10)) {
                h.advanceUntilSent(500 * MS);
                h.expect(SEG.seq(seg(9)).len(MSS));
                // Only segment 9 had been lost: the probe repaired it, and the ACK covers everything (TLP.end_seq).
                h.send(ACK.seq(R).ack(seg(10)));
                h.write(bytes(2 * MSS));
                h.expect(SEG.seq(seg(10)).len(MSS));
                h.expect(SEG.seq(seg(11)).len(MSS));
                final int cwnd = h.tcp.cwnd(h.conn);
                // RFC 8985 §7.4.2 (as Linux): an ACK beyond TLP.end_seq shows the probe repaired a loss.
                h.send(ACK.seq(R).ack(seg(12)));
                assertEquals(1, h.counter("tcp.tail_loss_probes.repaired"));
                assertEquals((int) (cwnd * CubicCongestionControl.BETA), h.tcp.ssthresh(h.conn));
            }
        }
    }
}
