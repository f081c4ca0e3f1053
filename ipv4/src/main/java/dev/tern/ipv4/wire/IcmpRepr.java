package dev.tern.ipv4.wire;

/**
 * An ICMP header as values: type, code and the 4-byte rest of header, for tests and tools.
 *
 * @param type         ICMP type
 * @param code         ICMP code
 * @param restOfHeader identifier and sequence (echo), next-hop MTU (fragmentation needed), else zero
 */
public record IcmpRepr(int type, int code, int restOfHeader) {
    public static IcmpRepr echoRequest(int identifier, int sequence) {
        return new IcmpRepr(IcmpHeader.ECHO_REQUEST, 0, (identifier << 16) | (sequence & 0xFFFF));
    }

    public static IcmpRepr parse(IcmpHeader header) {
        return new IcmpRepr(header.type(), header.code(), header.restOfHeader());
    }

    /** Writes type, code and rest of header; the checksum is the caller's, once the data is in place. */
    public void emit(IcmpHeader header) {
        header.type(type).code(code).checksum(0).restOfHeader(restOfHeader);
    }

    public int identifier() {
        return restOfHeader >>> 16;
    }

    public int sequence() {
        return restOfHeader & 0xFFFF;
    }
}
