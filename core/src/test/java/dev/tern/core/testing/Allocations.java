package dev.tern.core.testing;

import java.lang.management.ManagementFactory;

/**
 * Measures bytes allocated by the current thread ({@code com.sun.management.ThreadMXBean}), for the zero-allocation
 * tests every layer has: warm up, then assert that a million more operations allocate nothing.
 */
public final class Allocations {
    private static final com.sun.management.ThreadMXBean THREADS =
        (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

    private Allocations() {
    }

    public static long allocatedBytes() {
        return THREADS.getCurrentThreadAllocatedBytes();
    }

    /**
     * Runs {@code body} {@code warmup} times, then measures up to three windows of {@code measured} runs and
     * returns the bytes allocated by the best window (stopping at the first that allocates nothing).
     *
     * <p>Why the best of three: a JIT compilation that finishes during a window can leave a one-off allocation in
     * it (code that ran interpreted or in C1, before escape analysis). An allocation per operation cannot hide
     * this way: it shows in every window, at least {@code measured} bytes each.
     */
    public static long measure(int warmup, int measured, Runnable body) {
        for (int i = 0; i < warmup; i++) {
            body.run();
        }
        long best = Long.MAX_VALUE;
        for (int window = 0; window < 3 && best != 0; window++) {
            final long before = allocatedBytes();
            for (int i = 0; i < measured; i++) {
                body.run();
            }
            best = Math.min(best, allocatedBytes() - before);
        }
        return best;
    }
}
