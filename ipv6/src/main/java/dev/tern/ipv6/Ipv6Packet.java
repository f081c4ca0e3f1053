package dev.tern.ipv6;

/**
 * What the IPv6 layer knows of the packet being handed up: its addresses, hop limit and traffic class, and where
 * its header starts (so an error can quote it). Valid only during the call; one instance per layer, refilled per
 * packet.
 */
public final class Ipv6Packet {
    long sourceHigh;
    long sourceLow;
    long destinationHigh;
    long destinationLow;
    int hopLimit;
    int trafficClass;
    int nextHeader;
    boolean multicastDestination;
    boolean fragmented;
    int rxFlags;
    long headerOffset;
    int packetLength;

    public long sourceHigh() {
        return sourceHigh;
    }

    public long sourceLow() {
        return sourceLow;
    }

    public long destinationHigh() {
        return destinationHigh;
    }

    public long destinationLow() {
        return destinationLow;
    }

    public int hopLimit() {
        return hopLimit;
    }

    public int trafficClass() {
        return trafficClass;
    }

    /** The upper-layer protocol (the last Next Header of the chain). */
    public int nextHeader() {
        return nextHeader;
    }

    /** Came in fragments (an atomic fragment included): never neighbour discovery (RFC 6980). */
    public boolean fragmented() {
        return fragmented;
    }

    /**
     * The link's receive flags ({@code Offloads.RX_CHECKSUM_OK}, ...) of the frame; 0 for a packet reassembled from
     * fragments, whose upper-layer checksum no link has checked.
     */
    public int rxFlags() {
        return rxFlags;
    }

    /** Where the packet's fixed header starts in the segment handed up (for an error to quote). */
    public long headerOffset() {
        return headerOffset;
    }

    /** The packet's length from its fixed header to its end. */
    public int packetLength() {
        return packetLength;
    }

    /** Sent to a multicast group rather than to one of our addresses. */
    public boolean multicastDestination() {
        return multicastDestination;
    }
}
