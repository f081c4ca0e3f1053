package dev.tern.ipv6;

import dev.tern.core.counters.CountersFile;
import dev.tern.core.memory.BigEndian;
import dev.tern.core.memory.Reassembly;
import dev.tern.core.time.Timers;
import dev.tern.ipv6.wire.Ipv6Header;
import dev.tern.ipv6.wire.NextHeader;

import java.lang.foreign.MemorySegment;

/**
 * Reassembly of fragmented IPv6 packets (RFC 8200 §4.5): a packet being reassembled is identified by (source,
 * destination, identification) and owns a slot of the family-neutral {@link Reassembly}, which keeps its bytes and
 * discards it by the shared rules (an overlap discards the whole packet, RFC 5722; the 60 s timeout). The first
 * fragment's unfragmentable part (the fixed header and the extension headers before the fragment header) becomes
 * the packet's header, with the last Next Header pointing past the fragment header and the payload length of the
 * whole. RFC 7112: a first fragment must hold the whole header chain and the upper-layer header, or it is dropped.
 *
 * <p>Owned by the shard thread; not thread-safe.
 */
final class Ipv6Reassembler {
    /** RFC 8200 §4.5: 60 seconds. */
    static final long TIMEOUT_NS = 60_000_000_000L;
    private static final int SLOTS = 64;
    private static final int MAX_FRAGMENTS = 64;
    /** The unfragmentable part kept: the fixed header and up to 1 KiB of extension headers before the fragment's. */
    private static final int HEADER_ROOM = Ipv6Header.LENGTH + 1024;
    private static final int MAX_PAYLOAD = 65535;

    private final Reassembly slots;
    private final long[] sourceHigh = new long[SLOTS];
    private final long[] sourceLow = new long[SLOTS];
    private final long[] destinationHigh = new long[SLOTS];
    private final long[] destinationLow = new long[SLOTS];
    private final int[] identification = new int[SLOTS];
    /** From the first fragment: where in its unfragmentable part the Next Header naming the fragment header is, and
     *  the fragment header's own Next Header. */
    private final int[] nextHeaderAt = new int[SLOTS];
    private final int[] nextHeader = new int[SLOTS];

    Ipv6Reassembler(Timers timers, CountersFile counters) {
        this.slots = new Reassembly(SLOTS, MAX_FRAGMENTS, HEADER_ROOM, MAX_PAYLOAD, Ipv6Header.LENGTH + MAX_PAYLOAD,
            TIMEOUT_NS, timers, counters, "ipv6.reasm.");
    }

    Reassembly slots() {
        return slots;
    }

    /**
     * Checks a fragment's length before it is kept (RFC 8200 §4.5: a fragment with more to come is a multiple of 8
     * bytes, and no packet reassembles past 65535 bytes of payload); false (counted) when it is not.
     */
    boolean acceptable(int start, int length, boolean more) {
        return slots.acceptable(start, length, more);
    }

    /**
     * Takes the fragment whose fragment header is at {@code fragmentHeader} in the packet at {@code ip}; returns the
     * slot when it completed the packet (its header rewritten: deliver it, then {@link #release}), else a negative.
     *
     * @param nextHeaderField where the Next Header naming the fragment header is
     */
    int accept(MemorySegment segment, long ip, long nextHeaderField, long fragmentHeader, long end, long nowNs) {
        final int field = BigEndian.u16(segment, fragmentHeader + 2);
        final int start = field & 0xfff8;
        final boolean more = (field & 1) != 0;
        final long data = fragmentHeader + 8;
        final int length = (int) (end - data);
        final long sh = BigEndian.i64(segment, ip + Ipv6Header.SOURCE_OFFSET);
        final long sl = BigEndian.i64(segment, ip + Ipv6Header.SOURCE_OFFSET + 8);
        final long dh = BigEndian.i64(segment, ip + Ipv6Header.DESTINATION_OFFSET);
        final long dl = BigEndian.i64(segment, ip + Ipv6Header.DESTINATION_OFFSET + 8);
        final int id = BigEndian.i32(segment, fragmentHeader + 4);
        int slot = find(sh, sl, dh, dl, id);
        if (slot < 0) {
            slot = slots.open(nowNs);
            sourceHigh[slot] = sh;
            sourceLow[slot] = sl;
            destinationHigh[slot] = dh;
            destinationLow[slot] = dl;
            identification[slot] = id;
        }
        if (start == 0) {
            nextHeaderAt[slot] = (int) (nextHeaderField - ip);
            nextHeader[slot] = BigEndian.u8(segment, fragmentHeader);
        }
        final int done = slots.add(slot, segment, ip, (int) (fragmentHeader - ip), data, start, length, more);
        if (done < 0) {
            return done;
        }
        final MemorySegment memory = slots.segment();
        final long at = slots.datagramOffset(slot);
        BigEndian.u16(memory, at + 4, slots.headerLength(slot) - Ipv6Header.LENGTH + slots.payloadLength(slot));
        BigEndian.u8(memory, at + nextHeaderAt[slot], nextHeader[slot]);
        return slot;
    }

    /**
     * RFC 7112 §5: the first fragment holds every extension header after the fragment header and the upper-layer
     * header (8 bytes of ICMPv6 or UDP, 20 of TCP).
     */
    static boolean wholeChain(MemorySegment segment, int next, long data, long end) {
        long at = data;
        while (next == NextHeader.HOP_BY_HOP || next == NextHeader.DESTINATION_OPTIONS || next == NextHeader.ROUTING) {
            if (end - at < 8) {
                return false;
            }
            final int headerLength = (BigEndian.u8(segment, at + 1) + 1) * 8;
            next = BigEndian.u8(segment, at);
            at += headerLength;
        }
        final int upper = next == NextHeader.TCP ? 20 : next == NextHeader.ICMPV6 || next == NextHeader.UDP ? 8 : 0;
        return at + upper <= end;
    }

    MemorySegment segment() {
        return slots.segment();
    }

    long packetOffset(int slot) {
        return slots.datagramOffset(slot);
    }

    int packetLength(int slot) {
        return slots.headerLength(slot) + slots.payloadLength(slot);
    }

    long sourceHigh(int slot) {
        return sourceHigh[slot];
    }

    long sourceLow(int slot) {
        return sourceLow[slot];
    }

    long destinationHigh(int slot) {
        return destinationHigh[slot];
    }

    long destinationLow(int slot) {
        return destinationLow[slot];
    }

    void release(int slot) {
        slots.release(slot);
    }

    private int find(long sh, long sl, long dh, long dl, int id) {
        for (int slot = 0; slot < SLOTS; slot++) {
            if (slots.active(slot) && identification[slot] == id && sourceLow[slot] == sl && sourceHigh[slot] == sh
                && destinationLow[slot] == dl && destinationHigh[slot] == dh) {
                return slot;
            }
        }
        return -1;
    }

    void close() {
        slots.close();
    }
}
