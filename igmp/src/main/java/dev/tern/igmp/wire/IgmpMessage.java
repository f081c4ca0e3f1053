package dev.tern.igmp.wire;

import dev.tern.core.checksum.InternetChecksum;
import dev.tern.core.memory.Flyweight;

import java.lang.foreign.MemorySegment;

/**
 * IGMP messages (RFC 1112, RFC 2236, RFC 3376), read and written in place.
 *
 * <pre>
 *   v1/v2 messages and the v3 query start alike:
 *   0               1               2                               4
 *   +---------------+---------------+-------------------------------+
 *   |     Type      | Max Resp Code |           Checksum            |
 *   +---------------+---------------+-------------------------------+
 *   |                         Group Address                         |  4
 *   +-------+-+-----+---------------+-------------------------------+
 *   | Resv  |S| QRV |     QQIC      |     Number of Sources (N)     |  8   (v3 query only: 12 + 4N bytes)
 *   +-------+-+-----+---------------+-------------------------------+
 *   |                       Source Address [1..N]                   | 12
 *
 *   v3 report (type 0x22):
 *   +---------------+---------------+-------------------------------+
 *   |  Type = 0x22  |   Reserved    |           Checksum            |
 *   +---------------+---------------+-------------------------------+
 *   |           Reserved            |  Number of Group Records (M)  |  4
 *   +---------------+---------------+-------------------------------+
 *   | Record Type   | Aux Data Len  |     Number of Sources (N)     |  8   group record: 8 + 4N + 4*aux bytes
 *   +---------------+---------------+-------------------------------+
 *   |                       Multicast Address                       |
 *   |                       Source Address [1..N]                   |
 * </pre>
 */
public final class IgmpMessage extends Flyweight {
    public static final int QUERY = 0x11;
    public static final int V1_REPORT = 0x12;
    public static final int V2_REPORT = 0x16;
    public static final int V2_LEAVE = 0x17;
    public static final int V3_REPORT = 0x22;

    /** v3 group record types (RFC 3376 §4.2.12). */
    public static final int MODE_IS_INCLUDE = 1;
    public static final int MODE_IS_EXCLUDE = 2;
    public static final int CHANGE_TO_INCLUDE = 3;
    public static final int CHANGE_TO_EXCLUDE = 4;
    public static final int ALLOW_NEW_SOURCES = 5;
    public static final int BLOCK_OLD_SOURCES = 6;

    public static final int MIN_LENGTH = 8;
    public static final int V3_QUERY_MIN_LENGTH = 12;
    static final int TYPE_OFFSET = 0;
    static final int MAX_RESP_OFFSET = 1;
    static final int CHECKSUM_OFFSET = 2;
    static final int GROUP_OFFSET = 4;
    static final int QRV_OFFSET = 8;
    static final int QQIC_OFFSET = 9;
    static final int QUERY_SOURCES_OFFSET = 10;
    static final int QUERY_SOURCE_LIST_OFFSET = 12;
    static final int RECORD_COUNT_OFFSET = 6;
    public static final int FIRST_RECORD_OFFSET = 8;

    public static final int OK = 0;
    public static final int DROP_TOO_SHORT = 1;
    public static final int DROP_BAD_CHECKSUM = 2;
    public static final int DROP_BAD_LENGTH = 3;

    public IgmpMessage wrap(MemorySegment segment, long base, int length) {
        wrapWindow(segment, base, length);
        return this;
    }

    /** {@link #OK} when the message is complete (including a v3 query's source list) and its checksum holds. */
    public int check() {
        if (limit < MIN_LENGTH) {
            return DROP_TOO_SHORT;
        }
        if (!InternetChecksum.verifies(InternetChecksum.add(0, segment, base, limit))) {
            return DROP_BAD_CHECKSUM;
        }
        if (isV3Query() && limit < V3_QUERY_MIN_LENGTH + 4 * u16(QUERY_SOURCES_OFFSET)) {
            return DROP_BAD_LENGTH;
        }
        return OK;
    }

    public int type() {
        return u8(TYPE_OFFSET);
    }

    public int maxResponseCode() {
        return u8(MAX_RESP_OFFSET);
    }

    public int group() {
        return i32(GROUP_OFFSET);
    }

    /** RFC 3376 §7.1: a query of 8 bytes is v1 (Max Resp 0) or v2; of 12 bytes or more, v3. */
    public boolean isV3Query() {
        return type() == QUERY && limit >= V3_QUERY_MIN_LENGTH;
    }

    /** The maximum response time a query allows, in tenths of a second (RFC 3376 §4.1.1 encoding for v3). */
    public int maxResponseTenths() {
        final int code = maxResponseCode();
        if (!isV3Query() || code < 128) {
            return code;
        }
        final int mantissa = code & 0x0F;
        final int exponent = (code >>> 4) & 0x07;
        return (mantissa | 0x10) << (exponent + 3);
    }

    /** Querier's Robustness Variable of a v3 query (0 means the default, 2). */
    public int robustness() {
        return u8(QRV_OFFSET) & 0x07;
    }

    public int querySourceCount() {
        return u16(QUERY_SOURCES_OFFSET);
    }

    public int querySource(int index) {
        return i32(QUERY_SOURCE_LIST_OFFSET + 4 * index);
    }

    public int recordCount() {
        return u16(RECORD_COUNT_OFFSET);
    }

    /** Writes an 8-byte v1/v2 message (report, leave or query) with its checksum. */
    public IgmpMessage writeV2(int type, int maxResponseTenths, int group) {
        u8(TYPE_OFFSET, type);
        u8(MAX_RESP_OFFSET, maxResponseTenths);
        u16(CHECKSUM_OFFSET, 0);
        i32(GROUP_OFFSET, group);
        u16(CHECKSUM_OFFSET, InternetChecksum.compute(segment, base, MIN_LENGTH));
        return this;
    }

    /** Starts a v3 report: header with no records yet (add them with {@link #record}, then {@link #finishReport}). */
    public IgmpMessage startReport() {
        u8(TYPE_OFFSET, V3_REPORT);
        u8(MAX_RESP_OFFSET, 0);
        u16(CHECKSUM_OFFSET, 0);
        u16(4, 0);
        u16(RECORD_COUNT_OFFSET, 0);
        return this;
    }

    /** Writes a group record at {@code offset}; returns the offset after it. */
    public int record(int offset, int recordType, int group, int[] sources) {
        u8(offset, recordType);
        u8(offset + 1, 0);
        u16(offset + 2, sources.length);
        i32(offset + 4, group);
        for (int i = 0; i < sources.length; i++) {
            i32(offset + 8 + 4 * i, sources[i]);
        }
        u16(RECORD_COUNT_OFFSET, u16(RECORD_COUNT_OFFSET) + 1);
        return offset + 8 + 4 * sources.length;
    }

    /** Fills the checksum of a report of {@code length} bytes. */
    public IgmpMessage finishReport(int length) {
        u16(CHECKSUM_OFFSET, 0);
        u16(CHECKSUM_OFFSET, InternetChecksum.compute(segment, base, length));
        return this;
    }

    /** Record accessors for parsing reports (tests, tools); {@code offset} is the record's start. */
    public int recordType(int offset) {
        return u8(offset);
    }

    public int recordSourceCount(int offset) {
        return u16(offset + 2);
    }

    public int recordGroup(int offset) {
        return i32(offset + 4);
    }

    public int recordSource(int offset, int index) {
        return i32(offset + 8 + 4 * index);
    }

    /** Offset of the record after the one at {@code offset}. */
    public int nextRecord(int offset) {
        return offset + 8 + 4 * u16(offset + 2) + 4 * u8(offset + 1);
    }

    public static String typeName(int type) {
        return switch (type) {
            case QUERY -> "query";
            case V1_REPORT -> "v1 report";
            case V2_REPORT -> "v2 report";
            case V2_LEAVE -> "v2 leave";
            case V3_REPORT -> "v3 report";
            default -> String.format("type 0x%02x", type);
        };
    }
}
