package dev.tern.ethernet.wire;

import dev.tern.core.memory.Flyweight;

import java.lang.foreign.MemorySegment;

/**
 * Ethernet II header (IEEE 802.3 clause 3 with DIX types), optionally with one IEEE 802.1Q tag, read and written in
 * place.
 *
 * <pre>
 *   0                   6                   12      14
 *   +-------------------+-------------------+-------+
 *   | destination MAC   | source MAC        | type  |                      untagged: 14 bytes
 *   +-------------------+-------------------+-------+-------+-------+
 *   | destination MAC   | source MAC        | 8100  | TCI   | type  |      802.1Q: 18 bytes
 *   +-------------------+-------------------+-------+-------+-------+
 *                                                     TCI = PCP(3) DEI(1) VID(12)
 * </pre>
 *
 * <p>The frame check sequence is not part of what a {@code Link} hands over. One instance per shard, re-wrapped per
 * frame; the memory is valid as long as the frame is.
 */
public final class EthernetHeader extends Flyweight {
    public static final int LENGTH = 14;
    public static final int VLAN_LENGTH = 18;
    /** Shortest frame on the wire without FCS: senders pad to it (IEEE 802.3 minimum of 64 bytes with FCS). */
    public static final int MIN_FRAME_LENGTH = 60;
    static final int DESTINATION_OFFSET = 0;
    static final int SOURCE_OFFSET = 6;
    static final int TYPE_OFFSET = 12;
    static final int TCI_OFFSET = 14;
    static final int INNER_TYPE_OFFSET = 16;

    /** Drop reasons returned by {@link #check()}. */
    public static final int OK = 0;
    public static final int DROP_TOO_SHORT = 1;
    public static final int DROP_NOT_ETHERNET_II = 2;

    public EthernetHeader wrap(MemorySegment segment, long base, int length) {
        wrapWindow(segment, base, length);
        return this;
    }

    /** {@link #OK} when the header (with its tag, if any) is complete and carries a type; else the drop reason. */
    public int check() {
        if (limit < LENGTH) {
            return DROP_TOO_SHORT;
        }
        final int type = u16(TYPE_OFFSET);
        if (type == EtherType.VLAN) {
            if (limit < VLAN_LENGTH) {
                return DROP_TOO_SHORT;
            }
            return u16(INNER_TYPE_OFFSET) < EtherType.MIN_TYPE ? DROP_NOT_ETHERNET_II : OK;
        }
        return type < EtherType.MIN_TYPE ? DROP_NOT_ETHERNET_II : OK;
    }

    public long destination() {
        return u48(DESTINATION_OFFSET);
    }

    public EthernetHeader destination(long mac) {
        u48(DESTINATION_OFFSET, mac);
        return this;
    }

    public long source() {
        return u48(SOURCE_OFFSET);
    }

    public EthernetHeader source(long mac) {
        u48(SOURCE_OFFSET, mac);
        return this;
    }

    public boolean hasVlanTag() {
        return u16(TYPE_OFFSET) == EtherType.VLAN;
    }

    /** The 802.1Q tag control information (PCP, DEI, VID), or -1 when untagged. */
    public int vlanTci() {
        return hasVlanTag() ? u16(TCI_OFFSET) : -1;
    }

    /** The type of the payload, looking through an 802.1Q tag. */
    public int etherType() {
        final int type = u16(TYPE_OFFSET);
        return type == EtherType.VLAN ? u16(INNER_TYPE_OFFSET) : type;
    }

    /** Writes an untagged header's type. */
    public EthernetHeader etherType(int type) {
        u16(TYPE_OFFSET, type);
        return this;
    }

    /** Writes an 802.1Q tag and the inner type; the header is then {@link #VLAN_LENGTH} bytes. */
    public EthernetHeader vlan(int tci, int innerType) {
        u16(TYPE_OFFSET, EtherType.VLAN);
        u16(TCI_OFFSET, tci);
        u16(INNER_TYPE_OFFSET, innerType);
        return this;
    }

    /** Length of this header: where the payload starts relative to {@link #base()}. */
    public int headerLength() {
        return hasVlanTag() ? VLAN_LENGTH : LENGTH;
    }

    public static String dropName(int reason) {
        return switch (reason) {
            case OK -> "ok";
            case DROP_TOO_SHORT -> "too_short";
            case DROP_NOT_ETHERNET_II -> "not_ethernet_ii";
            default -> "unknown";
        };
    }
}
