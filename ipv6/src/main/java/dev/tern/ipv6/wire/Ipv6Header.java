package dev.tern.ipv6.wire;

import dev.tern.core.checksum.InternetChecksum;
import dev.tern.core.memory.BigEndian;
import dev.tern.core.memory.Flyweight;

import java.lang.foreign.MemorySegment;

/**
 * The IPv6 fixed header (RFC 8200 §3), read and written in place.
 *
 * <pre>
 *   +-------+---------------+---------------------------------------+
 *   |Version| Traffic Class |              Flow Label               |  0
 *   +-------+---------------+-------+---------------+---------------+
 *   |         Payload Length        |  Next Header  |   Hop Limit   |  4
 *   +-------------------------------+---------------+---------------+
 *   |                   Source Address (16 bytes)                   |  8
 *   +---------------------------------------------------------------+
 *   |                Destination Address (16 bytes)                 | 24
 *   +---------------------------------------------------------------+
 * </pre>
 *
 * <p>{@link #check()} validates the header once at the layer's entry; afterwards every accessor is safe and the
 * payload's {@link #payloadLength()} bytes are inside the window. One instance per shard, re-wrapped per packet.
 */
public final class Ipv6Header extends Flyweight {
    public static final int LENGTH = 40;
    /** RFC 8200 §5: every link carries packets of at least this size. */
    public static final int MIN_MTU = 1280;
    static final int VERSION_CLASS_FLOW_OFFSET = 0;
    static final int PAYLOAD_LENGTH_OFFSET = 4;
    static final int NEXT_HEADER_OFFSET = 6;
    static final int HOP_LIMIT_OFFSET = 7;
    public static final int SOURCE_OFFSET = 8;
    public static final int DESTINATION_OFFSET = 24;

    public static final int OK = 0;
    public static final int DROP_TOO_SHORT = 1;
    public static final int DROP_BAD_VERSION = 2;
    public static final int DROP_BAD_PAYLOAD_LENGTH = 3;
    /** Names of the drop reasons above, indexed by code, for counters. */
    public static final String[] DROP_NAMES = {null, "too_short", "bad_version", "bad_payload_length"};

    public Ipv6Header wrap(MemorySegment segment, long base, int length) {
        wrapWindow(segment, base, length);
        return this;
    }

    /**
     * {@link #OK} when this is an IPv6 header whose payload fits the frame (trailing bytes, such as Ethernet
     * padding, are allowed and ignored); else the drop reason. A payload length of 0 is a jumbogram's (RFC 2675),
     * which no Ethernet frame can carry: dropped as a bad length.
     */
    public int check() {
        if (limit < LENGTH) {
            return DROP_TOO_SHORT;
        }
        if ((u8(VERSION_CLASS_FLOW_OFFSET) >>> 4) != 6) {
            return DROP_BAD_VERSION;
        }
        final int payload = u16(PAYLOAD_LENGTH_OFFSET);
        if (payload == 0 || LENGTH + payload > limit) {
            return DROP_BAD_PAYLOAD_LENGTH;
        }
        return OK;
    }

    public int trafficClass() {
        return (i32(VERSION_CLASS_FLOW_OFFSET) >>> 20) & 0xff;
    }

    public int flowLabel() {
        return i32(VERSION_CLASS_FLOW_OFFSET) & 0xf_ffff;
    }

    public int payloadLength() {
        return u16(PAYLOAD_LENGTH_OFFSET);
    }

    public int nextHeader() {
        return u8(NEXT_HEADER_OFFSET);
    }

    public int hopLimit() {
        return u8(HOP_LIMIT_OFFSET);
    }

    public long sourceHigh() {
        return BigEndian.i64(segment, base + SOURCE_OFFSET);
    }

    public long sourceLow() {
        return BigEndian.i64(segment, base + SOURCE_OFFSET + 8);
    }

    public long destinationHigh() {
        return BigEndian.i64(segment, base + DESTINATION_OFFSET);
    }

    public long destinationLow() {
        return BigEndian.i64(segment, base + DESTINATION_OFFSET + 8);
    }

    /**
     * The upper-layer checksum's pseudo-header sum (RFC 8200 §8.1), not yet folded, from the addresses of the fixed
     * header at {@code header}: the same for a packet received and one being written.
     */
    public static long pseudoHeaderSum(MemorySegment segment, long header, int upperLength, int upperProtocol) {
        long sum = InternetChecksum.add(0, segment, header + SOURCE_OFFSET, 32);
        sum = InternetChecksum.add32(sum, upperLength);
        return InternetChecksum.add32(sum, upperProtocol);
    }

    /** Writes the whole fixed header. */
    public Ipv6Header write(int trafficClass, int flowLabel, int payloadLength, int nextHeader, int hopLimit,
                            long sourceHigh, long sourceLow, long destinationHigh, long destinationLow) {
        i32(VERSION_CLASS_FLOW_OFFSET, (6 << 28) | ((trafficClass & 0xff) << 20) | (flowLabel & 0xf_ffff));
        u16(PAYLOAD_LENGTH_OFFSET, payloadLength);
        u8(NEXT_HEADER_OFFSET, nextHeader);
        u8(HOP_LIMIT_OFFSET, hopLimit);
        BigEndian.i64(segment, base + SOURCE_OFFSET, sourceHigh);
        BigEndian.i64(segment, base + SOURCE_OFFSET + 8, sourceLow);
        BigEndian.i64(segment, base + DESTINATION_OFFSET, destinationHigh);
        BigEndian.i64(segment, base + DESTINATION_OFFSET + 8, destinationLow);
        return this;
    }
}
