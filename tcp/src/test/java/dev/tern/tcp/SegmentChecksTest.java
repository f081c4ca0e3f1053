package dev.tern.tcp;

import dev.tern.tcp.testing.Seg;
import dev.tern.tcp.testing.TcpHarness;
import dev.tern.tcp.wire.TcpFlags;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

import static dev.tern.tcp.testing.Seg.ACK;
import static dev.tern.tcp.testing.Seg.PSH_ACK;
import static dev.tern.tcp.testing.Seg.RST;
import static dev.tern.tcp.testing.Seg.RST_ACK;
import static dev.tern.tcp.testing.Seg.SYN;
import static dev.tern.tcp.testing.Seg.SYN_ACK;
import static dev.tern.tcp.testing.TcpHarness.LOCAL_ISS;
import static dev.tern.tcp.testing.TcpHarness.REMOTE_ISS;
import static dev.tern.tcp.testing.TcpHarness.bytes;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The checks of resets, SYNs and SYN+FIN segments ({@link SegmentChecks}): RFC 5961's window edges exactly (RCV.NXT
 * to RCV.NXT + RCV.WND - 1, a zero window, a scaled one), and RFC 793's rules where the setting asks for them.
 */
class SegmentChecksTest {
    static final int L = LOCAL_ISS + 1;
    static final int R = REMOTE_ISS + 1;
    /** The window an unscaled connection of the harness offers: its 128 KiB buffer, capped by the 16-bit field. */
    static final int WINDOW = 65535;

    private static TcpHarness established(SegmentChecks checks) {
        return TcpHarness.established(TcpHarness.config().segmentChecks(checks).build(), TcpOptions.DEFAULT);
    }

    private static TcpHarness listening(SegmentChecks checks) {
        final TcpHarness h = new TcpHarness(TcpHarness.config().segmentChecks(checks).build());
        h.localPort = TcpHarness.LISTEN_PORT;
        h.remotePort = TcpHarness.PEER_CLIENT_PORT;
        h.listener = h.tcp.listen(TcpHarness.LISTEN_PORT, 16, TcpOptions.DEFAULT, h.events);
        return h;
    }

    /** A connection whose 1024-byte receive buffer the peer filled: its window is 0, RCV.NXT is R + 1024. */
    private static TcpHarness zeroWindow(SegmentChecks checks) {
        final TcpHarness h = TcpHarness.activeOpen(TcpHarness.config().segmentChecks(checks).build(),
            TcpOptions.DEFAULT.withBuffers(0, 1024), Seg.SYN_ACK.mss(1460));
        h.send(ACK.seq(R).ack(L).payload(bytes(1024)));
        h.expect(ACK.ack(R + 1024).window(0));
        return h;
    }

    private static void wasReset(TcpHarness h) {
        h.assertState(TcpState.CLOSED);
        assertEquals(TcpError.RESET, h.tcp.error(h.conn));
    }

    private static void stillEstablished(TcpHarness h) {
        h.assertState(TcpState.ESTABLISHED);
        h.send(PSH_ACK.seq(R).ack(L).payload("ok"));
        h.expect(ACK.seq(L).ack(R + 2));
    }

    @Nested
    class Rfc5961Edges {
        @Test
        void aResetAtTheLastSequenceNumberOfTheWindowGetsAChallengeAck() {
            try (TcpHarness h = established(SegmentChecks.RFC_5961)) {
                h.send(RST.seq(R + WINDOW - 1));
                h.expect(ACK.seq(L).ack(R).len(0));
                assertEquals(1, h.counter("tcp.challenge_acks"));
                stillEstablished(h);
            }
        }

        @Test
        void aResetJustPastTheWindowIsDroppedUnanswered() {
            try (TcpHarness h = established(SegmentChecks.RFC_5961)) {
                h.send(RST.seq(R + WINDOW));
                h.expectNothing();
                h.send(RST.seq(R - 1));
                h.expectNothing();
                assertEquals(2, h.counter("tcp.drop.rst_ignored"));
                assertEquals(0, h.counter("tcp.challenge_acks"));
                stillEstablished(h);
            }
        }

        @Test
        void aResetAtRcvNxtResetsAndOneAfterItIsChallenged() {
            try (TcpHarness h = established(SegmentChecks.RFC_5961)) {
                h.send(RST.seq(R + 1));
                h.expect(ACK.seq(L).ack(R));
                h.send(RST.seq(R));
                h.expectNothing();
                wasReset(h);
            }
        }

        @Test
        void inAZeroWindowOnlyAResetAtRcvNxtIsAcceptable() {
            try (TcpHarness h = zeroWindow(SegmentChecks.RFC_5961)) {
                h.send(RST.seq(R + 1025));
                h.expectNothing();
                h.send(RST.seq(R + 1023));
                h.expectNothing();
                assertEquals(2, h.counter("tcp.drop.rst_ignored"));
                h.send(RST.seq(R + 1024));
                wasReset(h);
            }
        }

        @Test
        void aScaledWindowsEdgeIsItsBytesNotItsField() {
            try (TcpHarness h = TcpHarness.activeOpen(TcpHarness.config().build(), TcpOptions.DEFAULT,
                Seg.SYN_ACK.mss(1460).wscale(7))) {
                final int scale = h.all.getFirst().tcp().windowScale();
                final int window = h.all.get(1).tcp().window() << scale;
                assertEquals(true, scale > 0 && window > WINDOW, "a scaled window wider than 16 bits: " + window);
                h.send(RST.seq(R + window - 1));
                h.expect(ACK.seq(L).ack(R).len(0));
                h.send(RST.seq(R + window));
                h.expectNothing();
                stillEstablished(h);
            }
        }

        @Test
        void aSynAnywhereGetsAChallengeAck() {
            try (TcpHarness h = established(SegmentChecks.RFC_5961)) {
                for (int seq : new int[] {R, R + WINDOW - 1, R + WINDOW, R - 1}) {
                    h.send(SYN.seq(seq));
                    h.expect(ACK.seq(L).ack(R).len(0));
                }
                assertEquals(4, h.counter("tcp.challenge_acks"));
                assertEquals(0, h.counter("tcp.conn.syn_resets"));
                stillEstablished(h);
            }
        }
    }

    @Nested
    class InWindowResets {
        private final SegmentChecks rfc793 = SegmentChecks.RFC_5961.withInWindowResets(true);

        @Test
        void aResetAnywhereInTheWindowResets() {
            try (TcpHarness h = established(rfc793)) {
                h.send(RST.seq(R + WINDOW - 1));
                h.expectNothing();
                assertEquals(1, h.counter("tcp.conn.resets_received"));
                assertEquals(0, h.counter("tcp.challenge_acks"));
                wasReset(h);
            }
        }

        @Test
        void aResetOutsideTheWindowIsStillDropped() {
            try (TcpHarness h = established(rfc793)) {
                h.send(RST.seq(R + WINDOW));
                h.send(RST.seq(R - 1));
                h.expectNothing();
                assertEquals(2, h.counter("tcp.drop.rst_ignored"));
                stillEstablished(h);
            }
        }
    }

    @Nested
    class InWindowSyns {
        private final SegmentChecks rfc793 = SegmentChecks.RFC_5961.withInWindowSyns(true);

        @Test
        void aSynAtRcvNxtResetsTheConnection() {
            try (TcpHarness h = established(rfc793)) {
                h.send(SYN.seq(R));
                h.expect(RST_ACK.seq(L).ack(R).len(0));
                assertEquals(1, h.counter("tcp.conn.syn_resets"));
                wasReset(h);
            }
        }

        @Test
        void aSynAtTheLastSequenceNumberOfTheWindowResetsTheConnection() {
            try (TcpHarness h = established(rfc793)) {
                h.send(SYN.seq(R + WINDOW - 1));
                h.expect(RST_ACK.seq(L).ack(R).len(0));
                wasReset(h);
            }
        }

        @Test
        void aSynOutsideTheWindowGetsAChallengeAck() {
            try (TcpHarness h = established(rfc793)) {
                h.send(SYN.seq(R + WINDOW));
                h.expect(ACK.seq(L).ack(R).len(0));
                h.send(SYN.seq(R - 1));
                h.expect(ACK.seq(L).ack(R).len(0));
                assertEquals(2, h.counter("tcp.challenge_acks"));
                assertEquals(0, h.counter("tcp.conn.syn_resets"));
                stillEstablished(h);
            }
        }

        @Test
        void aSynInAZeroWindowGetsAChallengeAck() {
            try (TcpHarness h = zeroWindow(rfc793)) {
                h.send(SYN.seq(R + 1024));
                h.expect(ACK.seq(L).ack(R + 1024).len(0));
                h.assertState(TcpState.ESTABLISHED);
            }
        }
    }

    @Nested
    class SynFin {
        private final Seg synFin = Seg.SEG.flags(TcpFlags.SYN | TcpFlags.FIN);

        @Test
        void byDefaultASynFinToAListenerIsDroppedUnanswered() {
            try (TcpHarness h = listening(SegmentChecks.RFC_5961)) {
                h.send(synFin.seq(REMOTE_ISS).mss(1460));
                h.expectNothing();
                assertEquals(1, h.counter("tcp.drop.syn_fin"));
                assertEquals(0, h.counter("tcp.conn.passive_opens"));
            }
        }

        @Test
        void answeredASynFinToAListenerGetsASynAckForTheSynOnly() {
            try (TcpHarness h = listening(SegmentChecks.RFC_5961.withSynFin(SegmentChecks.SynFin.ANSWER))) {
                h.send(synFin.seq(REMOTE_ISS).mss(1460).payload("abc"));
                h.expect(SYN_ACK.seq(LOCAL_ISS).ack(REMOTE_ISS + 1));
                assertEquals(0, h.counter("tcp.drop.syn_fin"));
                // The peer's FIN comes again after the handshake, and closes its side then.
                h.send(ACK.seq(R).ack(L));
                h.conn = h.tcp.accept(h.listener);
                h.assertState(TcpState.ESTABLISHED);
                h.send(Seg.FIN_ACK.seq(R).ack(L));
                h.expect(ACK.seq(L).ack(R + 1));
                h.assertState(TcpState.CLOSE_WAIT);
            }
        }

        @Test
        void droppedASynFinMeetsNothingInAnyState() {
            final SegmentChecks drop = SegmentChecks.RFC_5961.withSynFin(SegmentChecks.SynFin.DROP);
            try (TcpHarness h = listening(drop)) {
                h.send(synFin.seq(REMOTE_ISS).mss(1460));
                h.expectNothing();
                assertEquals(1, h.counter("tcp.drop.syn_fin"));
            }
            try (TcpHarness h = established(drop)) {
                h.send(synFin.seq(R));
                h.expectNothing();
                assertEquals(1, h.counter("tcp.drop.syn_fin"));
                assertEquals(0, h.counter("tcp.challenge_acks"));
                stillEstablished(h);
            }
        }

        @Test
        void byDefaultASynFinOnAConnectionGetsTheChallengeAckOfAnySyn() {
            try (TcpHarness h = established(SegmentChecks.RFC_5961)) {
                h.send(synFin.seq(R));
                h.expect(ACK.seq(L).ack(R).len(0));
                assertEquals(0, h.counter("tcp.drop.syn_fin"));
                stillEstablished(h);
            }
        }
    }
}
