package dev.tern.lab.link;

/**
 * Several first-in first-out queues of frame slots threaded through one array of next pointers, one cell per slot,
 * with the frames and bytes each holds: the storage under disciplines with more than one queue (FQ-CoDel's flow
 * queues, DualPI2's two) or with a control law that pops from the head (CoDel). A slot is in at most one queue.
 * Nothing is allocated after construction.
 */
final class SlotQueues {
    private final int[] next;
    private final int[] head;
    private final int[] tail;
    private final int[] size;
    private final long[] bytes;
    private int totalSize;
    private long totalBytes;

    SlotQueues(int slotCapacity, int queues) {
        this.next = new int[slotCapacity];
        this.head = new int[queues];
        this.tail = new int[queues];
        this.size = new int[queues];
        this.bytes = new long[queues];
        java.util.Arrays.fill(head, -1);
        java.util.Arrays.fill(tail, -1);
    }

    void push(int queue, int slot, int length) {
        next[slot] = -1;
        if (tail[queue] < 0) {
            head[queue] = slot;
        } else {
            next[tail[queue]] = slot;
        }
        tail[queue] = slot;
        size[queue]++;
        bytes[queue] += length;
        totalSize++;
        totalBytes += length;
    }

    /** The oldest slot of {@code queue}, or -1 when it is empty. */
    int peek(int queue) {
        return head[queue];
    }

    /** Takes the oldest slot of a queue that is not empty; {@code length} is its frame's. */
    int pop(int queue, int length) {
        final int slot = head[queue];
        head[queue] = next[slot];
        if (head[queue] < 0) {
            tail[queue] = -1;
        }
        size[queue]--;
        bytes[queue] -= length;
        totalSize--;
        totalBytes -= length;
        return slot;
    }

    int size(int queue) {
        return size[queue];
    }

    long bytes(int queue) {
        return bytes[queue];
    }

    int queues() {
        return head.length;
    }

    int totalSize() {
        return totalSize;
    }

    long totalBytes() {
        return totalBytes;
    }
}
