package dev.tern.core.memory;

import java.lang.foreign.MemorySegment;

/**
 * Copies bytes into a segment used as a circle: a benchmark's stand-in for an application that consumes what it
 * receives (the bytes are touched once, as a real reader's would be, then overwritten). Allocates nothing.
 */
public final class WrappingCopy {
    private WrappingCopy() {
    }

    /**
     * Copies {@code length} bytes of {@code source} from {@code offset} into {@code circle} starting at {@code at},
     * wrapping at its end as often as needed; returns where the next copy starts.
     */
    public static long copy(MemorySegment source, long offset, int length, MemorySegment circle, long at) {
        int done = 0;
        while (done < length) {
            final int piece = (int) Math.min(length - done, circle.byteSize() - at);
            MemorySegment.copy(source, offset + done, circle, at, piece);
            done += piece;
            at = (at + piece) % circle.byteSize();
        }
        return at;
    }
}
