package dev.tern.core.time;

/**
 * The time source of a stack. Protocol code never reads the system clock itself: a shard reads its clock once per
 * poll and passes {@code nowNs} down, so the same code runs on real time or on a {@link VirtualClock}.
 */
public interface Clock {
    /** Monotonic time in nanoseconds; only differences are meaningful. */
    long nanoTime();

    /** Wall-clock time (nanoseconds since the Unix epoch) that corresponds to {@code nanoTime}; used for pcap timestamps. */
    long epochNanos(long nanoTime);
}
