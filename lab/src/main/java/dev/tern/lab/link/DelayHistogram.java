package dev.tern.lab.link;

/**
 * A histogram of durations in microseconds with fixed buckets: exact below 1024 us, then 512 buckets per power of
 * two (a bucket is at most 0.2 % wide). Recording is an array increment: no allocation per sample.
 */
public final class DelayHistogram {
    private static final int LINEAR = 1024;
    private static final int SUB_BUCKETS = 512;
    private static final int SHIFTS = 40;
    private final long[] counts = new long[LINEAR + SHIFTS * SUB_BUCKETS];
    private long total;
    private long sumUs;
    private long maxUs;

    public void recordNs(long ns) {
        final long us = Math.max(0, ns / 1000);
        counts[index(us)]++;
        total++;
        sumUs += us;
        maxUs = Math.max(maxUs, us);
    }

    static int index(long us) {
        if (us < LINEAR) {
            return (int) us;
        }
        final int shift = Math.min(SHIFTS, 63 - Long.numberOfLeadingZeros(us) - 9);
        final long sub = Math.min(SUB_BUCKETS - 1, (us >> shift) - SUB_BUCKETS);
        return LINEAR + (shift - 1) * SUB_BUCKETS + (int) sub;
    }

    static long lowerBoundUs(int index) {
        if (index < LINEAR) {
            return index;
        }
        final int shift = (index - LINEAR) / SUB_BUCKETS + 1;
        final int sub = (index - LINEAR) % SUB_BUCKETS;
        return (long) (SUB_BUCKETS + sub) << shift;
    }

    /** The smallest recorded bucket below which a share {@code q} (0..1) of samples lie, in microseconds. */
    public long quantileUs(double q) {
        if (total == 0) {
            return 0;
        }
        final long rank = Math.max(1, (long) Math.ceil(q * total));
        long seen = 0;
        for (int i = 0; i < counts.length; i++) {
            seen += counts[i];
            if (seen >= rank) {
                return lowerBoundUs(i);
            }
        }
        return maxUs;
    }

    public long count() {
        return total;
    }

    public long meanUs() {
        return total == 0 ? 0 : sumUs / total;
    }

    public long maxUs() {
        return maxUs;
    }
}
