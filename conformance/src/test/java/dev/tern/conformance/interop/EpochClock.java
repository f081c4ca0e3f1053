package dev.tern.conformance.interop;

import dev.tern.core.time.Clock;

/**
 * Real time whose readings are nanoseconds since the Unix epoch ({@link System#nanoTime()} anchored to the wall clock
 * once, to the nanosecond {@link java.time.Instant} gives). A stack recorded on this clock reads the same time as the
 * capture's timestamps, so its replay on a {@code VirtualClock} that runs on the capture's time reproduces what depends
 * on absolute time: TCP timestamp values (RFC 7323: milliseconds plus a per-connection offset). Thread-safe.
 */
final class EpochClock implements Clock {
    private final long offsetNs;

    EpochClock() {
        this.offsetNs = VethRig.epochNowNs() - System.nanoTime();
    }

    @Override
    public long nanoTime() {
        return System.nanoTime() + offsetNs;
    }

    @Override
    public long epochNanos(long nanoTime) {
        return nanoTime;
    }
}
