package dev.tern.lab;

/**
 * One stream of cross traffic: UDP frames of {@code frameBytes} (Ethernet frame bytes) at a constant {@code rateBps}
 * of those bytes, from {@code startNs} for {@code durationNs} (0: to the end), with ECN codepoint {@code ecn}. It does
 * not answer congestion: the unresponsive traffic FQ-CoDel and the AQMs are measured against.
 */
public record UdpSpec(long rateBps, int frameBytes, long startNs, long durationNs, int ecn) {
    public static final int MIN_FRAME = 14 + 20 + 8;
    public static final int MAX_FRAME = 1514;

    public UdpSpec {
        if (rateBps <= 0 || frameBytes < MIN_FRAME || frameBytes > MAX_FRAME || startNs < 0 || durationNs < 0
            || ecn < 0 || ecn > 3) {
            throw new IllegalArgumentException("UDP cross traffic needs a positive rate, a frame of " + MIN_FRAME
                + " to " + MAX_FRAME + " bytes, a start and duration not negative and an ECN codepoint");
        }
    }

    /** The gap between two frames' starts. */
    long gapNs() {
        return Math.max(1, frameBytes * 8L * 1_000_000_000L / rateBps);
    }
}
