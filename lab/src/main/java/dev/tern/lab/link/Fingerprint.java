package dev.tern.lab.link;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * A 64-bit hash of a sequence of frames and numbers, order-sensitive: two runs agree on it only if every frame left
 * the bottleneck at the same instant with the same bytes. Not cryptographic; a regression pin, as INET's fingerprint
 * tests use one. Reads the frame eight bytes at a time: no allocation.
 */
public final class Fingerprint {
    private static final long MULTIPLIER = 0x9E3779B97F4A7C15L;
    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED;
    private long state = 0x243F6A8885A308D3L;

    public void frame(long atNs, MemorySegment slab, long offset, int length) {
        add(atNs);
        add(length);
        int i = 0;
        for (; i + 8 <= length; i += 8) {
            add(slab.get(LONG, offset + i));
        }
        long tail = 0;
        for (; i < length; i++) {
            tail = tail << 8 | (slab.get(ValueLayout.JAVA_BYTE, offset + i) & 0xFF);
        }
        add(tail);
    }

    public void add(long value) {
        long h = (state ^ value) * MULTIPLIER;
        state = h ^ (h >>> 29);
    }

    public void add(String text) {
        for (int i = 0; i < text.length(); i++) {
            add(text.charAt(i));
        }
    }

    public long value() {
        return state;
    }

    /** The value as 16 hex digits. */
    public String hex() {
        return String.format("%016x", state);
    }
}
