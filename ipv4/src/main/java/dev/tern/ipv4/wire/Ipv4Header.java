package dev.tern.ipv4.wire;

import dev.tern.core.checksum.InternetChecksum;
import dev.tern.core.memory.Flyweight;

import java.lang.foreign.MemorySegment;

/**
 * IPv4 header (RFC 791 §3.1), read and written in place.
 *
 * <pre>
 *    0                   1                   2                   3
 *    0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *   +-------+-------+---------------+-------------------------------+
 *   |Version|  IHL  |Type of Service|          Total Length         |  0
 *   +-------+-------+---------------+-----+-------------------------+
 *   |         Identification        |Flags|      Fragment Offset    |  4
 *   +---------------+---------------+-----+-------------------------+
 *   |  Time to Live |    Protocol   |         Header Checksum       |  8
 *   +---------------+---------------+-------------------------------+
 *   |                       Source Address                          | 12
 *   +---------------------------------------------------------------+
 *   |                    Destination Address                        | 16
 *   +---------------------------------------------------------------+
 *   |                    Options (IHL > 5)                          | 20
 * </pre>
 *
 * <p>{@link #check(boolean)} validates the header once at the layer's entry; afterwards every accessor is safe and
 * {@link #totalLength()} bytes are inside the window. One instance per shard, re-wrapped per packet.
 */
public final class Ipv4Header extends Flyweight {
    public static final int MIN_LENGTH = 20;
    public static final int MAX_LENGTH = 60;
    public static final int MAX_TOTAL_LENGTH = 65535;
    public static final int FLAG_DONT_FRAGMENT = 0x4000;
    public static final int FLAG_MORE_FRAGMENTS = 0x2000;
    static final int VERSION_IHL_OFFSET = 0;
    static final int TOS_OFFSET = 1;
    static final int TOTAL_LENGTH_OFFSET = 2;
    static final int IDENTIFICATION_OFFSET = 4;
    static final int FLAGS_FRAGMENT_OFFSET = 6;
    static final int TTL_OFFSET = 8;
    static final int PROTOCOL_OFFSET = 9;
    static final int CHECKSUM_OFFSET = 10;
    static final int SOURCE_OFFSET = 12;
    static final int DESTINATION_OFFSET = 16;

    public static final int OK = 0;
    public static final int DROP_TOO_SHORT = 1;
    public static final int DROP_BAD_VERSION = 2;
    public static final int DROP_BAD_HEADER_LENGTH = 3;
    public static final int DROP_BAD_TOTAL_LENGTH = 4;
    public static final int DROP_BAD_CHECKSUM = 5;
    /** Names of the drop reasons above, indexed by code, for counters. */
    public static final String[] DROP_NAMES = {null, "too_short", "bad_version", "bad_header_length",
        "bad_total_length", "bad_checksum"};

    public Ipv4Header wrap(MemorySegment segment, long base, int length) {
        wrapWindow(segment, base, length);
        return this;
    }

    /**
     * {@link #OK} when this is a well-formed IPv4 header whose total length fits the frame (trailing bytes, such as
     * Ethernet padding, are allowed and ignored); else the drop reason. The header checksum is verified unless the
     * link already did ({@code verifyChecksum} false).
     */
    public int check(boolean verifyChecksum) {
        if (limit < MIN_LENGTH) {
            return DROP_TOO_SHORT;
        }
        final int versionIhl = u8(VERSION_IHL_OFFSET);
        if ((versionIhl >>> 4) != 4) {
            return DROP_BAD_VERSION;
        }
        final int headerLength = (versionIhl & 0xF) * 4;
        if (headerLength < MIN_LENGTH || headerLength > limit) {
            return DROP_BAD_HEADER_LENGTH;
        }
        final int totalLength = u16(TOTAL_LENGTH_OFFSET);
        if (totalLength < headerLength || totalLength > limit) {
            return DROP_BAD_TOTAL_LENGTH;
        }
        if (verifyChecksum && !InternetChecksum.verifies(InternetChecksum.add(0, segment, base, headerLength))) {
            return DROP_BAD_CHECKSUM;
        }
        return OK;
    }

    public int version() {
        return u8(VERSION_IHL_OFFSET) >>> 4;
    }

    /** Header length in bytes (IHL x 4). */
    public int headerLength() {
        return (u8(VERSION_IHL_OFFSET) & 0xF) * 4;
    }

    /** Writes version 4 and the header length in bytes (a multiple of 4, 20..60). */
    public Ipv4Header headerLength(int bytes) {
        u8(VERSION_IHL_OFFSET, 0x40 | (bytes >>> 2));
        return this;
    }

    public int tos() {
        return u8(TOS_OFFSET);
    }

    public Ipv4Header tos(int value) {
        u8(TOS_OFFSET, value);
        return this;
    }

    public int totalLength() {
        return u16(TOTAL_LENGTH_OFFSET);
    }

    public Ipv4Header totalLength(int value) {
        u16(TOTAL_LENGTH_OFFSET, value);
        return this;
    }

    public int identification() {
        return u16(IDENTIFICATION_OFFSET);
    }

    public Ipv4Header identification(int value) {
        u16(IDENTIFICATION_OFFSET, value);
        return this;
    }

    /** The flags and fragment offset word: {@link #FLAG_DONT_FRAGMENT}, {@link #FLAG_MORE_FRAGMENTS}, offset in 8-byte units. */
    public int flagsAndFragmentOffset() {
        return u16(FLAGS_FRAGMENT_OFFSET);
    }

    public Ipv4Header flagsAndFragmentOffset(int value) {
        u16(FLAGS_FRAGMENT_OFFSET, value);
        return this;
    }

    public boolean dontFragment() {
        return (flagsAndFragmentOffset() & FLAG_DONT_FRAGMENT) != 0;
    }

    public boolean moreFragments() {
        return (flagsAndFragmentOffset() & FLAG_MORE_FRAGMENTS) != 0;
    }

    /** Fragment offset in bytes. */
    public int fragmentOffset() {
        return (flagsAndFragmentOffset() & 0x1FFF) * 8;
    }

    /** True for any fragment of a fragmented datagram (more fragments follow, or it is not the first). */
    public boolean isFragment() {
        return (flagsAndFragmentOffset() & (FLAG_MORE_FRAGMENTS | 0x1FFF)) != 0;
    }

    public int ttl() {
        return u8(TTL_OFFSET);
    }

    public Ipv4Header ttl(int value) {
        u8(TTL_OFFSET, value);
        return this;
    }

    public int protocol() {
        return u8(PROTOCOL_OFFSET);
    }

    public Ipv4Header protocol(int value) {
        u8(PROTOCOL_OFFSET, value);
        return this;
    }

    public int checksum() {
        return u16(CHECKSUM_OFFSET);
    }

    public Ipv4Header checksum(int value) {
        u16(CHECKSUM_OFFSET, value);
        return this;
    }

    public int source() {
        return i32(SOURCE_OFFSET);
    }

    public Ipv4Header source(int address) {
        i32(SOURCE_OFFSET, address);
        return this;
    }

    public int destination() {
        return i32(DESTINATION_OFFSET);
    }

    public Ipv4Header destination(int address) {
        i32(DESTINATION_OFFSET, address);
        return this;
    }

    /** Computes and writes the header checksum over {@link #headerLength()} bytes. */
    public Ipv4Header fillChecksum() {
        final int headerLength = headerLength();
        checkField(0, headerLength);
        checksum(0);
        checksum(InternetChecksum.compute(segment, base, headerLength));
        return this;
    }

    /** Writes a 20-byte header without options, checksum included: every field, since the buffer holds stale bytes. */
    public Ipv4Header write(int tos, int totalLength, int identification, int flagsAndFragmentOffset, int ttl,
                            int protocol, int source, int destination) {
        headerLength(MIN_LENGTH).tos(tos).totalLength(totalLength).identification(identification)
            .flagsAndFragmentOffset(flagsAndFragmentOffset).ttl(ttl).protocol(protocol)
            .source(source).destination(destination);
        checksum(0);
        checksum(InternetChecksum.compute(segment, base, MIN_LENGTH));
        return this;
    }

    public static String dropName(int reason) {
        return reason > 0 && reason < DROP_NAMES.length ? DROP_NAMES[reason] : reason == OK ? "ok" : "unknown";
    }
}
