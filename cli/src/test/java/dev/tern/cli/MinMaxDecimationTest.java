package dev.tern.cli;

import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.longs;

class MinMaxDecimationTest {
    @Test
    void aSeriesOfAtMostTwoPointsPerBucketIsLeftAsItIs() {
        final double[] x = {0, 1, 2, 3, 4, 5};
        final double[] y = {5, 1, 4, Double.NaN, 2, 3};
        final MinMaxDecimation.Points points = MinMaxDecimation.reduce(x, y, 3);
        assertArrayEquals(x, points.x());
        assertArrayEquals(y, points.y());
    }

    @Test
    void aOneSampleSpikeAndDipAmongAMillionPointsSurvive() {
        final int n = 1_000_000;
        final double[] x = new double[n];
        final double[] y = new double[n];
        for (int i = 0; i < n; i++) {
            x[i] = i * 1e-4;
            y[i] = 100 + (i % 7);
        }
        y[543_210] = 10_000;
        y[876_543] = -3;
        final MinMaxDecimation.Points points = MinMaxDecimation.reduce(x, y, 2000);
        assertTrue(points.size() <= 4000, "points: " + points.size());
        assertTrue(contains(points, x[543_210], 10_000), "spike kept");
        assertTrue(contains(points, x[876_543], -3), "dip kept");
    }

    @Test
    void aBucketWithoutValuesKeepsItsGap() {
        final int n = 10_000;
        final double[] x = new double[n];
        final double[] y = new double[n];
        for (int i = 0; i < n; i++) {
            x[i] = i;
            y[i] = i >= 4000 && i < 6000 ? Double.NaN : i % 10;
        }
        final MinMaxDecimation.Points points = MinMaxDecimation.reduce(x, y, 100);
        final long gaps = Arrays.stream(points.y()).filter(Double::isNaN).count();
        assertEquals(20, gaps, "one NaN for each of the 20 buckets inside the gap");
    }

    @Test
    void sameTimeEverywhereIsOneBucket() {
        final double[] x = new double[100];
        final double[] y = new double[100];
        for (int i = 0; i < 100; i++) {
            y[i] = (i * 37) % 100;
        }
        final MinMaxDecimation.Points points = MinMaxDecimation.reduce(x, y, 10);
        assertArrayEquals(new double[] {0, 99}, points.y());
    }

    @Test
    void decreasingXIsRefused() {
        final double[] x = new double[100];
        for (int i = 0; i < 100; i++) {
            x[i] = i == 80 ? 0 : i;
        }
        assertThrows(IllegalArgumentException.class, () -> MinMaxDecimation.reduce(x, new double[100], 10));
    }

    /**
     * For any series: at most two points per bucket, every point one of the input's, in the input's order, and each
     * bucket's lowest and highest value kept.
     */
    @Test
    void keepsEachBucketsExtremesInOrderAndNothingElse() {
        qt().forAll(longs().all(), integers().between(1, 5000), integers().between(1, 200)).checkAssert((seed, n, buckets) -> {
            final SplittableRandom random = new SplittableRandom(seed);
            final double[] x = new double[n];
            final double[] y = new double[n];
            double time = random.nextInt(1000);
            for (int i = 0; i < n; i++) {
                time += random.nextInt(4) == 0 ? 0 : random.nextDouble() * 10;
                x[i] = time;
                y[i] = random.nextInt(20) == 0 ? Double.NaN : random.nextInt(-1000, 1000);
            }
            final MinMaxDecimation.Points points = MinMaxDecimation.reduce(x, y, buckets);
            assertTrue(points.size() <= Math.max(n, 2 * buckets), "seed " + seed);
            int from = 0;
            for (int p = 0; p < points.size(); p++) {
                int i = from;
                while (i < n && !(x[i] == points.x()[p] && Double.compare(y[i], points.y()[p]) == 0)) {
                    i++;
                }
                assertTrue(i < n, "seed " + seed + ": point " + p + " is not an input point after index " + from);
                from = i + 1;
            }
            if (n > 2 * buckets) {
                final double span = x[n - 1] - x[0];
                final double[][] input = extremes(x, y, x[0], span, buckets);
                final double[][] kept = extremes(points.x(), points.y(), x[0], span, buckets);
                assertArrayEquals(input[0], kept[0], "lowest per bucket, seed " + seed);
                assertArrayEquals(input[1], kept[1], "highest per bucket, seed " + seed);
            }
        });
    }

    /** The lowest and the highest value in each bucket, NaN for a bucket without values. */
    private static double[][] extremes(double[] x, double[] y, double first, double span, int buckets) {
        final double[] min = new double[buckets];
        final double[] max = new double[buckets];
        Arrays.fill(min, Double.NaN);
        Arrays.fill(max, Double.NaN);
        for (int i = 0; i < x.length; i++) {
            if (!Double.isNaN(y[i])) {
                final int b = bucket(x[i], first, span, buckets);
                min[b] = Double.isNaN(min[b]) ? y[i] : Math.min(min[b], y[i]);
                max[b] = Double.isNaN(max[b]) ? y[i] : Math.max(max[b], y[i]);
            }
        }
        return new double[][] {min, max};
    }

    private static int bucket(double x, double first, double span, int buckets) {
        return span > 0 ? Math.min(buckets - 1, (int) ((x - first) / span * buckets)) : 0;
    }

    private static boolean contains(MinMaxDecimation.Points points, double x, double y) {
        for (int p = 0; p < points.size(); p++) {
            if (points.x()[p] == x && points.y()[p] == y) {
                return true;
            }
        }
        return false;
    }
}
