package dev.tern.lab.link;

/**
 * Frames in flight on a wire of fixed propagation delay: first in, first out, each with the instant it arrives. A
 * ring of slots and due times, allocated once.
 */
public final class DelayLine {
    private final int[] slots;
    private final long[] dueNs;
    private final int mask;
    private final long delayNs;
    private int head;
    private int size;

    public DelayLine(int capacity, long delayNs) {
        final int rounded = Integer.highestOneBit(Math.max(1, capacity - 1)) << 1;
        this.slots = new int[rounded];
        this.dueNs = new long[rounded];
        this.mask = rounded - 1;
        this.delayNs = delayNs;
    }

    /** Puts a frame that entered the wire at {@code sentNs} on it; false when the line is full. */
    public boolean push(int slot, long sentNs) {
        if (size == slots.length) {
            return false;
        }
        final int at = (head + size) & mask;
        slots[at] = slot;
        dueNs[at] = sentNs + delayNs;
        size++;
        return true;
    }

    /** When the oldest frame arrives, or {@link Long#MAX_VALUE} when the line is empty. */
    public long headDueNs() {
        return size == 0 ? Long.MAX_VALUE : dueNs[head];
    }

    public int pop() {
        final int slot = slots[head];
        head = (head + 1) & mask;
        size--;
        return slot;
    }

    public int size() {
        return size;
    }

    public long delayNs() {
        return delayNs;
    }
}
