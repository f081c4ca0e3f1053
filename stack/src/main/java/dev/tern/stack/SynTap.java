package dev.tern.stack;

import dev.tern.ipv4.IpProtocolHandler;
import dev.tern.ipv4.Ipv4Packet;
import dev.tern.tcp.wire.TcpFlags;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Stands in front of TCP's input and tells {@link ReceiveShedding} of every connection-opening SYN (SYN without ACK
 * or RST, what a SYN flood is made of) and its source, so that pressure on the receive ring can be put down to a
 * SYN flood or not, and the heaviest sources found; under pressure it drops those sources' SYNs before TCP sees
 * them. It tells of resets too: a flood's SYNs answered with SYN-ACKs come back as resets from a sender that has no
 * such connection, and those belong to the flood. Everything else, and ICMP errors, go to TCP unchanged. Per segment: one byte read, no allocation.
 */
final class SynTap implements IpProtocolHandler {
    /** Where the flags are in a TCP header (RFC 9293 §3.1). */
    private static final int FLAGS_OFFSET = 13;
    /** The shortest TCP header. */
    private static final int MIN_HEADER = 20;
    private static final int OPENING_MASK = TcpFlags.SYN | TcpFlags.ACK | TcpFlags.RST;

    private final IpProtocolHandler tcp;
    private final ReceiveShedding shedding;

    SynTap(IpProtocolHandler tcp, ReceiveShedding shedding) {
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
    public void onIcmpError(int type, int code, int nextHopMtu, int reporter, int originalSource,
                            int originalDestination, MemorySegment segment, long offset, int length, long nowNs) {
        tcp.onIcmpError(type, code, nextHopMtu, reporter, originalSource, originalDestination, segment, offset, length,
            nowNs);
    }
}
