package dev.tern.udp.wire;

import dev.tern.core.memory.Flyweight;

import java.lang.foreign.MemorySegment;

/**
 * UDP header (RFC 768), read and written in place.
 *
 * <pre>
 *   0               2               4               6               8
 *   +---------------+---------------+---------------+---------------+
 *   |  source port  |  dest. port   |    length     |   checksum    |
 *   +---------------+---------------+---------------+---------------+
 *   length counts the header and the data; checksum 0 means "none" (allowed over IPv4, RFC 768)
 * </pre>
 */
public final class UdpHeader extends Flyweight {
    public static final int LENGTH = 8;
    /** The largest UDP payload in one IPv4 datagram: 65535 - 20 - 8. */
    public static final int MAX_PAYLOAD = 65507;
    /** The largest UDP payload over IPv6 without a jumbogram: 65535 - 8, the payload length less this header. */
    public static final int MAX_PAYLOAD_IPV6 = 65527;
    static final int SOURCE_PORT_OFFSET = 0;
    static final int DESTINATION_PORT_OFFSET = 2;
    static final int LENGTH_OFFSET = 4;
    public static final int CHECKSUM_OFFSET = 6;

    public static final int OK = 0;
    public static final int DROP_TOO_SHORT = 1;
    public static final int DROP_BAD_LENGTH = 2;

    public UdpHeader wrap(MemorySegment segment, long base, int length) {
        wrapWindow(segment, base, length);
        return this;
    }

    /**
     * {@link #OK} when the header is complete and its length field fits the IP payload. A length shorter than the
     * IP payload is allowed (the rest is ignored, as Linux trims it); a longer one is not.
     */
    public int check() {
        if (limit < LENGTH) {
            return DROP_TOO_SHORT;
        }
        final int length = u16(LENGTH_OFFSET);
        return length < LENGTH || length > limit ? DROP_BAD_LENGTH : OK;
    }

    public int sourcePort() {
        return u16(SOURCE_PORT_OFFSET);
    }

    public UdpHeader sourcePort(int port) {
        u16(SOURCE_PORT_OFFSET, port);
        return this;
    }

    public int destinationPort() {
        return u16(DESTINATION_PORT_OFFSET);
    }

    public UdpHeader destinationPort(int port) {
        u16(DESTINATION_PORT_OFFSET, port);
        return this;
    }

    public int length() {
        return u16(LENGTH_OFFSET);
    }

    public UdpHeader length(int length) {
        u16(LENGTH_OFFSET, length);
        return this;
    }

    public int checksum() {
        return u16(CHECKSUM_OFFSET);
    }

    public UdpHeader checksum(int checksum) {
        u16(CHECKSUM_OFFSET, checksum);
        return this;
    }
}
