package dev.tern.tcp;

import dev.tern.tcp.testing.TcpHarness;
import org.junit.jupiter.api.Test;

import static dev.tern.tcp.testing.Seg.ACK;
import static dev.tern.tcp.testing.TcpHarness.LOCAL_ISS;
import static dev.tern.tcp.testing.TcpHarness.REMOTE_ISS;
import static dev.tern.tcp.testing.TcpHarness.SECOND;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Keepalive (RFC 9293 §3.8.4, RFC 1122 §4.2.3.6): off by default, probes an idle connection, times it out. */
class KeepaliveTest {
    static final int L = LOCAL_ISS + 1;
    static final int R = REMOTE_ISS + 1;
    static final TcpOptions KEEPALIVE = TcpOptions.DEFAULT.withKeepalive(10 * SECOND, SECOND, 3);

    @Test
    void anIdleConnectionIsNotProbedByDefault() {
        try (TcpHarness h = TcpHarness.established()) {
            h.advance(3 * 3600 * SECOND);
            h.expectNothing();
            h.assertState(TcpState.ESTABLISHED);
        }
    }

    @Test
    void anIdleConnectionIsProbedWithAnOldSequenceNumberAndAnAnswerKeepsItAlive() {
        try (TcpHarness h = TcpHarness.established(TcpHarness.config().build(), KEEPALIVE)) {
            assertEquals(10 * SECOND, h.advanceUntilSent(60 * SECOND));
            h.expect(ACK.seq(L - 1).ack(R).len(0));
            h.send(ACK.seq(R).ack(L));
            assertEquals(10 * SECOND, h.advanceUntilSent(60 * SECOND));
            h.expect(ACK.seq(L - 1).ack(R).len(0));
            assertEquals(2, h.counter("tcp.tx.keepalives"));
        }
    }

    @Test
    void trafficPostponesTheFirstProbe() {
        try (TcpHarness h = TcpHarness.established(TcpHarness.config().build(), KEEPALIVE)) {
            h.advance(6 * SECOND);
            h.send(ACK.seq(R).ack(L).payload("x"));
            h.expect(ACK.ack(R + 1));
            assertEquals(10 * SECOND, h.advanceUntilSent(60 * SECOND));
            h.expect(ACK.seq(L - 1).ack(R + 1));
        }
    }

    @Test
    void unansweredProbesTimeTheConnectionOut() {
        try (TcpHarness h = TcpHarness.established(TcpHarness.config().build(), KEEPALIVE)) {
            h.advance(20 * SECOND);
            assertEquals(3, h.pending().size());
            h.assertState(TcpState.CLOSED);
            assertEquals(TcpError.TIMED_OUT, h.tcp.error(h.conn));
            assertTrue(h.events.has("closed " + TcpError.TIMED_OUT));
        }
    }

    @Test
    void keepaliveCanBeSwitchedOnLater() {
        try (TcpHarness h = TcpHarness.established()) {
            h.tcp.keepalive(h.conn, true, 5 * SECOND, SECOND, 2, h.now());
            assertEquals(5 * SECOND, h.advanceUntilSent(60 * SECOND));
            h.expect(ACK.seq(L - 1));
        }
    }
}
