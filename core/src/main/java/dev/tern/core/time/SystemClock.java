package dev.tern.core.time;

/** Real time: {@link System#nanoTime()}, anchored to the wall clock once at start-up. Thread-safe. */
public final class SystemClock implements Clock {
    public static final SystemClock INSTANCE = new SystemClock();

    private final long epochOffsetNs;

    private SystemClock() {
        final long wallNs = System.currentTimeMillis() * 1_000_000L;
        epochOffsetNs = wallNs - System.nanoTime();
    }

    @Override
    public long nanoTime() {
        return System.nanoTime();
    }

    @Override
    public long epochNanos(long nanoTime) {
        return nanoTime + epochOffsetNs;
    }
}
