package dev.tern.core.hash;

/**
 * SipHash-2-4 (Aumasson and Bernstein, 2012) of a 16-byte or 8-byte message given as little-endian longs, under a
 * 128-bit key given as two longs: a keyed pseudo-random function cheap enough to run once per datagram. The IPv4
 * layer uses it for identification values (RFC 7739 §5.3), TCP for ISNs, ephemeral ports, SYN cookies and Fast Open
 * cookies; whoever does not know the key cannot predict the output.
 *
 * <p>Stateless and allocation-free.
 */
public final class SipHash {
    private SipHash() {
    }

    /** SipHash-2-4 of the 16 bytes {@code m0} (bytes 0..7) then {@code m1} (bytes 8..15). */
    public static long hash(long k0, long k1, long m0, long m1) {
        return hash(k0, k1, m0, m1, 2);
    }

    /** SipHash-2-4 of the 8 bytes {@code m0} (little-endian): what Linux's TCP Fast Open cookie takes. */
    public static long hash(long k0, long k1, long m0) {
        return hash(k0, k1, m0, 0, 1);
    }

    /** SipHash-2-4 of {@code words} (1 or 2) message words, then the final word carrying the length in its top byte. */
    private static long hash(long k0, long k1, long m0, long m1, int words) {
        long v0 = k0 ^ 0x736f6d6570736575L;
        long v1 = k1 ^ 0x646f72616e646f6dL;
        long v2 = k0 ^ 0x6c7967656e657261L;
        long v3 = k1 ^ 0x7465646279746573L;
        // Two compression rounds per message word.
        long m = m0;
        for (int word = 0; word <= words; word++) {
            v3 ^= m;
            for (int round = 0; round < 2; round++) {
                v0 += v1; v1 = Long.rotateLeft(v1, 13); v1 ^= v0; v0 = Long.rotateLeft(v0, 32);
                v2 += v3; v3 = Long.rotateLeft(v3, 16); v3 ^= v2;
                v0 += v3; v3 = Long.rotateLeft(v3, 21); v3 ^= v0;
                v2 += v1; v1 = Long.rotateLeft(v1, 17); v1 ^= v2; v2 = Long.rotateLeft(v2, 32);
            }
            v0 ^= m;
            m = word + 1 < words ? m1 : (8L * words) << 56;
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
