package dev.tern.ethernet.memory;

/**
 * Frames on their way to one port, ordered by arrival time and then by send order: a binary min-heap over parallel
 * primitive arrays, so queueing a frame allocates nothing. Capacity is the wire's buffer count, which bounds the
 * frames that can exist at all.
 *
 * <p>Guarded by the owning {@link MemoryWire}.
 */
final class DeliveryQueue {
    private final long[] arrivalNs;
    private final long[] sequence;
    private final int[] buffer;
    private final int[] length;
    private final int[] flags;
    private int size;

    DeliveryQueue(int capacity) {
        arrivalNs = new long[capacity];
        sequence = new long[capacity];
        buffer = new int[capacity];
        length = new int[capacity];
        flags = new int[capacity];
    }

    int size() {
        return size;
    }

    long earliest() {
        return size == 0 ? Long.MAX_VALUE : arrivalNs[0];
    }

    boolean offer(long atNs, long seq, int frameBuffer, int frameLength, int frameFlags) {
        if (size == arrivalNs.length) {
            return false;
        }
        int child = size++;
        while (child > 0) {
            final int parent = (child - 1) >>> 1;
            if (!before(atNs, seq, arrivalNs[parent], sequence[parent])) {
                break;
            }
            move(parent, child);
            child = parent;
        }
        set(child, atNs, seq, frameBuffer, frameLength, frameFlags);
        return true;
    }

    /** Moves up to {@code max} frames due at {@code nowNs} into the port's receive batch, in order; returns how many. */
    int takeDue(long nowNs, int max, MemoryLink port) {
        int taken = 0;
        while (taken < max && size > 0 && arrivalNs[0] - nowNs <= 0) {
            port.batchBuffers[taken] = buffer[0];
            port.batchLengths[taken] = length[0];
            port.batchFlags[taken] = flags[0];
            taken++;
            removeHead();
        }
        port.batchSize = taken;
        return taken;
    }

    /** Hands every queued buffer to {@code sink} and empties the queue (port closing). */
    void drain(java.util.function.IntConsumer sink) {
        for (int i = 0; i < size; i++) {
            sink.accept(buffer[i]);
        }
        size = 0;
    }

    private void removeHead() {
        final int last = --size;
        if (last == 0) {
            return;
        }
        final long atNs = arrivalNs[last];
        final long seq = sequence[last];
        final int b = buffer[last];
        final int l = length[last];
        final int f = flags[last];
        int parent = 0;
        while (true) {
            int child = 2 * parent + 1;
            if (child >= last) {
                break;
            }
            if (child + 1 < last && before(arrivalNs[child + 1], sequence[child + 1], arrivalNs[child], sequence[child])) {
                child++;
            }
            if (!before(arrivalNs[child], sequence[child], atNs, seq)) {
                break;
            }
            move(child, parent);
            parent = child;
        }
        set(parent, atNs, seq, b, l, f);
    }

    private static boolean before(long aNs, long aSeq, long bNs, long bSeq) {
        final long difference = aNs - bNs;
        return difference < 0 || (difference == 0 && aSeq < bSeq);
    }

    private void move(int from, int to) {
        set(to, arrivalNs[from], sequence[from], buffer[from], length[from], flags[from]);
    }

    private void set(int index, long atNs, long seq, int frameBuffer, int frameLength, int frameFlags) {
        arrivalNs[index] = atNs;
        sequence[index] = seq;
        buffer[index] = frameBuffer;
        length[index] = frameLength;
        flags[index] = frameFlags;
    }
}
