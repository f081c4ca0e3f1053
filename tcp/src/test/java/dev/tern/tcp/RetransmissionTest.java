package dev.tern.tcp;

import dev.tern.tcp.testing.TcpHarness;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

import static dev.tern.tcp.testing.Seg.ACK;
import static dev.tern.tcp.testing.Seg.FIN_ACK;
import static dev.tern.tcp.testing.Seg.PSH_ACK;
import static dev.tern.tcp.testing.Seg.SEG;
import static dev.tern.tcp.testing.TcpHarness.LOCAL_ISS;
import static dev.tern.tcp.testing.TcpHarness.MS;
import static dev.tern.tcp.testing.TcpHarness.REMOTE_ISS;
import static dev.tern.tcp.testing.TcpHarness.SECOND;
import static dev.tern.tcp.testing.TcpHarness.bytes;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** RFC 6298 retransmission timer, RFC 5681 fast retransmit and RFC 6582 NewReno recovery. */
class RetransmissionTest {
    static final int L = LOCAL_ISS + 1;
    static final int R = REMOTE_ISS + 1;
    static final int MSS = 1460;

    @Nested
    class Timeout {
        @Test
        void retransmitsAfterRtoWithDoubledTimeout() {
            try (TcpHarness h = TcpHarness.established()) {
                h.write("hello");
                h.expect(PSH_ACK.seq(L).payload("hello"));
                // The handshake's sample was ~0 on the memory wire: the RTO sits at its 200 ms floor.
                assertEquals(200 * MS, h.advanceUntilSent(10 * SECOND));
                h.expect(PSH_ACK.seq(L).payload("hello"));
                assertEquals(400 * MS, h.advanceUntilSent(10 * SECOND));
                h.expect(PSH_ACK.seq(L).payload("hello"));
                assertEquals(800 * MS, h.advanceUntilSent(10 * SECOND));
                h.expect(PSH_ACK.seq(L).payload("hello"));
                assertEquals(3, h.counter("tcp.tx.retransmits.timeout"));
                assertEquals(3, h.tcp.retransmits(h.conn));
                h.send(ACK.seq(R).ack(L + 5));
                h.advance(10 * SECOND);
                h.expectNothing();
            }
        }

        @Test
        void givesUpAfterTheMaximumRetriesWithTimedOut() {
            try (TcpHarness h = TcpHarness.established(TcpHarness.config().maxRetries(3).build(), TcpOptions.DEFAULT)) {
                h.write("hello");
                h.advance(60 * SECOND);
                assertEquals(4, h.pending().size(), "the segment and three retransmissions");
                h.assertState(TcpState.CLOSED);
                assertEquals(TcpError.TIMED_OUT, h.tcp.error(h.conn));
                assertTrue(h.events.has("closed " + TcpError.TIMED_OUT));
                assertEquals(1, h.counter("tcp.conn.timed_out"));
            }
        }

        @Test
        void theBackoffIsCappedAtRtoMax() {
            try (TcpHarness h = TcpHarness.established(TcpHarness.config().rto(SECOND, 200 * MS, 2 * SECOND).build(),
                TcpOptions.DEFAULT)) {
                h.write("x");
                h.expect(PSH_ACK);
                long last = 0;
                for (int i = 0; i < 6; i++) {
                    last = h.advanceUntilSent(100 * SECOND);
                    h.expect(PSH_ACK.seq(L));
                }
                assertEquals(2 * SECOND, last);
            }
        }

        @Test
        void afterATimeoutTheSenderGoesBackNWithOneSegmentThenSlowStarts() {
            try (TcpHarness h = TcpHarness.established()) {
                h.write(bytes(4 * MSS));
                for (int i = 0; i < 4; i++) {
                    h.expect(SEG.seq(L + i * MSS).len(MSS));
                }
                h.advanceUntilSent(SECOND);
                h.expect(SEG.seq(L).len(MSS));
                h.expectNothing();
                assertEquals(MSS, h.tcp.cwnd(h.conn));
                h.send(ACK.seq(R).ack(L + MSS));
                h.expect(SEG.seq(L + MSS).len(MSS));
                h.expect(SEG.seq(L + 2 * MSS).len(MSS));
                h.expectNothing();
                h.send(ACK.seq(R).ack(L + 3 * MSS));
                h.expect(SEG.seq(L + 3 * MSS).len(MSS));
            }
        }

        @Test
        void aLostFinIsRetransmitted() {
            try (TcpHarness h = TcpHarness.established()) {
                h.tcp.shutdownOutput(h.conn, h.now());
                h.poll();
                h.expect(FIN_ACK.seq(L).ack(R));
                h.advanceUntilSent(SECOND);
                h.expect(FIN_ACK.seq(L).ack(R));
                h.send(ACK.seq(R).ack(L + 1));
                h.assertState(TcpState.FIN_WAIT_2);
            }
        }

        @Test
        void theRttOfAnAckedSegmentSetsSrttAndTheRto() {
            try (TcpHarness h = TcpHarness.established(TcpHarness.config().rto(SECOND, 60 * MS, 60 * SECOND).build(),
                TcpOptions.DEFAULT)) {
                for (int i = 0; i < 20; i++) {
                    h.write("x");
                    h.expect(PSH_ACK.seq(L + i));
                    h.advance(50 * MS);
                    h.send(ACK.seq(R).ack(L + i + 1));
                }
                final long srtt = h.tcp.info(h.conn).srttNs();
                assertTrue(Math.abs(srtt - 50 * MS) < 5 * MS, "srtt " + srtt);
                assertTrue(h.tcp.rtoNs(h.conn) < 100 * MS, "rto " + h.tcp.rtoNs(h.conn));
            }
        }
    }

    @Nested
    class FastRetransmit {
        /** NewReno's numbers (RFC 6582 with RFC 5681's halving): the peer offers no SACK, the window is Reno's. */
        private TcpHarness tenSegmentsInFlight() {
            final TcpHarness h = TcpHarness.established(TcpHarness.config().congestionControl("newreno").build(),
                TcpOptions.DEFAULT);
            h.write(bytes(10 * MSS));
            for (int i = 0; i < 10; i++) {
                h.expect(SEG.seq(L + i * MSS).len(MSS));
            }
            return h;
        }

        @Test
        void threeDuplicateAcksTriggerFastRetransmitAndAFullAckEndsRecovery() {
            try (TcpHarness h = tenSegmentsInFlight()) {
                h.send(ACK.seq(R).ack(L));
                h.send(ACK.seq(R).ack(L));
                h.expectNothing();
                h.send(ACK.seq(R).ack(L));
                h.expect(SEG.seq(L).len(MSS));
                assertEquals(1, h.counter("tcp.tx.retransmits.fast"));
                // ssthresh = flight / 2 = 5 segments, cwnd = ssthresh + 3 segments.
                assertEquals(5 * MSS, h.tcp.ssthresh(h.conn));
                assertEquals(8 * MSS, h.tcp.cwnd(h.conn));
                h.send(ACK.seq(R).ack(L));
                assertEquals(9 * MSS, h.tcp.cwnd(h.conn));
                h.send(ACK.seq(R).ack(L + 10 * MSS));
                // RFC 6582 §3.2 step 3 option 1: min(ssthresh, max(FlightSize, SMSS) + SMSS), nothing in flight.
                assertEquals(2 * MSS, h.tcp.cwnd(h.conn), "deflated");
                h.expectNothing();
            }
        }

        @Test
        void aPartialAckRetransmitsTheNextHoleAtOnce() {
            try (TcpHarness h = tenSegmentsInFlight()) {
                for (int i = 0; i < 3; i++) {
                    h.send(ACK.seq(R).ack(L));
                }
                h.expect(SEG.seq(L).len(MSS));
                h.send(ACK.seq(R).ack(L + 3 * MSS));
                h.expect(SEG.seq(L + 3 * MSS).len(MSS));
                assertEquals(2, h.counter("tcp.tx.retransmits.fast"));
                h.send(ACK.seq(R).ack(L + 10 * MSS));
                assertEquals(0, h.tcp.inFlight(h.conn));
            }
        }

        @Test
        void limitedTransmitSendsNewDataOnTheFirstTwoDuplicates() {
            try (TcpHarness h = TcpHarness.established()) {
                h.write(bytes(12 * MSS));
                for (int i = 0; i < 10; i++) {
                    h.expect(SEG.seq(L + i * MSS).len(MSS));
                }
                h.send(ACK.seq(R).ack(L));
                h.expect(SEG.seq(L + 10 * MSS).len(MSS));
                h.send(ACK.seq(R).ack(L));
                h.expect(SEG.seq(L + 11 * MSS).len(MSS));
                h.expectNothing();
            }
        }

        @Test
        void duplicateAcksAfterATimeoutDoNotStartAnotherRecovery() {
            try (TcpHarness h = tenSegmentsInFlight()) {
                h.advanceUntilSent(SECOND);
                h.expect(SEG.seq(L).len(MSS));
                for (int i = 0; i < 3; i++) {
                    h.send(ACK.seq(R).ack(L));
                }
                assertEquals(0, h.counter("tcp.tx.retransmits.fast"));
            }
        }

        @Test
        void aWindowUpdateIsNotADuplicateAck() {
            try (TcpHarness h = tenSegmentsInFlight()) {
                h.send(ACK.seq(R).ack(L).window(60000));
                h.send(ACK.seq(R).ack(L).window(50000));
                h.send(ACK.seq(R).ack(L).window(40000));
                assertEquals(0, h.counter("tcp.tx.retransmits.fast"));
            }
        }
    }
}
