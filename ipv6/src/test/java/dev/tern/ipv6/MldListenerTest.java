package dev.tern.ipv6;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

class MldListenerTest {
    /** RFC 3810 §5.1.3: below 32768 the code is milliseconds; above, (mant | 0x1000) << (exp + 3). */
    @Test
    void decodesTheMaximumResponseCode() {
        assertEquals(0, MldListener.maxResponseDelayMs(0));
        assertEquals(10_000, MldListener.maxResponseDelayMs(10_000));
        assertEquals(32_767, MldListener.maxResponseDelayMs(32_767));
        assertEquals(0x1000 << 3, MldListener.maxResponseDelayMs(0x8000));
        assertEquals((0xfffL | 0x1000) << 10, MldListener.maxResponseDelayMs(0xffff));
    }
}
