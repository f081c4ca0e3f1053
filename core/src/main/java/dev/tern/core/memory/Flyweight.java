package dev.tern.core.memory;

import java.lang.foreign.MemorySegment;

/**
 * Base of every header flyweight: a window {@code [base, base + limit)} of a {@link MemorySegment} holding one
 * frame or one header and what follows it, read and written in place in network byte order.
 *
 * <p>Every accessor checks that the field lies inside the window: a flyweight never reads a neighbour's bytes even
 * when the segment (a slab of many frames) would allow it. A subclass's {@code check()} validates the header's own
 * lengths once at the layer's entry and returns a drop reason; after a clean check no accessor fails. A failing
 * accessor therefore means a bug, and throws {@link IndexOutOfBoundsException} (the poll loop counts it as an
 * internal error and goes on).
 *
 * <p>Owned by one thread (a stack shard); re-wrapped per frame. The wrapped memory stays valid only as long as the
 * frame does: for received frames, until the receive callback returns.
 */
public abstract class Flyweight {
    protected MemorySegment segment;
    protected long base;
    protected int limit;

    /** Points this flyweight at {@code limit} bytes of {@code segment} starting at {@code base}. */
    protected final void wrapWindow(MemorySegment segment, long base, int limit) {
        this.segment = segment;
        this.base = base;
        this.limit = limit;
    }

    public final MemorySegment segment() {
        return segment;
    }

    /** Offset of the first byte of the window in {@link #segment()}. */
    public final long base() {
        return base;
    }

    /** Number of bytes in the window. */
    public final int limit() {
        return limit;
    }

    protected final int u8(int offset) {
        checkField(offset, 1);
        return BigEndian.u8(segment, base + offset);
    }

    protected final void u8(int offset, int value) {
        checkField(offset, 1);
        BigEndian.u8(segment, base + offset, value);
    }

    protected final int u16(int offset) {
        checkField(offset, 2);
        return BigEndian.u16(segment, base + offset);
    }

    protected final void u16(int offset, int value) {
        checkField(offset, 2);
        BigEndian.u16(segment, base + offset, value);
    }

    protected final int i32(int offset) {
        checkField(offset, 4);
        return BigEndian.i32(segment, base + offset);
    }

    protected final void i32(int offset, int value) {
        checkField(offset, 4);
        BigEndian.i32(segment, base + offset, value);
    }

    protected final long u48(int offset) {
        checkField(offset, 6);
        return BigEndian.u48(segment, base + offset);
    }

    protected final void u48(int offset, long value) {
        checkField(offset, 6);
        BigEndian.u48(segment, base + offset, value);
    }

    /** Throws when {@code [offset, offset + width)} is not inside the window. */
    protected final void checkField(int offset, int width) {
        if ((offset | (limit - width - offset)) < 0) {
            throw outside(offset, width);
        }
    }

    private IndexOutOfBoundsException outside(int offset, int width) {
        return new IndexOutOfBoundsException(getClass().getSimpleName() + ": field [" + offset + ", "
            + (offset + width) + ") outside a " + limit + "-byte window");
    }
}
