package dev.tern.tcp;

import dev.tern.tcp.testing.Captured;
import dev.tern.tcp.testing.TcpHarness;
import org.junit.jupiter.api.Test;

import static dev.tern.tcp.testing.Seg.ACK;
import static dev.tern.tcp.testing.Seg.PSH_ACK;
import static dev.tern.tcp.testing.Seg.RST;
import static dev.tern.tcp.testing.Seg.RST_ACK;
import static dev.tern.tcp.testing.Seg.SYN;
import static dev.tern.tcp.testing.Seg.SYN_ACK;
import static dev.tern.tcp.testing.TcpHarness.LOCAL_ISS;
import static dev.tern.tcp.testing.TcpHarness.PEER;
import static dev.tern.tcp.testing.TcpHarness.REMOTE_ISS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** TCP Fast Open's client side (RFC 7413 §4.1, §4.2.1): the cookie cache, data in the SYN, the fallbacks. */
class FastOpenClientTest {
    private static final byte[] NO_COOKIE = new byte[0];
    private static final byte[] COOKIE = {1, 2, 3, 4, 5, 6, 7, 8};
    private static final TcpOptions FAST_OPEN = TcpOptions.DEFAULT.withFastOpen(true);

    private static TcpHarness client(int bits) {
        return new TcpHarness(TcpHarness.config().fastOpen(bits).build());
    }

    /** A first connect asks for the cookie and caches the one its SYN-ACK brings; the connection is then reset. */
    private static void learnCookie(TcpHarness h, byte[] cookie, int mss) {
        h.connect(FAST_OPEN);
        h.expect(SYN.seq(LOCAL_ISS).fastOpen(NO_COOKIE, false));
        h.send(SYN_ACK.seq(REMOTE_ISS).ack(LOCAL_ISS + 1).mss(mss).fastOpen(cookie, false));
        h.expect(ACK.seq(LOCAL_ISS + 1).ack(REMOTE_ISS + 1));
        h.tcp.abort(h.conn, h.now());
        h.poll();
        h.expect(RST_ACK);
    }

    private static String noFastOpenOption(Captured frame) {
        return frame.tcp().fastOpenCookie() != null ? "a Fast Open option this SYN should not carry" : null;
    }

    @Test
    void theCookieOfTheFirstConnectGoesWithTheDataOfTheNext() {
        try (TcpHarness h = client(FastOpen.CLIENT)) {
            learnCookie(h, COOKIE, 1460);
            assertEquals(8, h.tcp.fastOpen().cachedCookieLength(PEER));
            h.connect(FAST_OPEN);
            h.expectNothing();
            assertEquals(1460 - 40, h.tcp.fastOpen().synDataRoom(h.conn), "the SYN waits for data");
            h.write("hello");
            h.expect(SYN.seq(LOCAL_ISS).fastOpen(COOKIE, false).payload("hello"));
            h.send(SYN_ACK.seq(REMOTE_ISS).ack(LOCAL_ISS + 6).mss(1460));
            h.expect(ACK.seq(LOCAL_ISS + 6).ack(REMOTE_ISS + 1));
            h.assertState(TcpState.ESTABLISHED);
            assertEquals(1, h.counter("tcp.fastopen.active"));
            assertTrue(h.tcp.info(h.conn).synData());
            assertEquals(5, h.tcp.info(h.conn).bytesAcked());
            h.write("more");
            h.expect(PSH_ACK.seq(LOCAL_ISS + 6).payload("more"));
        }
    }

    @Test
    void aSynAckThatAcknowledgesTheFirstSynsDataAfterAPlainRetransmissionIsTaken() {
        // The SYN with data timed out, the SYN went again without it (RFC 7413 §4.2.1), and the server's SYN-ACK
        // acknowledges the data the first one carried: SND.MAX never fell, so the ACK is acceptable and the data done.
        try (TcpHarness h = client(FastOpen.CLIENT)) {
            learnCookie(h, COOKIE, 1460);
            h.connect(FAST_OPEN);
            h.write("hello");
            h.expect(SYN.seq(LOCAL_ISS).payload("hello"));
            h.advanceUntilSent(5 * TcpHarness.SECOND);
            h.expect(SYN.seq(LOCAL_ISS).len(0));
            h.send(SYN_ACK.seq(REMOTE_ISS).ack(LOCAL_ISS + 6).mss(1460));
            h.expect(ACK.seq(LOCAL_ISS + 6).ack(REMOTE_ISS + 1));
            h.assertState(TcpState.ESTABLISHED);
            assertEquals(5, h.tcp.info(h.conn).bytesAcked());
            h.write("more");
            h.expect(PSH_ACK.seq(LOCAL_ISS + 6).payload("more"));
        }
    }

    @Test
    void aTrackedSendInTheSynCompletesWithTheSynAckThatAcknowledgesIt() {
        try (TcpHarness h = client(FastOpen.CLIENT)) {
            learnCookie(h, COOKIE, 1460);
            h.connect(FAST_OPEN);
            h.tcp.sendCompletions().enable(h.conn, true);
            h.write("hello");
            h.tcp.sendCompletions().track(h.conn);
            h.expect(SYN.seq(LOCAL_ISS).payload("hello"));
            assertEquals(false, h.tcp.sendCompletions().ready(h.conn));
            h.send(SYN_ACK.seq(REMOTE_ISS).ack(LOCAL_ISS + 6).mss(1460));
            assertTrue(h.tcp.sendCompletions().ready(h.conn), "MSG_ZEROCOPY's notice waits");
        }
    }

    @Test
    void aSynAckEchoingATimestampNotYetSentIsResetAndTheConnectWaitsOn() {
        // As Linux's PAWSActiveRejected: the echo answers no SYN of ours; a later SYN-ACK with a true echo opens.
        try (TcpHarness h = client(FastOpen.CLIENT)) {
            h.connect(TcpOptions.DEFAULT);
            final Captured syn = h.expect(SYN.seq(LOCAL_ISS));
            final int tsVal = syn.tcp().tsVal();
            h.send(SYN_ACK.seq(REMOTE_ISS).ack(LOCAL_ISS + 1).mss(1460).ts(7, tsVal + 100_000));
            h.expect(RST.seq(LOCAL_ISS + 1));
            h.assertState(TcpState.SYN_SENT);
            h.send(SYN_ACK.seq(REMOTE_ISS).ack(LOCAL_ISS + 1).mss(1460).ts(7, tsVal));
            h.expect(ACK.seq(LOCAL_ISS + 1).ack(REMOTE_ISS + 1));
            h.assertState(TcpState.ESTABLISHED);
        }
    }

    @Test
    void theSynCarriesNoMoreThanTheCachedMssLessTheOptionSpace() {
        try (TcpHarness h = client(FastOpen.CLIENT)) {
            thousandBytesAfterACookie(h, 600, 560);
        }
    }

    @Test
    void dataTheSynAckDoesNotAcknowledgeGoesAgainAndTheCookieIsDroppedWithoutANewOne() {
        try (TcpHarness h = client(FastOpen.CLIENT)) {
            learnCookie(h, COOKIE, 1460);
            h.connect(FAST_OPEN);
            h.write("hello");
            h.expect(SYN.seq(LOCAL_ISS).payload("hello"));
            h.send(SYN_ACK.seq(REMOTE_ISS).ack(LOCAL_ISS + 1).mss(1460));
            h.expect(PSH_ACK.seq(LOCAL_ISS + 1).ack(REMOTE_ISS + 1).payload("hello"));
            assertEquals(1, h.counter("tcp.fastopen.active_failures"));
            assertEquals(0, h.counter("tcp.fastopen.active"));
            assertFalse(h.tcp.info(h.conn).synData());
            assertEquals(0, h.tcp.fastOpen().cachedCookieLength(PEER), "the server takes Fast Open no longer");
        }
    }

    @Test
    void theSynsDataLeftUnacknowledgedGoesAgainAsItWentCountedAsARetransmission() {
        try (TcpHarness h = client(FastOpen.CLIENT)) {
            learnCookie(h, COOKIE, 1460);
            h.connect(FAST_OPEN);
            h.write(TcpHarness.bytes(1000));
            h.expect(SYN.seq(LOCAL_ISS).len(1000));
            h.write(TcpHarness.bytes(2000));
            // The SYN-ACK takes 100 of the SYN's 1000 bytes: the other 900 go again as one segment, as they went
            // in the SYN, before the 2000 written after; then new data in whole segments.
            h.send(SYN_ACK.seq(REMOTE_ISS).ack(LOCAL_ISS + 101).mss(1460));
            h.expect(PSH_ACK.seq(LOCAL_ISS + 101).ack(REMOTE_ISS + 1).len(900));
            h.expect(ACK.seq(LOCAL_ISS + 1001).len(1460));
            h.expect(PSH_ACK.seq(LOCAL_ISS + 2461).len(540));
            final TcpInfo info = h.tcp.info(h.conn);
            assertEquals(1, info.retransmits());
            assertEquals(1, info.retransmittingSegments());
            assertEquals(3, info.unackedSegments());
            // Part of the data taken is a failed attempt, as Linux's: no TCPI_OPT_SYN_DATA.
            assertFalse(info.synData());
            assertEquals(1, h.counter("tcp.fastopen.active_failures"));
            assertEquals(0, h.counter("tcp.fastopen.active"));
        }
    }

    @Test
    void aNewCookieReplacesTheCachedOneEvenWhenTheDataWasNotTaken() {
        final byte[] fresh = {9, 9, 9, 9};
        try (TcpHarness h = client(FastOpen.CLIENT)) {
            learnCookie(h, COOKIE, 1460);
            h.connect(FAST_OPEN);
            h.write("x");
            h.expect(SYN.payload("x"));
            h.send(SYN_ACK.seq(REMOTE_ISS).ack(LOCAL_ISS + 1).mss(1460).fastOpen(fresh, true));
            h.expect(PSH_ACK.seq(LOCAL_ISS + 1).payload("x"));
            assertEquals(4, h.tcp.fastOpen().cachedCookieLength(PEER));
            h.tcp.abort(h.conn, h.now());
            h.poll();
            h.expect(RST_ACK);
            h.connect(FAST_OPEN);
            h.write("y");
            h.expect(SYN.fastOpen(fresh, true).payload("y"));
        }
    }

    @Test
    void aRetransmittedSynCarriesNeitherTheCookieNorTheData() {
        try (TcpHarness h = client(FastOpen.CLIENT)) {
            learnCookie(h, COOKIE, 1460);
            h.connect(FAST_OPEN);
            h.write("hello");
            h.expect(SYN.payload("hello"));
            h.advance(TcpHarness.SECOND);
            h.expect(SYN.seq(LOCAL_ISS).len(0), FastOpenClientTest::noFastOpenOption);
            h.send(SYN_ACK.seq(REMOTE_ISS).ack(LOCAL_ISS + 1).mss(1460));
            h.expect(PSH_ACK.seq(LOCAL_ISS + 1).payload("hello"));
        }
    }

    @Test
    void withoutCookiesTheDataGoesWithoutTheOptionAndWithoutTheClientBitNothingChanges() {
        try (TcpHarness h = client(FastOpen.CLIENT | FastOpen.CLIENT_NO_COOKIE)) {
            h.connect(FAST_OPEN);
            h.write("hello");
            h.expect(SYN.payload("hello"), FastOpenClientTest::noFastOpenOption);
        }
        try (TcpHarness h = client(FastOpen.SERVER)) {
            h.connect(FAST_OPEN);
            h.expect(SYN.len(0), FastOpenClientTest::noFastOpenOption);
            assertEquals(-1, h.tcp.fastOpen().synDataRoom(h.conn));
        }
    }

    @Test
    void inASimultaneousOpenThePeersSynAckMayAcknowledgeTheSynsData() {
        try (TcpHarness h = client(FastOpen.CLIENT)) {
            cookieAndDataInTheSyn(h);
            h.send(SYN.seq(REMOTE_ISS).mss(1460).sackOk().payload("peer"));
            h.expect(SYN_ACK.seq(LOCAL_ISS).ack(REMOTE_ISS + 1).len(0));
            h.send(SYN_ACK.seq(REMOTE_ISS).ack(LOCAL_ISS + 6).mss(1460).sackOk());
            h.expect(ACK.seq(LOCAL_ISS + 6).ack(REMOTE_ISS + 1).len(0).sack(REMOTE_ISS, REMOTE_ISS + 1));
            h.assertState(TcpState.ESTABLISHED);
            h.expectNothing();
            h.write("more");
            h.expect(PSH_ACK.seq(LOCAL_ISS + 6).payload("more"));
        }
    }

    @Test
    void afterASimultaneousOpenTheSynsDataGoesAgain() {
        try (TcpHarness h = client(FastOpen.CLIENT)) {
            learnCookie(h, COOKIE, 1460);
            h.connect(FAST_OPEN);
            h.write("hello");
            h.expect(SYN.seq(LOCAL_ISS).payload("hello"));
            h.send(SYN.seq(REMOTE_ISS).mss(1460));
            h.expect(SYN_ACK.seq(LOCAL_ISS).ack(REMOTE_ISS + 1).len(0));
            h.send(ACK.seq(REMOTE_ISS + 1).ack(LOCAL_ISS + 1));
            h.assertState(TcpState.ESTABLISHED);
            h.expect(PSH_ACK.seq(LOCAL_ISS + 1).payload("hello"));
        }
    }

    private static final long PATH_DISABLE_NS = 900 * TcpHarness.SECOND;

    private static TcpHarness disablingClient() {
        return new TcpHarness(TcpHarness.config().fastOpen(FastOpen.CLIENT)
            .fastOpenPathDisableNs(PATH_DISABLE_NS).build());
    }

    /** The cookie is learnt, then the next connect's SYN carries it and "hello". */
    private static void cookieAndDataInTheSyn(TcpHarness h) {
        learnCookie(h, COOKIE, 1460);
        h.connect(FAST_OPEN);
        h.write("hello");
        h.expect(SYN.seq(LOCAL_ISS).fastOpen(COOKIE, false).payload("hello"));
    }

    /** A cookie comes with the server's {@code mss}; the next connect writes 1000 bytes, {@code inSyn} in its SYN. */
    private static Captured thousandBytesAfterACookie(TcpHarness h, int mss, int inSyn) {
        learnCookie(h, COOKIE, mss);
        h.connect(FAST_OPEN);
        h.write(new byte[1000]);
        return h.expect(SYN.seq(LOCAL_ISS).fastOpen(COOKIE, false).len(inSyn));
    }

    private static void abort(TcpHarness h) {
        h.tcp.abort(h.conn, h.now());
        h.poll();
        h.expect(RST_ACK);
    }

    @Test
    void withPathDisablingDataNeitherAcknowledgedNorAnsweredByACookieTurnsFastOpenOffForAWhile() {
        try (TcpHarness h = disablingClient()) {
            cookieAndDataInTheSyn(h);
            h.send(SYN_ACK.seq(REMOTE_ISS).ack(LOCAL_ISS + 1).mss(1460));
            h.expect(PSH_ACK.seq(LOCAL_ISS + 1).ack(REMOTE_ISS + 1).payload("hello"));
            assertEquals(1, h.counter("tcp.fastopen.paths_disabled"));
            assertTrue(h.tcp.fastOpen().pathDisabled(PEER));
            assertEquals(0, h.tcp.fastOpen().cachedCookieLength(PEER));
            abort(h);

            h.connect(FAST_OPEN);
            h.expect(SYN.seq(LOCAL_ISS).len(0), FastOpenClientTest::noFastOpenOption);
            assertEquals(-1, h.tcp.fastOpen().synDataRoom(h.conn), "a plain connect: nothing held back");
            assertEquals(1, h.counter("tcp.fastopen.active_disabled"));
            h.write("plain");
            h.send(SYN_ACK.seq(REMOTE_ISS).ack(LOCAL_ISS + 1).mss(1460));
            h.expect(PSH_ACK.seq(LOCAL_ISS + 1).payload("plain"));
            assertTrue(h.tcp.fastOpen().pathDisabled(PEER), "a plain connect neither ends nor extends it");
            abort(h);

            h.advance(PATH_DISABLE_NS + TcpHarness.SECOND);
            h.connect(FAST_OPEN);
            h.expect(SYN.seq(LOCAL_ISS).len(0).fastOpen(NO_COOKIE, false));
            assertFalse(h.tcp.fastOpen().pathDisabled(PEER));
            assertEquals(1, h.counter("tcp.fastopen.paths_disabled"));
        }
    }

    @Test
    void withPathDisablingACookieRequestAnsweredWithoutACookieTurnsFastOpenOff() {
        try (TcpHarness h = disablingClient()) {
            h.connect(FAST_OPEN);
            h.expect(SYN.seq(LOCAL_ISS).fastOpen(NO_COOKIE, false));
            h.send(SYN_ACK.seq(REMOTE_ISS).ack(LOCAL_ISS + 1).mss(1460));
            h.expect(ACK.seq(LOCAL_ISS + 1).ack(REMOTE_ISS + 1));
            assertTrue(h.tcp.fastOpen().pathDisabled(PEER));
            abort(h);
            h.connect(FAST_OPEN);
            h.expect(SYN.seq(LOCAL_ISS).len(0), FastOpenClientTest::noFastOpenOption);
        }
    }

    @Test
    void withPathDisablingDataTheSynAckAcknowledgesKeepsTheCookieWithoutANewOne() {
        try (TcpHarness h = disablingClient()) {
            cookieAndDataInTheSyn(h);
            h.send(SYN_ACK.seq(REMOTE_ISS).ack(LOCAL_ISS + 6).mss(1460));
            h.expect(ACK.seq(LOCAL_ISS + 6).ack(REMOTE_ISS + 1));
            assertFalse(h.tcp.fastOpen().pathDisabled(PEER));
            assertEquals(8, h.tcp.fastOpen().cachedCookieLength(PEER));
            assertEquals(0, h.counter("tcp.fastopen.paths_disabled"));
        }
    }

    @Test
    void aSynAckWithoutACookieStillUpdatesTheCachedMss() {
        try (TcpHarness h = client(FastOpen.CLIENT)) {
            cookieAndDataInTheSyn(h);
            h.send(SYN_ACK.seq(REMOTE_ISS).ack(LOCAL_ISS + 6).mss(940));
            h.expect(ACK.seq(LOCAL_ISS + 6).ack(REMOTE_ISS + 1));
            abort(h);
            h.connect(FAST_OPEN);
            assertEquals(940 - 40, h.tcp.fastOpen().synDataRoom(h.conn));
            h.write(new byte[1000]);
            h.expect(SYN.seq(LOCAL_ISS).fastOpen(COOKIE, false).len(900));
        }
    }

    @Test
    void aSynWithDataTooBigForThePathGoesAgainAtOnceWithoutItAndWithTheSmallerMss() {
        try (TcpHarness h = client(FastOpen.CLIENT)) {
            final Captured syn = thousandBytesAfterACookie(h, 1460, 1000);
            h.sendIp(TcpHarness.PEER, TcpHarness.US, 1, IcmpTest.icmpError(3, 4, 840, syn));
            h.expect(SYN.seq(LOCAL_ISS).len(0).mss(800), FastOpenClientTest::noFastOpenOption);
            h.send(SYN_ACK.seq(REMOTE_ISS).ack(LOCAL_ISS + 1).mss(1460));
            h.expect(ACK.seq(LOCAL_ISS + 1).ack(REMOTE_ISS + 1).len(800));
            h.assertState(TcpState.ESTABLISHED);
        }
    }

    @Test
    void byDefaultAFailedAttemptTurnsNothingOffAndTheNextConnectAsksForACookie() {
        try (TcpHarness h = client(FastOpen.CLIENT)) {
            cookieAndDataInTheSyn(h);
            h.send(SYN_ACK.seq(REMOTE_ISS).ack(LOCAL_ISS + 1).mss(1460));
            h.expect(PSH_ACK.seq(LOCAL_ISS + 1).payload("hello"));
            assertFalse(h.tcp.fastOpen().pathDisabled(PEER));
            abort(h);
            h.connect(FAST_OPEN);
            h.expect(SYN.seq(LOCAL_ISS).len(0).fastOpen(NO_COOKIE, false));
            assertEquals(0, h.counter("tcp.fastopen.paths_disabled"));
            assertEquals(0, h.counter("tcp.fastopen.active_disabled"));
        }
    }
}
