package dev.tern.tcp;

import dev.tern.tcp.testing.Captured;
import dev.tern.tcp.testing.TcpHarness;
import org.junit.jupiter.api.Test;

import static dev.tern.tcp.testing.Seg.ACK;
import static dev.tern.tcp.testing.Seg.PSH_ACK;
import static dev.tern.tcp.testing.Seg.RST;
import static dev.tern.tcp.testing.Seg.SYN;
import static dev.tern.tcp.testing.Seg.SYN_ACK;
import static dev.tern.tcp.testing.TcpHarness.LOCAL_ISS;
import static dev.tern.tcp.testing.TcpHarness.REMOTE_ISS;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** SYN cookies (RFC 4987 §3.6) when the SYN queue is full; accept queue overflow. */
class SynCookieTest {
    private TcpHarness listenerWithFullSynQueue(boolean cookies) {
        final TcpHarness h = new TcpHarness(TcpHarness.config().synQueueSize(1).synCookies(cookies).build());
        h.localPort = TcpHarness.LISTEN_PORT;
        h.listener = h.tcp.listen(TcpHarness.LISTEN_PORT, 8, h.events);
        h.remotePort = 50000;
        h.send(SYN.seq(REMOTE_ISS).mss(1460));
        h.expect(SYN_ACK.seq(LOCAL_ISS).ack(REMOTE_ISS + 1));
        h.remotePort = 50001;
        return h;
    }

    @Test
    void aFullSynQueueAnswersWithACookieThatCarriesTheMss() {
        try (TcpHarness h = listenerWithFullSynQueue(true)) {
            h.send(SYN.seq(REMOTE_ISS).mss(1400).sackOk().ts(5, 0).wscale(7));
            final Captured cookie = h.expect(SYN_ACK.ack(REMOTE_ISS + 1).mss(1300), f -> f.tcp().timestamp()
                || f.tcp().windowScale() >= 0 ? "a cookie SYN-ACK carries only the MSS" : null);
            assertNotEquals(LOCAL_ISS, cookie.tcp().seq());
            assertEquals(1, h.tcp.connectionCount(), "no state kept for the cookie");
            h.send(ACK.seq(REMOTE_ISS + 1).ack(cookie.tcp().seq() + 1));
            assertEquals(1, h.counter("tcp.syncookies.validated"));
            h.conn = h.tcp.accept(h.listener);
            h.assertState(TcpState.ESTABLISHED);
            assertEquals(1300, h.tcp.mss(h.conn));
            h.write("hi");
            h.expect(PSH_ACK.seq(cookie.tcp().seq() + 1).ack(REMOTE_ISS + 1).payload("hi"));
        }
    }

    @Test
    void dataOnTheCookieAckIsDelivered() {
        try (TcpHarness h = listenerWithFullSynQueue(true)) {
            h.send(SYN.seq(REMOTE_ISS).mss(1460));
            final int iss = h.expect(SYN_ACK).tcp().seq();
            h.send(PSH_ACK.seq(REMOTE_ISS + 1).ack(iss + 1).payload("GET /"));
            h.expect(ACK.seq(iss + 1).ack(REMOTE_ISS + 6));
            h.conn = h.tcp.accept(h.listener);
            assertArrayEquals("GET /".getBytes(), h.read());
        }
    }

    @Test
    void aForgedCookieGetsAReset() {
        try (TcpHarness h = listenerWithFullSynQueue(true)) {
            h.send(SYN.seq(REMOTE_ISS).mss(1460));
            final int iss = h.expect(SYN_ACK).tcp().seq();
            // A guess that keeps the cookie's clock but not its hash (a neighbouring value may decode to another
            // valid MSS, as with Linux; only an on-path attacker knows the cookie to start from).
            h.send(ACK.seq(REMOTE_ISS + 1).ack(iss + 1 + (1 << 20)));
            h.expect(RST.seq(iss + 1 + (1 << 20)));
            assertEquals(1, h.counter("tcp.drop.bad_cookie"));
            assertEquals(-1, h.tcp.accept(h.listener));
        }
    }

    @Test
    void withoutCookiesAFullSynQueueDropsTheSyn() {
        try (TcpHarness h = listenerWithFullSynQueue(false)) {
            h.send(SYN.seq(REMOTE_ISS).mss(1460));
            h.expectNothing();
            assertEquals(1, h.counter("tcp.drop.syn_queue_full"));
        }
    }

    @Test
    void aFullAcceptQueueDropsSyns() {
        try (TcpHarness h = new TcpHarness(TcpHarness.config().build())) {
            h.localPort = TcpHarness.LISTEN_PORT;
            h.listener = h.tcp.listen(TcpHarness.LISTEN_PORT, 1, h.events);
            h.remotePort = 50000;
            h.send(SYN.seq(REMOTE_ISS));
            h.expect(SYN_ACK);
            h.send(ACK.seq(REMOTE_ISS + 1).ack(LOCAL_ISS + 1));
            assertEquals(1, h.tcp.acceptable(h.listener));
            h.remotePort = 50001;
            h.send(SYN.seq(REMOTE_ISS));
            h.expectNothing();
            assertEquals(1, h.counter("tcp.drop.listen_overflow"));
            assertEquals(1, h.counter("tcp.listen.overflows"));
            assertEquals(1, h.counter("tcp.listen.drops"));
            assertTrue(h.tcp.accept(h.listener) >= 0);
            h.send(SYN.seq(REMOTE_ISS));
            h.expect(SYN_ACK);
        }
    }

    /**
     * Linux with tcp_abort_on_overflow = 0: the last ACK of a handshake that finds the accept queue full is dropped,
     * not answered with a reset; the connection stays half-open and its SYN-ACK goes again on its timer, and the
     * peer's answer to that completes the handshake once the owner accepted the one ahead of it.
     */
    @Test
    void aFullAcceptQueueDropsTheLastAckAndTheRetransmittedSynAckCompletesTheHandshakeLater() {
        try (TcpHarness h = new TcpHarness(TcpHarness.config().build())) {
            h.localPort = TcpHarness.LISTEN_PORT;
            h.listener = h.tcp.listen(TcpHarness.LISTEN_PORT, 1, h.events);
            h.remotePort = 50000;
            h.send(SYN.seq(REMOTE_ISS));
            h.expect(SYN_ACK.seq(LOCAL_ISS).ack(REMOTE_ISS + 1));
            h.remotePort = 50001;
            h.send(SYN.seq(REMOTE_ISS + 1000));
            h.expect(SYN_ACK.seq(LOCAL_ISS).ack(REMOTE_ISS + 1001));
            h.remotePort = 50000;
            h.send(ACK.seq(REMOTE_ISS + 1).ack(LOCAL_ISS + 1));
            assertEquals(1, h.tcp.acceptable(h.listener));

            h.remotePort = 50001;
            h.send(ACK.seq(REMOTE_ISS + 1001).ack(LOCAL_ISS + 1));
            h.expectNothing();
            assertEquals(1, h.counter("tcp.listen.overflows"));
            assertEquals(1, h.counter("tcp.listen.drops"));
            assertEquals(1, h.counter("tcp.drop.listen_overflow"));
            assertEquals(0, h.counter("tcp.tx.resets"), "no reset: the peer is not told");
            assertEquals(2, h.tcp.connectionCount(), "the second stays half-open");
            assertEquals(1, h.tcp.acceptable(h.listener));
            assertEquals(1, h.counter("tcp.conn.established"));

            // Data with the ACK is dropped with it while the queue stays full.
            h.send(PSH_ACK.seq(REMOTE_ISS + 1001).ack(LOCAL_ISS + 1).payload(new byte[10]));
            h.expectNothing();
            assertEquals(2, h.counter("tcp.listen.overflows"));

            final int first = h.tcp.accept(h.listener);
            assertTrue(first >= 0);
            assertEquals(50000, h.tcp.remotePort(first));
            // The SYN-ACK timer (1 s initial RTO, backed off by nothing yet) sends it again.
            h.advance(1_100_000_000L);
            h.expect(SYN_ACK.seq(LOCAL_ISS).ack(REMOTE_ISS + 1001));
            h.send(ACK.seq(REMOTE_ISS + 1001).ack(LOCAL_ISS + 1));
            h.expectNothing();
            assertEquals(1, h.tcp.acceptable(h.listener));
            final int second = h.tcp.accept(h.listener);
            assertEquals(50001, h.tcp.remotePort(second));
            assertEquals(TcpState.ESTABLISHED, h.tcp.state(second));
            assertEquals(2, h.counter("tcp.conn.established"));
            assertEquals(2, h.counter("tcp.listen.overflows"));
        }
    }

    @Test
    void aHalfOpenConnectionWhoseLastAckFoundTheQueueFullExpiresAfterItsSynAckRetries() {
        try (TcpHarness h = new TcpHarness(TcpHarness.config().synAckRetries(2).build())) {
            h.localPort = TcpHarness.LISTEN_PORT;
            h.listener = h.tcp.listen(TcpHarness.LISTEN_PORT, 1, h.events);
            h.remotePort = 50000;
            h.send(SYN.seq(REMOTE_ISS));
            h.expect(SYN_ACK);
            h.remotePort = 50001;
            h.send(SYN.seq(REMOTE_ISS));
            h.expect(SYN_ACK);
            h.remotePort = 50000;
            h.send(ACK.seq(REMOTE_ISS + 1).ack(LOCAL_ISS + 1));
            h.remotePort = 50001;
            h.send(ACK.seq(REMOTE_ISS + 1).ack(LOCAL_ISS + 1));
            h.expectNothing();
            h.advance(1_100_000_000L);
            h.expect(SYN_ACK);
            h.advance(2_100_000_000L);
            h.expect(SYN_ACK);
            h.advance(4_100_000_000L);
            h.expectNothing();
            assertEquals(1, h.counter("tcp.conn.half_open_expired"));
            assertEquals(1, h.tcp.connectionCount(), "only the queued one is left");
            assertEquals(1, h.tcp.acceptable(h.listener));
        }
    }

    @Test
    void aCookieAckThatFindsTheAcceptQueueFullIsDroppedAndTheNextOneCompletes() {
        final TcpHarness h = new TcpHarness(TcpHarness.config().synQueueSize(1).build());
        try (h) {
            h.localPort = TcpHarness.LISTEN_PORT;
            h.listener = h.tcp.listen(TcpHarness.LISTEN_PORT, 1, h.events);
            h.remotePort = 50000;
            h.send(SYN.seq(REMOTE_ISS).mss(1460));
            h.expect(SYN_ACK.seq(LOCAL_ISS).ack(REMOTE_ISS + 1));
            h.remotePort = 50001;
            h.send(SYN.seq(REMOTE_ISS).mss(1460));
            final int cookie = h.expect(SYN_ACK.ack(REMOTE_ISS + 1)).tcp().seq();
            h.remotePort = 50000;
            h.send(ACK.seq(REMOTE_ISS + 1).ack(LOCAL_ISS + 1));
            assertEquals(1, h.tcp.acceptable(h.listener));

            h.remotePort = 50001;
            h.send(PSH_ACK.seq(REMOTE_ISS + 1).ack(cookie + 1).payload("GET /"));
            h.expectNothing();
            assertEquals(1, h.counter("tcp.listen.overflows"));
            assertEquals(1, h.counter("tcp.listen.drops"));
            assertEquals(0, h.counter("tcp.syncookies.validated"));
            assertEquals(0, h.counter("tcp.tx.resets"));
            assertEquals(1, h.tcp.connectionCount(), "no state kept for the dropped cookie");

            assertTrue(h.tcp.accept(h.listener) >= 0);
            h.send(PSH_ACK.seq(REMOTE_ISS + 1).ack(cookie + 1).payload("GET /"));
            h.expect(ACK.seq(cookie + 1).ack(REMOTE_ISS + 6));
            assertEquals(1, h.counter("tcp.syncookies.validated"));
            h.conn = h.tcp.accept(h.listener);
            assertArrayEquals("GET /".getBytes(), h.read());
        }
    }

    @Test
    void aFullSynQueueWithoutCookiesCountsAListenDrop() {
        try (TcpHarness h = listenerWithFullSynQueue(false)) {
            h.send(SYN.seq(REMOTE_ISS));
            h.expectNothing();
            assertEquals(1, h.counter("tcp.listen.drops"));
            assertEquals(0, h.counter("tcp.listen.overflows"));
        }
    }

    @Test
    void closingAListenerResetsConnectionsNotYetAccepted() {
        try (TcpHarness h = new TcpHarness(TcpHarness.config().build())) {
            h.localPort = TcpHarness.LISTEN_PORT;
            h.listener = h.tcp.listen(TcpHarness.LISTEN_PORT, 4, h.events);
            h.remotePort = 50000;
            h.send(SYN.seq(REMOTE_ISS));
            h.expect(SYN_ACK);
            h.send(ACK.seq(REMOTE_ISS + 1).ack(LOCAL_ISS + 1));
            h.tcp.closeListener(h.listener, h.now());
            h.poll();
            h.expect(dev.tern.tcp.testing.Seg.RST_ACK.seq(LOCAL_ISS + 1));
            assertEquals(0, h.tcp.connectionCount());
            h.send(SYN.seq(REMOTE_ISS + 5));
            h.expect(dev.tern.tcp.testing.Seg.RST_ACK.ack(REMOTE_ISS + 6));
        }
    }
}
