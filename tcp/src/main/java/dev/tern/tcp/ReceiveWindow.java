package dev.tern.tcp;

import static dev.tern.tcp.TcpControlBlocks.F_PASSIVE;
import static dev.tern.tcp.TcpControlBlocks.F_RINGS;

/**
 * The window the receiver offers, by the configured {@link ReceivePolicy.WindowRule}, and when a larger one is worth
 * a segment of its own (a window update after the owner read). Both rules share the free room, the cap of the window
 * field (RFC 7323 §2.3), the memory pressure clamp ({@link TcpMemoryPressure#clampWindow}) and the rule that the
 * window never shrinks below what remains of the one offered (RFC 9293 §3.8.6.2.2, RFC 7323 §2.4).
 *
 * <p>Owned by the shard thread; not thread-safe. Nothing here allocates.
 */
final class ReceiveWindow {
    private final TcpControlBlocks tcb;
    private final ConnectionBuffers buffers;
    private final ReceiveHandlers handlers;
    private final TcpMemoryPressure memoryPressure;
    private final boolean freeSpace;
    /** {@link ReceivePolicy#bufferSpace}: 0, or the bytes the default receive buffer counts as before rounding. */
    private final int bufferSpace;
    private final int defaultBuffer;

    ReceiveWindow(TcpControlBlocks tcb, ConnectionBuffers buffers, ReceiveHandlers handlers,
                  TcpMemoryPressure memoryPressure, TcpConfig config) {
        this.tcb = tcb;
        this.buffers = buffers;
        this.handlers = handlers;
        this.memoryPressure = memoryPressure;
        this.freeSpace = config.receivePolicy().window() == ReceivePolicy.WindowRule.FREE_SPACE;
        this.bufferSpace = config.receivePolicy().bufferSpace();
        this.defaultBuffer = config.receiveBufferSize();
    }

    /**
     * The window to advertise, in bytes: free room in the receive ring, capped by what the window field can say,
     * then the rule's silly window avoidance, a multiple of the window scale unit, rounded down.
     *
     * <p>{@link ReceivePolicy.WindowRule#RIGHT_EDGE_STEP} (RFC 9293 §3.8.6.2.2): the right edge moves forward only
     * in steps of at least min(buffer / 2, the MSS offered). {@link ReceivePolicy.WindowRule#FREE_SPACE} (FreeBSD):
     * a window below both a quarter of the buffer and one segment (the MSS sent with, FreeBSD's t_maxseg) is 0, and
     * none is less than what remains of the one offered.
     *
     * <p>Never more than the ring's room: a byte offered is a byte the ring can hold. Rounding down can offer an edge
     * up to one unit short of one offered before, which RFC 7323 Appendix F allows; the edge the peer may fill stays
     * the furthest one offered ({@code rcvAdv} only grows, see {@link TcpReceiver#onAckSent}), and the ring has room
     * up to it because its room plus RCV.NXT never decreases. Rounding up instead (as Linux and FreeBSD do, with
     * slack in their buffer accounting) made the peer send bytes past the ring's end, trimmed and retransmitted (the
     * veth benchmark's SACK recoveries).
     *
     * <p>Out-of-order data already sits in the ring beyond RCV.NXT, in the room counted here; the window is offered
     * from RCV.NXT, so holes do not shrink it.
     *
     * <p>Under memory pressure the window is held to a quarter of the buffer (at least four segments), never below
     * what remains of the window offered ({@link TcpMemoryPressure#clampWindow}).
     */
    int offer(int c) {
        final int capacity = buffer(c);
        final int free = free(c, capacity);
        final int scale = tcb.rcvScale(c);
        int window = Math.min(free, 65535 << scale);
        final int current = remaining(c);
        if (memoryPressure.underPressure()) {
            window = memoryPressure.clampWindow(c, window, current, capacity);
        }
        if (freeSpace) {
            // FreeBSD's receiver silly window avoidance: a small window is not offered at all, and no window shrinks.
            if (window < capacity / 4 && window < tcb.sndMss(c)) {
                window = 0;
            }
            window = Math.max(window, current);
        } else if (window > current && window - current < Math.min(capacity / 2, tcb.advMss(c))) {
            window = current;
        }
        return (window >>> scale) << scale;
    }

    /**
     * The free room of the buffer as counted ({@link #buffer}). Bytes the application holds in lent frames keep their
     * room, as unread bytes in the ring do (holdOffered). Never below 0 (it cannot be: RCV.NXT moved by what was held
     * as the room shrank by it), as a negative window would turn huge in the shifts of {@link #offer}. A buffer
     * counted smaller than its ring leaves the ring's rest unused.
     */
    private int free(int c, int capacity) {
        final int ring = buffers.receiveSize(c);
        return Math.max(0, (tcb.hasFlag(c, F_RINGS) ? buffers.receiveRing(c).freeSpace() - (ring - capacity)
            : capacity) - handlers.held(c));
    }

    /**
     * The receive window a segment arriving now is checked and trimmed against (RCV.WND, RFC 9293 §3.10.7.4): what
     * remains of the window offered. Under {@link ReceivePolicy.WindowRule#FREE_SPACE}, the free room when that is
     * more, as FreeBSD's tcp_input takes its window from its buffer's space as the segment arrives; not in TIME-WAIT,
     * where FreeBSD keeps only the window it last offered (its tcptw), nor in a passive open's SYN-RECEIVED, where
     * FreeBSD's syncache checks against the window its SYN-ACK offered, nor under memory pressure, whose clamp holds
     * what is taken to what was offered.
     */
    int acceptance(int c) {
        final int remaining = remaining(c);
        if (!freeSpace || memoryPressure.underPressure() || offeredOnly(c)) {
            return remaining;
        }
        return Math.max(remaining, free(c, buffer(c)));
    }

    /** States whose acceptance window is the one offered alone: TIME-WAIT and a passive open's SYN-RECEIVED. */
    private boolean offeredOnly(int c) {
        final int state = tcb.state(c);
        return state == TcpState.TIME_WAIT
            || state == TcpState.SYN_RECEIVED && tcb.hasFlag(c, F_PASSIVE);
    }

    /**
     * The window a SYN or SYN-ACK offers, unscaled (RFC 7323 §2.2): the buffer as counted, at most 65535. Before the
     * handshake the MSS is not known, so the policy's buffer space counts unrounded, as FreeBSD's SYN-ACK offers its
     * buffer before tcp_mss rounds it.
     */
    int synWindow(int c) {
        final int ring = buffers.receiveSize(c);
        return Math.min(countsBufferSpace(ring) ? Math.min(ring, bufferSpace) : ring, 65535);
    }

    /**
     * The receive buffer as the window counts it: the ring, or for a connection with the default buffer the policy's
     * buffer space rounded up to whole segments of the MSS sent with (as FreeBSD's tcp_mss sizes its buffer), at most
     * the ring.
     */
    private int buffer(int c) {
        final int ring = buffers.receiveSize(c);
        if (!countsBufferSpace(ring)) {
            return ring;
        }
        final int mss = tcb.sndMss(c);
        final int rounded = bufferSpace > mss ? (bufferSpace + mss - 1) / mss * mss : bufferSpace;
        return Math.min(ring, rounded);
    }

    /** Whether a ring of {@code ring} bytes counts as the policy's buffer space: the default buffer, with one set. */
    private boolean countsBufferSpace(int ring) {
        return bufferSpace != 0 && ring == defaultBuffer;
    }

    /** What remains of the window offered: the advertised right edge less RCV.NXT, never below 0. */
    int remaining(int c) {
        return Math.max(0, tcb.rcvAdv(c) - tcb.rcvNxt(c));
    }

    /**
     * The window grew enough beyond what was offered to be worth a segment of its own, after the owner read.
     * {@link ReceivePolicy.WindowRule#RIGHT_EDGE_STEP} (RFC 9293 §3.8.6.2.2): by at least min(buffer / 2, two
     * segments), and at least doubled or from nothing. {@link ReceivePolicy.WindowRule#FREE_SPACE} (FreeBSD): by
     * more than the scale unit can hide, and either by two segments when that is also a quarter of the buffer or
     * the field's largest window, or the window is at most an eighth of the buffer, or the buffer at most eight
     * segments; or by half the buffer.
     */
    boolean updateWorthSending(int c) {
        final int current = remaining(c);
        final int window = offer(c);
        final int growth = window - current;
        final int capacity = buffer(c);
        if (growth <= 0) {
            return false;
        }
        if (!freeSpace) {
            return (current == 0 || growth >= current) && growth >= Math.min(capacity / 2, 2 * tcb.advMss(c));
        }
        final int scale = tcb.rcvScale(c);
        if (current >>> scale >= window >>> scale) {
            return false;
        }
        final int twoSegments = 2 * tcb.sndMss(c);
        return growth >= twoSegments && (growth >= capacity / 4 || window <= capacity / 8
            || capacity <= 4 * twoSegments || growth >= 65535 << scale) || 2 * growth >= capacity;
    }

    /**
     * Memory pressure ended for a connection whose window it held back: true when it can now offer more than remains
     * of the window it offered, so a window update is owed. The rule of {@link #updateWorthSending} does not apply:
     * the peer may be waiting on a window it filled.
     */
    boolean opened(int c) {
        return offer(c) > remaining(c);
    }
}
