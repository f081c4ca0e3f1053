package dev.tern.ipv4;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The per-peer ICMP error limit (RFC 1812 §4.3.2.8, Linux icmp_ratelimit): buckets per address in a bounded table. */
class IcmpPeerRateLimiterTest {
    private static final long SECOND = 1_000_000_000L;
    private static final int A = 0xC612_0001;
    private static final int B = 0xC612_0003;

    private static int allowed(IcmpPeerRateLimiter limiter, int peer, int tries, long nowNs) {
        int allowed = 0;
        for (int i = 0; i < tries; i++) {
            allowed += limiter.tryAcquire(peer, nowNs) ? 1 : 0;
        }
        return allowed;
    }

    @Test
    void aPeerGetsABurstOfSixThenOneASecond() {
        final IcmpPeerRateLimiter limiter = new IcmpPeerRateLimiter(SECOND, 6, 256);
        assertEquals(6, allowed(limiter, A, 20, 0));
        assertEquals(0, allowed(limiter, A, 5, SECOND / 2));
        assertEquals(1, allowed(limiter, A, 5, SECOND + SECOND / 2));
        assertEquals(6, allowed(limiter, A, 20, 60 * SECOND), "the bucket refills up to the burst");
    }

    @Test
    void onePeerSpendingItsBucketLeavesAnothersWhole() {
        final IcmpPeerRateLimiter limiter = new IcmpPeerRateLimiter(SECOND, 6, 256);
        assertEquals(6, allowed(limiter, A, 100, 0));
        assertEquals(6, allowed(limiter, B, 100, 0));
    }

    @Test
    void theTableStaysBoundedAndForgetsTheLeastRecentlyUsedPeer() {
        final IcmpPeerRateLimiter limiter = new IcmpPeerRateLimiter(SECOND, 6, 64);
        assertEquals(6, allowed(limiter, A, 100, 0));
        for (int i = 1; i <= 100_000; i++) {
            limiter.tryAcquire(0x0A00_0000 + i, i);
        }
        assertEquals(64, limiter.size());
        assertTrue(limiter.tryAcquire(A, 100_001), "A was evicted: a new bucket, full again");
    }

    @Test
    void intervalZeroTurnsTheLimitOff() {
        final IcmpPeerRateLimiter limiter = new IcmpPeerRateLimiter(0, 6, 16);
        assertEquals(1000, allowed(limiter, A, 1000, 0));
        assertEquals(0, limiter.size());
    }

    @Test
    void anEmptyBucketStaysEmptyWithoutTime() {
        final IcmpPeerRateLimiter limiter = new IcmpPeerRateLimiter(SECOND, 1, 16);
        assertTrue(limiter.tryAcquire(A, 5 * SECOND));
        assertFalse(limiter.tryAcquire(A, 5 * SECOND));
        assertFalse(limiter.tryAcquire(A, 6 * SECOND - 1));
        assertTrue(limiter.tryAcquire(A, 6 * SECOND));
    }
}
