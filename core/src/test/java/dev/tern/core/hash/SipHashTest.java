package dev.tern.core.hash;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

class SipHashTest {
    private static final long K0 = 0x0706050403020100L;
    private static final long K1 = 0x0f0e0d0c0b0a0908L;

    @Test
    void matchesTheReferenceVectorForASixteenByteMessage() {
        // The paper's reference implementation: key 00..0f, message 00..0f.
        assertEquals(0x3f2acc7f57c29bdbL, SipHash.hash(K0, K1, 0x0706050403020100L, 0x0f0e0d0c0b0a0908L));
    }

    @Test
    void anotherKeyGivesAnotherValue() {
        assertNotEquals(SipHash.hash(K0, K1, 1, 2), SipHash.hash(K0 + 1, K1, 1, 2));
        assertNotEquals(SipHash.hash(K0, K1, 1, 2), SipHash.hash(K0, K1, 1, 3));
    }
}
