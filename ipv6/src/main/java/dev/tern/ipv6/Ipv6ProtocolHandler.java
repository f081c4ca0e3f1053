package dev.tern.ipv6;

import java.lang.foreign.MemorySegment;

/** An upper-layer protocol above IPv6, registered with {@link Ipv6Layer#register}. */
@FunctionalInterface
public interface Ipv6ProtocolHandler {
    /**
     * A packet for us, past its extension headers. The payload is valid only during the call.
     *
     * @param offset where the upper-layer header starts
     * @param length upper-layer header plus data
     */
    void onPacket(Ipv6Packet packet, MemorySegment segment, long offset, int length, long nowNs);

    /**
     * An ICMPv6 error (RFC 4443) about a packet this protocol sent from our ({@code sourceHigh}, {@code sourceLow})
     * to ({@code destinationHigh}, {@code destinationLow}); {@code offset} is where the quoted upper-layer header
     * starts, {@code length} how much of it the error quotes (at least 8 bytes). Valid only during the call. Ignored
     * unless overridden.
     */
    default void onIcmpError(int type, int code, long sourceHigh, long sourceLow, long destinationHigh,
                             long destinationLow, MemorySegment segment, long offset, int length, long nowNs) {
    }
}
