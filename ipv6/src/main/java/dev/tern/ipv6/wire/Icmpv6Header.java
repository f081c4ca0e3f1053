package dev.tern.ipv6.wire;

import dev.tern.core.memory.BigEndian;
import dev.tern.core.memory.Flyweight;

import java.lang.foreign.MemorySegment;

/**
 * An ICMPv6 message (RFC 4443 §2.1) and the neighbour-discovery messages carried in it (RFC 4861 §4), read and
 * written in place: type, code and checksum, then the message body.
 *
 * <pre>
 *   +---------------+---------------+-------------------------------+
 *   |     Type      |     Code      |           Checksum            |  0
 *   +---------------+---------------+-------------------------------+
 *   |  Identifier / Pointer / MTU / Flags (R S O) / reserved        |  4
 *   +---------------------------------------------------------------+
 *   |  Target Address (NS, NA: 16 bytes), then options              |  8
 * </pre>
 */
public final class Icmpv6Header extends Flyweight {
    public static final int LENGTH = 8;
    public static final int DESTINATION_UNREACHABLE = 1;
    public static final int PACKET_TOO_BIG = 2;
    public static final int TIME_EXCEEDED = 3;
    public static final int PARAMETER_PROBLEM = 4;
    public static final int ECHO_REQUEST = 128;
    public static final int ECHO_REPLY = 129;
    public static final int ROUTER_SOLICITATION = 133;
    public static final int ROUTER_ADVERTISEMENT = 134;
    public static final int NEIGHBOR_SOLICITATION = 135;
    public static final int NEIGHBOR_ADVERTISEMENT = 136;
    public static final int REDIRECT = 137;

    /** Destination unreachable codes (RFC 4443 §3.1). */
    public static final int NO_ROUTE = 0;
    public static final int ADDRESS_UNREACHABLE = 3;
    public static final int PORT_UNREACHABLE = 4;
    /** Parameter problem codes (RFC 4443 §3.4). */
    public static final int ERRONEOUS_HEADER_FIELD = 0;
    public static final int UNRECOGNIZED_NEXT_HEADER = 1;
    public static final int UNRECOGNIZED_OPTION = 2;
    /** RFC 7112 §6: the first fragment has an incomplete header chain. */
    public static final int INCOMPLETE_HEADER_CHAIN = 3;
    /** Time exceeded codes (RFC 4443 §3.3). */
    public static final int REASSEMBLY_TIME_EXCEEDED = 1;

    /** NS and NA: the 8-byte header, then the target address (RFC 4861 §4.3, §4.4). */
    public static final int ND_LENGTH = 24;
    public static final int TARGET_OFFSET = 8;
    public static final int ND_OPTIONS_OFFSET = 24;
    /** NA flags (RFC 4861 §4.4). */
    public static final int FLAG_ROUTER = 0x8000_0000;
    public static final int FLAG_SOLICITED = 0x4000_0000;
    public static final int FLAG_OVERRIDE = 0x2000_0000;
    /** ND option types (RFC 4861 §4.6). */
    public static final int OPTION_SOURCE_LINK_LAYER = 1;
    public static final int OPTION_TARGET_LINK_LAYER = 2;

    static final int TYPE_OFFSET = 0;
    static final int CODE_OFFSET = 1;
    static final int CHECKSUM_OFFSET = 2;
    static final int IDENTIFIER_OFFSET = 4;
    static final int SEQUENCE_OFFSET = 6;
    static final int WORD_OFFSET = 4;

    public Icmpv6Header wrap(MemorySegment segment, long base, int length) {
        wrapWindow(segment, base, length);
        return this;
    }

    /** True when the window holds at least the 8-byte header. */
    public boolean complete() {
        return limit >= LENGTH;
    }

    /** RFC 4443 §2.1: types 0-127 are errors, 128-255 informational. */
    public static boolean isError(int type) {
        return type < 128;
    }

    public int type() {
        return u8(TYPE_OFFSET);
    }

    public Icmpv6Header type(int type) {
        u8(TYPE_OFFSET, type);
        return this;
    }

    public int code() {
        return u8(CODE_OFFSET);
    }

    public Icmpv6Header code(int code) {
        u8(CODE_OFFSET, code);
        return this;
    }

    public int checksum() {
        return u16(CHECKSUM_OFFSET);
    }

    public Icmpv6Header checksum(int checksum) {
        u16(CHECKSUM_OFFSET, checksum);
        return this;
    }

    public int identifier() {
        return u16(IDENTIFIER_OFFSET);
    }

    public int sequence() {
        return u16(SEQUENCE_OFFSET);
    }

    /** The second word: a parameter problem's pointer, a packet-too-big's MTU, NA's flags. */
    public int word() {
        return i32(WORD_OFFSET);
    }

    public Icmpv6Header word(int value) {
        i32(WORD_OFFSET, value);
        return this;
    }

    public long targetHigh() {
        return BigEndian.i64(segment, base + TARGET_OFFSET);
    }

    public long targetLow() {
        return BigEndian.i64(segment, base + TARGET_OFFSET + 8);
    }

    public Icmpv6Header target(long high, long low) {
        BigEndian.i64(segment, base + TARGET_OFFSET, high);
        BigEndian.i64(segment, base + TARGET_OFFSET + 8, low);
        return this;
    }
}
