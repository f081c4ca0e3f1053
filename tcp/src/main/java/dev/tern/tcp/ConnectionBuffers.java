package dev.tern.tcp;

import dev.tern.core.io.ByteRing;
import dev.tern.core.memory.PageMemory;

import static dev.tern.tcp.TcpControlBlocks.F_ALLOCATED;
import static dev.tern.tcp.TcpControlBlocks.F_BUDGET_RETURNED;
import static dev.tern.tcp.TcpControlBlocks.F_BUFFERS_RESERVED;
import static dev.tern.tcp.TcpControlBlocks.F_RECEIVE_RECLAIMED;
import static dev.tern.tcp.TcpControlBlocks.F_RINGS;

/**
 * Each connection's socket buffers (RFC 9293 §3.8.6: the send and receive buffers the windows are made of): a send
 * and a receive {@link ByteRing} and the record of sent segments ({@link SentSegments}), from a shared
 * {@link RingPool}, and the memory budget they are counted against.
 *
 * <p>A connection let in reserves its buffer sizes in the budget at once, and attaches the rings only when first
 * needed ({@link #ensureRings}): an established connection that carries nothing holds its row only. The owner may
 * give them back while it idles ({@link #releaseIdle}); the next use attaches them again. Under memory pressure
 * ({@link TcpMemoryPressure}) new connections get smaller buffers, and idle empty receive rings give their pages back
 * ({@link #reclaimIdleReceiveRings}).
 *
 * <p>Owned by the shard thread; not thread-safe. The rings themselves may be used from the owner's thread: that is
 * their purpose. A ring stays valid until the connection gives its buffers back.
 */
final class ConnectionBuffers {
    private final TcpControlBlocks tcb;
    private final TcpCounters counters;
    private final TcpConfig config;
    private final TcpMemoryPressure memoryPressure;
    private final RingPool rings = new RingPool();
    private final ByteRing[] sendRings;
    private final ByteRing[] receiveRings;
    private final SentSegments[] sentSegments;
    private final int[] sendSize;
    private final int[] receiveSize;
    /**
     * Buffer bytes reserved by connections let in, attached or not, less those of connections idling without buffers
     * ({@link #releaseIdle}): what the memory budget counts.
     */
    private long reservedBytes;
    private int reclaimCursor;

    ConnectionBuffers(TcpControlBlocks tcb, TcpCounters counters, TcpConfig config, TcpMemoryPressure memoryPressure) {
        this.tcb = tcb;
        this.counters = counters;
        this.config = config;
        this.memoryPressure = memoryPressure;
        final int capacity = tcb.capacity();
        this.sendRings = new ByteRing[capacity];
        this.receiveRings = new ByteRing[capacity];
        this.sentSegments = new SentSegments[capacity];
        this.sendSize = new int[capacity];
        this.receiveSize = new int[capacity];
    }

    /**
     * The buffer sizes a new connection with {@code options} gets, packed {@code send << 32 | receive}, or -1 when
     * they would take the budget beyond its limit. Under pressure (Linux's tcp_mem pressure) they are a quarter: the
     * windows are smaller from the first segment on, so nothing promised is taken back.
     */
    long sizesFor(TcpOptions options) {
        int sendBytes = options.sendBufferSize() == 0 ? config.sendBufferSize() : options.sendBufferSize();
        int receiveBytes = options.receiveBufferSize() == 0 ? config.receiveBufferSize() : options.receiveBufferSize();
        if (reservedBytes >= config.memoryPressureBytes()) {
            sendBytes = TcpMemoryPressure.reduced(sendBytes);
            receiveBytes = TcpMemoryPressure.reduced(receiveBytes);
            counters.memoryPressureOpens.incrementRelease();
        }
        if (reservedBytes + sendBytes + receiveBytes + TcpMemory.recordBytes(sendBytes) > config.memoryLimitBytes()) {
            return -1;
        }
        return (long) sendBytes << 32 | receiveBytes;
    }

    /** Row {@code c}'s sizes, as {@link #sizesFor} packed them. */
    void sizes(int c, long packed) {
        sendSize[c] = (int) (packed >>> 32);
        receiveSize[c] = (int) packed;
    }

    int receiveSize(int c) {
        return receiveSize[c];
    }

    /** The send ring; only while the connection has its rings ({@code F_RINGS}). */
    ByteRing sendRing(int c) {
        return sendRings[c];
    }

    ByteRing receiveRing(int c) {
        return receiveRings[c];
    }

    /** The record of sent segments, or null without rings. */
    SentSegments sent(int c) {
        return sentSegments[c];
    }

    /** Socket buffer bytes of a connection: its two rings and its record of sent segments. */
    private long bufferBytes(int c) {
        return (long) sendSize[c] + receiveSize[c] + TcpMemory.recordBytes(sendSize[c]);
    }

    /** Whether the connection's buffers still fit the budget (another may have taken what it was let in against). */
    boolean fitsLimit(int c) {
        return reservedBytes + bufferBytes(c) <= config.memoryLimitBytes();
    }

    /**
     * Counts the connection's buffers against the memory budget (Linux charges tcp_mem as buffers fill; we charge
     * their full size when it is let in, so a connection that was let in can always take its rings). The charge goes
     * while its owner lets it idle without buffers ({@link #releaseIdle}) and comes back with its rings.
     */
    void reserve(int c) {
        if (!tcb.hasFlag(c, F_BUFFERS_RESERVED)) {
            tcb.setFlag(c, F_BUFFERS_RESERVED);
            reservedBytes += bufferBytes(c);
            publishMemory();
        }
    }

    /**
     * Attaches the connection's rings and record if it has a reservation and none yet: when the owner asks for a ring,
     * when the first data arrives, when a FIN is queued. Returns false when the connection may hold none (it has
     * given its buffers back: TIME-WAIT of an orphan, CLOSED).
     */
    boolean ensureRings(int c) {
        if (tcb.hasFlag(c, F_RINGS)) {
            return true;
        }
        if (!tcb.hasFlag(c, F_BUFFERS_RESERVED)) {
            return false;
        }
        if (tcb.hasFlag(c, F_BUDGET_RETURNED)) {
            // Back from idle: counted again, beyond the limit too. It was let in under the limit, and its peer may
            // send up to the window offered before it idled; refusing the rings would drop that data and cost the
            // peer a retransmission for memory the limit already allowed it. The overshoot is bounded by the
            // connections let in, shows in the budget and its counter, and puts the layer under pressure and at
            // its limit until it falls again (no new connections, windows held to a quarter).
            tcb.clearFlag(c, F_BUDGET_RETURNED);
            reservedBytes += bufferBytes(c);
            if (reservedBytes > config.memoryLimitBytes()) {
                counters.memoryOverLimitAttaches.incrementRelease();
            }
        }
        sendRings[c] = rings.acquire(sendSize[c]);
        receiveRings[c] = rings.acquire(receiveSize[c]);
        sentSegments[c] = rings.acquireRecord(SentSegments.entriesFor(sendSize[c]));
        tcb.clearFlag(c, F_RECEIVE_RECLAIMED);
        tcb.setFlag(c, F_RINGS);
        counters.ringsAttached.incrementRelease();
        publishMemory();
        return true;
    }

    /** The connection's rings and record go back to the pool. */
    private void releaseRings(int c) {
        rings.release(sendRings[c]);
        rings.release(receiveRings[c]);
        rings.releaseRecord(sentSegments[c]);
        sendRings[c] = null;
        receiveRings[c] = null;
        sentSegments[c] = null;
        tcb.clearFlag(c, F_RINGS);
    }

    /** Gives the rings and record back (if attached) and the reservation with them. */
    void detach(int c) {
        if (tcb.hasFlag(c, F_RINGS)) {
            releaseRings(c);
        }
        if (tcb.hasFlag(c, F_BUFFERS_RESERVED)) {
            if (!tcb.hasFlag(c, F_BUDGET_RETURNED)) {
                reservedBytes -= bufferBytes(c);
            }
            tcb.clearFlag(c, F_BUFFERS_RESERVED | F_BUDGET_RETURNED);
            publishMemory();
        }
    }

    /**
     * An idle connection lets its buffers go (the caller checked nothing is in flight, held or queued): if both rings
     * are empty they go back to the pool, and the sizes stop counting against the budget until rings are attached
     * again. Returns false when a ring still holds bytes or nothing was reserved.
     */
    boolean releaseIdle(int c) {
        if ((tcb.flags(c) & (F_BUFFERS_RESERVED | F_BUDGET_RETURNED)) != F_BUFFERS_RESERVED) {
            return false;
        }
        if (tcb.hasFlag(c, F_RINGS)) {
            if (sendRings[c].available() != 0 || receiveRings[c].available() != 0) {
                return false;
            }
            releaseRings(c);
            counters.ringsReleasedIdle.incrementRelease();
        }
        tcb.setFlag(c, F_BUDGET_RETURNED);
        reservedBytes -= bufferBytes(c);
        publishMemory();
        return true;
    }

    /** Publishes the memory gauges; the pressure state follows the budget. */
    private void publishMemory() {
        memoryPressure.reserved(reservedBytes);
        counters.memoryInUseBytes.setRelease(reservedBytes);
        counters.memoryAttachedBytes.setRelease(rings.inUseBytes());
        counters.memoryMappedBytes.setRelease(rings.allocatedBytes());
        counters.memoryReturnedBytes.setRelease(rings.discardedBytes());
    }

    /** Once per poll: pages of rings released since the last one go back to the system. */
    void flushDiscards() {
        if (rings.flushDiscards() > 0) {
            publishMemory();
        }
    }

    /**
     * Under pressure, once per poll: the next {@link TcpMemoryPressure#RECLAIM_ROWS_PER_POLL} rows, round the table; idle, empty receive
     * rings give their pages back (the ring stays attached, its pages come back as data arrives).
     */
    void reclaimIdleReceiveRings(long nowNs) {
        final int rows = tcb.highWater();
        if (rows == 0) {
            return;
        }
        boolean reclaimed = false;
        for (int i = 0; i < TcpMemoryPressure.RECLAIM_ROWS_PER_POLL && i < rows; i++) {
            if (reclaimCursor >= rows) {
                reclaimCursor = 0;
            }
            final int c = reclaimCursor++;
            if ((tcb.flags(c) & (F_ALLOCATED | F_RINGS | F_RECEIVE_RECLAIMED)) != (F_ALLOCATED | F_RINGS)
                || tcb.oooBlock(c) >= 0 || nowNs - tcb.lastReceiveNs(c) < TcpMemoryPressure.RECLAIM_IDLE_NS) {
                continue;
            }
            final ByteRing ring = receiveRings[c];
            // Producer's view (acquire of the consumer's position): the owner has finished with every byte.
            if (ring.capacity() < PageMemory.pageSize() || ring.freeSpace() != ring.capacity()) {
                continue;
            }
            counters.memoryReclaimedBytes.getAndAddRelease(rings.discardInPlace(ring));
            tcb.setFlag(c, F_RECEIVE_RECLAIMED);
            reclaimed = true;
        }
        if (reclaimed) {
            rings.flushDiscards(); // now, before any segment is stored into these rings again
            publishMemory();
        }
    }

    /** Bytes the budget counts now. */
    long reservedBytes() {
        return reservedBytes;
    }

    RingPool rings() {
        return rings;
    }

    void close() {
        rings.close();
    }
}
