package dev.tern.ipv4;

import dev.tern.core.counters.CountersFile;
import dev.tern.core.memory.Reassembly;
import dev.tern.core.time.Timers;
import dev.tern.ipv4.wire.Ipv4Header;

import java.lang.foreign.MemorySegment;

/**
 * Reassembly of fragmented IPv4 datagrams (RFC 791 §3.2): each datagram being reassembled is identified by
 * (source, destination, protocol, identification) and owns a slot of the family-neutral {@link Reassembly}, which
 * keeps its bytes and applies the rules that discard it (overlaps, RFC 8900; lengths; the timeout). Here: the keys,
 * the finished header (total length, fragment offset and MF cleared, checksum), and the ICMP time exceeded (code 1)
 * for a datagram that timed out after its first fragment came (RFC 792, RFC 1122 §3.3.2).
 *
 * <p>Owned by the shard thread; not thread-safe.
 */
final class FragmentReassembler {
    static final int HEADER_ROOM = Ipv4Header.MAX_LENGTH;
    /** The most payload a datagram with a minimal header can have. */
    static final int MAX_PAYLOAD = Ipv4Header.MAX_TOTAL_LENGTH - Ipv4Header.MIN_LENGTH;

    private final Reassembly slots;
    private final int[] source;
    private final int[] destination;
    private final int[] protocol;
    private final int[] identification;
    private final Ipv4Header header = new Ipv4Header();

    FragmentReassembler(Ipv4Layer ipv4, Timers timers, Ipv4Config config, CountersFile counters) {
        this.slots = new Reassembly(config.reassemblySlots(), config.maxFragmentsPerDatagram(), HEADER_ROOM,
            MAX_PAYLOAD, Ipv4Header.MAX_TOTAL_LENGTH, config.reassemblyTimeoutNs(), timers, counters, "ipv4.reasm.");
        final int n = config.reassemblySlots();
        this.source = new int[n];
        this.destination = new int[n];
        this.protocol = new int[n];
        this.identification = new int[n];
        slots.onTimeout((slot, nowNs) -> {
            final int headerLength = slots.headerLength(slot);
            if (headerLength > 0) {
                // Quote fragment 0's header and as much of its data as we hold contiguously from offset 0.
                ipv4.reassemblyTimedOut(slots.segment(), slots.datagramOffset(slot), headerLength,
                    headerLength + slots.contiguousFromStart(slot), nowNs);
            }
        });
    }

    /**
     * Takes one fragment (its header already checked, wrapped by {@code fragment}); returns the slot of the
     * datagram if this fragment completed it, else -1 (held or dropped). A completed slot must be
     * {@link #release}d after delivery.
     */
    int accept(Ipv4Header fragment, long nowNs) {
        final int headerLength = fragment.headerLength();
        final int length = fragment.totalLength() - headerLength;
        final int start = fragment.fragmentOffset();
        final boolean more = fragment.moreFragments();
        if (!slots.acceptable(start, length, more)) {
            return -1;
        }
        int slot = find(fragment.source(), fragment.destination(), fragment.protocol(), fragment.identification());
        if (slot < 0) {
            slot = slots.open(nowNs);
            source[slot] = fragment.source();
            destination[slot] = fragment.destination();
            protocol[slot] = fragment.protocol();
            identification[slot] = fragment.identification();
        }
        final int done = slots.add(slot, fragment.segment(), fragment.base(), headerLength,
            fragment.base() + headerLength, start, length, more);
        if (done < 0) {
            return -1;
        }
        // Rewrite fragment 0's header for the whole datagram.
        final int total = slots.headerLength(slot) + slots.payloadLength(slot);
        header.wrap(slots.segment(), slots.datagramOffset(slot), total);
        header.totalLength(total)
            .flagsAndFragmentOffset(header.flagsAndFragmentOffset() & Ipv4Header.FLAG_DONT_FRAGMENT)
            .fillChecksum();
        return slot;
    }

    MemorySegment segment() {
        return slots.segment();
    }

    /** Where a completed datagram (its header) starts in {@link #segment()}. */
    long datagramOffset(int slot) {
        return slots.datagramOffset(slot);
    }

    int datagramLength(int slot) {
        return slots.headerLength(slot) + slots.payloadLength(slot);
    }

    /** Frees a slot whose datagram was delivered. */
    void release(int slot) {
        slots.release(slot);
    }

    int activeDatagrams() {
        return slots.activeDatagrams();
    }

    private int find(int src, int dst, int proto, int id) {
        for (int slot = 0; slot < slots.slots(); slot++) {
            if (slots.active(slot) && identification[slot] == id && source[slot] == src && destination[slot] == dst
                && protocol[slot] == proto) {
                return slot;
            }
        }
        return -1;
    }

    void close() {
        slots.close();
    }
}
