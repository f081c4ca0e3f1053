package dev.tern.ipv6;

import dev.tern.core.memory.BigEndian;

import java.lang.foreign.MemorySegment;

/**
 * The options of a neighbour-discovery message (RFC 4861 §4.6), walked once: each must have a non-zero length and
 * end within the message (§4.6: a zero length would loop for ever), and the link-layer address option asked for is
 * picked up on the way. Router and neighbour discovery validate with it alike.
 */
final class NdOptions {
    /** {@link #linkLayerAddress} when an option is malformed. */
    static final long INVALID = -2;
    /** {@link #linkLayerAddress} when the options are sound but hold no such option. */
    static final long ABSENT = -1;

    private NdOptions() {
    }

    /**
     * The Ethernet address in the option of type {@code type} (source or target link-layer address) among the
     * options from {@code at} to {@code end}, {@link #ABSENT}, or {@link #INVALID} when any option is malformed.
     */
    static long linkLayerAddress(MemorySegment segment, long at, long end, int type) {
        long found = ABSENT;
        while (at < end) {
            if (end - at < 2) {
                return INVALID;
            }
            final int units = BigEndian.u8(segment, at + 1);
            if (units == 0 || at + units * 8L > end) {
                return INVALID;
            }
            if (BigEndian.u8(segment, at) == type && units == 1) {
                found = BigEndian.u48(segment, at + 2);
            }
            at += units * 8L;
        }
        return found;
    }
}
