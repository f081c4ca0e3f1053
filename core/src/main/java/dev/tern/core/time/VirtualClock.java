package dev.tern.core.time;

/**
 * Time that moves only when a test or simulation advances it, which makes a whole network of stacks deterministic.
 * Its epoch is the Unix epoch, so captures taken on virtual time start at 1970-01-01 plus the virtual time.
 *
 * <p>Owned by the simulation thread; not thread-safe.
 */
public final class VirtualClock implements Clock {
    private long nowNs;

    public VirtualClock() {
        this(0);
    }

    public VirtualClock(long startNs) {
        this.nowNs = startNs;
    }

    @Override
    public long nanoTime() {
        return nowNs;
    }

    @Override
    public long epochNanos(long nanoTime) {
        return nanoTime;
    }

    /** Moves time forward by {@code deltaNs} (not negative). */
    public void advance(long deltaNs) {
        if (deltaNs < 0) {
            throw new IllegalArgumentException("virtual time cannot go back: " + deltaNs + " ns");
        }
        nowNs += deltaNs;
    }

    /** Moves time forward to {@code timeNs}; a time in the past is ignored, so time never goes back. */
    public void advanceTo(long timeNs) {
        if (timeNs - nowNs > 0) {
            nowNs = timeNs;
        }
    }
}
