package dev.tern.udp.wire;

/**
 * A UDP header as values, for tests and tools.
 *
 * @param sourcePort      source port
 * @param destinationPort destination port
 * @param payloadLength   data bytes after the header
 */
public record UdpRepr(int sourcePort, int destinationPort, int payloadLength) {
    public static UdpRepr parse(UdpHeader header) {
        return new UdpRepr(header.sourcePort(), header.destinationPort(), header.length() - UdpHeader.LENGTH);
    }

    /** Writes ports and length, and a zero checksum; the caller fills the checksum once the data is in place. */
    public void emit(UdpHeader header) {
        header.sourcePort(sourcePort).destinationPort(destinationPort).length(UdpHeader.LENGTH + payloadLength).checksum(0);
    }
}
