package dev.tern.ethernet.wire;

/**
 * An Ethernet header as values, for tests, tools and fuzzers; never built per packet.
 *
 * @param destination destination MAC
 * @param source      source MAC
 * @param etherType   the payload's type
 * @param vlanTci     the 802.1Q tag control information, or -1 when untagged
 */
public record EthernetRepr(long destination, long source, int etherType, int vlanTci) {
    public static EthernetRepr untagged(long destination, long source, int etherType) {
        return new EthernetRepr(destination, source, etherType, -1);
    }

    /** Reads a header that passed {@link EthernetHeader#check()}. */
    public static EthernetRepr parse(EthernetHeader header) {
        return new EthernetRepr(header.destination(), header.source(), header.etherType(), header.vlanTci());
    }

    /** Writes every field of the header. */
    public void emit(EthernetHeader header) {
        header.destination(destination).source(source);
        if (vlanTci >= 0) {
            header.vlan(vlanTci, etherType);
        } else {
            header.etherType(etherType);
        }
    }

    public int headerLength() {
        return vlanTci >= 0 ? EthernetHeader.VLAN_LENGTH : EthernetHeader.LENGTH;
    }

    @Override
    public String toString() {
        return MacAddress.format(source) + " > " + MacAddress.format(destination) + ", " + EtherType.name(etherType)
            + (vlanTci >= 0 ? ", vlan " + (vlanTci & 0xFFF) : "");
    }
}
