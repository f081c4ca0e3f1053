package dev.tern.core.memory;

import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class FlyweightTest {
    /** A made-up 8-byte header: a 16-bit field, a 48-bit field. */
    static final class Sample extends Flyweight {
        Sample wrap(MemorySegment segment, long base, int limit) {
            wrapWindow(segment, base, limit);
            return this;
        }

        int kind() {
            return u16(0);
        }

        long mac() {
            return u48(2);
        }

        void mac(long value) {
            u48(2, value);
        }
    }

    @Test
    void readsAndWritesBigEndianFieldsInsideTheWindow() {
        final byte[] bytes = {(byte) 0xA5, 0x08, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01, (byte) 0xA5};
        final Sample sample = new Sample().wrap(MemorySegment.ofArray(bytes), 1, 8);
        assertEquals(0x0800, sample.kind());
        assertEquals(0x0200_0000_0001L, sample.mac());
        sample.mac(0x0a0b_0c0d_0e0fL);
        assertEquals(0x0a, bytes[3]);
        assertEquals(0x0f, bytes[8]);
        assertEquals((byte) 0xA5, bytes[9], "byte after the window untouched");
    }

    @Test
    void refusesFieldsBeyondTheFrameEvenWhenTheSegmentIsLarger() {
        final MemorySegment slab = MemorySegment.ofArray(new byte[4096]);
        final Sample sample = new Sample().wrap(slab, 0, 5);
        assertEquals(0, sample.kind());
        assertThrows(IndexOutOfBoundsException.class, sample::mac);
        assertThrows(IndexOutOfBoundsException.class, () -> sample.mac(1));
    }
}
