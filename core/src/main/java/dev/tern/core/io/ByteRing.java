package dev.tern.core.io;

import dev.tern.core.checksum.InternetChecksum;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * A byte ring in off-heap memory with one producer and one consumer, which may be different threads: a socket's
 * send buffer (the application produces, the stack consumes) or receive buffer (the stack produces, the
 * application consumes).
 *
 * <pre>
 *   memory (capacity a power of two)
 *   +-----------+==========================+-----------------+
 *   |   free    |  readable bytes          |      free       |
 *   +-----------+==========================+-----------------+
 *               ^ consumer position        ^ producer position     (both grow forever; index = position & mask)
 * </pre>
 *
 * <p>Positions are 64-bit byte counts that never wrap in practice. The producer publishes bytes with a release store
 * of its position after copying them; the consumer frees space with a release store of its own. Each side reads the
 * other's position with an acquire load, so the bytes it sees are complete. Besides plain reads, the consumer can
 * {@link #peek} at any readable position without consuming (TCP retransmits from its send ring) and
 * {@link #consume} later (when data is acknowledged).
 *
 * <p>Nothing here allocates. The ring does not own its memory: the caller carves it from a slab.
 */
public final class ByteRing {
    private static final VarHandle PRODUCER;
    private static final VarHandle CONSUMER;

    static {
        try {
            final MethodHandles.Lookup lookup = MethodHandles.lookup();
            PRODUCER = lookup.findVarHandle(ByteRing.class, "producerPosition", long.class);
            CONSUMER = lookup.findVarHandle(ByteRing.class, "consumerPosition", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final MemorySegment memory;
    private final int capacity;
    private final int mask;
    // The two positions sit on different cache lines, so producer and consumer threads do not false-share.
    @SuppressWarnings("unused")
    private long pad0, pad1, pad2, pad3, pad4, pad5, pad6;
    private volatile long producerPosition;
    @SuppressWarnings("unused")
    private long pad8, pad9, pad10, pad11, pad12, pad13, pad14;
    private volatile long consumerPosition;

    /** A ring over {@code memory}, whose size must be a power of two. */
    public ByteRing(MemorySegment memory) {
        final long size = memory.byteSize();
        if (size < 2 || size > (1 << 30) || Long.bitCount(size) != 1) {
            throw new IllegalArgumentException("ring size must be a power of two up to 1 GiB, got " + size);
        }
        this.memory = memory;
        this.capacity = (int) size;
        this.mask = capacity - 1;
    }

    public int capacity() {
        return capacity;
    }

    public MemorySegment memory() {
        return memory;
    }

    // ------------------------------------------------------------------------------------------- producer side

    /** Producer: the position the next written byte gets. */
    public long producerPosition() {
        return (long) PRODUCER.getOpaque(this);
    }

    /** Producer: the consumer's position, read with acquire ordering (the bytes before it are free). */
    public long consumerPositionAcquire() {
        return (long) CONSUMER.getAcquire(this);
    }

    /** Producer: room for more bytes. */
    public int freeSpace() {
        return capacity - (int) ((long) PRODUCER.getOpaque(this) - (long) CONSUMER.getAcquire(this));
    }

    /** Producer: copies up to {@code length} bytes in and publishes them; returns how many fit. */
    public int write(MemorySegment source, long offset, int length) {
        final long producer = (long) PRODUCER.getOpaque(this);
        final int free = capacity - (int) (producer - (long) CONSUMER.getAcquire(this));
        final int count = Math.min(free, length);
        if (count > 0) {
            copyIn(producer, source, offset, count);
            PRODUCER.setRelease(this, producer + count);
        }
        return count;
    }

    /** Producer: copies {@code length} bytes to {@code position} (at or after the producer position) without publishing. */
    public void put(long position, MemorySegment source, long offset, int length) {
        copyIn(position, source, offset, length);
    }

    /** Producer: publishes everything up to {@code position} (which must not run past the free space). */
    public void publish(long position) {
        PRODUCER.setRelease(this, position);
    }

    private void copyIn(long position, MemorySegment source, long offset, int length) {
        final int index = (int) position & mask;
        final int first = Math.min(length, capacity - index);
        MemorySegment.copy(source, offset, memory, index, first);
        if (first < length) {
            MemorySegment.copy(source, offset + first, memory, 0, length - first);
        }
    }

    // ------------------------------------------------------------------------------------------- consumer side

    /** Consumer: the position of the oldest unconsumed byte. */
    public long consumerPosition() {
        return (long) CONSUMER.getOpaque(this);
    }

    /** Consumer: bytes published and not yet consumed. */
    public int available() {
        return (int) ((long) PRODUCER.getAcquire(this) - (long) CONSUMER.getOpaque(this));
    }

    /** Consumer: copies out and consumes up to {@code length} bytes; returns how many. */
    public int read(MemorySegment destination, long offset, int length) {
        final long consumer = (long) CONSUMER.getOpaque(this);
        final int count = Math.min(length, (int) ((long) PRODUCER.getAcquire(this) - consumer));
        if (count > 0) {
            copyOut(consumer, destination, offset, count);
            CONSUMER.setRelease(this, consumer + count);
        }
        return count;
    }

    /**
     * Consumer: copies {@code length} published bytes starting at {@code position} (between the consumer and the
     * producer position) without consuming them.
     */
    public void peek(long position, MemorySegment destination, long offset, int length) {
        copyOut(position, destination, offset, length);
    }

    /**
     * Consumer: {@link #peek} that also adds the copied bytes to an unfolded Internet checksum {@code sum}, in the
     * same pass ({@link InternetChecksum#copyAndAdd}); returns the new sum. The bytes count as starting at an even
     * offset of the checksummed data, as with {@link InternetChecksum#add}.
     */
    public long peekAndAdd(long sum, long position, MemorySegment destination, long offset, int length) {
        final int index = (int) position & mask;
        final int first = Math.min(length, capacity - index);
        long total = InternetChecksum.copyAndAdd(sum, memory, index, destination, offset, first);
        if (first < length) {
            final long second = InternetChecksum.copyAndAdd(0, memory, 0, destination, offset + first, length - first);
            // RFC 1071 §2(B): after an odd first piece, the second one's bytes sit one position further in the 16-bit
            // words (a high byte becomes a low byte), so its sum counts byte-swapped.
            total += (first & 1) == 0 ? second : InternetChecksum.swapped(second);
        }
        return total;
    }

    /** Consumer: frees {@code count} bytes (they must be published). */
    public void consume(int count) {
        CONSUMER.setRelease(this, (long) CONSUMER.getOpaque(this) + count);
    }

    private void copyOut(long position, MemorySegment destination, long offset, int length) {
        final int index = (int) position & mask;
        final int first = Math.min(length, capacity - index);
        MemorySegment.copy(memory, index, destination, offset, first);
        if (first < length) {
            MemorySegment.copy(memory, 0, destination, offset + first, length - first);
        }
    }

    /** Where {@code position} lies in {@link #memory()}. */
    public int index(long position) {
        return (int) position & mask;
    }

    /** Bytes from {@code position} to the end of the memory: the longest contiguous run there. */
    public int contiguous(long position) {
        return capacity - ((int) position & mask);
    }
}
