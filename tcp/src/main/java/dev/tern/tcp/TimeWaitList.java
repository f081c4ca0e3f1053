package dev.tern.tcp;

import static dev.tern.tcp.TcpControlBlocks.F_OWNED;
import static dev.tern.tcp.TcpControlBlocks.F_RELEASED;
import static dev.tern.tcp.TcpControlBlocks.F_TIME_WAIT_LISTED;

/**
 * The connections in TIME-WAIT (RFC 9293 §3.10.7.4, 2 MSL), oldest first: a doubly linked list through the rows'
 * {@code listPrev}/{@code listNext}, so entering, leaving and counting cost nothing per connection beyond the row.
 * Its length is what Linux's tcp_max_tw_buckets bounds; its oldest orphan makes room when every row is taken.
 *
 * <p>Owned by the shard thread; not thread-safe.
 */
final class TimeWaitList {
    private final TcpControlBlocks tcb;
    private int head = -1;
    private int tail = -1;
    private int count;

    TimeWaitList(TcpControlBlocks tcb) {
        this.tcb = tcb;
    }

    int count() {
        return count;
    }

    /** Appends {@code c} (newest last), unless it is on the list already. */
    void add(int c) {
        if (tcb.hasFlag(c, F_TIME_WAIT_LISTED)) {
            return;
        }
        tcb.setFlag(c, F_TIME_WAIT_LISTED);
        tcb.listPrev(c, tail);
        tcb.listNext(c, -1);
        if (tail >= 0) {
            tcb.listNext(tail, c);
        } else {
            head = c;
        }
        tail = c;
        count++;
    }

    void remove(int c) {
        if (!tcb.hasFlag(c, F_TIME_WAIT_LISTED)) {
            return;
        }
        final int prev = tcb.listPrev(c);
        final int next = tcb.listNext(c);
        if (prev >= 0) {
            tcb.listNext(prev, next);
        } else {
            head = next;
        }
        if (next >= 0) {
            tcb.listPrev(next, prev);
        } else {
            tail = prev;
        }
        tcb.clearFlag(c, F_TIME_WAIT_LISTED);
        count--;
    }

    /** The oldest connection whose owner let go (or never had it), or -1: one that may be recycled. */
    int oldestOrphan() {
        for (int c = head; c >= 0; c = tcb.listNext(c)) {
            if (tcb.hasFlag(c, F_RELEASED) || !tcb.hasFlag(c, F_OWNED)) {
                return c;
            }
        }
        return -1;
    }
}
