package dev.tern.stack;

import dev.tern.ipv4.IpProtocolHandler;
import dev.tern.ipv4.Ipv4Packet;
import dev.tern.ipv6.Ipv6Packet;
import dev.tern.ipv6.Ipv6ProtocolHandler;
import dev.tern.tcp.TcpLayer;
import dev.tern.tcp.wire.TcpFlags;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Stands in front of TCP's input and tells {@link ReceiveShedding} of every connection-opening SYN (SYN without ACK
 * or RST, what a SYN flood is made of) and its source, so that pressure on the receive ring can be put down to a
 * SYN flood or not, and the heaviest sources found; under pressure it drops those sources' SYNs before TCP sees
 * them. It tells of resets too: a flood's SYNs answered with SYN-ACKs come back as resets from a sender that has no
 * such connection, and those belong to the flood. Everything else, and ICMP errors, go to TCP unchanged. Per segment: one byte read, no allocation.
 *
 * <p>Over IPv6 it counts SYNs and resets the same way, so that an IPv6 SYN flood is seen as one, but names no source:
 * the table of sources and the links' source filters are IPv4's, so an IPv6 flood is shed at random.
 */
final class SynTap implements IpProtocolHandler, Ipv6ProtocolHandler {
    /** Where the flags are in a TCP header (RFC 9293 §3.1). */
    private static final int FLAGS_OFFSET = 13;
    /** The shortest TCP header. */
    private static final int MIN_HEADER = 20;
    private static final int OPENING_MASK = TcpFlags.SYN | TcpFlags.ACK | TcpFlags.RST;

    private final TcpLayer tcp;
    private final ReceiveShedding shedding;

    SynTap(TcpLayer tcp, ReceiveShedding shedding) {
        this.tcp = tcp;
        this.shedding = shedding;
    }

    @Override
    public void onPacket(Ipv4Packet packet, MemorySegment segment, long offset, int length, long nowNs) {
        if (length >= MIN_HEADER) {
            final int flags = segment.get(ValueLayout.JAVA_BYTE, offset + FLAGS_OFFSET);
            if ((flags & OPENING_MASK) == TcpFlags.SYN && shedding.synArrives(packet.source())) {
                return;
            }
            if ((flags & TcpFlags.RST) != 0) {
                shedding.resetArrives();
            }
        }
        tcp.onPacket(packet, segment, offset, length, nowNs);
    }

    @Override
    public void onPacket(Ipv6Packet packet, MemorySegment segment, long offset, int length, long nowNs) {
        if (length >= MIN_HEADER) {
            final int flags = segment.get(ValueLayout.JAVA_BYTE, offset + FLAGS_OFFSET);
            if ((flags & OPENING_MASK) == TcpFlags.SYN) {
                shedding.synArrivesUnnamed();
            } else if ((flags & TcpFlags.RST) != 0) {
                shedding.resetArrives();
            }
        }
        tcp.onPacket(packet, segment, offset, length, nowNs);
    }

    @Override
    public void onIcmpError(int type, int code, long sourceHigh, long sourceLow, long destinationHigh,
                            long destinationLow, MemorySegment segment, long offset, int length, long nowNs) {
        tcp.onIcmpError(type, code, sourceHigh, sourceLow, destinationHigh, destinationLow, segment, offset, length,
            nowNs);
    }

    @Override
    public void onIcmpError(int type, int code, int nextHopMtu, int reporter, int originalSource,
                            int originalDestination, MemorySegment segment, long offset, int length, long nowNs) {
        tcp.onIcmpError(type, code, nextHopMtu, reporter, originalSource, originalDestination, segment, offset, length,
            nowNs);
    }
}
