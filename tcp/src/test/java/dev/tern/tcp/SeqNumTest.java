package dev.tern.tcp;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;

/** Laws of sequence number arithmetic modulo 2^32 (RFC 9293 §3.4), across the wrap. */
class SeqNumTest {
    @Test
    void comparisonsWorkAcrossTheWrap() {
        assertTrue(SeqNum.lt(0xFFFF_FFF0, 0x10));
        assertTrue(SeqNum.gt(0x10, 0xFFFF_FFF0));
        assertTrue(SeqNum.inWindow(0x5, 0xFFFF_FFF0, 0x100));
        assertFalse(SeqNum.inWindow(0x100, 0xFFFF_FFF0, 0x100));
        assertFalse(SeqNum.inWindow(7, 7, 0));
        assertTrue(SeqNum.between(0, -1, 1));
    }

    @Test
    void orderIsConsistentForNumbersLessThanHalfTheSpaceApart() {
        qt().forAll(integers().all(), integers().between(1, Integer.MAX_VALUE)).checkAssert((a, d) -> {
            final int b = a + d;
            assertTrue(SeqNum.lt(a, b) && SeqNum.le(a, b) && SeqNum.gt(b, a) && SeqNum.ge(b, a));
            assertFalse(SeqNum.lt(b, a) || SeqNum.gt(a, b));
            assertTrue(SeqNum.max(a, b) == b && SeqNum.min(a, b) == a);
            assertTrue(SeqNum.diff(b, a) == d);
        });
    }

    @Test
    void comparisonIsIrreflexiveAndTranslationInvariant() {
        qt().forAll(integers().all(), integers().all(), integers().all()).checkAssert((a, b, shift) -> {
            assertFalse(SeqNum.lt(a, a));
            assertTrue(SeqNum.le(a, a));
            if (a - b != Integer.MIN_VALUE) {
                assertTrue(SeqNum.lt(a, b) == SeqNum.lt(a + shift, b + shift));
                assertTrue(SeqNum.lt(a, b) != SeqNum.ge(a, b));
            }
        });
    }

    @Test
    void inWindowMatchesTheTwoComparisons() {
        qt().forAll(integers().all(), integers().all(), integers().between(0, Integer.MAX_VALUE)).checkAssert(
            (x, start, size) -> {
                final long offset = Integer.toUnsignedLong(x - start);
                assertTrue(SeqNum.inWindow(x, start, size) == (offset < size));
                if (size > 0 && offset < size) {
                    assertTrue(SeqNum.le(start, x) && SeqNum.lt(x, start + size) || size == Integer.MAX_VALUE);
                }
            });
    }
}
