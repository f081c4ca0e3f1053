package dev.tern.stack;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.HexFormat;

/**
 * The first bytes of the last frame a shard dropped as another shard's, for
 * diagnosing a steering disagreement: the counter says how often, this says what. Written by the shard's thread
 * into a fixed array (no allocation); read by anyone, racily (a diagnostic, not data).
 */
final class WrongShardSample {
    private static final int BYTES = 64;
    private final byte[] bytes = new byte[BYTES];
    private volatile int length = -1;
    private volatile int totalLength;

    void record(MemorySegment segment, long offset, int frameLength) {
        final int n = Math.min(BYTES, frameLength);
        MemorySegment.copy(segment, ValueLayout.JAVA_BYTE, offset, bytes, 0, n);
        totalLength = frameLength;
        length = n;
    }

    /** "none", or the length and the first bytes in hex of the last one dropped. */
    String describe() {
        final int n = length;
        return n < 0 ? "none" : totalLength + " bytes: " + HexFormat.of().formatHex(bytes, 0, n);
    }
}
