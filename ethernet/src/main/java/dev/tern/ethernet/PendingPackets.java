package dev.tern.ethernet;

import dev.tern.core.memory.FramePool;
import org.agrona.concurrent.status.AtomicCounter;

import java.lang.foreign.MemorySegment;

/**
 * Packets waiting for a neighbour's link-layer address, for ARP's cache and IPv6 neighbour discovery's alike
 * (RFC 1122 §2.3.2.2, RFC 4861 §7.2.2): each is copied into a bounded {@link FramePool} and chained per neighbour
 * entry in FIFO order, at most {@code perEntry} for one neighbour (the oldest is dropped beyond that, as Linux does)
 * and {@code total} for all.
 *
 * <p>Owned by the shard thread; not thread-safe.
 */
public final class PendingPackets implements AutoCloseable {
    private final int perEntry;
    private final FramePool pool;
    private final int[] next;
    private final int[] length;
    private final int[] head;
    private final int[] tail;
    private final int[] count;
    private final AtomicCounter overflow;
    private final AtomicCounter noBuffer;

    /**
     * @param entries    neighbour entries (indices 0..entries-1)
     * @param perEntry   packets one neighbour may hold
     * @param total      packets all neighbours may hold together
     * @param packetSize the largest packet (the link's MTU)
     * @param overflow   counts packets dropped: the oldest beyond {@code perEntry}, or one with no neighbour to wait for
     * @param noBuffer   counts packets that found every buffer taken
     */
    public PendingPackets(int entries, int perEntry, int total, int packetSize, AtomicCounter overflow,
                          AtomicCounter noBuffer) {
        this.perEntry = perEntry;
        this.pool = FramePool.allocate(total, packetSize);
        this.next = new int[total];
        this.length = new int[total];
        this.head = new int[entries];
        this.tail = new int[entries];
        this.count = new int[entries];
        this.overflow = overflow;
        this.noBuffer = noBuffer;
    }

    /** A buffer to copy a waiting packet into, or -1 when every buffer is taken (counted). */
    public int begin() {
        final int buffer = pool.acquire();
        if (buffer < 0) {
            noBuffer.incrementRelease();
        }
        return buffer;
    }

    public MemorySegment segment() {
        return pool.slab();
    }

    public long offset(int buffer) {
        return pool.offset(buffer);
    }

    public int capacity() {
        return pool.bufferSize();
    }

    /** Queues the packet of {@code bytes} bytes in {@code buffer} behind {@code entry}'s others. */
    public void commit(int entry, int buffer, int bytes) {
        if (count[entry] == perEntry) {
            final int oldest = head[entry];
            head[entry] = next[oldest];
            count[entry]--;
            pool.release(oldest);
            overflow.incrementRelease();
        }
        length[buffer] = bytes;
        next[buffer] = -1;
        if (count[entry] == 0) {
            head[entry] = buffer;
        } else {
            next[tail[entry]] = buffer;
        }
        tail[entry] = buffer;
        count[entry]++;
    }

    /** Drops a packet that has no neighbour to wait for (counted as an overflow). */
    public void refuse(int buffer) {
        overflow.incrementRelease();
        pool.release(buffer);
    }

    /** Gives a buffer from {@link #begin} back unqueued. */
    public void abort(int buffer) {
        pool.release(buffer);
    }

    /** Takes the oldest waiting packet of {@code entry}: its buffer ({@link #release} it), or -1 when none is left. */
    public int poll(int entry) {
        if (count[entry] == 0) {
            return -1;
        }
        final int buffer = head[entry];
        head[entry] = next[buffer];
        count[entry]--;
        return buffer;
    }

    public int length(int buffer) {
        return length[buffer];
    }

    public void release(int buffer) {
        pool.release(buffer);
    }

    /** Forgets {@code entry}'s packets (a new neighbour in a reused entry, or one deleted). */
    public void clear(int entry) {
        int buffer;
        while ((buffer = poll(entry)) >= 0) {
            pool.release(buffer);
        }
    }

    /**
     * The neighbour answered: sends {@code entry}'s packets to {@code mac} as {@code etherType} frames, oldest first;
     * each is counted in {@code sent}, or in {@code lost} when the link had no room for it.
     */
    public void transmit(int entry, EthernetLayer ethernet, long mac, int etherType, AtomicCounter sent,
                         AtomicCounter lost) {
        int buffer;
        while ((buffer = poll(entry)) >= 0) {
            if (ethernet.begin(mac, etherType)) {
                MemorySegment.copy(pool.slab(), pool.offset(buffer), ethernet.frame().segment(),
                    ethernet.payloadOffset(), length[buffer]);
                ethernet.send(length[buffer]);
                sent.incrementRelease();
            } else {
                lost.incrementRelease();
            }
            pool.release(buffer);
        }
    }

    /** Buffers in use, all neighbours together. */
    public int inUse() {
        return pool.inUse();
    }

    @Override
    public void close() {
        pool.close();
    }
}
