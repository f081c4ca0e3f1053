package dev.tern.ethernet.memory;

import dev.tern.core.io.ByteRing;
import dev.tern.ethernet.link.FrameHandler;
import dev.tern.ethernet.link.Link;
import dev.tern.ethernet.link.Offloads;
import dev.tern.ethernet.link.TxFrame;
import dev.tern.ethernet.wire.EthernetHeader;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * A cable between two stacks in one process that run on different threads: two lock-free single-producer /
 * single-consumer rings, one per direction, like the descriptor rings of two NICs wired back to back.
 *
 * <pre>
 *   a ring, as seen by its producer (one end) and consumer (the other end)
 *   +--------+-----------------------+--------+---------------------+-----+------------------+
 *   | length | frame, padded to 8    | length | frame ...           |  -n | (unused to end)  |
 *   +--------+-----------------------+--------+---------------------+-----+------------------+
 *     int, 8-byte header                        a negative length: skip n bytes to the ring's start
 * </pre>
 *
 * <p>{@link Link#claim} hands out room directly in the outbound ring (always contiguous: a frame never wraps), so
 * the stack writes the frame where the peer will read it, with no copy. {@link Link#flush} publishes everything
 * committed with one release store. The peer's {@link Link#receive} reads frames in place and frees them with one
 * release store after the batch. Nothing is shared but the two positions of each ring, so the only cache traffic
 * between the threads is the frames themselves and one line per batch each way.
 *
 * <p>No impairments, no virtual time: for those use {@link MemoryWire}. Each end must be used by one thread.
 */
public final class MemoryPipe implements AutoCloseable {
    private static final int HEADER = 8;

    private final Arena arena = Arena.ofShared();
    private final End first;
    private final End second;

    private MemoryPipe(long firstMac, long secondMac, int mtu, int ringBytes, boolean checksumOffload) {
        final ByteRing forward = new ByteRing(arena.allocate(ringBytes, 4096));
        final ByteRing backward = new ByteRing(arena.allocate(ringBytes, 4096));
        this.first = new End("pipe:a", firstMac, mtu, backward, forward, checksumOffload);
        this.second = new End("pipe:b", secondMac, mtu, forward, backward, checksumOffload);
    }

    /**
     * A pipe whose ends have MACs {@code firstMac} and {@code secondMac}; each direction buffers
     * {@code ringBytes} (a power of two, at least 16 maximum frames). With {@code checksumOffload} the ends
     * advertise checksum offload and frames arrive marked verified (nothing on a pipe can corrupt them).
     */
    public static MemoryPipe create(long firstMac, long secondMac, int mtu, int ringBytes, boolean checksumOffload) {
        if (Integer.bitCount(ringBytes) != 1 || ringBytes < 16 * (mtu + EthernetHeader.VLAN_LENGTH + HEADER)) {
            throw new IllegalArgumentException("ring must be a power of two holding 16 frames of MTU " + mtu
                + ", got " + ringBytes);
        }
        return new MemoryPipe(firstMac, secondMac, mtu, ringBytes, checksumOffload);
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

    /** One end of the pipe. Owned by one thread. */
    private static final class End implements Link {
        private final String name;
        private final long mac;
        private final int mtu;
        private final ByteRing inbound;
        private final ByteRing outbound;
        private final MemorySegment in;
        private final MemorySegment out;
        private final int maxRecord;
        private final boolean checksumOffload;
        private long claimedAt = -1;
        private long committedTo;

        End(String name, long mac, int mtu, ByteRing inbound, ByteRing outbound, boolean checksumOffload) {
            this.name = name;
            this.mac = mac;
            this.mtu = mtu;
            this.inbound = inbound;
            this.outbound = outbound;
            this.in = inbound.memory();
            this.out = outbound.memory();
            this.maxRecord = align(HEADER + mtu + EthernetHeader.VLAN_LENGTH);
            this.checksumOffload = checksumOffload;
            this.committedTo = outbound.producerPosition();
        }

        private static int align(int length) {
            return (length + 7) & ~7;
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
            final int available = inbound.available();
            if (available == 0) {
                return 0;
            }
            final long start = inbound.consumerPosition();
            final long end = start + available;
            final int flags = checksumOffload ? Offloads.RX_CHECKSUM_OK : 0;
            long position = start;
            int frames = 0;
            while (position != end && frames < maxFrames) {
                final int index = inbound.index(position);
                final int length = in.get(ValueLayout.JAVA_INT, index);
                if (length < 0) {
                    position += -length; // padding to the end of the ring
                    continue;
                }
                handler.onFrame(in, index + HEADER, length, flags);
                position += align(HEADER + length);
                frames++;
            }
            inbound.consume((int) (position - start));
            return frames;
        }

        @Override
        public boolean claim(TxFrame frame) {
            long position = committedTo;
            int index = outbound.index(position);
            final int tail = outbound.contiguous(position);
            final int free = outbound.capacity() - (int) (position - outbound.consumerPositionAcquire());
            if (tail < maxRecord) {
                // Not enough room before the end: skip to the start (a frame never wraps).
                if (free < tail + maxRecord) {
                    return false;
                }
                out.set(ValueLayout.JAVA_INT, index, -tail);
                position += tail;
                committedTo = position;
                index = 0;
            } else if (free < maxRecord) {
                return false;
            }
            claimedAt = position;
            frame.claimed(out, index + HEADER, maxRecord - HEADER, position);
            return true;
        }

        @Override
        public void commit(TxFrame frame) {
            final int index = outbound.index(claimedAt);
            out.set(ValueLayout.JAVA_INT, index, frame.length());
            committedTo = claimedAt + align(HEADER + frame.length());
            claimedAt = -1;
        }

        @Override
        public void abort(TxFrame frame) {
            claimedAt = -1;
        }

        @Override
        public int flush() {
            final long published = outbound.producerPosition();
            if (committedTo == published) {
                return 0;
            }
            outbound.publish(committedTo);
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
