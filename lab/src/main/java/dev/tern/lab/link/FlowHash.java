package dev.tern.lab.link;

import dev.tern.core.memory.BigEndian;

import java.lang.foreign.MemorySegment;

/**
 * A seeded hash of a frame's flow, for FQ-CoDel's flow queues (RFC 8290 §4.1.1): the IPv4 5-tuple (addresses,
 * protocol, and the ports of a TCP or UDP packet that is not a later fragment), or the Ethernet addresses and type of
 * any other frame. The seed comes from the scenario, so that a run is reproducible while the flows' placement in
 * the queues is not fixed by their addresses alone. Allocation-free.
 */
public final class FlowHash {
    private static final int ETHERNET_HEADER = 14;
    private static final int ETHERTYPE_IPV4 = 0x0800;
    private static final int TCP = 6;
    private static final int UDP = 17;
    private static final long GOLDEN = 0x9E37_79B9_7F4A_7C15L;

    private final long seed;

    public FlowHash(long seed) {
        this.seed = mix(seed ^ GOLDEN);
    }

    /** The flow of the frame at {@code frame} of {@code length} bytes, spread over all 32 bits. */
    public int hash(MemorySegment slab, long frame, int length) {
        if (length < ETHERNET_HEADER + 20 || BigEndian.u16(slab, frame + 12) != ETHERTYPE_IPV4) {
            long h = seed;
            h = mix(h ^ BigEndian.u48(slab, frame));
            h = mix(h ^ BigEndian.u48(slab, frame + 6));
            return (int) (mix(h ^ BigEndian.u16(slab, frame + 12)) >>> 32);
        }
        final long ip = frame + ETHERNET_HEADER;
        final int headerLength = (BigEndian.u8(slab, ip) & 0x0F) * 4;
        final int protocol = BigEndian.u8(slab, ip + 9);
        final long addresses = (long) BigEndian.i32(slab, ip + 12) << 32 | Integer.toUnsignedLong(BigEndian.i32(slab, ip + 16));
        long ports = 0;
        final boolean laterFragment = (BigEndian.u16(slab, ip + 6) & 0x1FFF) != 0;
        if ((protocol == TCP || protocol == UDP) && !laterFragment && headerLength >= 20
            && length >= ETHERNET_HEADER + headerLength + 4) {
            ports = Integer.toUnsignedLong(BigEndian.i32(slab, ip + headerLength));
        }
        long h = mix(seed ^ addresses);
        h = mix(h ^ (ports << 8 | protocol));
        return (int) (h >>> 32);
    }

    /** Stafford's variant 13 of the 64-bit finaliser: every input bit reaches every output bit. */
    private static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xBF58_476D_1CE4_E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D0_49BB_1331_11EBL;
        return z ^ (z >>> 31);
    }
}
