package dev.tern.tcp;

import dev.tern.tcp.testing.Captured;
import dev.tern.tcp.testing.Seg;
import dev.tern.tcp.testing.TcpHarness;
import org.junit.jupiter.api.Test;

import static dev.tern.tcp.testing.Seg.ACK;
import static dev.tern.tcp.testing.Seg.PSH_ACK;
import static dev.tern.tcp.testing.Seg.SYN;
import static dev.tern.tcp.testing.Seg.SYN_ACK;
import static dev.tern.tcp.testing.TcpHarness.LOCAL_ISS;
import static dev.tern.tcp.testing.TcpHarness.PEER;
import static dev.tern.tcp.testing.TcpHarness.REMOTE_ISS;
import static dev.tern.tcp.testing.TcpHarness.US;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** TCP Fast Open's server side (RFC 7413 §4.2): cookies in SYN-ACKs, data taken from a SYN, every fallback. */
class FastOpenServerTest {
    private static final FastOpenKeys KEYS = FastOpenKeys.parse("11111111-22222222-33333333-44444444");
    private static final byte[] NO_COOKIE = new byte[0];

    private static byte[] bytes(long cookie) {
        final byte[] b = new byte[8];
        for (int i = 0; i < 8; i++) {
            b[i] = (byte) (cookie >>> (56 - 8 * i));
        }
        return b;
    }

    private static final byte[] COOKIE = bytes(KEYS.cookie(PEER, US));

    /** A listener on port 80 with a Fast Open queue of {@code queue} (-1: none set), under {@code fastOpenBits}. */
    private static TcpHarness listener(int fastOpenBits, FastOpenKeys keys, int queue, TcpOptions options) {
        final TcpHarness h = new TcpHarness(TcpHarness.config().fastOpen(fastOpenBits).fastOpenKeys(keys).build());
        h.localPort = TcpHarness.LISTEN_PORT;
        h.listener = h.tcp.listen(TcpHarness.LISTEN_PORT, 8, options, h.events);
        if (queue >= 0) {
            assertEquals(0, h.tcp.fastOpen().listen(h.listener, queue));
        }
        h.remotePort = TcpHarness.PEER_CLIENT_PORT;
        return h;
    }

    private static TcpHarness listener() {
        return listener(FastOpen.SERVER, KEYS, 4, TcpOptions.DEFAULT);
    }

    private static String noFastOpenOption(Captured frame) {
        return frame.tcp().fastOpenCookie() != null ? "a Fast Open option the SYN-ACK should not carry" : null;
    }

    @Test
    void anEmptyOptionAsksForTheCookieAndGetsThePrimaryKeys() {
        try (TcpHarness h = listener()) {
            h.send(SYN.seq(REMOTE_ISS).mss(1460).fastOpen(NO_COOKIE, false));
            h.expect(SYN_ACK.seq(LOCAL_ISS).ack(REMOTE_ISS + 1).fastOpen(COOKIE, false));
            assertEquals(1, h.counter("tcp.fastopen.cookie_requests"));
            assertEquals(0, h.counter("tcp.fastopen.passive"));
            h.send(SYN.seq(REMOTE_ISS).mss(1460));
            h.expect(SYN_ACK.seq(LOCAL_ISS).ack(REMOTE_ISS + 1), FastOpenServerTest::noFastOpenOption);
        }
    }

    @Test
    void theExperimentalOptionIsAnsweredInItsOwnKind() {
        try (TcpHarness h = listener()) {
            h.send(SYN.seq(REMOTE_ISS).mss(1460).fastOpen(NO_COOKIE, true));
            h.expect(SYN_ACK.ack(REMOTE_ISS + 1).fastOpen(COOKIE, true));
        }
    }

    @Test
    void aValidCookiesDataIsAcknowledgedAndReadableBeforeTheHandshakeCompletes() {
        try (TcpHarness h = listener()) {
            h.send(SYN.seq(REMOTE_ISS).mss(1460).fastOpen(COOKIE, false).payload("GET /"));
            h.expect(SYN_ACK.seq(LOCAL_ISS).ack(REMOTE_ISS + 1 + 5), FastOpenServerTest::noFastOpenOption);
            assertEquals(1, h.counter("tcp.fastopen.passive"));
            assertEquals(1, h.tcp.acceptable(h.listener), "in the accept queue since its SYN");
            h.conn = h.tcp.accept(h.listener);
            h.assertState(TcpState.SYN_RECEIVED);
            assertArrayEquals("GET /".getBytes(), h.read());
            assertTrue(h.tcp.info(h.conn).synData());
            assertTrue(h.tcp.fastOpen().synDataAcked(h.conn));
            h.send(ACK.seq(REMOTE_ISS + 6).ack(LOCAL_ISS + 1));
            h.assertState(TcpState.ESTABLISHED);
            h.write("200");
            h.expect(PSH_ACK.seq(LOCAL_ISS + 1).ack(REMOTE_ISS + 6).payload("200"));
            assertEquals(0, h.counter("tcp.drop.syn_data"));
        }
    }

    @Test
    void aWrongCookieFallsBackAndTheSynAckCarriesTheRightOne() {
        try (TcpHarness h = listener()) {
            final byte[] wrong = COOKIE.clone();
            wrong[7] ^= 1;
            h.send(SYN.seq(REMOTE_ISS).mss(1460).fastOpen(wrong, false).payload("GET /"));
            h.expect(SYN_ACK.seq(LOCAL_ISS).ack(REMOTE_ISS + 1).fastOpen(COOKIE, false));
            assertEquals(1, h.counter("tcp.fastopen.passive_failures"));
            assertEquals(1, h.counter("tcp.drop.syn_data"));
            assertEquals(0, h.tcp.acceptable(h.listener), "a plain handshake: accepted only once it completes");
            h.send(ACK.seq(REMOTE_ISS + 1).ack(LOCAL_ISS + 1));
            h.conn = h.tcp.accept(h.listener);
            assertFalse(h.tcp.info(h.conn).synData());
            assertEquals(0, h.readable(), "the SYN's data was not taken: the client sends it again");
        }
    }

    @Test
    void aCookieOfAnotherLengthIsWrongToo() {
        try (TcpHarness h = listener()) {
            h.send(SYN.seq(REMOTE_ISS).mss(1460).fastOpen(new byte[] {1, 2, 3, 4}, false).payload("x"));
            h.expect(SYN_ACK.ack(REMOTE_ISS + 1).fastOpen(COOKIE, false));
            assertEquals(1, h.counter("tcp.fastopen.passive_failures"));
        }
    }

    @Test
    void theBackupKeysCookieIsTakenAndReplacedByThePrimarys() {
        final FastOpenKeys rotated = FastOpenKeys.parse("55555555-66666666-77777777-88888888,"
            + "11111111-22222222-33333333-44444444");
        try (TcpHarness h = listener(FastOpen.SERVER, rotated, 4, TcpOptions.DEFAULT)) {
            h.send(SYN.seq(REMOTE_ISS).mss(1460).fastOpen(COOKIE, false).payload("hi"));
            h.expect(SYN_ACK.ack(REMOTE_ISS + 3).fastOpen(bytes(rotated.cookie(PEER, US)), false));
            assertEquals(1, h.counter("tcp.fastopen.passive"));
            assertEquals(1, h.counter("tcp.fastopen.passive_backup_key"));
        }
    }

    @Test
    void beyondTheQueueLengthSynsFallBackUntilAHandshakeCompletes() {
        try (TcpHarness h = listener(FastOpen.SERVER, KEYS, 1, TcpOptions.DEFAULT)) {
            h.send(SYN.seq(REMOTE_ISS).mss(1460).fastOpen(COOKIE, false).payload("one"));
            h.expect(SYN_ACK.ack(REMOTE_ISS + 4));
            h.remotePort = TcpHarness.PEER_CLIENT_PORT + 1;
            h.send(SYN.seq(REMOTE_ISS).mss(1460).fastOpen(COOKIE, false).payload("two"));
            h.expect(SYN_ACK.ack(REMOTE_ISS + 1), FastOpenServerTest::noFastOpenOption);
            assertEquals(1, h.counter("tcp.fastopen.listen_overflows"));
            h.remotePort = TcpHarness.PEER_CLIENT_PORT;
            h.send(ACK.seq(REMOTE_ISS + 4).ack(LOCAL_ISS + 1));
            h.remotePort = TcpHarness.PEER_CLIENT_PORT + 2;
            h.send(SYN.seq(REMOTE_ISS).mss(1460).fastOpen(COOKIE, false).payload("three"));
            h.expect(SYN_ACK.ack(REMOTE_ISS + 6));
            assertEquals(2, h.counter("tcp.fastopen.passive"));
        }
    }

    @Test
    void aListenerWithoutAQueueOrALayerWithoutTheServerBitTakesNoFastOpen() {
        try (TcpHarness h = listener(FastOpen.SERVER, KEYS, -1, TcpOptions.DEFAULT)) {
            h.send(SYN.seq(REMOTE_ISS).mss(1460).fastOpen(COOKIE, false).payload("x"));
            h.expect(SYN_ACK.ack(REMOTE_ISS + 1), FastOpenServerTest::noFastOpenOption);
        }
        try (TcpHarness h = listener(FastOpen.CLIENT, KEYS, 4, TcpOptions.DEFAULT)) {
            h.send(SYN.seq(REMOTE_ISS).mss(1460).fastOpen(NO_COOKIE, false));
            h.expect(SYN_ACK.ack(REMOTE_ISS + 1), FastOpenServerTest::noFastOpenOption);
            assertEquals(0, h.counter("tcp.fastopen.passive"));
        }
        try (TcpHarness h = listener(FastOpen.SERVER | FastOpen.SERVER_ALL_LISTENERS, KEYS, -1, TcpOptions.DEFAULT)) {
            assertEquals(8, h.tcp.fastOpen().queueLength(h.listener), "the backlog, without TCP_FASTOPEN");
            h.send(SYN.seq(REMOTE_ISS).mss(1460).fastOpen(COOKIE, false).payload("x"));
            h.expect(SYN_ACK.ack(REMOTE_ISS + 2));
        }
    }

    @Test
    void withoutCookiesRequiredDataIsTakenFromAnySyn() {
        try (TcpHarness h = listener(FastOpen.SERVER | FastOpen.SERVER_NO_COOKIE, KEYS, 4, TcpOptions.DEFAULT)) {
            h.send(SYN.seq(REMOTE_ISS).mss(1460).payload("plain"));
            h.expect(SYN_ACK.ack(REMOTE_ISS + 6), FastOpenServerTest::noFastOpenOption);
            assertEquals(1, h.counter("tcp.fastopen.passive"));
        }
    }

    @Test
    void dataBeyondTheSynAcksWindowIsTrimmed() {
        final TcpOptions small = TcpOptions.DEFAULT.withBuffers(1024, 1024);
        try (TcpHarness h = listener(FastOpen.SERVER, KEYS, 4, small)) {
            h.send(SYN.seq(REMOTE_ISS).mss(1460).fastOpen(COOKIE, false).payload(new byte[1400]));
            h.expect(SYN_ACK.ack(REMOTE_ISS + 1 + 1024).window(1024));
            assertEquals(1400 - 1024, h.counter("tcp.rx.beyond_window_bytes"));
            h.conn = h.tcp.accept(h.listener);
            assertEquals(1024, h.read().length);
        }
    }

    @Test
    void aResetEndsAnAcceptedFastOpenConnectionWithItsErrorInsteadOfFreeingIt() {
        try (TcpHarness h = listener()) {
            h.send(SYN.seq(REMOTE_ISS).mss(1460).fastOpen(COOKIE, false).payload("data"));
            h.expect(SYN_ACK.ack(REMOTE_ISS + 5));
            h.conn = h.tcp.accept(h.listener);
            h.send(Seg.RST.seq(REMOTE_ISS + 5));
            h.assertState(TcpState.CLOSED);
            assertEquals(TcpError.RESET, h.tcp.error(h.conn));
            assertArrayEquals("data".getBytes(), h.read(), "what was read before the reset stays readable");
        }
    }

    @Test
    void closingTheListenerLeavesAnAcceptedFastOpenConnection() {
        try (TcpHarness h = listener()) {
            h.send(SYN.seq(REMOTE_ISS).mss(1460).fastOpen(COOKIE, false).payload("data"));
            h.expect(SYN_ACK.ack(REMOTE_ISS + 5));
            h.conn = h.tcp.accept(h.listener);
            h.tcp.closeListener(h.listener, h.now());
            h.expectNothing();
            h.assertState(TcpState.SYN_RECEIVED);
            h.send(ACK.seq(REMOTE_ISS + 5).ack(LOCAL_ISS + 1));
            h.assertState(TcpState.ESTABLISHED);
        }
    }

    @Test
    void anAnswerWrittenBeforeTheLastAckGoesAtOnceAndItsAckCompletesTheHandshake() {
        try (TcpHarness h = listener()) {
            h.send(SYN.seq(REMOTE_ISS).mss(1460).fastOpen(COOKIE, false).payload("GET /"));
            h.expect(SYN_ACK.seq(LOCAL_ISS).ack(REMOTE_ISS + 6));
            h.conn = h.tcp.accept(h.listener);
            h.write("200 OK");
            h.expect(PSH_ACK.seq(LOCAL_ISS + 1).ack(REMOTE_ISS + 6).payload("200 OK"));
            h.assertState(TcpState.SYN_RECEIVED);
            h.send(ACK.seq(REMOTE_ISS + 6).ack(LOCAL_ISS + 7));
            h.assertState(TcpState.ESTABLISHED);
            assertEquals(6, h.tcp.info(h.conn).bytesAcked());
            assertEquals(0, h.tcp.inFlight(h.conn));
        }
    }

    @Test
    void theSynAckAgainLeavesTheDataInFlightAndAnAckOfTheSynAloneGetsItSentAgain() {
        try (TcpHarness h = listener()) {
            h.send(SYN.seq(REMOTE_ISS).mss(1460).fastOpen(COOKIE, false).payload("GET /"));
            h.expect(SYN_ACK.seq(LOCAL_ISS).ack(REMOTE_ISS + 6));
            h.conn = h.tcp.accept(h.listener);
            h.write("200 OK");
            h.expect(PSH_ACK.seq(LOCAL_ISS + 1).payload("200 OK"));
            h.advance(TcpHarness.SECOND);
            h.expect(SYN_ACK.seq(LOCAL_ISS).ack(REMOTE_ISS + 6));
            assertEquals(7, h.tcp.inFlight(h.conn), "the SYN-ACK and the answer");
            h.send(ACK.seq(REMOTE_ISS + 6).ack(LOCAL_ISS + 1));
            h.assertState(TcpState.ESTABLISHED);
            h.advanceUntilSent(5 * TcpHarness.SECOND);
            h.expect(PSH_ACK.seq(LOCAL_ISS + 1).payload("200 OK"));
        }
    }
}
