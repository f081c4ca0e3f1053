package dev.tern.ethernet.memory;

import dev.tern.ethernet.link.FrameHandler;
import dev.tern.ethernet.link.Link;
import dev.tern.ethernet.link.Offloads;
import dev.tern.ethernet.link.TxFrame;
import dev.tern.ethernet.wire.EthernetHeader;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;

/**
 * A cable between two stacks in one process that run on different threads: two lock-free single-producer /
 * single-consumer rings, one per direction, like the descriptor rings of two NICs wired back to back.
 *
 * <pre>
 *   a ring, as seen by its producer (one end) and consumer (the other end); records start on 64-byte lines
 *   +-------+------+--------------------+-------+------+-------------+-------+-----+-----+-----------------+
 *   |length | span | frame, padded to 64|length |  0   | frame ...   |   0   | ... |  -n | (unused to end) |
 *   +-------+------+--------------------+-------+------+-------------+-------+-----+-----+-----------------+
 *     a batch's first header: its length and the bytes the batch spans    ^ not yet: the consumer stops here
 *     a negative length: skip n bytes to the ring's start
 * </pre>
 *
 * <p>{@link Link#claim} hands out room directly in the outbound ring (always contiguous: a frame never wraps), so
 * the stack writes the frame where the peer will read it, with no copy. A frame is published by its own header:
 * {@link Link#commit} writes the header of a frame and zeroes the next one, and {@link Link#flush} makes the batch
 * visible with one release store, of the batch's first header, which also says how many bytes the batch spans.
 * The peer's {@link Link#receive} polls the header at its read position with an acquire load, reads the batch's
 * frames in place without looking past its end (the next header's line is the sender's until it sends again), and
 * publishes how far it read (for the sender's room).
 *
 * <p>Why headers rather than a shared producer position: a frame's trip to the other core is then one cache line
 * the reader was waiting on, holding the header and the frame's first 56 bytes (all of an Ethernet, IP and UDP or
 * TCP header), instead of a position line followed by the frame's lines. The consumer's position sits on a line of
 * its own that the sender reads only when its cached copy says the ring is full, so the sender does not fetch the
 * reader's line for every frame. On the 2-vCPU VM the pipe was measured on, a line takes about 250 ns to pass
 * from one thread to the other, so each line saved on a frame's path is a quarter of a microsecond of round trip
 * (docs/MEASUREMENTS.md, "Benchmarks": 0.75 µs against 1.08-1.26 µs for the pipe alone).
 *
 * <p>No impairments, no virtual time: for those use {@link MemoryWire}. Each end must be used by one thread.
 */
public final class MemoryPipe implements AutoCloseable {
    /**
     * A record's header, a long: the frame's length in its low half (negative: padding to skip), and in a batch's
     * first header the bytes the batch spans in its high half. The frame follows, 8-byte aligned.
     */
    private static final int HEADER = 8;
    /** Records start on cache lines, so that a frame's first line carries its header. */
    private static final int RECORD_ALIGN = 64;
    private static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();

    private final Arena arena = Arena.ofShared();
    private final End first;
    private final End second;

    private MemoryPipe(long firstMac, long secondMac, int mtu, int ringBytes, boolean checksumOffload) {
        final Direction forward = new Direction(arena, ringBytes);
        final Direction backward = new Direction(arena, ringBytes);
        this.first = new End("pipe:a", firstMac, mtu, backward, forward, checksumOffload);
        this.second = new End("pipe:b", secondMac, mtu, forward, backward, checksumOffload);
    }

    /**
     * A pipe whose ends have MACs {@code firstMac} and {@code secondMac}; each direction buffers
     * {@code ringBytes} (a power of two, at least 16 maximum frames). With {@code checksumOffload} the ends
     * advertise checksum offload and frames arrive marked verified (nothing on a pipe can corrupt them).
     */
    public static MemoryPipe create(long firstMac, long secondMac, int mtu, int ringBytes, boolean checksumOffload) {
        if (Integer.bitCount(ringBytes) != 1 || ringBytes < 16 * recordSize(mtu + EthernetHeader.VLAN_LENGTH)) {
            throw new IllegalArgumentException("ring must be a power of two holding 16 frames of MTU " + mtu
                + ", got " + ringBytes);
        }
        return new MemoryPipe(firstMac, secondMac, mtu, ringBytes, checksumOffload);
    }

    /** The room a frame of {@code frameLength} bytes takes in a ring, its header included. */
    private static int recordSize(int frameLength) {
        return (HEADER + frameLength + RECORD_ALIGN - 1) & -RECORD_ALIGN;
    }

    public Link first() {
        return first;
    }

    public Link second() {
        return second;
    }

    @Override
    public void close() {
        arena.close();
    }

    /**
     * One direction: the ring, and the consumer's position on a line of its own (written by the consumer after each
     * batch, read by the producer only when its cached copy leaves too little room).
     */
    private static final class Direction {
        final MemorySegment ring;
        final int mask;
        final MemorySegment consumed;

        Direction(Arena arena, int ringBytes) {
            this.ring = arena.allocate(ringBytes, 4096);
            this.mask = ringBytes - 1;
            this.consumed = arena.allocate(2 * RECORD_ALIGN, 2 * RECORD_ALIGN);
        }
    }

    /** One end of the pipe. Owned by one thread. */
    private static final class End implements Link {
        private final String name;
        private final long mac;
        private final int mtu;
        private final boolean checksumOffload;
        private final MemorySegment in;
        private final int inMask;
        private final MemorySegment inConsumed;
        private final MemorySegment out;
        private final int outMask;
        private final int capacity;
        private final MemorySegment outConsumed;
        private final int maxRecord;
        /** Receive side: where the next record's header is. */
        private long readPosition;
        /** Receive side: the end of the batch being read; past it, the next batch's header is polled. */
        private long visibleTo;
        /** Send side: the claimed record's position, or -1. */
        private long claimedAt = -1;
        /** Send side: the end of what was committed; its header holds 0 until a record is committed there. */
        private long committedTo;
        /** Send side: the first record not yet visible to the peer; its header is written last, by {@link #flush}. */
        private long publishedTo;
        /** The length {@link #flush} writes at {@link #publishedTo}, with the batch's span (0: nothing committed since). */
        private int firstHeader;
        /** The consumer's position as last read: the room the producer knows it has, read again when it runs out. */
        private long consumedSeen;

        End(String name, long mac, int mtu, Direction inbound, Direction outbound, boolean checksumOffload) {
            this.name = name;
            this.mac = mac;
            this.mtu = mtu;
            this.checksumOffload = checksumOffload;
            this.in = inbound.ring;
            this.inMask = inbound.mask;
            this.inConsumed = inbound.consumed;
            this.out = outbound.ring;
            this.outMask = outbound.mask;
            this.capacity = outbound.mask + 1;
            this.outConsumed = outbound.consumed;
            this.maxRecord = recordSize(mtu + EthernetHeader.VLAN_LENGTH);
        }

        @Override
        public String name() {
            return name;
        }

        @Override
        public long macAddress() {
            return mac;
        }

        @Override
        public int mtu() {
            return mtu;
        }

        @Override
        public int offloads() {
            return checksumOffload ? Offloads.TX_IPV4_CHECKSUM | Offloads.TX_L4_CHECKSUM | Offloads.RX_CHECKSUM : 0;
        }

        @Override
        public int receive(FrameHandler handler, int maxFrames) {
            final long start = readPosition;
            final int flags = checksumOffload ? Offloads.RX_CHECKSUM_OK : 0;
            long position = start;
            int frames = 0;
            while (frames < maxFrames) {
                final int index = (int) position & inMask;
                final int length;
                if (position == visibleTo) {
                    final long header = (long) LONG.getAcquire(in, (long) index);
                    if (header == 0) {
                        break;      // not yet published
                    }
                    length = (int) header;
                    visibleTo = position + (header >>> 32);
                } else {
                    length = (int) in.get(ValueLayout.JAVA_LONG, index);   // published with the batch's first
                }
                if (length < 0) {
                    if (index - length != inMask + 1) {
                        throw corrupt(position, length);
                    }
                    position += -length; // padding to the end of the ring
                    continue;
                }
                if (length > maxRecord - HEADER) {
                    throw corrupt(position, length);
                }
                handler.onFrame(in, index + HEADER, length, flags);
                position += recordSize(length);
                frames++;
                if (position == visibleTo) {
                    break;          // the batch is done: its successor's header is not ours to fetch yet
                }
            }
            if (position != start) {
                readPosition = position;
                LONG.setRelease(inConsumed, 0L, position);
            }
            return frames;
        }

        /** A header no sender wrote: the protocol is broken (a bug, not input), so say so rather than read garbage. */
        private IllegalStateException corrupt(long position, int length) {
            return new IllegalStateException(name + ": corrupt record header " + length + " at ring position " + position);
        }

        /** Room from {@code position} to what the consumer has freed, reading its position again if short of {@code need}. */
        private boolean hasRoom(long position, int need) {
            if (capacity - (int) (position - consumedSeen) >= need) {
                return true;
            }
            consumedSeen = (long) LONG.getAcquire(outConsumed, 0L);
            return capacity - (int) (position - consumedSeen) >= need;
        }

        @Override
        public boolean claim(TxFrame frame) {
            long position = committedTo;
            int index = (int) position & outMask;
            final int tail = capacity - index;
            // A record needs room for itself and for the next header, which its commit zeroes.
            if (tail < maxRecord + HEADER) {
                // Not enough room before the end: skip to the start (a frame never wraps).
                if (!hasRoom(position, tail + maxRecord + HEADER)) {
                    return false;
                }
                writeHeader(position, -tail, position + tail);
                position += tail;
                index = 0;
            } else if (!hasRoom(position, maxRecord + HEADER)) {
                return false;
            }
            claimedAt = position;
            frame.claimed(out, index + HEADER, maxRecord - HEADER, position);
            return true;
        }

        /**
         * Commits a record's header {@code value} at {@code position}, the next record starting at {@code next}: the
         * next header is zeroed first (it holds an older lap's bytes), and the first record of a batch keeps its
         * header for {@link #flush}, so that nothing of the batch is visible before it.
         */
        private void writeHeader(long position, int value, long next) {
            out.set(ValueLayout.JAVA_LONG, (int) next & outMask, 0L);
            if (position == publishedTo) {
                firstHeader = value;
            } else {
                out.set(ValueLayout.JAVA_LONG, (int) position & outMask, value & 0xFFFF_FFFFL);
            }
            committedTo = next;
        }

        @Override
        public void commit(TxFrame frame) {
            final long position = claimedAt;
            writeHeader(position, frame.length(), position + recordSize(frame.length()));
            claimedAt = -1;
        }

        @Override
        public void abort(TxFrame frame) {
            claimedAt = -1;
        }

        @Override
        public int flush() {
            if (committedTo == publishedTo) {
                return 0;
            }
            final long span = committedTo - publishedTo;
            LONG.setRelease(out, (long) ((int) publishedTo & outMask), span << 32 | (firstHeader & 0xFFFF_FFFFL));
            publishedTo = committedTo;
            firstHeader = 0;
            return 1;
        }

        @Override
        public void addMulticast(long groupMac) {
            // A cable delivers everything; the Ethernet layer filters.
        }

        @Override
        public void removeMulticast(long groupMac) {
        }

        @Override
        public void close() {
        }
    }
}
