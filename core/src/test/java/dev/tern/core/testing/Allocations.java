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

    /** Runs {@code body} {@code warmup} times, then {@code measured} times; returns bytes allocated by the measured runs. */
    public static long measure(int warmup, int measured, Runnable body) {
        for (int i = 0; i < warmup; i++) {
            body.run();
        }
        final long before = allocatedBytes();
        for (int i = 0; i < measured; i++) {
            body.run();
        }
        return allocatedBytes() - before;
    }
}
