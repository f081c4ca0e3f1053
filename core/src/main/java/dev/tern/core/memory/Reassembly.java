package dev.tern.core.memory;

import dev.tern.core.counters.CountersFile;
import dev.tern.core.time.Timers;
import org.agrona.concurrent.status.AtomicCounter;

import java.lang.foreign.MemorySegment;

/**
 * The family-neutral part of fragment reassembly (RFC 791 §3.2 and RFC 815 for IPv4, RFC 8200 §4.5 for IPv6): slots
 * of buffer space, the byte ranges received so far, the rules that discard a datagram, and its timeout. Each
 * family keeps its own keys per slot (addresses, identification) and writes the finished header.
 *
 * <pre>
 *   slot buffer
 *   +--------------------------+---------------------------------------------+
 *   | header room              | payload, at headerRoom + fragment offset    |
 *   +--------+-----------------+---------------------------------------------+
 *            ^ the first fragment's header is copied to end at headerRoom, so the finished datagram is contiguous
 * </pre>
 *
 * <p>Rules, each counted under {@code PREFIX.} when it drops something:
 * <ul>
 *   <li>A fragment that overlaps another of the same datagram discards the whole datagram (RFC 5722 for IPv6,
 *       RFC 8900 for IPv4 too); an exact duplicate is ignored.</li>
 *   <li>Fragments other than the last carry a multiple of 8 bytes; no datagram exceeds {@code maxPayload}; at most
 *       {@code maxFragments} fragments; the last fragments agree on the length, and none goes past it.</li>
 *   <li>A datagram not complete after the timeout is discarded, and its family told (an ICMP time exceeded when
 *       the first fragment arrived). When every slot is busy the oldest datagram is evicted, so a flood of bogus
 *       fragments cannot keep genuine datagrams out for ever.</li>
 * </ul>
 *
 * <p>Owned by the shard thread; not thread-safe.
 */
public final class Reassembly implements AutoCloseable {
    /** {@link #add} results other than a completed slot. */
    public static final int HELD = -1;
    public static final int DROPPED = -2;

    /** Told when a datagram timed out, before its slot is freed (its first header and data are still readable). */
    @FunctionalInterface
    public interface Timeout {
        void onTimeout(int slot, long nowNs);
    }

    private final Timers timers;
    private final int timerOwner;
    private final long timeoutNs;
    private final int maxFragments;
    private final int headerRoom;
    private final int maxPayload;
    private final int maxDatagram;
    private final FramePool buffers;
    private final int slots;
    private final boolean[] active;
    private final int[] buffer;
    private final long[] timerId;
    private final long[] startedNs;
    private final int[] totalPayload;
    private final int[] receivedBytes;
    private final int[] firstHeaderLength;
    private final int[] rangeCount;
    private final int[] rangeStart;
    private final int[] rangeEnd;
    private Timeout timeout = (slot, nowNs) -> { };

    private final AtomicCounter fragmentsReceived;
    private final AtomicCounter datagramsReassembled;
    private final AtomicCounter duplicates;
    private final AtomicCounter overlaps;
    private final AtomicCounter badFragments;
    private final AtomicCounter inconsistent;
    private final AtomicCounter tooManyFragments;
    private final AtomicCounter timeouts;
    private final AtomicCounter evicted;

    /**
     * @param headerRoom the longest first header kept (IPv4's 60 bytes; IPv6's fixed header and the extension
     *                   headers before its fragment header)
     * @param maxPayload  the most payload a datagram may have
     * @param maxDatagram the most a finished datagram may hold, first header and payload together
     * @param prefix      the counters' prefix ({@code ipv4.reasm.})
     */
    public Reassembly(int slots, int maxFragments, int headerRoom, int maxPayload, int maxDatagram, long timeoutNs,
                      Timers timers, CountersFile counters, String prefix) {
        this.maxDatagram = maxDatagram;
        this.timers = timers;
        this.timeoutNs = timeoutNs;
        this.maxFragments = maxFragments;
        this.headerRoom = headerRoom;
        this.maxPayload = maxPayload;
        this.slots = slots;
        this.buffers = FramePool.allocate(slots, headerRoom + maxPayload + 8);
        this.active = new boolean[slots];
        this.buffer = new int[slots];
        this.timerId = new long[slots];
        this.startedNs = new long[slots];
        this.totalPayload = new int[slots];
        this.receivedBytes = new int[slots];
        this.firstHeaderLength = new int[slots];
        this.rangeCount = new int[slots];
        this.rangeStart = new int[slots * maxFragments];
        this.rangeEnd = new int[slots * maxFragments];
        this.fragmentsReceived = counters.counter(prefix + "fragments");
        this.datagramsReassembled = counters.counter(prefix + "ok");
        this.duplicates = counters.counter(prefix + "duplicates");
        this.overlaps = counters.counter(prefix + "overlap_discards");
        this.badFragments = counters.counter(prefix + "bad_fragments");
        this.inconsistent = counters.counter(prefix + "inconsistent_discards");
        this.tooManyFragments = counters.counter(prefix + "too_many_fragments");
        this.timeouts = counters.counter(prefix + "timeouts");
        this.evicted = counters.counter(prefix + "evicted");
        this.timerOwner = timers.register(this::onTimer);
    }

    /** Who hears of datagrams that timed out. Cold path. */
    public void onTimeout(Timeout handler) {
        this.timeout = handler;
    }

    public int slots() {
        return slots;
    }

    public boolean active(int slot) {
        return active[slot];
    }

    /**
     * Checks a fragment before it is looked up: counted and false when its length is 0, a fragment with more to
     * come is not a multiple of 8 bytes, or it would end past {@code maxPayload}.
     */
    public boolean acceptable(int start, int length, boolean more) {
        fragmentsReceived.incrementRelease();
        if (length == 0 || (more && (length & 7) != 0) || start + length > maxPayload) {
            badFragments.incrementRelease();
            return false;
        }
        return true;
    }

    /** A slot for a new datagram (the oldest is evicted when all are busy), its timer armed. */
    public int open(long nowNs) {
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
        buffer[slot] = buffers.acquire();
        startedNs[slot] = nowNs;
        totalPayload[slot] = -1;
        receivedBytes[slot] = 0;
        firstHeaderLength[slot] = 0;
        rangeCount[slot] = 0;
        timerId[slot] = timers.schedule(timerOwner, nowNs + timeoutNs, slot);
        return slot;
    }

    /**
     * Adds the fragment carrying payload bytes {@code start..start+length} (at {@code data} in {@code segment});
     * for the first fragment ({@code start} 0) its header of {@code headerLength} bytes at {@code header} is kept.
     * Returns the slot when this completed the datagram (read it, then {@link #release}), {@link #HELD}, or
     * {@link #DROPPED} (the fragment, or the whole datagram by the rules above).
     */
    public int add(int slot, MemorySegment segment, long header, int headerLength, long data, int start, int length,
                   boolean more) {
        final int end = start + length;
        final int base = slot * maxFragments;
        for (int i = 0; i < rangeCount[slot]; i++) {
            final int s = rangeStart[base + i];
            final int e = rangeEnd[base + i];
            if (s == start && e == end) {
                duplicates.incrementRelease();
                return DROPPED;
            }
            if (start < e && s < end) {
                overlaps.incrementRelease();
                discard(slot);
                return DROPPED;
            }
        }
        if (!more) {
            if (totalPayload[slot] >= 0 && totalPayload[slot] != end) {
                return inconsistent(slot);
            }
            for (int i = 0; i < rangeCount[slot]; i++) {
                if (rangeEnd[base + i] > end) {
                    return inconsistent(slot);
                }
            }
            totalPayload[slot] = end;
        } else if (totalPayload[slot] >= 0 && end > totalPayload[slot]) {
            return inconsistent(slot);
        }
        if (rangeCount[slot] == maxFragments) {
            tooManyFragments.incrementRelease();
            discard(slot);
            return DROPPED;
        }
        if (start == 0 && headerLength > headerRoom) {
            badFragments.incrementRelease();
            discard(slot);
            return DROPPED;
        }
        final MemorySegment memory = buffers.slab();
        final long payload = buffers.offset(buffer[slot]) + headerRoom;
        MemorySegment.copy(segment, data, memory, payload + start, length);
        if (start == 0) {
            MemorySegment.copy(segment, header, memory, payload - headerLength, headerLength);
            firstHeaderLength[slot] = headerLength;
        }
        rangeStart[base + rangeCount[slot]] = start;
        rangeEnd[base + rangeCount[slot]] = end;
        rangeCount[slot]++;
        receivedBytes[slot] += length;
        if (totalPayload[slot] < 0 || receivedBytes[slot] != totalPayload[slot] || firstHeaderLength[slot] == 0) {
            return HELD;
        }
        // Every byte is here: ranges are disjoint, so their sum is their cover.
        if (firstHeaderLength[slot] + totalPayload[slot] > maxDatagram) {
            badFragments.incrementRelease(); // "ping of death": too long with its header
            discard(slot);
            return DROPPED;
        }
        timers.cancel(timerId[slot]);
        timerId[slot] = -1;
        datagramsReassembled.incrementRelease();
        return slot;
    }

    private int inconsistent(int slot) {
        inconsistent.incrementRelease();
        discard(slot);
        return DROPPED;
    }

    public MemorySegment segment() {
        return buffers.slab();
    }

    /** Where a slot's datagram (its first header) starts in {@link #segment()}. */
    public long datagramOffset(int slot) {
        return buffers.offset(buffer[slot]) + headerRoom - firstHeaderLength[slot];
    }

    public int headerLength(int slot) {
        return firstHeaderLength[slot];
    }

    public int payloadLength(int slot) {
        return totalPayload[slot];
    }

    /** Payload bytes held contiguously from offset 0 (what an ICMP time exceeded can quote). */
    public int contiguousFromStart(int slot) {
        int contiguous = 0;
        final int base = slot * maxFragments;
        for (int i = 0; i < rangeCount[slot]; i++) {
            if (rangeStart[base + i] == 0) {
                contiguous = rangeEnd[base + i];
            }
        }
        return contiguous;
    }

    /** Frees a slot whose datagram was delivered. */
    public void release(int slot) {
        free(slot);
    }

    public int activeDatagrams() {
        int count = 0;
        for (boolean a : active) {
            count += a ? 1 : 0;
        }
        return count;
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

    private void onTimer(long value, long nowNs) {
        final int slot = (int) value;
        if (!active[slot]) {
            return;
        }
        timerId[slot] = -1;
        timeouts.incrementRelease();
        timeout.onTimeout(slot, nowNs);
        free(slot);
    }

    @Override
    public void close() {
        buffers.close();
    }
}
