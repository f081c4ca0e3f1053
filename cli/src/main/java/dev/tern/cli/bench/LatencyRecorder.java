package dev.tern.cli.bench;

import java.util.Arrays;

/** Round-trip samples in a preallocated array (nothing allocated while recording); percentiles on demand. */
public final class LatencyRecorder {
    private final long[] samples;
    private int count;

    public LatencyRecorder(int capacity) {
        this.samples = new long[capacity];
    }

    public void record(long nanos) {
        if (count < samples.length) {
            samples[count++] = nanos;
        }
    }

    public int count() {
        return count;
    }

    public void reset() {
        count = 0;
    }

    /** The {@code percentile} (0..100) in microseconds. */
    public double percentileMicros(double percentile) {
        if (count == 0) {
            return Double.NaN;
        }
        final long[] sorted = Arrays.copyOf(samples, count);
        Arrays.sort(sorted);
        final int index = (int) Math.min(count - 1, Math.ceil(percentile / 100.0 * count) - 1);
        return sorted[Math.max(0, index)] / 1000.0;
    }
}
