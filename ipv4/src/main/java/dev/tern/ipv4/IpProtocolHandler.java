package dev.tern.ipv4;

import java.lang.foreign.MemorySegment;

/**
 * A transport above IPv4 (ICMP, IGMP, UDP, TCP), registered with {@link Ipv4Layer#register}. The IPv4 layer calls
 * it for each datagram of its protocol addressed to us, and for each ICMP error (received, or raised locally when a
 * next hop does not resolve) about a datagram of its protocol that we sent.
 */
public interface IpProtocolHandler {
    /**
     * A datagram for us. The payload is valid only during the call.
     *
     * @param packet  addresses and header of the datagram
     * @param segment memory holding the payload
     * @param offset  where the transport header starts
     * @param length  transport header plus data
     */
    void onPacket(Ipv4Packet packet, MemorySegment segment, long offset, int length, long nowNs);

    /**
     * An ICMP error about a datagram we sent (RFC 1122 §3.2.2: it must reach the transport): destination
     * unreachable, time exceeded, parameter problem, or "fragmentation needed" with {@code nextHopMtu}.
     *
     * @param type                ICMP type
     * @param code                ICMP code
     * @param nextHopMtu          for fragmentation needed, the path MTU now in force; else 0
     * @param reporter            who reported it (a router, the destination, or ourselves)
     * @param originalSource      source address of our datagram
     * @param originalDestination destination address of our datagram
     * @param segment             memory holding the quoted transport header
     * @param offset              where it starts
     * @param length              how many bytes of it were quoted (at least 8)
     */
    default void onIcmpError(int type, int code, int nextHopMtu, int reporter, int originalSource,
                             int originalDestination, MemorySegment segment, long offset, int length, long nowNs) {
    }
}
