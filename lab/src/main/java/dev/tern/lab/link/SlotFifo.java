package dev.tern.lab.link;

/** A first-in first-out ring of frame slots with the bytes they hold: the storage under every discipline. */
final class SlotFifo {
    private final int[] ring;
    private final int mask;
    private int head;
    private int size;
    private long bytes;

    SlotFifo(int capacity) {
        final int rounded = Integer.highestOneBit(Math.max(1, capacity - 1)) << 1;
        this.ring = new int[rounded];
        this.mask = rounded - 1;
    }

    boolean push(int slot, int length) {
        if (size == ring.length) {
            return false;
        }
        ring[(head + size) & mask] = slot;
        size++;
        bytes += length;
        return true;
    }

    /** The oldest slot, or -1 when empty. */
    int peek() {
        return size == 0 ? -1 : ring[head];
    }

    int pop(int length) {
        final int slot = ring[head];
        head = (head + 1) & mask;
        size--;
        bytes -= length;
        return slot;
    }

    int size() {
        return size;
    }

    long bytes() {
        return bytes;
    }
}
