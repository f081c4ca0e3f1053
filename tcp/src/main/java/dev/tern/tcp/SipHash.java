package dev.tern.tcp;

/**
 * SipHash-2-4 (Aumasson and Bernstein) of a 16-byte message given as two longs: the keyed pseudo-random function
 * behind ISNs (RFC 6528), ephemeral ports (RFC 6056) and SYN cookies. Allocation-free; stateless.
 */
final class SipHash {
    private SipHash() {
    }

    static long hash(long k0, long k1, long m0, long m1) {
        long v0 = k0 ^ 0x736f6d6570736575L;
        long v1 = k1 ^ 0x646f72616e646f6dL;
        long v2 = k0 ^ 0x6c7967656e657261L;
        long v3 = k1 ^ 0x7465646279746573L;
        for (int word = 0; word < 3; word++) {
            final long m = word == 0 ? m0 : word == 1 ? m1 : 16L << 56;
            v3 ^= m;
            for (int round = 0; round < 2; round++) {
                v0 += v1; v1 = Long.rotateLeft(v1, 13); v1 ^= v0; v0 = Long.rotateLeft(v0, 32);
                v2 += v3; v3 = Long.rotateLeft(v3, 16); v3 ^= v2;
                v0 += v3; v3 = Long.rotateLeft(v3, 21); v3 ^= v0;
                v2 += v1; v1 = Long.rotateLeft(v1, 17); v1 ^= v2; v2 = Long.rotateLeft(v2, 32);
            }
            v0 ^= m;
        }
        v2 ^= 0xff;
        for (int round = 0; round < 4; round++) {
            v0 += v1; v1 = Long.rotateLeft(v1, 13); v1 ^= v0; v0 = Long.rotateLeft(v0, 32);
            v2 += v3; v3 = Long.rotateLeft(v3, 16); v3 ^= v2;
            v0 += v3; v3 = Long.rotateLeft(v3, 21); v3 ^= v0;
            v2 += v1; v1 = Long.rotateLeft(v1, 17); v1 ^= v2; v2 = Long.rotateLeft(v2, 32);
        }
        return v0 ^ v1 ^ v2 ^ v3;
    }
}
