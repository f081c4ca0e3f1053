package dev.tern.cli;

import java.util.Arrays;

/**
 * Thins a series for drawing without losing its spikes: the x range is cut into equal buckets, and each bucket keeps
 * only its lowest and its highest point, in their original order. A chart a few thousand pixels wide then looks the
 * same as with every point, because within one bucket the line would only have gone up and down in the same pixel
 * column. NaN marks a gap (no value); a bucket with no value keeps one NaN so the gap stays visible.
 */
final class MinMaxDecimation {
    private MinMaxDecimation() {
    }

    /** A series as drawn: {@code x.length == y.length}. */
    record Points(double[] x, double[] y) {
        int size() {
            return x.length;
        }
    }

    /**
     * At most {@code 2 * buckets} points of ({@code x}, {@code y}); the series unchanged when it is no longer than
     * that. {@code x} must never decrease.
     */
    static Points reduce(double[] x, double[] y, int buckets) {
        if (x.length != y.length || buckets < 1) {
            throw new IllegalArgumentException("x and y differ in length or no buckets");
        }
        final int n = x.length;
        if (n <= 2 * buckets) {
            return new Points(x.clone(), y.clone());
        }
        final double first = x[0];
        final double span = x[n - 1] - first;
        final double[] outX = new double[2 * buckets];
        final double[] outY = new double[2 * buckets];
        int out = 0;
        int start = 0;
        int previousBucket = -1;
        while (start < n) {
            final int bucket = bucket(x[start], first, span, buckets);
            if (bucket <= previousBucket) {
                throw new IllegalArgumentException("x decreases at index " + start);
            }
            previousBucket = bucket;
            int end = start + 1;
            while (end < n && bucket(x[end], first, span, buckets) == bucket) {
                end++;
            }
            int min = -1;
            int max = -1;
            for (int i = start; i < end; i++) {
                if (Double.isNaN(y[i])) {
                    continue;
                }
                if (min < 0 || y[i] < y[min]) {
                    min = i;
                }
                if (max < 0 || y[i] > y[max]) {
                    max = i;
                }
            }
            if (min < 0) {
                outX[out] = x[start];
                outY[out++] = Double.NaN;
            } else {
                final int earlier = Math.min(min, max);
                final int later = Math.max(min, max);
                outX[out] = x[earlier];
                outY[out++] = y[earlier];
                if (later != earlier) {
                    outX[out] = x[later];
                    outY[out++] = y[later];
                }
            }
            start = end;
        }
        return new Points(Arrays.copyOf(outX, out), Arrays.copyOf(outY, out));
    }

    private static int bucket(double x, double first, double span, int buckets) {
        return span > 0 ? Math.min(buckets - 1, (int) ((x - first) / span * buckets)) : 0;
    }
}
