package dev.tern.tcp;

import static dev.tern.tcp.TcpControlBlocks.F_WINDOW_CLAMPED;

/**
 * What memory pressure does to connections already open (Linux's {@code tcp_mem}). New connections get
 * smaller buffers above the pressure mark and none beyond the limit ({@link ConnectionBuffers#sizesFor}); this class
 * holds the layer's pressure state, as the socket buffer budget moves, and three rules for open ones, which the rooms
 * that own the state apply:
 *
 * <ul>
 *   <li><b>Windows stop growing</b> (Linux: {@code tcp_adjust_rcv_ssthresh} clamps {@code rcv_ssthresh} to four
 *       segments under pressure): while under pressure a connection offers at most a quarter of its receive buffer,
 *       never less than four of its segments (and never more than the buffer), so its peer sends less and its ring
 *       fills less. The right edge already offered is never taken back (RFC 9293 §3.8.6: "A TCP receiver SHOULD NOT
 *       shrink the window"; RFC 7323 §2.4): a window offered before is only left to run down. When the budget falls
 *       back below seven eighths of the mark the pressure ends, and every connection whose window it held back gets
 *       a window update at the next poll, so a peer is not left waiting for an ACK it has no reason to get.
 *       {@link #clampWindow}, {@code TcpReceiver.reopenClampedWindows}.</li>
 *   <li><b>Out-of-order text at the limit</b> (Linux prunes its out-of-order queue above {@code tcp_mem[2]}): while
 *       the budget cannot take another connection of the default size (see {@link #atLimit}), text that starts beyond
 *       the first range held out of order (past the first hole and what arrived after it) is dropped, counted
 *       ({@code tcp.drop.out_of_order_memory}) and answered with a duplicate ACK; what fills the first hole or grows
 *       the first range is taken. Nothing held is reneged on: RFC 2018 §8 allows it, but the held bytes already sit in
 *       the connection's own reserved ring, so dropping them would free nothing the budget counts and would cost the
 *       peer a retransmission timeout. {@code TcpReceiver.storeData}.</li>
 *   <li><b>Idle receive rings give their pages back</b> (Linux reclaims the memory of idle sockets under pressure,
 *       {@code sk_mem_reclaim}): an empty receive ring's free room belongs to the stack thread, its only producer
 *       (the owner, on whatever thread, reads only bytes published and not yet consumed, and an empty ring has
 *       none), so its pages can go back to the system without asking the owner. Under pressure each poll looks at
 *       {@link #RECLAIM_ROWS_PER_POLL} rows, round the table; a connection with rings attached, an empty receive
 *       ring, nothing held out of order and nothing received for {@link #RECLAIM_IDLE_NS} has its receive ring's
 *       pages discarded ({@code tcp.memory.reclaimed_bytes}); the ring stays attached and its pages come back,
 *       zero-filled, when next written. The budget's count ({@code tcp.memory.in_use_bytes}) does not fall: the ring keeps its size, the
 *       owner may hold it, and the peer may fill it up to a window offered before the pressure, so the reservation
 *       is a promise still owed; what falls is the memory resident ({@link TcpMemory#ringsResident}). The send ring
 *       is not touched: its producer is the owner's thread, so its room is not the stack's to discard.
 *       {@link ConnectionBuffers#reclaimIdleReceiveRings}.</li>
 * </ul>
 *
 * <p>Owned by the shard thread; not thread-safe.
 */
final class TcpMemoryPressure {
    /** Rows looked at per poll for idle receive rings while under pressure. */
    static final int RECLAIM_ROWS_PER_POLL = 256;
    /** A connection that received nothing for this long counts as idle. */
    static final long RECLAIM_IDLE_NS = 1_000_000_000L;

    private final TcpControlBlocks tcb;
    private final TcpCounters counters;
    private final long pressureBytes;
    /** The pressure ends below this (Linux's tcp_mem has a low mark under the pressure mark for the same reason). */
    private final long pressureEndsBelowBytes;
    private final long limitBytes;
    /** Buffer bytes of a connection with the default buffers opened under pressure: the smallest one let in. */
    private final long smallestConnectionBytes;
    private boolean underPressure;
    private boolean atLimit;
    private boolean reopenPending;

    TcpMemoryPressure(TcpControlBlocks tcb, TcpCounters counters, TcpConfig config) {
        this.tcb = tcb;
        this.counters = counters;
        this.pressureBytes = config.memoryPressureBytes();
        this.pressureEndsBelowBytes = pressureBytes - (pressureBytes >>> 3);
        this.limitBytes = config.memoryLimitBytes();
        final int send = reduced(config.sendBufferSize());
        this.smallestConnectionBytes = send + reduced(config.receiveBufferSize()) + TcpMemory.recordBytes(send);
    }

    /** A buffer size under memory pressure: a quarter, but not below 4 KiB (nor above what it was). */
    static int reduced(int size) {
        return Math.min(size, Math.max(size >>> 2, 4096));
    }

    /** The budget moved to {@code reservedBytes}: pressure starts at the mark and ends below seven eighths of it. */
    void reserved(long reservedBytes) {
        atLimit = reservedBytes + smallestConnectionBytes > limitBytes;
        if (!underPressure && reservedBytes >= pressureBytes) {
            underPressure = true;
            reopenPending = false;
            counters.memoryPressureEpisodes.incrementRelease();
            counters.memoryPressureActive.setRelease(1);
        } else if (underPressure && reservedBytes < pressureEndsBelowBytes) {
            underPressure = false;
            reopenPending = true;
            counters.memoryPressureActive.setRelease(0);
        }
    }

    boolean underPressure() {
        return underPressure;
    }

    /**
     * The budget cannot let in one more connection of the default buffer sizes, even at the quarter pressure gives:
     * Tern's "above tcp_mem[2]" (a budget of reservations goes beyond its limit only by connections back from idle,
     * so the limit shows as no room left).
     */
    boolean atLimit() {
        return atLimit;
    }

    /** True once after the pressure ended: the windows it held back are owed their updates now. */
    boolean takeReopen() {
        final boolean pending = reopenPending;
        reopenPending = false;
        return pending;
    }

    /**
     * The window {@code c} may offer under pressure: {@code window} (its free room, already capped by the window
     * field) held to {@link #clampBytes} of its {@code receiveBuffer}, but never below {@code current}, what remains
     * of the window already offered, so the right edge does not move back.
     */
    int clampWindow(int c, int window, int current, int receiveBuffer) {
        final int most = Math.max(clampBytes(c, receiveBuffer), current);
        if (window <= most) {
            return window;
        }
        if (!tcb.hasFlag(c, F_WINDOW_CLAMPED)) {
            tcb.setFlag(c, F_WINDOW_CLAMPED);
            counters.memoryPressureClamps.incrementRelease();
        }
        return most;
    }

    /** A quarter of the receive buffer, at least four segments of the MSS we offered, at most the buffer. */
    int clampBytes(int c, int receiveBuffer) {
        return Math.min(receiveBuffer, Math.max(receiveBuffer >>> 2, 4 * tcb.advMss(c)));
    }
}
