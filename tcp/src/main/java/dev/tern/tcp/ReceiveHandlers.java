package dev.tern.tcp;

import dev.tern.core.io.ByteRing;
import dev.tern.ethernet.link.FrameHolds;

import java.lang.foreign.MemorySegment;

import static dev.tern.tcp.TcpControlBlocks.F_RELEASED;

/**
 * Zero-copy receive (not an RFC matter; docs/DESIGN.md "Zero-copy receive"): each connection's
 * {@link TcpReceiveHandler}, offered in-order segment text in place in the frame, the receive ring's bytes when it
 * left some; and held frames, bytes a handler keeps past the call in the link's frame ({@link FrameHolds}) until the
 * application gives them back. Held bytes keep their room in the window, as unread bytes in the ring do, so a peer
 * cannot send more than the receive buffer while the application holds it.
 *
 * <p>Owned by the shard thread; not thread-safe. An offered view is valid during the call only, unless held.
 */
final class ReceiveHandlers {
    private final TcpControlBlocks tcb;
    private final TcpCounters counters;
    private final ConnectionBuffers buffers;
    private final FrameHolds holds;
    /** Told when held bytes come back, on the stack thread: the window opens by them. */
    private final FrameHolds.Owner holdReturned;
    /** Each connection's handler, or null (the owner reads the receive ring). */
    private final TcpReceiveHandler[] handlers;
    /** Bytes a connection's handler holds in lent frames: taken from the stream, not yet given back. */
    private final int[] heldBytes;
    /** True while a handler runs: what it may not do is refused, what it may do is deferred. */
    private boolean inHandler;

    ReceiveHandlers(TcpControlBlocks tcb, TcpCounters counters, ConnectionBuffers buffers, FrameHolds holds,
                    FrameHolds.Owner holdReturned) {
        this.tcb = tcb;
        this.counters = counters;
        this.buffers = buffers;
        this.holds = holds;
        this.holdReturned = holdReturned;
        this.handlers = new TcpReceiveHandler[tcb.capacity()];
        this.heldBytes = new int[tcb.capacity()];
    }

    /** Sets (or with null removes) the connection's handler. */
    void handler(int c, TcpReceiveHandler handler) {
        handlers[c] = handler;
    }

    boolean has(int c) {
        return handlers[c] != null;
    }

    /** The row is freed: no handler; held frames outlive it, their release finds another generation. */
    void forget(int c) {
        handlers[c] = null;
        heldBytes[c] = 0;
    }

    /** Whether a handler is running now (the caller is inside one). */
    boolean inHandler() {
        return inHandler;
    }

    /** A handler may not close, abort, shut down or change handlers: segment input is half done. */
    void refuseInside(String what) {
        if (inHandler) {
            throw new IllegalStateException("cannot " + what + " from inside a receive handler: return first");
        }
    }

    /** Bytes the connection's handler holds in lent frames now. */
    int held(int c) {
        return heldBytes[c];
    }

    /**
     * Offers the receive ring's bytes to the connection's handler, oldest first, in at most two pieces (the ring's
     * end, then its start); stops when the handler takes less than offered. Returns how many it took.
     */
    int drain(int c) {
        final ByteRing ring = buffers.receiveRing(c);
        int taken = 0;
        int available;
        while ((available = ring.available()) > 0) {
            final long position = ring.consumerPosition();
            final int piece = Math.min(available, ring.contiguous(position));
            final int n = call(c, ring.memory(), ring.index(position), piece);
            if (n > 0) {
                ring.consume(n);
                taken += n;
            }
            if (n < piece) {
                break;
            }
        }
        if (taken > 0) {
            counters.rxHandlerRingBytes.getAndAddRelease(taken);
        }
        return taken;
    }

    /**
     * Offers in-order segment text {@code [offset, offset + length)} of {@code data} in place (the caller made sure
     * the ring holds nothing older). Returns how many bytes the handler took; the caller copies the rest into the ring.
     */
    int offerInPlace(int c, MemorySegment data, long offset, int length) {
        holds.beginOffer(holdReturned, tcb.handle(c), data, offset, length);
        int n;
        boolean held;
        try {
            n = call(c, data, offset, length);
        } finally {
            held = holds.endOffer();
        }
        if (held) {
            // A hold takes the whole offer, whatever the handler returned: its bytes are in the application's hands,
            // and keep their room in the window until they come back (returned).
            n = length;
            heldBytes[c] += length;
            counters.rxHeldBytes.getAndAddRelease(length);
        }
        if (n > 0) {
            counters.rxZeroCopyBytes.getAndAddRelease(n);
        }
        return n;
    }

    /** Holds the offer being made now to {@code connection}'s handler; -1 where it cannot be held. */
    long holdOffered(int connection) {
        return holds.holdOffer(holdReturned, connection);
    }

    /**
     * Held bytes came back: the row they free room in, or -1 when the connection is gone (its slot may serve
     * another, and has nothing to give back).
     */
    int returned(int connection, int bytes) {
        final int c = tcb.liveSlot(connection);
        if (c >= 0) {
            heldBytes[c] = Math.max(0, heldBytes[c] - bytes);
        }
        return c;
    }

    private int call(int c, MemorySegment data, long offset, int length) {
        if (tcb.hasFlag(c, F_RELEASED)) {
            return 0;
        }
        inHandler = true;
        int n;
        try {
            n = handlers[c].onReceive(tcb.handle(c), data, offset, length);
        } catch (RuntimeException e) {
            // The application's bug, not the stack's: counted, and the bytes stay in the stream (the ring).
            counters.rxHandlerErrors.incrementRelease();
            n = 0;
        } finally {
            inHandler = false;
        }
        return n < 0 ? 0 : Math.min(n, length);
    }
}
