package dev.tern.ipv4;

import dev.tern.core.net.Ipv4Address;

import java.lang.foreign.MemorySegment;

/**
 * What the IPv4 layer knows about the packet it is delivering: addresses, protocol, TTL, how it was addressed, and
 * where its header is (so a transport can quote it in an ICMP error). One reusable instance per shard, filled per
 * packet; valid only during the handler call.
 */
public final class Ipv4Packet {
    /** Addressed to our unicast address. */
    public static final int UNICAST = 0;
    /** Addressed to the limited or the subnet's directed broadcast address. */
    public static final int BROADCAST = 1;
    /** Addressed to a multicast group we receive. */
    public static final int MULTICAST = 2;

    int source;
    int destination;
    int protocol;
    int ttl;
    int tos;
    int kind;
    int rxFlags;
    boolean reassembled;
    MemorySegment headerSegment;
    long headerOffset;
    int headerLength;
    int totalLength;

    public int source() {
        return source;
    }

    public int destination() {
        return destination;
    }

    public int protocol() {
        return protocol;
    }

    public int ttl() {
        return ttl;
    }

    public int tos() {
        return tos;
    }

    /** {@link #UNICAST}, {@link #BROADCAST} or {@link #MULTICAST}. */
    public int kind() {
        return kind;
    }

    /** The link's receive flags ({@code Offloads.RX_*}): whether checksums were verified below us. */
    public int rxFlags() {
        return rxFlags;
    }

    /** True when the datagram was put together from fragments. */
    public boolean reassembled() {
        return reassembled;
    }

    /** Memory holding the IP header (and the datagram after it). */
    public MemorySegment headerSegment() {
        return headerSegment;
    }

    public long headerOffset() {
        return headerOffset;
    }

    public int headerLength() {
        return headerLength;
    }

    /** Header plus payload. */
    public int totalLength() {
        return totalLength;
    }

    @Override
    public String toString() {
        return Ipv4Address.format(source) + " > " + Ipv4Address.format(destination) + " proto " + protocol
            + " ttl " + ttl + " len " + totalLength + (reassembled ? " (reassembled)" : "");
    }
}
