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
 * <p>{@link #guard} puts the rule in front of a transport's input; ICMP errors pass through unchanged (shard 0's link
 * hands those on itself). Owned by the shard's thread. Allocates nothing per datagram: one frame buffer of the
 * largest datagram per shard, made once.
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
    private final MemorySegment frame = Arena.ofAuto().allocate(EthernetHeader.LENGTH + Ipv4Header.MAX_TOTAL_LENGTH, 8);
    private final EthernetHeader ethernet = new EthernetHeader();
    private final Ipv4Header ipv4 = new Ipv4Header();

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
