package dev.tern.core.time;

/**
 * Something driven by polling: a stack, or a stack-like fixture in tests. A scheduler that owns virtual time (see
 * {@code ethernet.memory.VirtualTimeLoop}) polls it until it is idle and then asks when it next wants a turn.
 */
public interface Pollable {
    /** Runs one turn at {@code nowNs}; returns the amount of work done, 0 when idle. */
    int poll(long nowNs);

    /** The earliest time this has something to do without new input (its next timer, say). */
    long pollAt();
}
