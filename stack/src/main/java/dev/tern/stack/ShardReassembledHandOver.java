package dev.tern.stack;

import dev.tern.core.memory.BigEndian;
import dev.tern.ethernet.link.ShardRule;
import dev.tern.ethernet.link.ShardSteering;
import dev.tern.ethernet.link.UdpPortOwners;
import dev.tern.ipv4.wire.IpProtocol;
import dev.tern.ethernet.wire.EtherType;
import dev.tern.ethernet.wire.EthernetHeader;
import dev.tern.ipv4.IpProtocolHandler;
import dev.tern.ipv4.Ipv4Packet;
import dev.tern.ipv4.wire.Ipv4Header;
import dev.tern.ipv6.Ipv6Packet;
import dev.tern.ipv6.Ipv6ProtocolHandler;
import dev.tern.ipv6.wire.Ipv6Header;
import dev.tern.ipv6.wire.NextHeader;
import org.agrona.concurrent.status.AtomicCounter;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * The rule that a TCP or UDP datagram is served by the shard {@link ShardSteering} names for its 4-tuple, whether it
 * arrived whole or in fragments, for what a shard reassembled. Whole frames were checked before any layer saw them
 * ({@link ShardFilterLink}); fragments all go to shard 0 (only the first carries the ports), so a datagram
 * reassembled there may be another shard's. It is handed to its owner as the frame it would have been unfragmented
 * (this shard must not answer it: it does not know the owner's connections or sockets, and TCP resets a segment for
 * an unknown connection, RFC 9293 §3.10.7.1): an Ethernet header to our MAC, the IPv4 header with its options, MF and
 * the fragment offset cleared and the total length and checksum of the whole datagram, then the payload, posted
 * through the owner's {@link ShardInbox} (one copy) and counted as {@code shard.tx.reassembled_handed_over} besides
 * {@code shard.tx.handed_over}. The owner's IPv4 layer checks it again as any frame, and its transport verifies the
 * checksum (the receive flags claim nothing verified).
 *
 * <p>Over IPv6 the same holds for a packet with extension headers, which the link's program does not walk and so
 * gives to shard 0 ({@code ShardSteering}): a TCP segment or UDP datagram that came in fragments or behind extension
 * headers and is another shard's goes to it as a plain IPv6 frame (the fixed header naming the transport directly,
 * the extension headers this shard has already processed left out, the flow label 0), counted the same way.
 *
 * <p>{@link #guard} and {@link #guard6} put the rule in front of a transport's input; ICMP errors pass through
 * unchanged (shard 0's link hands those on itself). Owned by the shard's thread. Allocates nothing per datagram: one
 * frame buffer of the largest datagram per shard, made once.
 */
final class ShardReassembledHandOver {
    /** The source MAC of a handed-over frame: not the wire's (reassembly keeps none) and never ours. */
    private static final long NO_MAC = 0;

    private final int shard;
    private final int shards;
    private final long mac;
    private final ShardFilterLink link;
    private final AtomicCounter handedOver;
    private final UdpPortOwners udpOwners;
    private final ShardRule rule;
    /** The largest frame handed on: an IPv6 fixed header and 64 KiB of payload (IPv4's largest datagram is smaller). */
    private final MemorySegment frame = Arena.ofAuto().allocate(EthernetHeader.LENGTH + Ipv6Header.LENGTH + 0xFFFF, 8);
    private final EthernetHeader ethernet = new EthernetHeader();
    private final Ipv4Header ipv4 = new Ipv4Header();
    private final Ipv6Header ipv6 = new Ipv6Header();

    ShardReassembledHandOver(int shard, int shards, long mac, ShardFilterLink link, AtomicCounter handedOver,
                             UdpPortOwners udpOwners) {
        this.udpOwners = udpOwners;
        this.rule = link.shardRule();
        this.shard = shard;
        this.shards = shards;
        this.mac = mac;
        this.link = link;
        this.handedOver = handedOver;
    }

    /** {@code transport}'s input behind the rule. */
    IpProtocolHandler guard(IpProtocolHandler transport) {
        return new Guard(transport);
    }

    /**
     * Hands the datagram to its owner and returns true if it is a reassembled one of another shard's flow; false for
     * this shard's (the transport takes it). One too short for its ports is the transport's to count as malformed.
     */
    private boolean handedToOwner(Ipv4Packet packet, MemorySegment segment, long offset, int length) {
        if (!packet.reassembled() || length < 4) {
            return false;
        }
        final int destinationPort = BigEndian.u16(segment, offset + 2);
        final int hashed = rule.shardOf(packet.source(), packet.destination(), BigEndian.u16(segment, offset),
            destinationPort, shards);
        final int owner = packet.protocol() == IpProtocol.UDP
            ? ShardSteering.udpOwner(udpOwners, packet.destination(), destinationPort, hashed) : hashed;
        if (owner == shard) {
            return false;
        }
        final int headerLength = packet.headerLength();
        final int total = headerLength + length;
        ethernet.wrap(frame, 0, EthernetHeader.LENGTH).destination(mac).source(NO_MAC).etherType(EtherType.IPV4);
        MemorySegment.copy(packet.headerSegment(), packet.headerOffset(), frame, EthernetHeader.LENGTH, headerLength);
        MemorySegment.copy(segment, offset, frame, EthernetHeader.LENGTH + headerLength, length);
        ipv4.wrap(frame, EthernetHeader.LENGTH, total);
        ipv4.totalLength(total)
            .flagsAndFragmentOffset(ipv4.flagsAndFragmentOffset() & Ipv4Header.FLAG_DONT_FRAGMENT)
            .fillChecksum();
        if (link.handOver(owner, frame, 0, EthernetHeader.LENGTH + total, 0)) {
            handedOver.incrementRelease();
        }
        return true;
    }

    /** {@code transport}'s IPv6 input behind the rule. */
    Ipv6ProtocolHandler guard6(Ipv6ProtocolHandler transport) {
        return new Guard6(transport);
    }

    /**
     * Hands the packet to its owner and returns true if it came in fragments or behind extension headers (what the
     * link could not steer) and is another shard's flow; false for this shard's. Too short for its ports: the
     * transport's to count.
     */
    private boolean handedToOwner6(Ipv6Packet packet, MemorySegment segment, long offset, int length) {
        if (!packet.fragmented() && offset == packet.headerOffset() + Ipv6Header.LENGTH || length < 4) {
            return false; // steered by the link itself, and so checked by this shard's filter already
        }
        final int destinationPort = BigEndian.u16(segment, offset + 2);
        final int hashed = ShardSteering.shardOf6(rule, packet.sourceHigh(), packet.sourceLow(),
            packet.destinationHigh(), packet.destinationLow(), BigEndian.u16(segment, offset), destinationPort, shards);
        // A group's datagram stays on shard 0 (shardOf6 gave it 0), whoever claimed its port, as over IPv4.
        final int owner = packet.nextHeader() == NextHeader.UDP && !packet.multicastDestination()
            ? ShardSteering.unicastUdpOwner(udpOwners, destinationPort, hashed) : hashed;
        if (owner == shard) {
            return false;
        }
        ethernet.wrap(frame, 0, EthernetHeader.LENGTH).destination(mac).source(NO_MAC).etherType(EtherType.IPV6);
        ipv6.wrap(frame, EthernetHeader.LENGTH, Ipv6Header.LENGTH).write(packet.trafficClass(), 0, length,
            packet.nextHeader(), packet.hopLimit(), packet.sourceHigh(), packet.sourceLow(), packet.destinationHigh(),
            packet.destinationLow());
        MemorySegment.copy(segment, offset, frame, EthernetHeader.LENGTH + Ipv6Header.LENGTH, length);
        if (link.handOver(owner, frame, 0, EthernetHeader.LENGTH + Ipv6Header.LENGTH + length, 0)) {
            handedOver.incrementRelease();
        }
        return true;
    }

    private final class Guard6 implements Ipv6ProtocolHandler {
        private final Ipv6ProtocolHandler transport;

        Guard6(Ipv6ProtocolHandler transport) {
            this.transport = transport;
        }

        @Override
        public void onPacket(Ipv6Packet packet, MemorySegment segment, long offset, int length, long nowNs) {
            if (!handedToOwner6(packet, segment, offset, length)) {
                transport.onPacket(packet, segment, offset, length, nowNs);
            }
        }

        @Override
        public void onIcmpError(int type, int code, long sourceHigh, long sourceLow, long destinationHigh,
                                long destinationLow, MemorySegment segment, long offset, int length, long nowNs) {
            transport.onIcmpError(type, code, sourceHigh, sourceLow, destinationHigh, destinationLow, segment, offset,
                length, nowNs);
        }
    }

    private final class Guard implements IpProtocolHandler {
        private final IpProtocolHandler transport;

        Guard(IpProtocolHandler transport) {
            this.transport = transport;
        }

        @Override
        public void onPacket(Ipv4Packet packet, MemorySegment segment, long offset, int length, long nowNs) {
            if (!handedToOwner(packet, segment, offset, length)) {
                transport.onPacket(packet, segment, offset, length, nowNs);
            }
        }

        @Override
        public void onIcmpError(int type, int code, int nextHopMtu, int reporter, int originalSource,
                                int originalDestination, MemorySegment segment, long offset, int length, long nowNs) {
            transport.onIcmpError(type, code, nextHopMtu, reporter, originalSource, originalDestination, segment,
                offset, length, nowNs);
        }
    }
}
