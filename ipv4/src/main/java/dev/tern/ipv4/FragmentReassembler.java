package dev.tern.ipv4;

import dev.tern.core.memory.FramePool;
import dev.tern.core.time.Timers;
import dev.tern.ipv4.wire.Ipv4Header;
import org.agrona.concurrent.status.AtomicCounter;

import java.lang.foreign.MemorySegment;

/**
 * Reassembly of fragmented IPv4 datagrams (RFC 791 §3.2, with the bookkeeping of RFC 815).
 *
 * <p>Each datagram being reassembled, identified by (source, destination, protocol, identification), owns one
 * slot: a 64 KiB buffer from a {@link FramePool} plus the byte ranges received so far. Slots are the global memory
 * bound; when all are busy the oldest datagram is evicted (counted), so a flood of bogus fragments cannot keep
 * genuine datagrams out forever.
 *
 * <pre>
 *   slot buffer
 *   +------------------+---------------------------------------------+
 *   | header room (60) | payload, at HEADER_ROOM + fragment offset   |
 *   +--------+---------+---------------------------------------------+
 *            ^ fragment 0's header is copied to end at HEADER_ROOM, so the finished datagram is contiguous
 * </pre>
 *
 * <p>Rules, each counted when it drops something:
 * <ul>
 *   <li>A fragment that overlaps another of the same datagram discards the whole datagram: overlapping fragments
 *       are an attack on IDSs, and RFC 5722 (IPv6) and RFC 8900 recommend this for IPv4 too. An exact duplicate
 *       (same offset and length) is not an overlap; it is ignored.</li>
 *   <li>Fragments other than the last must carry a multiple of 8 bytes; no datagram may exceed 65535 bytes
 *       ("ping of death"); a datagram may have at most {@code maxFragmentsPerDatagram} fragments; two last
 *       fragments must agree on the length.</li>
 *   <li>A datagram not complete after the reassembly timeout is discarded; if its first fragment arrived, an ICMP
 *       time exceeded (code 1) goes back to the sender (RFC 792, RFC 1122 §3.3.2).</li>
 * </ul>
 *
 * <p>Owned by the shard thread; not thread-safe.
 */
final class FragmentReassembler {
    static final int HEADER_ROOM = Ipv4Header.MAX_LENGTH;
    /** The most payload a datagram with a minimal header can have. */
    static final int MAX_PAYLOAD = Ipv4Header.MAX_TOTAL_LENGTH - Ipv4Header.MIN_LENGTH;

    private final Ipv4Layer ipv4;
    private final Timers timers;
    private final int timerOwner;
    private final long timeoutNs;
    private final int maxFragments;
    private final FramePool buffers;
    private final int slots;
    private final boolean[] active;
    private final int[] source;
    private final int[] destination;
    private final int[] protocol;
    private final int[] identification;
    private final int[] buffer;
    private final long[] timerId;
    private final long[] startedNs;
    private final int[] totalPayload;
    private final int[] receivedBytes;
    private final int[] firstHeaderLength;
    private final int[] rangeCount;
    private final int[] rangeStart;
    private final int[] rangeEnd;
    private final Ipv4Header header = new Ipv4Header();

    private final AtomicCounter fragmentsReceived;
    private final AtomicCounter datagramsReassembled;
    private final AtomicCounter duplicates;
    private final AtomicCounter overlaps;
    private final AtomicCounter badFragments;
    private final AtomicCounter inconsistent;
    private final AtomicCounter tooManyFragments;
    private final AtomicCounter timeouts;
    private final AtomicCounter evicted;

    FragmentReassembler(Ipv4Layer ipv4, Timers timers, Ipv4Config config, dev.tern.core.counters.CountersFile counters) {
        this.ipv4 = ipv4;
        this.timers = timers;
        this.timeoutNs = config.reassemblyTimeoutNs();
        this.maxFragments = config.maxFragmentsPerDatagram();
        this.slots = config.reassemblySlots();
        this.buffers = FramePool.allocate(slots, HEADER_ROOM + MAX_PAYLOAD + 8);
        this.active = new boolean[slots];
        this.source = new int[slots];
        this.destination = new int[slots];
        this.protocol = new int[slots];
        this.identification = new int[slots];
        this.buffer = new int[slots];
        this.timerId = new long[slots];
        this.startedNs = new long[slots];
        this.totalPayload = new int[slots];
        this.receivedBytes = new int[slots];
        this.firstHeaderLength = new int[slots];
        this.rangeCount = new int[slots];
        this.rangeStart = new int[slots * maxFragments];
        this.rangeEnd = new int[slots * maxFragments];
        this.fragmentsReceived = counters.counter("ipv4.reasm.fragments");
        this.datagramsReassembled = counters.counter("ipv4.reasm.ok");
        this.duplicates = counters.counter("ipv4.reasm.duplicates");
        this.overlaps = counters.counter("ipv4.reasm.overlap_discards");
        this.badFragments = counters.counter("ipv4.reasm.bad_fragments");
        this.inconsistent = counters.counter("ipv4.reasm.inconsistent_discards");
        this.tooManyFragments = counters.counter("ipv4.reasm.too_many_fragments");
        this.timeouts = counters.counter("ipv4.reasm.timeouts");
        this.evicted = counters.counter("ipv4.reasm.evicted");
        this.timerOwner = timers.register(this::onTimeout);
    }

    /**
     * Takes one fragment (its header already checked, wrapped by {@code fragment}); returns the slot of the
     * datagram if this fragment completed it, else -1 (held or dropped). A completed slot must be
     * {@link #release}d after delivery.
     */
    int accept(Ipv4Header fragment, long nowNs) {
        fragmentsReceived.incrementRelease();
        final int headerLength = fragment.headerLength();
        final int length = fragment.totalLength() - headerLength;
        final int start = fragment.fragmentOffset();
        final int end = start + length;
        final boolean more = fragment.moreFragments();
        if (length == 0 || (more && (length & 7) != 0) || end > MAX_PAYLOAD) {
            badFragments.incrementRelease();
            return -1;
        }
        int slot = find(fragment.source(), fragment.destination(), fragment.protocol(), fragment.identification());
        if (slot < 0) {
            slot = open(fragment, nowNs);
        }
        final int base = slot * maxFragments;
        for (int i = 0; i < rangeCount[slot]; i++) {
            final int s = rangeStart[base + i];
            final int e = rangeEnd[base + i];
            if (s == start && e == end) {
                duplicates.incrementRelease();
                return -1;
            }
            if (start < e && s < end) {
                overlaps.incrementRelease();
                discard(slot);
                return -1;
            }
        }
        if (!more) {
            if (totalPayload[slot] >= 0 && totalPayload[slot] != end) {
                inconsistent.incrementRelease();
                discard(slot);
                return -1;
            }
            for (int i = 0; i < rangeCount[slot]; i++) {
                if (rangeEnd[base + i] > end) {
                    inconsistent.incrementRelease();
                    discard(slot);
                    return -1;
                }
            }
            totalPayload[slot] = end;
        } else if (totalPayload[slot] >= 0 && end > totalPayload[slot]) {
            inconsistent.incrementRelease();
            discard(slot);
            return -1;
        }
        if (rangeCount[slot] == maxFragments) {
            tooManyFragments.incrementRelease();
            discard(slot);
            return -1;
        }
        final MemorySegment memory = buffers.slab();
        final long data = buffers.offset(buffer[slot]) + HEADER_ROOM;
        MemorySegment.copy(fragment.segment(), fragment.base() + headerLength, memory, data + start, length);
        if (start == 0) {
            MemorySegment.copy(fragment.segment(), fragment.base(), memory, data - headerLength, headerLength);
            firstHeaderLength[slot] = headerLength;
        }
        rangeStart[base + rangeCount[slot]] = start;
        rangeEnd[base + rangeCount[slot]] = end;
        rangeCount[slot]++;
        receivedBytes[slot] += length;
        if (totalPayload[slot] < 0 || receivedBytes[slot] != totalPayload[slot] || firstHeaderLength[slot] == 0) {
            return -1;
        }
        return complete(slot);
    }

    /** Every byte is here (ranges are disjoint, so their sum is their cover): rewrite fragment 0's header for the whole. */
    private int complete(int slot) {
        final int headerLength = firstHeaderLength[slot];
        if (headerLength + totalPayload[slot] > Ipv4Header.MAX_TOTAL_LENGTH) {
            badFragments.incrementRelease();
            discard(slot);
            return -1;
        }
        timers.cancel(timerId[slot]);
        timerId[slot] = -1;
        final long at = datagramOffset(slot);
        header.wrap(buffers.slab(), at, headerLength + totalPayload[slot]);
        header.totalLength(headerLength + totalPayload[slot])
            .flagsAndFragmentOffset(header.flagsAndFragmentOffset() & Ipv4Header.FLAG_DONT_FRAGMENT)
            .fillChecksum();
        datagramsReassembled.incrementRelease();
        return slot;
    }

    MemorySegment segment() {
        return buffers.slab();
    }

    /** Where a completed datagram (its header) starts in {@link #segment()}. */
    long datagramOffset(int slot) {
        return buffers.offset(buffer[slot]) + HEADER_ROOM - firstHeaderLength[slot];
    }

    int datagramLength(int slot) {
        return firstHeaderLength[slot] + totalPayload[slot];
    }

    /** Frees a slot whose datagram was delivered. */
    void release(int slot) {
        free(slot);
    }

    int activeDatagrams() {
        int count = 0;
        for (boolean a : active) {
            count += a ? 1 : 0;
        }
        return count;
    }

    private int find(int src, int dst, int proto, int id) {
        for (int slot = 0; slot < slots; slot++) {
            if (active[slot] && identification[slot] == id && source[slot] == src && destination[slot] == dst
                && protocol[slot] == proto) {
                return slot;
            }
        }
        return -1;
    }

    private int open(Ipv4Header fragment, long nowNs) {
        int slot = -1;
        int oldest = -1;
        for (int s = 0; s < slots; s++) {
            if (!active[s]) {
                slot = s;
                break;
            }
            if (oldest < 0 || startedNs[s] - startedNs[oldest] < 0) {
                oldest = s;
            }
        }
        if (slot < 0) {
            evicted.incrementRelease();
            discard(oldest);
            slot = oldest;
        }
        active[slot] = true;
        source[slot] = fragment.source();
        destination[slot] = fragment.destination();
        protocol[slot] = fragment.protocol();
        identification[slot] = fragment.identification();
        buffer[slot] = buffers.acquire();
        startedNs[slot] = nowNs;
        totalPayload[slot] = -1;
        receivedBytes[slot] = 0;
        firstHeaderLength[slot] = 0;
        rangeCount[slot] = 0;
        timerId[slot] = timers.schedule(timerOwner, nowNs + timeoutNs, slot);
        return slot;
    }

    private void discard(int slot) {
        if (timerId[slot] >= 0) {
            timers.cancel(timerId[slot]);
        }
        free(slot);
    }

    private void free(int slot) {
        if (active[slot]) {
            active[slot] = false;
            timerId[slot] = -1;
            buffers.release(buffer[slot]);
        }
    }

    private void onTimeout(long value, long nowNs) {
        final int slot = (int) value;
        if (!active[slot]) {
            return;
        }
        timerId[slot] = -1;
        timeouts.incrementRelease();
        final int headerLength = firstHeaderLength[slot];
        if (headerLength > 0) {
            // Quote fragment 0's header and as much of its data as we hold contiguously from offset 0.
            int contiguous = 0;
            final int base = slot * maxFragments;
            for (int i = 0; i < rangeCount[slot]; i++) {
                if (rangeStart[base + i] == 0) {
                    contiguous = rangeEnd[base + i];
                }
            }
            ipv4.reassemblyTimedOut(buffers.slab(), datagramOffset(slot), headerLength, headerLength + contiguous,
                nowNs);
        }
        free(slot);
    }

    void close() {
        buffers.close();
    }
}
