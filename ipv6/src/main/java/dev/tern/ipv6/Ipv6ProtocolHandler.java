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
}
