package dev.tern.ipv4.wire;

import dev.tern.core.memory.Flyweight;

import java.lang.foreign.MemorySegment;

/**
 * ICMP message header (RFC 792), read and written in place: type, code, checksum, and the 4-byte rest of header
 * (identifier and sequence for echo; next-hop MTU for "fragmentation needed", RFC 1191 §4).
 *
 * <pre>
 *   0               1               2                               4
 *   +---------------+---------------+-------------------------------+
 *   |     Type      |     Code      |          Checksum             |
 *   +---------------+---------------+-------------------------------+
 *   |   Identifier (echo) / unused  |  Sequence (echo) / next-hop MTU|
 *   +-------------------------------+-------------------------------+
 *   |   data: echo payload, or the original IP header + its first bytes (errors)
 * </pre>
 */
public final class IcmpHeader extends Flyweight {
    public static final int LENGTH = 8;
    public static final int ECHO_REPLY = 0;
    public static final int DESTINATION_UNREACHABLE = 3;
    public static final int SOURCE_QUENCH = 4;
    public static final int REDIRECT = 5;
    public static final int ECHO_REQUEST = 8;
    public static final int TIME_EXCEEDED = 11;
    public static final int PARAMETER_PROBLEM = 12;

    /** Destination unreachable codes (RFC 792, RFC 1122 §3.2.2.1). */
    public static final int NET_UNREACHABLE = 0;
    public static final int HOST_UNREACHABLE = 1;
    public static final int PROTOCOL_UNREACHABLE = 2;
    public static final int PORT_UNREACHABLE = 3;
    public static final int FRAGMENTATION_NEEDED = 4;
    /** Time exceeded codes. */
    public static final int TTL_EXCEEDED = 0;
    public static final int REASSEMBLY_TIME_EXCEEDED = 1;

    static final int TYPE_OFFSET = 0;
    static final int CODE_OFFSET = 1;
    static final int CHECKSUM_OFFSET = 2;
    static final int IDENTIFIER_OFFSET = 4;
    static final int SEQUENCE_OFFSET = 6;
    static final int MTU_OFFSET = 6;

    public IcmpHeader wrap(MemorySegment segment, long base, int length) {
        wrapWindow(segment, base, length);
        return this;
    }

    /** True when the window holds at least the 8-byte header. */
    public boolean complete() {
        return limit >= LENGTH;
    }

    /** True for the types that report errors about another packet (RFC 1122 §3.2.2): never answered with an error. */
    public static boolean isError(int type) {
        return type == DESTINATION_UNREACHABLE || type == SOURCE_QUENCH || type == REDIRECT
            || type == TIME_EXCEEDED || type == PARAMETER_PROBLEM;
    }

    public int type() {
        return u8(TYPE_OFFSET);
    }

    public IcmpHeader type(int value) {
        u8(TYPE_OFFSET, value);
        return this;
    }

    public int code() {
        return u8(CODE_OFFSET);
    }

    public IcmpHeader code(int value) {
        u8(CODE_OFFSET, value);
        return this;
    }

    public int checksum() {
        return u16(CHECKSUM_OFFSET);
    }

    public IcmpHeader checksum(int value) {
        u16(CHECKSUM_OFFSET, value);
        return this;
    }

    public int identifier() {
        return u16(IDENTIFIER_OFFSET);
    }

    public IcmpHeader identifier(int value) {
        u16(IDENTIFIER_OFFSET, value);
        return this;
    }

    public int sequence() {
        return u16(SEQUENCE_OFFSET);
    }

    public IcmpHeader sequence(int value) {
        u16(SEQUENCE_OFFSET, value);
        return this;
    }

    /** Next-hop MTU of a "fragmentation needed" message (RFC 1191 §4); 0 from routers that predate it. */
    public int nextHopMtu() {
        return u16(MTU_OFFSET);
    }

    /** The 4 bytes after the checksum as one word (unused field of errors, written as zero). */
    public int restOfHeader() {
        return i32(IDENTIFIER_OFFSET);
    }

    public IcmpHeader restOfHeader(int value) {
        i32(IDENTIFIER_OFFSET, value);
        return this;
    }
}
