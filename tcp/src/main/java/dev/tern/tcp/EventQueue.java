package dev.tern.tcp;

import static dev.tern.tcp.TcpControlBlocks.EV_CLOSED;
import static dev.tern.tcp.TcpControlBlocks.EV_COMPLETED;
import static dev.tern.tcp.TcpControlBlocks.EV_ESTABLISHED;
import static dev.tern.tcp.TcpControlBlocks.EV_READABLE;
import static dev.tern.tcp.TcpControlBlocks.EV_WRITABLE;
import static dev.tern.tcp.TcpControlBlocks.F_CLOSED_SIGNALLED;
import static dev.tern.tcp.TcpControlBlocks.F_OWNED;
import static dev.tern.tcp.TcpControlBlocks.F_RELEASED;

/**
 * Each connection's owner ({@link TcpEvents}) and the events queued for it: input and timers set bits in the row's
 * {@code events}, the layer's poll delivers them after the input, so an application's reply can carry the ACK.
 * Events are only queued for an owned handle its owner has not closed.
 *
 * <p>Owned by the shard thread; not thread-safe. Nothing here allocates.
 */
final class EventQueue {
    private final TcpControlBlocks tcb;
    private final TcpEvents[] owners;
    private final int[] queue;
    private final boolean[] queued;
    private int head;
    private int count;

    EventQueue(TcpControlBlocks tcb) {
        this.tcb = tcb;
        this.owners = new TcpEvents[tcb.capacity()];
        this.queue = new int[tcb.capacity()];
        this.queued = new boolean[tcb.capacity()];
    }

    /** Who hears of the connection's events from now on (null when its row is freed). */
    void owner(int c, TcpEvents events) {
        owners[c] = events;
    }

    /** Queues an event for the connection's owner (only for an owned, unreleased handle). */
    void signal(int c, int event) {
        if ((tcb.flags(c) & (F_OWNED | F_RELEASED)) != F_OWNED) {
            return;
        }
        tcb.events(c, tcb.events(c) | event);
        if (!queued[c]) {
            queued[c] = true;
            queue[(head + count) % queue.length] = c;
            count++;
        }
    }

    /** The connection ended: its owner hears it once. */
    void signalClosed(int c) {
        if (!tcb.hasFlag(c, F_CLOSED_SIGNALLED)) {
            tcb.setFlag(c, F_CLOSED_SIGNALLED);
            signal(c, EV_CLOSED);
        }
    }

    /** Delivers what is queued, oldest connection first; returns how many events went out. */
    int deliver() {
        int delivered = 0;
        while (count > 0) {
            final int c = queue[head];
            head = (head + 1) % queue.length;
            count--;
            queued[c] = false;
            final int events = tcb.events(c);
            tcb.events(c, 0);
            delivered += deliver(c, tcb.handle(c), events);
        }
        return delivered;
    }

    /** Each event only while the handle still names this row: an owner's callback may close it. */
    private int deliver(int c, int handle, int events) {
        int delivered = 0;
        if ((events & EV_ESTABLISHED) != 0 && tcb.ownedSlot(handle) == c) {
            owners[c].established(handle);
            delivered++;
        }
        if ((events & EV_READABLE) != 0 && tcb.ownedSlot(handle) == c) {
            owners[c].readable(handle);
            delivered++;
        }
        if ((events & EV_WRITABLE) != 0 && tcb.ownedSlot(handle) == c) {
            owners[c].writable(handle);
            delivered++;
        }
        if ((events & EV_COMPLETED) != 0 && tcb.ownedSlot(handle) == c) {
            owners[c].sendsCompleted(handle);
            delivered++;
        }
        if ((events & EV_CLOSED) != 0 && tcb.ownedSlot(handle) == c) {
            owners[c].closed(handle, tcb.error(c));
            delivered++;
        }
        return delivered;
    }
}
