package dev.tern.core.hash;

/**
 * SipHash-2-4 (Aumasson and Bernstein, 2012) of a 16-byte message given as two little-endian longs, under a 128-bit
 * key given as two longs: a keyed pseudo-random function cheap enough to run once per datagram. The IPv4 layer uses
 * it for identification values (RFC 7739 §5.3); whoever does not know the key cannot predict the output.
 *
 * <p>Stateless and allocation-free. (The tcp module has its own package-private copy for ISNs and cookies; both
 * compute the same function, and one test vector binds each.)
 */
public final class SipHash {
    private SipHash() {
    }

    /** SipHash-2-4 of the 16 bytes {@code m0} (bytes 0..7) then {@code m1} (bytes 8..15). */
    public static long hash(long k0, long k1, long m0, long m1) {
        long v0 = k0 ^ 0x736f6d6570736575L;
        long v1 = k1 ^ 0x646f72616e646f6dL;
        long v2 = k0 ^ 0x6c7967656e657261L;
        long v3 = k1 ^ 0x7465646279746573L;
        // Two compression rounds per message word: m0, m1, then the final word carrying the length (16) in its top byte.
        long m = m0;
        for (int word = 0; word < 3; word++) {
            v3 ^= m;
            for (int round = 0; round < 2; round++) {
                v0 += v1; v1 = Long.rotateLeft(v1, 13); v1 ^= v0; v0 = Long.rotateLeft(v0, 32);
                v2 += v3; v3 = Long.rotateLeft(v3, 16); v3 ^= v2;
                v0 += v3; v3 = Long.rotateLeft(v3, 21); v3 ^= v0;
                v2 += v1; v1 = Long.rotateLeft(v1, 17); v1 ^= v2; v2 = Long.rotateLeft(v2, 32);
            }
            v0 ^= m;
            m = word == 0 ? m1 : 16L << 56;
        }
        // Four finalization rounds.
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
