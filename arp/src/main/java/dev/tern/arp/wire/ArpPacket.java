package dev.tern.arp.wire;

import dev.tern.core.memory.Flyweight;
import dev.tern.ethernet.wire.EtherType;

import java.lang.foreign.MemorySegment;

/**
 * An ARP packet for IPv4 over Ethernet (RFC 826), read and written in place.
 *
 * <pre>
 *   0               2               4       5       6               8
 *   +---------------+---------------+-------+-------+---------------+
 *   | htype = 1     | ptype = 0800  | hlen 6| plen 4| operation     |
 *   +---------------+---------------+-------+-------+---------------+
 *   | sender hardware address (6)                   | sender IP ... |  8
 *   +-----------------------------------------------+---------------+
 *   | ... (4)       | target hardware address (6)                   | 14, 18
 *   +---------------+-----------------------------------------------+
 *   | target IP (4)                 |                                 24..28
 *   +-------------------------------+
 * </pre>
 *
 * <p>One instance per shard, re-wrapped per packet.
 */
public final class ArpPacket extends Flyweight {
    public static final int LENGTH = 28;
    public static final int HARDWARE_ETHERNET = 1;
    public static final int OPERATION_REQUEST = 1;
    public static final int OPERATION_REPLY = 2;
    static final int HTYPE_OFFSET = 0;
    static final int PTYPE_OFFSET = 2;
    static final int HLEN_OFFSET = 4;
    static final int PLEN_OFFSET = 5;
    static final int OPERATION_OFFSET = 6;
    static final int SHA_OFFSET = 8;
    static final int SPA_OFFSET = 14;
    static final int THA_OFFSET = 18;
    static final int TPA_OFFSET = 24;
    static final int FIXED_LENGTH = 8;

    public static final int OK = 0;
    public static final int DROP_TOO_SHORT = 1;
    public static final int DROP_FOREIGN_PROTOCOL = 2;
    public static final int DROP_BAD_OPERATION = 3;

    public ArpPacket wrap(MemorySegment segment, long base, int length) {
        wrapWindow(segment, base, length);
        return this;
    }

    /**
     * {@link #OK} for a complete Ethernet/IPv4 request or reply. Another hardware or protocol type (RFC 826 lets
     * ARP carry any) is {@link #DROP_FOREIGN_PROTOCOL}: we resolve only IPv4 over Ethernet.
     */
    public int check() {
        if (limit < FIXED_LENGTH) {
            return DROP_TOO_SHORT;
        }
        if (u16(HTYPE_OFFSET) != HARDWARE_ETHERNET || u16(PTYPE_OFFSET) != EtherType.IPV4
            || u8(HLEN_OFFSET) != 6 || u8(PLEN_OFFSET) != 4) {
            return DROP_FOREIGN_PROTOCOL;
        }
        if (limit < LENGTH) {
            return DROP_TOO_SHORT;
        }
        final int operation = u16(OPERATION_OFFSET);
        return operation == OPERATION_REQUEST || operation == OPERATION_REPLY ? OK : DROP_BAD_OPERATION;
    }

    public int operation() {
        return u16(OPERATION_OFFSET);
    }

    public long senderMac() {
        return u48(SHA_OFFSET);
    }

    public int senderIp() {
        return i32(SPA_OFFSET);
    }

    public long targetMac() {
        return u48(THA_OFFSET);
    }

    public int targetIp() {
        return i32(TPA_OFFSET);
    }

    /** Writes every field of an Ethernet/IPv4 ARP packet. */
    public ArpPacket write(int operation, long senderMac, int senderIp, long targetMac, int targetIp) {
        u16(HTYPE_OFFSET, HARDWARE_ETHERNET);
        u16(PTYPE_OFFSET, EtherType.IPV4);
        u8(HLEN_OFFSET, 6);
        u8(PLEN_OFFSET, 4);
        u16(OPERATION_OFFSET, operation);
        u48(SHA_OFFSET, senderMac);
        i32(SPA_OFFSET, senderIp);
        u48(THA_OFFSET, targetMac);
        i32(TPA_OFFSET, targetIp);
        return this;
    }

    public static String dropName(int reason) {
        return switch (reason) {
            case OK -> "ok";
            case DROP_TOO_SHORT -> "too_short";
            case DROP_FOREIGN_PROTOCOL -> "foreign_protocol";
            case DROP_BAD_OPERATION -> "bad_operation";
            default -> "unknown";
        };
    }
}
