package dev.tern.tcp;

import dev.tern.core.hash.SipHash;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;

/** ISNs (RFC 6528), SYN cookies (RFC 4987) and SipHash. */
class SecretsTest {
    @Test
    void sipHashMatchesTheReferenceVector() {
        // The reference implementation's vector for a 16-byte message 00..0f under key 00..0f.
        final long k0 = 0x0706050403020100L;
        final long k1 = 0x0f0e0d0c0b0a0908L;
        assertEquals(0x3f2acc7f57c29bdbL, SipHash.hash(k0, k1, 0x0706050403020100L, 0x0f0e0d0c0b0a0908L));
    }

    @Test
    void isnsAdvanceWithTheClockForOneTupleAndDifferAcrossTuples() {
        final IsnGenerator isn = new IsnGenerator(11, 22, -1);
        final int a = isn.isn(1, 1000, 2, 80, 0);
        final int b = isn.isn(1, 1000, 2, 80, 4_000_000L);
        assertEquals(1000, b - a, "one tick per 4 microseconds");
        assertNotEquals(a, isn.isn(1, 1001, 2, 80, 0));
        assertNotEquals(a, new IsnGenerator(12, 22, -1).isn(1, 1000, 2, 80, 0));
    }

    @Test
    void aCookieDecodesToItsMssForTwoClockTicksAndNotForAnotherPeer() {
        final SynCookies cookies = new SynCookies(5, 6);
        qt().forAll(integers().all(), integers().between(1, 65535), integers().all(), integers().between(0, 7))
            .checkAssert((peer, port, peerIsn, mss) -> {
                final long now = 1L << 40;
                final int cookie = cookies.encode(peer, port, 80, peerIsn, mss, now);
                assertEquals(mss, cookies.decode(cookie, peer, port, 80, peerIsn, now));
                assertEquals(mss, cookies.decode(cookie, peer, port, 80, peerIsn, now + (1L << 36)));
                assertEquals(-1, cookies.decode(cookie, peer, port, 80, peerIsn, now + (3L << 36)));
                assertEquals(-1, cookies.decode(cookie, peer, port, 80, peerIsn + 1, now));
                assertEquals(-1, cookies.decode(cookie, peer ^ 1, port, 80, peerIsn, now));
            });
    }

    @Test
    void theCookieMssIsTheLargestTableEntryNotAboveTheOffer() {
        assertEquals(536, SynCookies.MSS_TABLE[SynCookies.mssIndex(600)]);
        assertEquals(1460, SynCookies.MSS_TABLE[SynCookies.mssIndex(1460)]);
        assertEquals(8960, SynCookies.MSS_TABLE[SynCookies.mssIndex(9000)]);
        assertEquals(65495, SynCookies.MSS_TABLE[SynCookies.mssIndex(65495)]);
        assertTrue(SynCookies.MSS_TABLE[SynCookies.mssIndex(100)] == 536);
    }
}
