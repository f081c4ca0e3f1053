package dev.tern.ipv4.wire;

import dev.tern.core.net.Ipv4Address;

/**
 * An option-less IPv4 header as values, for tests, tools and fuzzers; never built per packet.
 *
 * @param source        source address
 * @param destination   destination address
 * @param protocol      transport protocol
 * @param ttl           time to live
 * @param tos           type of service (DSCP and ECN)
 * @param identification datagram id
 * @param flagsAndFragmentOffset DF/MF flags and the offset in 8-byte units
 * @param payloadLength bytes after the header
 */
public record Ipv4Repr(int source, int destination, int protocol, int ttl, int tos, int identification,
                       int flagsAndFragmentOffset, int payloadLength) {
    /** Reads a header that passed {@link Ipv4Header#check}; semantic checks are the caller's. */
    public static Ipv4Repr parse(Ipv4Header header) {
        return new Ipv4Repr(header.source(), header.destination(), header.protocol(), header.ttl(), header.tos(),
            header.identification(), header.flagsAndFragmentOffset(), header.totalLength() - header.headerLength());
    }

    /** Writes every field of a 20-byte header, checksum included. */
    public void emit(Ipv4Header header) {
        header.write(tos, Ipv4Header.MIN_LENGTH + payloadLength, identification, flagsAndFragmentOffset, ttl,
            protocol, source, destination);
    }

    @Override
    public String toString() {
        return Ipv4Address.format(source) + " > " + Ipv4Address.format(destination) + " " + IpProtocol.name(protocol)
            + " ttl " + ttl + " id " + identification + " len " + payloadLength
            + ((flagsAndFragmentOffset & Ipv4Header.FLAG_DONT_FRAGMENT) != 0 ? " DF" : "")
            + ((flagsAndFragmentOffset & Ipv4Header.FLAG_MORE_FRAGMENTS) != 0 ? " MF" : "")
            + ((flagsAndFragmentOffset & 0x1FFF) != 0 ? " off " + (flagsAndFragmentOffset & 0x1FFF) * 8 : "");
    }
}
