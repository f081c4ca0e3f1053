package dev.tern.nio;

import org.agrona.BufferUtil;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;

/**
 * The memory behind a {@link ByteBuffer}, as the {@link MemorySegment} and offset Tern's rings copy to and from,
 * without allocating per call.
 *
 * <p>{@code MemorySegment.ofBuffer} makes a new segment each time. Instead, a direct buffer's address is read
 * (Agrona's {@link BufferUtil#address}, the JDK's own field) and used as an offset into one segment spanning all
 * of memory; a heap buffer's array is wrapped once and kept while the channel goes on using the same array (the
 * common case: one buffer reused for every read). The buffer must stay reachable for the copy: callers hold it.
 *
 * <p>One instance per channel direction; used under that direction's lock.
 */
final class Buffers {
    /** All of memory; offsets into it are native addresses. Restricted: needs --enable-native-access. */
    private static final MemorySegment EVERYTHING = MemorySegment.NULL.reinterpret(Long.MAX_VALUE);

    private byte[] array;
    private MemorySegment arraySegment;

    /** The segment holding {@code buffer}'s bytes; {@link #offset} says where its position is in it. */
    MemorySegment segment(ByteBuffer buffer) {
        if (buffer.isDirect()) {
            return EVERYTHING;
        }
        final byte[] backing = BufferUtil.array(buffer);
        if (backing != array) {
            array = backing;
            arraySegment = MemorySegment.ofArray(backing);
        }
        return arraySegment;
    }

    /** The offset of {@code buffer}'s position in the segment {@link #segment} returned for it. */
    static long offset(ByteBuffer buffer) {
        return buffer.isDirect() ? BufferUtil.address(buffer) + buffer.position()
            : BufferUtil.arrayOffset(buffer) + buffer.position();
    }
}
