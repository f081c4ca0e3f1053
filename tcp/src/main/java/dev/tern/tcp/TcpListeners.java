package dev.tern.tcp;

import java.util.Arrays;

import static dev.tern.tcp.TcpControlBlocks.F_ACCEPT_QUEUED;
import static dev.tern.tcp.TcpControlBlocks.F_IN_SYN_QUEUE;

/**
 * The layer's listeners (RFC 9293 §3.10.1, passive OPEN) and their two queues, as Linux keeps them: the SYN queue
 * (half-open connections, SYN-RECEIVED, counted per listener) and the accept queue (established, not yet accepted),
 * with when a listener last sent SYN cookies (RFC 4987) and whether its owner is owed an {@code acceptable} event.
 * Small on-heap arrays, indexed by listener handle; they grow on a cold path.
 *
 * <p>Owned by the shard thread; not thread-safe. Nothing here allocates per segment.
 */
final class TcpListeners {
    /** How long after sending cookies an ACK is checked as one (Linux: no recent SYN queue overflow), about 137 s. */
    private static final long COOKIE_WINDOW_NS = 2L << 36;

    private final TcpControlBlocks tcb;
    private final TcpCounters counters;
    private final ConnectionSettings settings;
    private final int[] listenerByPort = new int[65536];
    private int[] port = new int[8];
    private int[] backlog = new int[8];
    private int[] synCount = new int[8];
    private int[][] acceptQueue = new int[8][];
    private int[] acceptHead = new int[8];
    private int[] acceptCount = new int[8];
    private long[] lastCookieNs = new long[8];
    private boolean[] cookiesSent = new boolean[8];
    private boolean[] eventPending = new boolean[8];
    private TcpEvents[] events = new TcpEvents[8];
    private TcpOptions[] options = new TcpOptions[8];
    private int slots;
    private boolean anyEvent;

    TcpListeners(TcpControlBlocks tcb, TcpCounters counters, ConnectionSettings settings) {
        this.tcb = tcb;
        this.counters = counters;
        this.settings = settings;
        Arrays.fill(listenerByPort, -1);
    }

    /**
     * A listener on {@code localPort} (checked by the caller) whose connections get {@code options} and report to
     * {@code events}; returns its handle, or {@code -ADDRESS_IN_USE}. Cold path.
     */
    int open(int localPort, int backlogWanted, TcpOptions listenerOptions, TcpEvents listenerEvents) {
        if (listenerByPort[localPort] >= 0) {
            return -TcpError.ADDRESS_IN_USE;
        }
        int l = 0;
        while (l < slots && events[l] != null) {
            l++;
        }
        if (l == port.length) {
            grow();
        }
        slots = Math.max(slots, l + 1);
        final int queue = Math.max(1, Math.min(backlogWanted == 0 ? 1 : backlogWanted, settings.current().maxBacklog()));
        port[l] = localPort;
        backlog[l] = queue;
        synCount[l] = 0;
        acceptQueue[l] = new int[queue];
        acceptHead[l] = 0;
        acceptCount[l] = 0;
        cookiesSent[l] = false;
        eventPending[l] = false;
        events[l] = listenerEvents;
        options[l] = listenerOptions;
        listenerByPort[localPort] = l;
        return l;
    }

    private void grow() {
        final int size = port.length * 2;
        port = Arrays.copyOf(port, size);
        backlog = Arrays.copyOf(backlog, size);
        synCount = Arrays.copyOf(synCount, size);
        acceptQueue = Arrays.copyOf(acceptQueue, size);
        acceptHead = Arrays.copyOf(acceptHead, size);
        acceptCount = Arrays.copyOf(acceptCount, size);
        lastCookieNs = Arrays.copyOf(lastCookieNs, size);
        cookiesSent = Arrays.copyOf(cookiesSent, size);
        eventPending = Arrays.copyOf(eventPending, size);
        events = Arrays.copyOf(events, size);
        options = Arrays.copyOf(options, size);
    }

    /** The listener is gone: its port is free. Its queues were emptied by the caller. */
    void remove(int l) {
        listenerByPort[port[l]] = -1;
        events[l] = null;
        options[l] = null;
        acceptQueue[l] = null;
    }

    boolean valid(int l) {
        return l >= 0 && l < slots && events[l] != null;
    }

    /** The listener on {@code port}, or -1. */
    int on(int localPort) {
        return listenerByPort[localPort];
    }

    TcpOptions options(int l) {
        return options[l];
    }

    /** The options the listener's next connections get (an option set on the listening socket). */
    void options(int l, TcpOptions value) {
        options[l] = value;
    }

    TcpEvents events(int l) {
        return events[l];
    }

    /** The receive buffer its connections get: what cookies and the SYN-ACK's window are sized by. */
    int receiveSize(int l) {
        final int size = options[l].receiveBufferSize();
        return size == 0 ? settings.current().receiveBufferSize() : size;
    }

    // ------------------------------------------------------------------------------------------ SYN queue

    boolean synQueueFull(int l) {
        return synCount[l] >= settings.current().synQueueSize();
    }

    /** Half-open connections of the listener now. */
    int synCount(int l) {
        return synCount[l];
    }

    /** Half-open connections of a listener handle from outside the layer: 0 for one that is not open. */
    int halfOpen(int l) {
        return valid(l) ? synCount[l] : 0;
    }

    /** A half-open connection {@code c} for listener {@code l} joins its SYN queue. */
    void joinSynQueue(int c, int l) {
        tcb.setFlag(c, F_IN_SYN_QUEUE);
        tcb.listener(c, l);
        synCount[l]++;
    }

    void leaveSynQueue(int c) {
        if (tcb.hasFlag(c, F_IN_SYN_QUEUE)) {
            tcb.clearFlag(c, F_IN_SYN_QUEUE);
            final int l = tcb.listener(c);
            if (l >= 0 && l < slots) {
                synCount[l]--;
            }
        }
    }

    void cookieSent(int l, long nowNs) {
        cookiesSent[l] = true;
        lastCookieNs[l] = nowNs;
    }

    /** Only ACKs arriving soon after we sent cookies are checked as cookies (Linux: no recent SYN queue overflow). */
    boolean cookiesRecentlySent(int l, long nowNs) {
        return cookiesSent[l] && nowNs - lastCookieNs[l] < COOKIE_WINDOW_NS;
    }

    // ------------------------------------------------------------------------------------------ accept queue

    boolean acceptQueueFull(int l) {
        return acceptCount[l] >= backlog[l];
    }

    /** Connections waiting in the accept queue. */
    int acceptable(int l) {
        return valid(l) ? acceptCount[l] : 0;
    }

    /** An established passive connection waits to be accepted; its owner hears of it at the next poll. */
    void enqueue(int l, int c) {
        final int[] queue = acceptQueue[l];
        queue[(acceptHead[l] + acceptCount[l]) % queue.length] = c;
        acceptCount[l]++;
        tcb.setFlag(c, F_ACCEPT_QUEUED);
        eventPending[l] = true;
        anyEvent = true;
    }

    /** The oldest connection of the accept queue, out of it; -1 when there is none. */
    int take(int l) {
        if (!valid(l) || acceptCount[l] == 0) {
            return -1;
        }
        final int[] queue = acceptQueue[l];
        final int c = queue[acceptHead[l]];
        acceptHead[l] = (acceptHead[l] + 1) % queue.length;
        acceptCount[l]--;
        tcb.clearFlag(c, F_ACCEPT_QUEUED);
        return c;
    }

    /** A connection freed before it was accepted leaves its accept queue. */
    void removeQueued(int c) {
        final int l = tcb.listener(c);
        tcb.clearFlag(c, F_ACCEPT_QUEUED);
        if (!valid(l)) {
            return;
        }
        final int[] queue = acceptQueue[l];
        final int count = acceptCount[l];
        int kept = 0;
        for (int i = 0; i < count; i++) {
            final int entry = queue[(acceptHead[l] + i) % queue.length];
            if (entry != c) {
                queue[(acceptHead[l] + kept) % queue.length] = entry;
                kept++;
            }
        }
        acceptCount[l] = kept;
    }

    /** Tells each listener's owner, once per poll, that connections wait; returns how many were told. */
    int deliverEvents() {
        if (!anyEvent) {
            return 0;
        }
        anyEvent = false;
        int delivered = 0;
        for (int l = 0; l < slots; l++) {
            if (eventPending[l]) {
                eventPending[l] = false;
                if (events[l] != null && acceptCount[l] > 0) {
                    events[l].acceptable(l);
                    delivered++;
                }
            }
        }
        return delivered;
    }

    // ------------------------------------------------------------------------------------------ counting

    /**
     * A segment dropped because the listener's accept queue is full: Linux's ListenOverflows, which also counts in
     * ListenDrops; {@code tcp.drop.listen_overflow} counts the same segments by reason.
     */
    void overflow() {
        counters.listenOverflows.incrementRelease();
        counters.listenDrops.incrementRelease();
        counters.drop(TcpCounters.DROP_LISTEN_OVERFLOW);
    }

    /** A segment for a listener dropped for another reason (SYN queue full without cookies, no row, memory). */
    void drop(int reason) {
        counters.listenDrops.incrementRelease();
        counters.drop(reason);
    }
}
