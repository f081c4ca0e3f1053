package dev.tern.tcp;

import dev.tern.tcp.testing.TcpHarness;
import org.junit.jupiter.api.Test;

import static dev.tern.tcp.testing.Seg.ACK;
import static dev.tern.tcp.testing.Seg.PSH_ACK;
import static dev.tern.tcp.testing.Seg.RST;
import static dev.tern.tcp.testing.Seg.SYN;
import static dev.tern.tcp.testing.TcpHarness.LOCAL_ISS;
import static dev.tern.tcp.testing.TcpHarness.REMOTE_ISS;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Blind injection (RFC 5961): an off-path attacker guessing sequence numbers must not reset, desynchronise or
 * corrupt a connection. Each attack is followed by real traffic that must still arrive byte-exact.
 */
class Rfc5961InjectionTest {
    static final int L = LOCAL_ISS + 1;
    static final int R = REMOTE_ISS + 1;

    private static void stillWorks(TcpHarness h, int peerSeq, int ourSeq) {
        h.send(PSH_ACK.seq(peerSeq).ack(ourSeq).payload("still here"));
        h.expect(ACK.seq(ourSeq).ack(peerSeq + 10));
        h.write("me too");
        h.expect(PSH_ACK.seq(ourSeq).payload("me too"));
        h.assertState(TcpState.ESTABLISHED);
        assertEquals(0, h.counter("stack.internal_errors"));
    }

    @Test
    void blindResetsAcrossTheWindowGetChallengeAcksAndNeverReset() {
        try (TcpHarness h = TcpHarness.established()) {
            int inWindow = 0;
            for (int guess = 1; guess < 65535; guess += 4093) {
                h.send(RST.seq(R + guess));
                h.expect(ACK.seq(L).ack(R).len(0));
                inWindow++;
            }
            for (int guess = 70_000; guess < 2_000_000_000; guess += 99_999_989) {
                h.send(RST.seq(R + guess));
            }
            h.expectNothing();
            assertEquals(inWindow, h.counter("tcp.challenge_acks"));
            stillWorks(h, R, L);
        }
    }

    @Test
    void blindSynsGetChallengeAcksAndNeverReset() {
        try (TcpHarness h = TcpHarness.established()) {
            h.send(SYN.seq(R));
            h.expect(ACK.seq(L).ack(R));
            h.send(SYN.seq(R + 1_000_000));
            h.expect(ACK.seq(L).ack(R));
            h.send(SYN.seq(R - 1));
            h.expect(ACK.seq(L).ack(R));
            stillWorks(h, R, L);
        }
    }

    @Test
    void blindDataOutsideTheWindowIsDroppedAndInsideWithABadAckIsRefused() {
        try (TcpHarness h = TcpHarness.established()) {
            h.send(PSH_ACK.seq(R + 100_000).ack(L).payload("evil"));
            h.expect(ACK.seq(L).ack(R));
            h.send(PSH_ACK.seq(R - 100_000).ack(L).payload("evil"));
            h.expect(ACK.seq(L).ack(R));
            // In the window but with an ACK the peer could never send (RFC 5961 §5.2): refused, not queued.
            h.send(PSH_ACK.seq(R).ack(L - 1_000_000).payload("evil"));
            h.expect(ACK.seq(L).ack(R));
            h.send(PSH_ACK.seq(R).ack(L + 1_000_000).payload("evil"));
            h.expect(ACK.seq(L).ack(R));
            assertEquals(0, h.readable());
            stillWorks(h, R, L);
            assertArrayEquals("still here".getBytes(), h.read());
        }
    }

    @Test
    void challengeAcksAreRateLimited() {
        try (TcpHarness h = TcpHarness.established(TcpHarness.config().challengeAckLimit(5).build(), TcpOptions.DEFAULT)) {
            for (int i = 0; i < 20; i++) {
                h.send(RST.seq(R + 100 + i));
            }
            assertEquals(5, h.pending().size());
            assertEquals(15, h.counter("tcp.challenge_acks.suppressed"));
            h.advance(TcpHarness.SECOND);
            h.clearReceived();
            h.send(RST.seq(R + 100));
            h.expect(ACK);
        }
    }

    @Test
    void theRealPeerAnsweringAChallengeAckResetsAsIntended() {
        try (TcpHarness h = TcpHarness.established()) {
            h.send(RST.seq(R + 7));
            h.expect(ACK.seq(L).ack(R));
            h.send(RST.seq(R));
            h.assertState(TcpState.CLOSED);
            assertEquals(TcpError.RESET, h.tcp.error(h.conn));
        }
    }
}
