package dev.tern.lab.link;

/** What the bottleneck did with frames, by cause. Plain fields: written per frame by the one owning thread. */
public final class BottleneckStats {
    /** Frames that reached the bottleneck. */
    public long arrived;
    /** Dropped by the random loss model before the queue. */
    public long randomLoss;
    /** Dropped because the queue was full (tail drop, or FQ-CoDel's drop from the fattest flow). */
    public long overflowDrops;
    /** Dropped by the discipline's control law (CoDel, PIE, DualPI2). */
    public long aqmDrops;
    /** Marked CE by the discipline instead of dropped. */
    public long aqmMarks;
    /** Marked CE by a drop-tail queue's threshold (DCTCP's step marking). */
    public long thresholdMarks;
    /** Dropped for want of a frame buffer in the lab. */
    public long noBuffer;
    /** Frames that left the link, and their bytes. */
    public long departed;
    public long departedBytes;

    public long drops() {
        return randomLoss + overflowDrops + aqmDrops + noBuffer;
    }

    public long marks() {
        return aqmMarks + thresholdMarks;
    }
}
