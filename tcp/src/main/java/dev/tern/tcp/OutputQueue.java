package dev.tern.tcp;

import static dev.tern.tcp.TcpControlBlocks.F_ACK_NOW;

/**
 * Connections to serve at the layer's next poll, each once however many segments or calls asked: a batch of in-order
 * segments gets one ACK (RFC 9293 §3.8.6.3 lets a receiver hold ACKs back; RFC 5681 §4.2 asks for at least one every
 * second full segment, which one pass per poll gives). A ring of slots with a queued flag per slot.
 *
 * <p>Owned by the shard thread; not thread-safe. Nothing here allocates.
 */
final class OutputQueue {
    private final TcpControlBlocks tcb;
    private final int[] queue;
    private final boolean[] queued;
    private int head;
    private int count;

    OutputQueue(TcpControlBlocks tcb) {
        this.tcb = tcb;
        this.queue = new int[tcb.capacity()];
        this.queued = new boolean[tcb.capacity()];
    }

    /** Serve this connection's output at the next poll. */
    void request(int c) {
        if (!queued[c]) {
            queued[c] = true;
            queue[(head + count) % queue.length] = c;
            count++;
        }
    }

    /** An ACK must go out at the next poll. */
    void ackNow(int c) {
        tcb.setFlag(c, F_ACK_NOW);
        request(c);
    }

    /** Connections queued now: a poll serves these, not those its own output queues again. */
    int size() {
        return count;
    }

    /** The oldest queued connection, out of the queue (the caller checks it is still allocated). */
    int take() {
        final int c = queue[head];
        head = (head + 1) % queue.length;
        count--;
        queued[c] = false;
        return c;
    }
}
