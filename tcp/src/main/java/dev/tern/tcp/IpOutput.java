package dev.tern.tcp;

import dev.tern.core.checksum.InternetChecksum;
import dev.tern.ipv4.Ipv4Layer;
import dev.tern.ipv4.wire.IpProtocol;
import dev.tern.ipv6.Ipv6Layer;
import dev.tern.ipv6.wire.Ipv6Header;
import dev.tern.ipv6.wire.NextHeader;

import java.lang.foreign.MemorySegment;

/**
 * The IP packet a segment is written into, over the connection's family: opened towards a connection's peer or
 * back to the sender of the segment being processed, then written at {@link #payloadOffset()}, summed with
 * {@link #pseudoHeaderSum} and committed. The rest of TCP is the same for both families.
 *
 * <p>Both families use the link's checksum offload and TSO where it has them (AF_PACKET's vnet header cuts TCPv6
 * as it cuts TCPv4). Over IPv6 (RFC 8200 §8.1) the hop limit is the interface's and a connection's packets carry its
 * flow label (RFC 6437, keyed per connection); stateless answers carry none. The result codes are IPv4's: IPv6's
 * have the same values.
 *
 * <p>Owned by the shard thread; one packet open at a time.
 */
final class IpOutput {
    private final Ipv4Layer ipv4;
    /** Null when the stack has no IPv6. */
    private final Ipv6Layer ipv6;
    private final TcpControlBlocks tcb;
    private boolean openIpv6;
    private int openRemote;

    IpOutput(Ipv4Layer ipv4, Ipv6Layer ipv6, TcpControlBlocks tcb) {
        this.ipv4 = ipv4;
        this.ipv6 = ipv6;
        this.tcb = tcb;
    }

    /** Opens a packet of {@code length} bytes to connection {@code c}'s peer with IP ECN/DSCP bits {@code tos}. */
    int open(int c, int length, int tos, long nowNs) {
        if (tcb.ipv6(c)) {
            if (Ipv6Header.LENGTH + length > ipv6.pathMtu(tcb.remoteAddressHigh(c), tcb.remoteAddressLow(c), nowNs)) {
                // TCP never leaves in fragments (RFC 8201 §5.2): the path MTU fell, by a packet too big whose quote
                // TCP did not take (already acknowledged) or another flow's; the sender sizes the segment again.
                return Ipv4Layer.ERR_MESSAGE_TOO_LONG;
            }
            openIpv6 = true;
            return ipv6.beginFrom(tcb.localAddressHigh(c), tcb.localAddressLow(c), tcb.remoteAddressHigh(c),
                tcb.remoteAddressLow(c), NextHeader.TCP, length, ipv6.hopLimit(), tos, tcb.flowLabel(c), nowNs);
        }
        openIpv6 = false;
        openRemote = tcb.remoteAddress(c);
        return ipv4.begin(0, openRemote, IpProtocol.TCP, length, 0, tos, true, nowNs);
    }

    /** Opens a frame the link cuts into {@code segmentSize} segments (TSO). */
    int openSegmented(int c, int length, int tos, int segmentSize, long nowNs) {
        if (tcb.ipv6(c)) {
            openIpv6 = true;
            return ipv6.beginSegmentedFrom(tcb.localAddressHigh(c), tcb.localAddressLow(c), tcb.remoteAddressHigh(c),
                tcb.remoteAddressLow(c), NextHeader.TCP, length, ipv6.hopLimit(), tos, tcb.flowLabel(c), segmentSize,
                nowNs);
        }
        openIpv6 = false;
        openRemote = tcb.remoteAddress(c);
        return ipv4.beginSegmented(openRemote, IpProtocol.TCP, length, 0, tos, segmentSize, nowNs);
    }

    /** Opens a stateless answer (a reset, a cookie's SYN-ACK) to the sender of {@code seg}, from the address it used. */
    int openAnswer(TcpSegment seg, int length, long nowNs) {
        if (seg.ipv6) {
            openIpv6 = true;
            return ipv6.beginFrom(seg.destinationHigh, seg.destinationLow, seg.sourceHigh, seg.sourceLow,
                NextHeader.TCP, length, ipv6.hopLimit(), 0, nowNs);
        }
        openIpv6 = false;
        openRemote = seg.sourceAddress;
        return ipv4.begin(0, openRemote, IpProtocol.TCP, length, 0, 0, true, nowNs);
    }

    /** Whether the link on this connection's family segments TCP itself. */
    boolean segmentationOffload(int c) {
        return tcb.ipv6(c) ? ipv6.segmentationOffload() : ipv4.segmentationOffload();
    }

    MemorySegment segment() {
        return openIpv6 ? ipv6.segment() : ipv4.segment();
    }

    long payloadOffset() {
        return openIpv6 ? ipv6.payloadOffset() : ipv4.payloadOffset();
    }

    /** The pseudo-header's sum for the open packet's {@code tcpLength} bytes of TCP, unfolded. */
    long pseudoHeaderSum(int tcpLength) {
        return openIpv6 ? ipv6.pseudoHeaderSum(tcpLength, NextHeader.TCP)
            : InternetChecksum.pseudoHeader(ipv4.address().address(), openRemote, IpProtocol.TCP, tcpLength);
    }

    /** Whether the link completes the open packet's checksum when asked ({@link #requestChecksum}). */
    boolean checksumOffload() {
        return openIpv6 ? ipv6.l4ChecksumOffload() : ipv4.l4ChecksumOffload();
    }

    void requestChecksum(int offset) {
        if (openIpv6) {
            ipv6.requestL4Checksum(offset);
        } else {
            ipv4.requestL4Checksum(offset);
        }
    }

    void commit() {
        if (openIpv6) {
            ipv6.commit();
        } else {
            ipv4.commit();
        }
    }
}
