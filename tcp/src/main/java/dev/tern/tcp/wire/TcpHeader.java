package dev.tern.tcp.wire;

import dev.tern.core.checksum.InternetChecksum;
import dev.tern.core.memory.Flyweight;

import java.lang.foreign.MemorySegment;

/**
 * TCP header (RFC 9293 §3.1), read and written in place.
 *
 * <pre>
 *    0                   1                   2                   3
 *    0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *   +-------------------------------+-------------------------------+
 *   |          Source Port          |       Destination Port        |  0
 *   +-------------------------------+-------------------------------+
 *   |                        Sequence Number                        |  4
 *   +---------------------------------------------------------------+
 *   |                    Acknowledgment Number                      |  8
 *   +-------+-------+-+-+-+-+-+-+-+-+-------------------------------+
 *   |  Data |       |C|E|U|A|P|R|S|F|                               |
 *   | Offset| Rsrvd |W|C|R|C|S|S|Y|I|            Window             | 12
 *   |       |       |R|E|G|K|H|T|N|N|                               |
 *   +-------+-------+-+-+-+-+-+-+-+-+-------------------------------+
 *   |           Checksum            |         Urgent Pointer        | 16
 *   +-------------------------------+-------------------------------+
 *   |                    Options (data offset > 5)                  | 20
 * </pre>
 *
 * <p>{@link #check()} validates the lengths once at the layer's entry; afterwards every accessor is safe and
 * {@link #dataOffset()} bytes are inside the window. One instance per shard, re-wrapped per segment; the wrapped
 * memory is valid only as long as the frame is (until the receive callback returns).
 */
public final class TcpHeader extends Flyweight {
    public static final int MIN_LENGTH = 20;
    public static final int MAX_LENGTH = 60;
    static final int SOURCE_PORT_OFFSET = 0;
    static final int DESTINATION_PORT_OFFSET = 2;
    static final int SEQUENCE_OFFSET = 4;
    static final int ACKNOWLEDGMENT_OFFSET = 8;
    static final int DATA_OFFSET_OFFSET = 12;
    static final int FLAGS_OFFSET = 13;
    static final int WINDOW_OFFSET = 14;
    public static final int CHECKSUM_OFFSET = 16;
    static final int URGENT_OFFSET = 18;

    public static final int OK = 0;
    public static final int DROP_TOO_SHORT = 1;
    public static final int DROP_BAD_DATA_OFFSET = 2;
    /** Names of the drop reasons above, indexed by code, for counters. */
    public static final String[] DROP_NAMES = {null, "too_short", "bad_data_offset"};

    public TcpHeader wrap(MemorySegment segment, long base, int length) {
        wrapWindow(segment, base, length);
        return this;
    }

    /** {@link #OK} when the fixed header and the options the data offset claims lie inside the segment; else the drop reason. */
    public int check() {
        if (limit < MIN_LENGTH) {
            return DROP_TOO_SHORT;
        }
        final int dataOffset = dataOffset();
        if (dataOffset < MIN_LENGTH || dataOffset > limit) {
            return DROP_BAD_DATA_OFFSET;
        }
        return OK;
    }

    /** True when the segment, with the pseudo-header of {@code source}/{@code destination}, sums to all ones. */
    public boolean checksumValid(int source, int destination) {
        final long sum = InternetChecksum.pseudoHeader(source, destination, 6, limit);
        return InternetChecksum.verifies(InternetChecksum.add(sum, segment, base, limit));
    }

    public int sourcePort() {
        return u16(SOURCE_PORT_OFFSET);
    }

    public TcpHeader sourcePort(int value) {
        u16(SOURCE_PORT_OFFSET, value);
        return this;
    }

    public int destinationPort() {
        return u16(DESTINATION_PORT_OFFSET);
    }

    public TcpHeader destinationPort(int value) {
        u16(DESTINATION_PORT_OFFSET, value);
        return this;
    }

    /** The sequence number: 32 bits as a Java int, compared only through {@code SeqNum}. */
    public int sequence() {
        return i32(SEQUENCE_OFFSET);
    }

    public TcpHeader sequence(int value) {
        i32(SEQUENCE_OFFSET, value);
        return this;
    }

    public int acknowledgment() {
        return i32(ACKNOWLEDGMENT_OFFSET);
    }

    public TcpHeader acknowledgment(int value) {
        i32(ACKNOWLEDGMENT_OFFSET, value);
        return this;
    }

    /** Header length in bytes (data offset x 4). */
    public int dataOffset() {
        return (u8(DATA_OFFSET_OFFSET) >>> 4) * 4;
    }

    /** Writes the header length in bytes (a multiple of 4, 20..60) and clears the reserved bits. */
    public TcpHeader dataOffset(int bytes) {
        u8(DATA_OFFSET_OFFSET, (bytes >>> 2) << 4);
        return this;
    }

    /** The eight control bits ({@link TcpFlags}). */
    public int flags() {
        return u8(FLAGS_OFFSET);
    }

    public TcpHeader flags(int value) {
        u8(FLAGS_OFFSET, value);
        return this;
    }

    /** The window field, unscaled. */
    public int window() {
        return u16(WINDOW_OFFSET);
    }

    public TcpHeader window(int value) {
        u16(WINDOW_OFFSET, value);
        return this;
    }

    public int checksum() {
        return u16(CHECKSUM_OFFSET);
    }

    public TcpHeader checksum(int value) {
        u16(CHECKSUM_OFFSET, value);
        return this;
    }

    public int urgentPointer() {
        return u16(URGENT_OFFSET);
    }

    public TcpHeader urgentPointer(int value) {
        u16(URGENT_OFFSET, value);
        return this;
    }

    /** Option byte {@code index} bytes after the fixed header (the caller keeps it below {@link #dataOffset()}). */
    public int optionByte(int index) {
        return u8(MIN_LENGTH + index);
    }

    public TcpHeader optionByte(int index, int value) {
        u8(MIN_LENGTH + index, value);
        return this;
    }

    /** A 16-bit option field {@code index} bytes after the fixed header. */
    public int option16(int index) {
        return u16(MIN_LENGTH + index);
    }

    public TcpHeader option16(int index, int value) {
        u16(MIN_LENGTH + index, value);
        return this;
    }

    /** A 32-bit option field {@code index} bytes after the fixed header. */
    public int option32(int index) {
        return i32(MIN_LENGTH + index);
    }

    public TcpHeader option32(int index, int value) {
        i32(MIN_LENGTH + index, value);
        return this;
    }

    /**
     * Writes the fixed header, every field (the buffer holds stale bytes); checksum and urgent pointer are zeroed.
     * Options, if any, are written afterwards with the option accessors.
     */
    public TcpHeader write(int sourcePort, int destinationPort, int sequence, int acknowledgment, int dataOffset,
                           int flags, int window) {
        checkField(0, MIN_LENGTH);
        return sourcePort(sourcePort).destinationPort(destinationPort).sequence(sequence)
            .acknowledgment(acknowledgment).dataOffset(dataOffset).flags(flags).window(window).checksum(0)
            .urgentPointer(0);
    }

    public static String dropName(int reason) {
        return reason > 0 && reason < DROP_NAMES.length ? DROP_NAMES[reason] : reason == OK ? "ok" : "unknown";
    }
}
