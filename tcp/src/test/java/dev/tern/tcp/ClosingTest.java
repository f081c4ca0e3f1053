package dev.tern.tcp;

import dev.tern.tcp.testing.Fixtures;
import dev.tern.tcp.testing.TcpHarness;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

import static dev.tern.tcp.testing.Seg.ACK;
import static dev.tern.tcp.testing.Seg.FIN_ACK;
import static dev.tern.tcp.testing.Seg.PSH_ACK;
import static dev.tern.tcp.testing.Seg.RST_ACK;
import static dev.tern.tcp.testing.Seg.SYN;
import static dev.tern.tcp.testing.Seg.SYN_ACK;
import static dev.tern.tcp.testing.TcpHarness.LOCAL_ISS;
import static dev.tern.tcp.testing.TcpHarness.REMOTE_ISS;
import static dev.tern.tcp.testing.TcpHarness.SECOND;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Closing (RFC 9293 §3.6): graceful, simultaneous, half-close, abort, TIME-WAIT. */
class ClosingTest {
    static final int L = LOCAL_ISS + 1;
    static final int R = REMOTE_ISS + 1;

    @Nested
    class Graceful {
        @Test
        void activeCloseGoesThroughFinWaitToTimeWaitAndReportsClosed() {
            try (TcpHarness h = Fixtures.TIME_WAIT.reach()) {
                assertTrue(h.events.has("closed 0"));
                assertEquals(1, h.tcp.timeWaitCount());
            }
        }

        /** Linux's tcp_max_tw_buckets: with the TIME-WAIT table full, the last ACK goes and the connection closes. */
        @Test
        void beyondMaxTimeWaitTheLastAckGoesAndTheConnectionSkipsTimeWait() {
            try (TcpHarness h = TcpHarness.established(TcpHarness.config().maxTimeWait(0).build(),
                TcpOptions.DEFAULT)) {
                h.tcp.close(h.conn, h.now());
                h.poll();
                h.expect(FIN_ACK.seq(L).ack(R));
                h.send(ACK.seq(R).ack(L + 1));
                h.send(FIN_ACK.seq(R).ack(L + 1));
                h.expect(ACK.seq(L + 1).ack(R + 1));
                assertEquals(0, h.tcp.timeWaitCount());
                assertEquals(0, h.tcp.connectionCount(), "the released connection is gone");
                assertEquals(1, h.counter("tcp.conn.time_wait_overflows"));
                assertEquals(1, h.counter("tcp.conn.closed"));
            }
        }

        @Test
        void anOwnedConnectionBeyondMaxTimeWaitEndsClosedWithoutError() {
            try (TcpHarness h = TcpHarness.established(TcpHarness.config().maxTimeWait(0).build(),
                TcpOptions.DEFAULT)) {
                h.tcp.shutdownOutput(h.conn, h.now());
                h.poll();
                h.expect(FIN_ACK.seq(L).ack(R));
                h.send(ACK.seq(R).ack(L + 1));
                h.send(FIN_ACK.seq(R).ack(L + 1));
                h.expect(ACK.seq(L + 1).ack(R + 1));
                h.assertState(TcpState.CLOSED);
                assertEquals(TcpError.NONE, h.tcp.error(h.conn));
                assertTrue(h.events.has("closed 0"));
                assertEquals(1, h.counter("tcp.conn.time_wait_overflows"));
            }
        }

        @Test
        void passiveCloseGoesThroughCloseWaitAndLastAckToClosed() {
            try (TcpHarness h = Fixtures.LAST_ACK.reach()) {
                h.send(ACK.seq(R + 1).ack(L + 1));
                h.assertState(TcpState.CLOSED);
                assertEquals(TcpError.NONE, h.tcp.error(h.conn));
                h.tcp.close(h.conn, h.now());
                assertEquals(0, h.tcp.connectionCount());
            }
        }

        @Test
        void simultaneousCloseGoesThroughClosingToTimeWait() {
            try (TcpHarness h = Fixtures.CLOSING.reach()) {
                h.send(ACK.seq(R + 1).ack(L + 1));
                h.assertState(TcpState.TIME_WAIT);
                h.expectNothing();
            }
        }

        @Test
        void finAndItsAckInOneSegmentFromFinWait1GoStraightToTimeWait() {
            try (TcpHarness h = Fixtures.FIN_WAIT_1.reach()) {
                h.send(FIN_ACK.seq(R).ack(L + 1));
                h.expect(ACK.seq(L + 1).ack(R + 1));
                h.assertState(TcpState.TIME_WAIT);
            }
        }

        @Test
        void closeSendsQueuedDataBeforeTheFin() {
            try (TcpHarness h = TcpHarness.established()) {
                h.write("last words");
                h.expect(PSH_ACK.seq(L).payload("last words"));
                h.tcp.close(h.conn, h.now());
                h.poll();
                h.expect(FIN_ACK.seq(L + 10));
                h.send(ACK.seq(R).ack(L + 11));
                h.send(FIN_ACK.seq(R).ack(L + 11));
                h.expect(ACK.seq(L + 11).ack(R + 1));
                assertEquals(1, h.tcp.timeWaitCount());
            }
        }

        @Test
        void inTimeWaitAllButABareAckAtRcvNxtIsAnswered() {
            // As Linux's tcp_timewait_state_process and FreeBSD's tcp_twcheck: an ACK beyond RCV.NXT, or a FIN at
            // it, gets an ACK back; a bare ACK at RCV.NXT gets nothing.
            try (TcpHarness h = Fixtures.TIME_WAIT.reach()) {
                final Fixtures f = Fixtures.TIME_WAIT;
                h.send(ACK.seq(f.peerNext).ack(f.ourNext));
                h.expectNothing();
                h.send(ACK.seq(f.peerNext + 1).ack(f.ourNext));
                h.expect(ACK.seq(f.ourNext).ack(f.peerNext));
                h.advance(SECOND);
                h.send(FIN_ACK.seq(f.peerNext).ack(f.ourNext));
                h.expect(ACK.seq(f.ourNext).ack(f.peerNext));
                h.assertState(TcpState.TIME_WAIT);
            }
        }

        @Test
        void anOrphanInFinWait2GivesUpAfterTheTimeout() {
            try (TcpHarness h = TcpHarness.established(TcpHarness.config().finWait2TimeoutNs(5 * SECOND).build(),
                TcpOptions.DEFAULT)) {
                h.tcp.close(h.conn, h.now());
                h.poll();
                h.expect(FIN_ACK.seq(L));
                h.send(ACK.seq(R).ack(L + 1));
                assertEquals(1, h.tcp.connectionCount());
                h.advance(6 * SECOND);
                assertEquals(0, h.tcp.connectionCount());
            }
        }
    }

    @Nested
    class HalfClose {
        @Test
        void afterShutdownOutputDataStillFlowsIn() {
            try (TcpHarness h = Fixtures.FIN_WAIT_2.reach()) {
                h.send(PSH_ACK.seq(R).ack(L + 1).payload("more"));
                h.expect(ACK.seq(L + 1).ack(R + 4));
                assertArrayEquals("more".getBytes(), h.read());
                h.send(FIN_ACK.seq(R + 4).ack(L + 1));
                h.expect(ACK.ack(R + 5));
                h.assertState(TcpState.TIME_WAIT);
            }
        }

        @Test
        void inCloseWaitWeStillSend() {
            try (TcpHarness h = Fixtures.CLOSE_WAIT.reach()) {
                h.write("reply");
                h.expect(PSH_ACK.seq(L).ack(R + 1).payload("reply"));
                assertTrue(h.tcp.receiveShutdown(h.conn));
            }
        }

        @Test
        void writesAfterShutdownOutputAreNotSent() {
            try (TcpHarness h = TcpHarness.established()) {
                h.write("abc");
                h.expect(PSH_ACK.payload("abc"));
                h.tcp.shutdownOutput(h.conn, h.now());
                h.poll();
                h.expect(FIN_ACK.seq(L + 3));
                h.write("ignored");
                h.expectNothing();
            }
        }
    }

    @Nested
    class Abort {
        @Test
        void closingWithUnreadDataSendsAReset() {
            try (TcpHarness h = TcpHarness.established()) {
                h.send(PSH_ACK.seq(R).ack(L).payload("unread"));
                h.expect(ACK);
                h.tcp.close(h.conn, h.now());
                h.poll();
                h.expect(RST_ACK.seq(L).ack(R + 6));
                assertEquals(0, h.tcp.connectionCount());
                assertEquals(TcpState.CLOSED, h.tcp.state(h.conn));
            }
        }

        @Test
        void dataArrivingAfterCloseIsAnsweredWithAReset() {
            try (TcpHarness h = TcpHarness.established()) {
                h.tcp.close(h.conn, h.now());
                h.poll();
                h.expect(FIN_ACK.seq(L));
                h.send(PSH_ACK.seq(R).ack(L + 1).payload("late"));
                h.expect(RST_ACK.seq(L + 1));
                assertEquals(0, h.tcp.connectionCount());
                assertEquals(1, h.counter("tcp.drop.data_after_close"));
            }
        }

        @Test
        void abortSendsAResetAndReleasesEverything() {
            try (TcpHarness h = TcpHarness.established()) {
                h.write("pending");
                h.expect(PSH_ACK);
                h.tcp.abort(h.conn, h.now());
                h.poll();
                h.expect(RST_ACK.seq(L + 7).ack(R));
                assertEquals(0, h.tcp.connectionCount());
                assertNull(h.tcp.sendBuffer(h.conn));
                assertEquals(0, h.tcp.memory().ringsInUse());
            }
        }

        @Test
        void closingWhileConnectingSendsNothing() {
            try (TcpHarness h = new TcpHarness(TcpHarness.config().build())) {
                h.connect(TcpOptions.DEFAULT);
                h.expect(SYN);
                h.tcp.close(h.conn, h.now());
                h.advance(5 * SECOND);
                h.expectNothing();
                assertEquals(0, h.tcp.connectionCount());
            }
        }
    }

    @Nested
    class TimeWait {
        @Test
        void timeWaitLastsTwoMslThenTheConnectionIsGone() {
            try (TcpHarness h = Fixtures.TIME_WAIT.reach()) {
                h.advance(59 * SECOND);
                h.assertState(TcpState.TIME_WAIT);
                h.advance(2 * SECOND);
                h.assertState(TcpState.CLOSED);
                h.tcp.close(h.conn, h.now());
                assertEquals(0, h.tcp.connectionCount());
            }
        }

        @Test
        void aRetransmittedFinIsAcknowledgedAndRestartsTheTimer() {
            try (TcpHarness h = Fixtures.TIME_WAIT.reach()) {
                h.advance(50 * SECOND);
                h.send(FIN_ACK.seq(R).ack(L + 1));
                h.expect(ACK.seq(L + 1).ack(R + 1));
                h.advance(50 * SECOND);
                h.assertState(TcpState.TIME_WAIT);
                h.advance(11 * SECOND);
                h.assertState(TcpState.CLOSED);
            }
        }

        @Test
        void closingTheHandleInTimeWaitFreesTheBuffersAtOnce() {
            try (TcpHarness h = Fixtures.TIME_WAIT.reach()) {
                h.tcp.close(h.conn, h.now());
                assertEquals(0, h.tcp.memory().ringsInUse());
                assertEquals(1, h.tcp.connectionCount());
                h.send(FIN_ACK.seq(R).ack(L + 1));
                h.expect(ACK.seq(L + 1).ack(R + 1));
            }
        }

        @Test
        void aNewSynWithAHigherSequenceNumberEndsTimeWaitAndOpensAnewConnection() {
            try (TcpHarness h = TcpHarness.passiveOpen(TcpHarness.config().build(), TcpOptions.DEFAULT, SYN.mss(1460))) {
                h.tcp.shutdownOutput(h.conn, h.now());
                h.poll();
                h.expect(FIN_ACK.seq(L).ack(R));
                h.send(FIN_ACK.seq(R).ack(L + 1));
                h.expect(ACK.seq(L + 1).ack(R + 1));
                h.assertState(TcpState.TIME_WAIT);
                h.tcp.close(h.conn, h.now());
                h.send(SYN.seq(R + 100_000).mss(1460));
                // The new ISS lies beyond everything the old incarnation sent.
                h.expect(SYN_ACK.ack(R + 100_001).seq(L + 1 + 65535 + 2 + 1));
                assertEquals(1, h.counter("tcp.conn.time_wait_reused"));
            }
        }

        @Test
        void anOldSynInTimeWaitGetsAChallengeAck() {
            try (TcpHarness h = TcpHarness.passiveOpen(TcpHarness.config().build(), TcpOptions.DEFAULT, SYN.mss(1460))) {
                h.tcp.shutdownOutput(h.conn, h.now());
                h.poll();
                h.expect(FIN_ACK);
                h.send(FIN_ACK.seq(R).ack(L + 1));
                h.expect(ACK);
                h.send(SYN.seq(R - 5));
                h.expect(ACK.seq(L + 1).ack(R + 1));
                h.assertState(TcpState.TIME_WAIT);
            }
        }

        @Test
        void whenTheTableIsFullTheOldestReleasedTimeWaitMakesRoom() {
            try (TcpHarness h = Fixtures.TIME_WAIT.reach()) {
                h.tcp.close(h.conn, h.now());
                final int size = h.tcp.config().maxConnections();
                assertEquals(1, h.tcp.connectionCount());
                for (int i = 1; i < size; i++) {
                    assertTrue(h.tcp.connect(TcpHarness.PEER, 1000 + i % 60000, 0, TcpOptions.DEFAULT.withBuffers(1024, 1024),
                        h.events, h.now()) >= 0);
                }
                assertEquals(size, h.tcp.connectionCount());
                assertTrue(h.tcp.connect(TcpHarness.PEER, 7, 0, TcpOptions.DEFAULT.withBuffers(1024, 1024), h.events,
                    h.now()) >= 0);
                assertEquals(1, h.counter("tcp.conn.time_wait_recycled"));
                assertEquals(0, h.tcp.timeWaitCount());
            }
        }
    }
}
