package dev.tern.tcp;

import dev.tern.tcp.testing.Captured;
import dev.tern.tcp.testing.Seg;
import dev.tern.tcp.testing.TcpHarness;
import dev.tern.tcp.wire.TcpFlags;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

import static dev.tern.tcp.testing.Seg.ACK;
import static dev.tern.tcp.testing.Seg.PSH_ACK;
import static dev.tern.tcp.testing.Seg.SYN;
import static dev.tern.tcp.testing.Seg.SYN_ACK;
import static dev.tern.tcp.testing.TcpHarness.LOCAL_ISS;
import static dev.tern.tcp.testing.TcpHarness.MS;
import static dev.tern.tcp.testing.TcpHarness.REMOTE_ISS;
import static dev.tern.tcp.testing.TcpHarness.SECOND;
import static dev.tern.tcp.testing.TcpHarness.bytes;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** RFC 3168 §6.1 on the wire: the ECN-setup handshake, ECT(0) on new data, CE echoed until CWR, one reduction. */
class EcnTest {
    static final int NOT_ECT = 0;
    static final int ECT0 = 2;
    static final int CE = 3;
    static final int ECE = TcpFlags.ECE;
    static final int CWR = TcpFlags.CWR;
    static final int L = LOCAL_ISS + 1;
    static final int R = REMOTE_ISS + 1;
    static final int MSS = 1000;

    /** An active open under {@code mode}, answered by {@code synAckFlags}; the SYN must carry {@code synFlags}. */
    static TcpHarness open(EcnMode mode, int synFlags, int synAckFlags) {
        final TcpHarness h = new TcpHarness(TcpHarness.config().ecn(mode).build());
        h.connect(TcpOptions.DEFAULT);
        h.expect(SYN.flags(TcpFlags.SYN | synFlags).seq(LOCAL_ISS).ipEcn(NOT_ECT));
        h.send(SYN_ACK.flags(TcpFlags.SYN | TcpFlags.ACK | synAckFlags)
            .mss(MSS).seq(REMOTE_ISS).ack(L));
        h.expect(ACK.seq(L).ack(R).len(0).ipEcn(NOT_ECT));
        h.assertState(TcpState.ESTABLISHED);
        return h;
    }

    /** An ECN connection, actively opened. */
    static TcpHarness negotiated() {
        return open(EcnMode.ON, ECE | CWR, ECE);
    }

    @Nested
    class Handshake {
        @Test
        void anActiveOpenAsksWithEceAndCwrAndAnEceSynAckAccepts() {
            try (TcpHarness h = negotiated()) {
                assertTrue(h.tcp.info(h.conn).ecn());
                assertEquals(1, h.counter("tcp.ecn.negotiated"));
                h.write(bytes(10));
                h.expect(PSH_ACK.seq(L).len(10).ipEcn(ECT0));
            }
        }

        @Test
        void aSynAckWithBothEceAndCwrIsNoAcceptance() {
            // RFC 3168 §6.1.1: a SYN-ACK echoing both flags comes from a host that reflects them; ECN stays off.
            try (TcpHarness h = open(EcnMode.ON, ECE | CWR, ECE | CWR)) {
                assertFalse(h.tcp.info(h.conn).ecn());
                h.write(bytes(10));
                h.expect(PSH_ACK.seq(L).len(10).ipEcn(NOT_ECT));
            }
        }

        @Test
        void theDefaultNeverAsks() {
            try (TcpHarness h = open(EcnMode.SERVER, 0, ECE)) {
                assertFalse(h.tcp.info(h.conn).ecn(), "an ECE on a SYN-ACK to a plain SYN means nothing");
                h.write(bytes(10));
                h.expect(PSH_ACK.seq(L).len(10).ipEcn(NOT_ECT));
            }
        }

        @Test
        void aListenerAcceptsARequestWithEceOnTheSynAck() {
            final TcpHarness h = new TcpHarness(TcpHarness.config().build());
            try (h) {
                listen(h);
                h.send(SYN.flags(TcpFlags.SYN | ECE | CWR).mss(MSS).seq(REMOTE_ISS));
                h.expect(SYN_ACK.flags(TcpFlags.SYN | TcpFlags.ACK | ECE)
                    .seq(LOCAL_ISS).ack(R).ipEcn(NOT_ECT));
                h.send(ACK.seq(R).ack(L));
                h.conn = h.tcp.accept(h.listener);
                assertTrue(h.tcp.info(h.conn).ecn());
                h.write(bytes(10));
                h.expect(PSH_ACK.seq(L).len(10).ipEcn(ECT0));
            }
        }

        @Test
        void aListenerWithEcnOffAnswersPlainly() {
            final TcpHarness h = new TcpHarness(TcpHarness.config().ecn(EcnMode.OFF).build());
            try (h) {
                listen(h);
                h.send(SYN.flags(TcpFlags.SYN | ECE | CWR).mss(MSS).seq(REMOTE_ISS));
                h.expect(SYN_ACK.seq(LOCAL_ISS).ack(R));
                assertEquals(0, h.counter("tcp.ecn.negotiated"));
            }
        }

        @Test
        void anEcnMarkedSynIsNotTrustedWithEcn() {
            // RFC 3168 §6.1.1: a SYN is never ECT; one that arrives marked crossed a path that rewrites the field.
            final TcpHarness h = new TcpHarness(TcpHarness.config().build());
            try (h) {
                listen(h);
                h.send(SYN.flags(TcpFlags.SYN | ECE | CWR).mss(MSS).seq(REMOTE_ISS).ipEcn(ECT0));
                h.expect(SYN_ACK.seq(LOCAL_ISS).ack(R));
                assertEquals(1, h.counter("tcp.ecn.ignored"));
                assertEquals(0, h.counter("tcp.ecn.negotiated"));
            }
        }

        @Test
        void theSynRetransmissionGoesPlainUnlessEcnSynRetriesAllowsMore() {
            final TcpHarness linux = new TcpHarness(TcpHarness.config().ecn(EcnMode.ON).build());
            try (linux) {
                linux.connect(TcpOptions.DEFAULT);
                linux.expect(SYN.flags(TcpFlags.SYN | ECE | CWR));
                linux.advanceUntilSent(5 * SECOND);
                linux.expect(SYN.seq(LOCAL_ISS));
            }
            final TcpHarness freebsd = new TcpHarness(TcpHarness.config().ecn(EcnMode.ON).ecnSynRetries(1).build());
            try (freebsd) {
                freebsd.connect(TcpOptions.DEFAULT);
                freebsd.expect(SYN.flags(TcpFlags.SYN | ECE | CWR));
                freebsd.advanceUntilSent(5 * SECOND);
                freebsd.expect(SYN.flags(TcpFlags.SYN | ECE | CWR));
                freebsd.advanceUntilSent(5 * SECOND);
                freebsd.expect(SYN.seq(LOCAL_ISS));
                // A plain SYN was answered: an ECE on the SYN-ACK no longer accepts.
                freebsd.send(SYN_ACK.flags(TcpFlags.SYN | TcpFlags.ACK | ECE)
                    .mss(MSS).seq(REMOTE_ISS).ack(L));
                assertFalse(freebsd.tcp.info(freebsd.conn).ecn());
            }
        }

        private static void listen(TcpHarness h) {
            h.localPort = TcpHarness.LISTEN_PORT;
            h.remotePort = TcpHarness.PEER_CLIENT_PORT;
            h.listener = h.tcp.listen(TcpHarness.LISTEN_PORT, 16, TcpOptions.DEFAULT, h.events);
        }
    }

    @Nested
    class Receiver {
        @Test
        void aCeIsEchoedAtOnceAndOnEveryAckUntilCwr() {
            try (TcpHarness h = negotiated()) {
                h.send(PSH_ACK.seq(R).ack(L).payload(bytes(100)).ipEcn(CE));
                // The first CE is answered without the delayed-ACK wait.
                h.expect(ACK.flags(TcpFlags.ACK | ECE).seq(L).ack(R + 100).ipEcn(NOT_ECT));
                h.send(PSH_ACK.seq(R + 100).ack(L).payload(bytes(100)).ipEcn(ECT0));
                h.send(PSH_ACK.seq(R + 200).ack(L).payload(bytes(100)).ipEcn(ECT0));
                h.advance(100 * MS);
                assertAcks(h, R + 300, true);
                // Our data while echoing carries ECE too, and is ECT(0) itself.
                h.write(bytes(10));
                h.expect(PSH_ACK.flags(TcpFlags.PSH | TcpFlags.ACK | ECE)
                    .seq(L).len(10).ipEcn(ECT0));
                // The sender's CWR ends the echo.
                h.send(PSH_ACK.flags(TcpFlags.PSH | TcpFlags.ACK | CWR)
                    .seq(R + 300).ack(L + 10).payload(bytes(100)).ipEcn(ECT0));
                h.send(PSH_ACK.seq(R + 400).ack(L + 10).payload(bytes(100)).ipEcn(ECT0));
                h.advance(100 * MS);
                assertAcks(h, R + 500, false);
                assertEquals(1, h.counter("tcp.ecn.ce_received"));
                assertEquals(1, h.counter("tcp.ecn.cwr_received"));
                assertTrue(h.counter("tcp.ecn.ece_sent") >= 3);
            }
        }

        /** Every ACK sent since the last look carries ECE (or none does), and the last acknowledges {@code ack}. */
        private static void assertAcks(TcpHarness h, int ack, boolean ece) {
            final java.util.List<Captured> acks = h.pending();
            assertFalse(acks.isEmpty(), "an ACK was sent");
            for (Captured a : acks) {
                assertEquals(ece ? ECE : 0, a.tcp().flags() & ECE, "ECE on " + a);
            }
            assertEquals(ack, acks.getLast().tcp().ack());
            h.clearReceived();
        }

        @Test
        void aCeOnTheCwrSegmentItselfKeepsTheEcho() {
            // RFC 3168 §6.1.3: CWR ends the echo of earlier marks, not of a mark on the same packet.
            try (TcpHarness h = negotiated()) {
                h.send(PSH_ACK.flags(TcpFlags.PSH | TcpFlags.ACK | CWR)
                    .seq(R).ack(L).payload(bytes(100)).ipEcn(CE));
                h.expect(ACK.flags(TcpFlags.ACK | ECE).ack(R + 100));
            }
        }

        @Test
        void marksOnAConnectionWithoutEcnAreCountedAndIgnored() {
            try (TcpHarness h = TcpHarness.established()) {
                h.send(PSH_ACK.seq(R).ack(L).payload(bytes(100)).ipEcn(CE));
                h.advance(100 * MS);
                h.expect(ACK.seq(L).ack(R + 100));
                h.send(PSH_ACK.flags(TcpFlags.PSH | TcpFlags.ACK | CWR)
                    .seq(R + 100).ack(L).payload(bytes(100)));
                assertEquals(2, h.counter("tcp.ecn.ignored"));
                assertEquals(0, h.counter("tcp.ecn.ce_received"));
            }
        }
    }

    @Nested
    class Sender {
        /** Ten segments in flight on an ECN connection; returns the window before any reduction. */
        private static int tenInFlight(TcpHarness h) {
            h.write(bytes(10 * MSS));
            h.advance(1 * MS);
            for (int i = 0; i < 10; i++) {
                h.expect(Seg.SEG.seq(L + i * MSS).len(MSS).ipEcn(ECT0));
            }
            h.expectNothing();
            return h.tcp.info(h.conn).cwnd();
        }

        @Test
        void anEceReducesTheWindowOnceAndTheNextNewDataCarriesCwr() {
            try (TcpHarness h = negotiated()) {
                final int before = tenInFlight(h);
                h.send(ACK.flags(TcpFlags.ACK | ECE).seq(R).ack(L + MSS));
                final TcpInfo reduced = h.tcp.info(h.conn);
                assertEquals(reduced.ssthresh(), reduced.cwnd(), "cwnd falls to ssthresh at once");
                assertEquals((int) (before * 0.7), reduced.ssthresh(), "CUBIC's beta (RFC 9438 §4.6)");
                assertEquals(1, h.counter("tcp.ecn.reductions"));
                // More ECEs for data sent before the reduction: the same window, no second reduction.
                h.send(ACK.flags(TcpFlags.ACK | ECE).seq(R).ack(L + 2 * MSS));
                h.send(ACK.flags(TcpFlags.ACK | ECE).seq(R).ack(L + 3 * MSS));
                assertEquals(1, h.counter("tcp.ecn.reductions"));
                assertEquals(0, h.counter("tcp.tx.retransmits"), "marking causes no retransmission");
                // Room opens; new data: the first segment carries CWR, later ones do not.
                h.send(ACK.seq(R).ack(L + 5 * MSS));
                h.write(bytes(2 * MSS));
                h.advance(1 * MS);
                final Captured first = h.expect(Seg.SEG.seq(L + 10 * MSS).ipEcn(ECT0));
                assertTrue((first.tcp().flags() & CWR) != 0, "CWR on the first new data: " + first);
                for (Captured later : h.pending()) {
                    assertEquals(0, later.tcp().flags() & CWR, "CWR once only: " + later);
                }
                assertEquals(1, h.counter("tcp.ecn.cwr_sent"));
                h.clearReceived();
                // An ECE for data sent after the reduction is a new window's congestion: answered again.
                h.send(ACK.flags(TcpFlags.ACK | ECE).seq(R).ack(L + 11 * MSS));
                assertEquals(2, h.counter("tcp.ecn.reductions"));
            }
        }

        @Test
        void theTraceShowsEcnAndCountsItsReductions() throws java.io.IOException {
            try (TcpHarness h = negotiated(); TcpTrace trace = new TcpTrace(64)) {
                h.tcp.trace(h.conn, trace);
                tenInFlight(h);
                h.send(ACK.seq(R).ack(L + MSS));
                h.send(ACK.flags(TcpFlags.ACK | ECE).seq(R).ack(L + 2 * MSS));
                final StringBuilder csv = new StringBuilder();
                trace.drainCsv(csv);
                final String[] lines = csv.toString().split("\n");
                assertTrue(lines[0].endsWith(",on,0,0"), "negotiated, no reduction yet: " + lines[0]);
                assertTrue(lines[lines.length - 1].endsWith(",on,0,1"), "one ECE reduction: " + lines[lines.length - 1]);
            }
        }

        @Test
        void newRenoHalvesTheWindow() {
            final TcpHarness h = new TcpHarness(TcpHarness.config().ecn(EcnMode.ON).build());
            try (h) {
                h.connect(TcpOptions.DEFAULT.withCongestionControl("newreno"));
                h.expect(SYN.flags(TcpFlags.SYN | ECE | CWR));
                h.send(SYN_ACK.flags(TcpFlags.SYN | TcpFlags.ACK | ECE)
                    .mss(MSS).seq(REMOTE_ISS).ack(L));
                h.expect(ACK.seq(L).ack(R));
                final int before = tenInFlight(h);
                h.send(ACK.flags(TcpFlags.ACK | ECE).seq(R).ack(L + MSS));
                // RFC 5681 §3.1 equation 4: half the flight before the ACK.
                assertEquals(10 * MSS / 2, h.tcp.info(h.conn).ssthresh());
                assertTrue(h.tcp.info(h.conn).cwnd() < before);
            }
        }

        @Test
        void retransmissionsAreNotEctAndATimeoutAlsoOwesCwr() {
            try (TcpHarness h = negotiated()) {
                h.write(bytes(MSS));
                h.expect(PSH_ACK.seq(L).len(MSS).ipEcn(ECT0));
                h.advanceUntilSent(5 * SECOND);
                h.expect(PSH_ACK.seq(L).len(MSS).ipEcn(NOT_ECT));
                h.send(ACK.seq(R).ack(L + MSS));
                h.write(bytes(10));
                final Captured next = h.expect(PSH_ACK.flags(TcpFlags.PSH
                    | TcpFlags.ACK | CWR).seq(L + MSS).len(10).ipEcn(ECT0));
                assertEquals(CWR, next.tcp().flags() & CWR);
            }
        }

        @Test
        void anEceWithoutEcnIsCountedAndChangesNothing() {
            try (TcpHarness h = TcpHarness.established()) {
                h.write(bytes(4 * 1460));
                h.advance(1 * MS);
                h.clearReceived();
                final int cwnd = h.tcp.info(h.conn).cwnd();
                h.send(ACK.flags(TcpFlags.ACK | ECE).seq(R).ack(L + 1460));
                assertTrue(h.tcp.info(h.conn).cwnd() >= cwnd, "no reduction");
                assertEquals(1, h.counter("tcp.ecn.ignored"));
                assertEquals(0, h.counter("tcp.ecn.reductions"));
            }
        }
    }
}
