package dev.tern.core.memory;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * Network byte order (big-endian) access to a {@link MemorySegment} at any alignment.
 *
 * <p>These helpers check only the segment's own bounds (as every {@code MemorySegment} access does). Code that reads
 * frames goes through a {@link Flyweight}, which also checks against the frame's length.
 */
public final class BigEndian {
    public static final ValueLayout.OfByte BYTE = ValueLayout.JAVA_BYTE;
    public static final ValueLayout.OfShort SHORT = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    public static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    public static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);

    private BigEndian() {
    }

    public static int u8(MemorySegment segment, long offset) {
        return Byte.toUnsignedInt(segment.get(BYTE, offset));
    }

    public static void u8(MemorySegment segment, long offset, int value) {
        segment.set(BYTE, offset, (byte) value);
    }

    public static int u16(MemorySegment segment, long offset) {
        return Short.toUnsignedInt(segment.get(SHORT, offset));
    }

    public static void u16(MemorySegment segment, long offset, int value) {
        segment.set(SHORT, offset, (short) value);
    }

    /** A 32-bit field as a Java int (IPv4 addresses, sequence numbers): the bits, not an unsigned value. */
    public static int i32(MemorySegment segment, long offset) {
        return segment.get(INT, offset);
    }

    public static void i32(MemorySegment segment, long offset, int value) {
        segment.set(INT, offset, value);
    }

    /** A 48-bit field (a MAC address) in the low bits of a long. */
    public static long u48(MemorySegment segment, long offset) {
        return ((long) u16(segment, offset) << 32) | Integer.toUnsignedLong(segment.get(INT, offset + 2));
    }

    public static void u48(MemorySegment segment, long offset, long value) {
        segment.set(SHORT, offset, (short) (value >>> 32));
        segment.set(INT, offset + 2, (int) value);
    }

    /** Writes {@code length} zero bytes (padding, cleared fields) without creating a slice. */
    public static void zero(MemorySegment segment, long offset, int length) {
        long position = offset;
        final long end = offset + length;
        while (end - position >= 8) {
            segment.set(LONG, position, 0L);
            position += 8;
        }
        while (position < end) {
            segment.set(BYTE, position++, (byte) 0);
        }
    }

    public static long i64(MemorySegment segment, long offset) {
        return segment.get(LONG, offset);
    }

    public static void i64(MemorySegment segment, long offset, long value) {
        segment.set(LONG, offset, value);
    }
}
