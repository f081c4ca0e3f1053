package dev.tern.tcp;

import dev.tern.core.memory.PageMemory;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * What has held each connection's sender, as Linux's chronograph (tcp_chrono_start / tcp_chrono_stop in
 * tcp_output.c) for TCP_INFO's {@code tcpi_busy_time}, {@code tcpi_rwnd_limited} and {@code tcpi_sndbuf_limited}:
 * one condition at a time, the most telling one, and the time each accumulated.
 *
 * <p>{@link #BUSY}: data is queued or in flight. {@link #RWND_LIMITED}: the peer's window kept data back.
 * {@link #SNDBUF_LIMITED}: the send buffer was full, so the application could not write. A condition starts only
 * over a less telling one (busy, then receive window, then send buffer); when it ends, busy takes over while data
 * waits or is in flight, and the clock stops once nothing does.
 *
 * <p>Off-heap, 32 bytes per slot (the spell's start, then the three totals) and one byte per slot for the condition
 * running, mapped by the page. Owned by the shard thread; nothing here allocates.
 */
final class SendChrono {
    static final int NONE = 0;
    static final int BUSY = 1;
    static final int RWND_LIMITED = 2;
    static final int SNDBUF_LIMITED = 3;
    private static final int SLOT_BYTES = 32;
    private static final int START_OFFSET = 0;
    /** Three longs: the nanoseconds of BUSY, RWND_LIMITED and SNDBUF_LIMITED, at 8, 16 and 24. */
    private static final int TOTALS_OFFSET = 8;
    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG;

    private final MemorySegment memory;
    private final MemorySegment types;

    SendChrono(int capacity) {
        this.memory = map((long) Math.max(1, capacity) * SLOT_BYTES);
        this.types = map(Math.max(1, capacity));
    }

    private static MemorySegment map(long bytes) {
        final long page = PageMemory.pageSize();
        return PageMemory.map((bytes + page - 1) / page * page, Arena.ofAuto()).asSlice(0, bytes);
    }

    /** A new connection in slot {@code c}: nothing timed. */
    void clear(int c) {
        final long base = (long) c * SLOT_BYTES;
        for (int at = 0; at < SLOT_BYTES; at += Long.BYTES) {
            memory.set(LONG, base + at, 0L);
        }
        types.set(ValueLayout.JAVA_BYTE, c, (byte) NONE);
    }

    /** The condition running in slot {@code c}. */
    int type(int c) {
        return types.get(ValueLayout.JAVA_BYTE, c);
    }

    /**
     * After an output pass, as Linux's tcp_write_xmit and its send path: nothing timed unless data is queued or in
     * flight ({@code pending}); else the send buffer full, the peer's window keeping data back, or busy.
     */
    void update(int c, boolean pending, boolean rwndLimited, boolean sendBufferFull, long nowNs) {
        if (!pending) {
            set(c, NONE, nowNs);
            return;
        }
        if (sendBufferFull) {
            start(c, SNDBUF_LIMITED, nowNs);
        } else {
            stop(c, SNDBUF_LIMITED, true, nowNs);
        }
        if (rwndLimited) {
            start(c, RWND_LIMITED, nowNs);
        } else {
            stop(c, RWND_LIMITED, true, nowNs);
        }
        start(c, BUSY, nowNs);
    }

    /** {@code type} holds the sender from {@code nowNs}, if it tells more than the condition running. */
    void start(int c, int type, long nowNs) {
        if (type > type(c)) {
            set(c, type, nowNs);
        }
    }

    /**
     * {@code type} no longer holds the sender: busy takes over if it was the condition running and data is queued or
     * in flight ({@code pending}); nothing is timed once nothing is.
     */
    void stop(int c, int type, boolean pending, long nowNs) {
        if (!pending) {
            set(c, NONE, nowNs);
        } else if (type == type(c)) {
            set(c, BUSY, nowNs);
        }
    }

    private void set(int c, int type, long nowNs) {
        final int running = type(c);
        final long base = (long) c * SLOT_BYTES;
        if (running != type) {
            if (running != NONE) {
                final long at = base + TOTALS_OFFSET + (long) (running - 1) * Long.BYTES;
                memory.set(LONG, at, memory.get(LONG, at) + nowNs - memory.get(LONG, base + START_OFFSET));
            }
            memory.set(LONG, base + START_OFFSET, nowNs);
            types.set(ValueLayout.JAVA_BYTE, c, (byte) type);
        }
    }

    /** Microseconds spent under {@code type} up to {@code nowNs}, the running spell included (cold path). */
    long totalUs(int c, int type, long nowNs) {
        final long base = (long) c * SLOT_BYTES;
        long ns = memory.get(LONG, base + TOTALS_OFFSET + (long) (type - 1) * Long.BYTES);
        if (type(c) == type) {
            ns += nowNs - memory.get(LONG, base + START_OFFSET);
        }
        return ns / 1000;
    }
}
