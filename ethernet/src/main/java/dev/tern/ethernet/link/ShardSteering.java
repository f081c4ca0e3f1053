package dev.tern.ethernet.link;

import dev.tern.core.memory.BigEndian;
import dev.tern.ethernet.wire.EtherType;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

/**
 * Which shard of a sharded stack owns a received frame: one function, computed in Java (the memory wire's steering,
 * each shard's check that a frame is its own, an active open choosing its local port) and compiled into the classic
 * BPF program that an AF_PACKET fanout group runs in the kernel ({@link #fanoutProgram}), so that both always agree.
 * TCP and UDP choose ephemeral ports by it ({@link ShardPorts}).
 *
 * <p>The rule, for a frame of {@code shards} shards:
 * <ul>
 *   <li>IPv4 (EtherType 0x0800) carrying TCP or UDP, unicast (destination below 224.0.0.0), and not a fragment
 *       (neither MF nor a fragment offset): {@code remainderUnsigned(hash(source, destination, sourcePort,
 *       destinationPort), shards)};</li>
 *   <li>IPv6 (EtherType 0x86DD) whose fixed header's next header is TCP or UDP, to a unicast destination (not
 *       ff00::/8): the same, with each address folded to 32 bits ({@link #fold}: the XOR of its four words);</li>
 *   <li>everything else (ARP, ICMP, ICMPv6, IGMP, multicast and broadcast, every fragment, IPv6 with an extension
 *       header, VLAN-tagged frames, frames too short to hold the ports): shard 0.</li>
 * </ul>
 * A frame too short for the IPv4 header or for the ports goes to shard 0 too: the kernel's program stops with 0 when
 * a load falls outside the packet, and the Java side mirrors that.
 *
 * <p>The hash is over the frame as received (source = the peer). Every fragment goes to shard 0, the first one
 * included (only it carries the ports), so that one shard reassembles the whole datagram and hands it to the shard
 * this function names for its ports when that is another (docs/DESIGN.md, "Shards"). IPv6 with extension headers
 * goes to shard 0 for the same reason: the kernel's program does not walk the header chain, so shard 0 walks it and
 * hands the datagram on.
 *
 * <p>Stateless and thread-safe.
 */
public final class ShardSteering {
    /** Multiplier of the mixing step (an odd constant with well-spread bits; any odd value would do). */
    static final int MIX = 0x045D_9F3B;

    private static final int ETHERTYPE_OFFSET = 12;
    private static final int IPV4_OFFSET = 14;
    private static final int PROTOCOL_OFFSET = 9;
    private static final int FRAGMENT_OFFSET = 6;
    private static final int SOURCE_OFFSET = 12;
    private static final int DESTINATION_OFFSET = 16;
    /** MF and the fragment offset: any of them set makes the packet a fragment. */
    private static final int FRAGMENT_MASK = 0x3FFF;
    private static final int TCP = 6;
    private static final int UDP = 17;
    /** 224.0.0.0: multicast, class E and the limited broadcast are at or above it. */
    static final int FIRST_MULTICAST = 0xE000_0000;
    private static final int IPV6_NEXT_HEADER_OFFSET = 6;
    private static final int IPV6_HOP_LIMIT_OFFSET = 7;
    private static final int IPV6_SOURCE_OFFSET = 8;
    private static final int IPV6_DESTINATION_OFFSET = 24;
    private static final int IPV6_HEADER_LENGTH = 40;
    /** ff00::/8's first byte: an IPv6 destination starting with it is multicast (RFC 4291 §2.7). */
    private static final int IPV6_MULTICAST_BYTE = 0xFF;
    private static final int ICMPV6 = 58;

    private ShardSteering() {
    }

    /** The flow hash of a TCP or UDP packet as received: {@code source} is the sender's address and port. */
    public static int hash(int sourceAddress, int destinationAddress, int sourcePort, int destinationPort) {
        int h = sourceAddress ^ destinationAddress ^ (sourcePort << 16 | destinationPort);
        h ^= h >>> 16;
        h *= MIX;
        h ^= h >>> 16;
        return h;
    }

    /**
     * An IPv6 address folded into the 32 bits the flow hash takes: the XOR of its four words, which classic BPF can
     * compute with eight loads. Used in place of an IPv4 address everywhere the rule takes one.
     */
    public static int fold(long high, long low) {
        final long x = high ^ low;
        return (int) (x >>> 32) ^ (int) x;
    }

    /**
     * The shard of a whole TCP or UDP datagram (unfragmented, or reassembled) as received from the peer: the rule's
     * hash for a unicast destination, shard 0 for a multicast or broadcast one.
     */
    public static int shardOf(int sourceAddress, int destinationAddress, int sourcePort, int destinationPort, int shards) {
        return ShardRule.FLOW_HASH.shardOf(sourceAddress, destinationAddress, sourcePort, destinationPort, shards);
    }

    /**
     * The shard that owns the Ethernet frame of {@code length} bytes at {@code offset}; 0 for anything that is not
     * unicast IPv4 TCP or UDP with its ports (see the class comment). Allocates nothing.
     */
    public static int shardOf(MemorySegment frame, long offset, int length, int shards) {
        return shardOf(frame, offset, length, shards, ShardRule.FLOW_HASH, null);
    }

    /**
     * As {@link #shardOf(MemorySegment, long, int, int)} with TCP and UDP flows steered by {@code rule}, and a
     * unicast UDP datagram to a port claimed in {@code udpOwners} (null: none) given to the claimant.
     */
    public static int shardOf(MemorySegment frame, long offset, int length, int shards, ShardRule rule,
                              UdpPortOwners udpOwners) {
        if (shards <= 1 || length < IPV4_OFFSET + 20) {
            return 0;
        }
        final int etherType = BigEndian.u16(frame, offset + ETHERTYPE_OFFSET);
        if (etherType == EtherType.IPV6) {
            return ipv6ShardOf(frame, offset, length, shards, rule, udpOwners);
        }
        if (etherType != EtherType.IPV4) {
            return 0;
        }
        final long ip = offset + IPV4_OFFSET;
        final int protocol = BigEndian.u8(frame, ip + PROTOCOL_OFFSET);
        if (protocol != TCP && protocol != UDP
            || (BigEndian.u16(frame, ip + FRAGMENT_OFFSET) & FRAGMENT_MASK) != 0) {
            return 0;
        }
        final int headerLength = (BigEndian.u8(frame, ip) & 0x0F) * 4;
        if (IPV4_OFFSET + headerLength + 4 > length) {
            return 0;
        }
        final int ports = BigEndian.i32(frame, ip + headerLength);
        final int destination = BigEndian.i32(frame, ip + DESTINATION_OFFSET);
        final int hashed = rule.shardOf(BigEndian.i32(frame, ip + SOURCE_OFFSET), destination, ports >>> 16,
            ports & 0xFFFF, shards);
        return protocol == UDP ? udpOwner(udpOwners, destination, ports & 0xFFFF, hashed) : hashed;
    }

    /** The IPv6 part of {@link #shardOf(MemorySegment, long, int, int, ShardRule, UdpPortOwners)}. */
    private static int ipv6ShardOf(MemorySegment frame, long offset, int length, int shards, ShardRule rule,
                                   UdpPortOwners udpOwners) {
        final long ip = offset + IPV4_OFFSET;
        final int protocol = BigEndian.u8(frame, ip + IPV6_NEXT_HEADER_OFFSET);
        if (protocol != TCP && protocol != UDP || IPV4_OFFSET + IPV6_HEADER_LENGTH + 4 > length
            || BigEndian.u8(frame, ip + IPV6_DESTINATION_OFFSET) == IPV6_MULTICAST_BYTE) {
            return 0;
        }
        final int ports = BigEndian.i32(frame, ip + IPV6_HEADER_LENGTH);
        final int hashed = rule.unicastShardOf(foldAt(frame, ip + IPV6_SOURCE_OFFSET),
            foldAt(frame, ip + IPV6_DESTINATION_OFFSET), ports >>> 16, ports & 0xFFFF, shards);
        return protocol == UDP ? unicastUdpOwner(udpOwners, ports & 0xFFFF, hashed) : hashed;
    }

    /** {@link #fold} of the IPv6 address at {@code at}. */
    private static int foldAt(MemorySegment frame, long at) {
        return fold(BigEndian.i64(frame, at), BigEndian.i64(frame, at + 8));
    }

    /**
     * The shard of a unicast TCP or UDP datagram over IPv6 as received from the peer, addresses whole: the rule over
     * their {@link #fold}s, shard 0 for a multicast destination.
     */
    public static int shardOf6(ShardRule rule, long sourceHigh, long sourceLow, long destinationHigh,
                               long destinationLow, int sourcePort, int destinationPort, int shards) {
        if (shards <= 1 || destinationHigh >>> 56 == IPV6_MULTICAST_BYTE) {
            return 0;
        }
        return rule.unicastShardOf(fold(sourceHigh, sourceLow), fold(destinationHigh, destinationLow), sourcePort,
            destinationPort, shards);
    }

    /**
     * Whether the frame is a neighbour discovery message that shard 0 passes on to the other shards as well (RFC 4861:
     * a router advertisement, a neighbour solicitation or advertisement, with the hop limit of 255 that only a
     * neighbour can send, and no extension header, which ND messages never need): each shard keeps its own neighbour
     * cache and routers from them, as if it had received them itself. Allocates nothing.
     */
    public static boolean isNeighbourDiscovery(MemorySegment frame, long offset, int length) {
        if (length < IPV4_OFFSET + IPV6_HEADER_LENGTH + 4
            || BigEndian.u16(frame, offset + ETHERTYPE_OFFSET) != EtherType.IPV6) {
            return false;
        }
        final long ip = offset + IPV4_OFFSET;
        if (BigEndian.u8(frame, ip + IPV6_NEXT_HEADER_OFFSET) != ICMPV6
            || BigEndian.u8(frame, ip + IPV6_HOP_LIMIT_OFFSET) != 255) {
            return false;
        }
        final int type = BigEndian.u8(frame, ip + IPV6_HEADER_LENGTH);
        return type >= ICMPV6_ROUTER_ADVERTISEMENT && type <= ICMPV6_NEIGHBOUR_ADVERTISEMENT;
    }

    /**
     * The shard of a unicast UDP datagram to {@code localAddress:localPort} that the hash gave to {@code hashed}: the
     * claimant of the port in {@code udpOwners} (null: none) if there is one. Multicast and broadcast stay on shard 0.
     */
    public static int udpOwner(UdpPortOwners udpOwners, int localAddress, int localPort, int hashed) {
        return Integer.compareUnsigned(localAddress, FIRST_MULTICAST) >= 0 ? hashed
            : unicastUdpOwner(udpOwners, localPort, hashed);
    }

    /**
     * {@link #udpOwner} for a datagram already known to be unicast (IPv6's, whose multicast goes to shard 0 before
     * any port is read): the claimant of {@code localPort}, else {@code hashed}.
     */
    public static int unicastUdpOwner(UdpPortOwners udpOwners, int localPort, int hashed) {
        if (udpOwners == null || !udpOwners.any()) {
            return hashed;
        }
        final int claimant = udpOwners.owner(localPort);
        return claimant >= 0 ? claimant : hashed;
    }

    private static final int ICMP = 1;
    private static final int ICMP_ECHO_REPLY = 0;
    private static final int ICMP_DESTINATION_UNREACHABLE = 3;
    private static final int ICMP_SOURCE_QUENCH = 4;
    private static final int ICMP_TIME_EXCEEDED = 11;
    private static final int ICMP_PARAMETER_PROBLEM = 12;
    /** An ICMP error's fixed part before the quoted datagram (RFC 792): type, code, checksum, 4 bytes. */
    private static final int ICMP_HEADER_LENGTH = 8;

    /**
     * The shard an ICMP message concerns, for shard 0 (which the rule above gives every ICMP message) to hand it on:
     * <ul>
     *   <li>an error that quotes a TCP or UDP datagram this stack sent (destination unreachable, source quench, time
     *       exceeded, parameter problem; RFC 792, RFC 1122 §3.2.2): the shard of the quoted flow as its peer's packets
     *       would be steered, addresses and ports swapped back (the quote is of our packet, source = us);</li>
     *   <li>an echo reply: the shard its identifier names ({@link #echoIdentifier}), so a ping sent from any shard
     *       gets its reply there;</li>
     *   <li>anything else, or a message too short to tell: 0.</li>
     * </ul>
     * Allocates nothing.
     */
    public static int icmpShardOf(MemorySegment frame, long offset, int length, int shards) {
        return icmpShardOf(frame, offset, length, shards, ShardRule.FLOW_HASH, null);
    }

    /**
     * As {@link #icmpShardOf(MemorySegment, long, int, int)} with flows steered by {@code rule}, and an error about a
     * UDP datagram sent from a port claimed in {@code udpOwners} (null: none) given to the claimant, where that port's
     * socket is.
     */
    public static int icmpShardOf(MemorySegment frame, long offset, int length, int shards, ShardRule rule,
                                  UdpPortOwners udpOwners) {
        if (shards <= 1 || length < IPV4_OFFSET + 20) {
            return 0;
        }
        final int etherType = BigEndian.u16(frame, offset + ETHERTYPE_OFFSET);
        if (etherType == EtherType.IPV6) {
            return icmpv6ShardOf(frame, offset, length, shards, rule, udpOwners);
        }
        if (etherType != EtherType.IPV4) {
            return 0;
        }
        final long ip = offset + IPV4_OFFSET;
        if (BigEndian.u8(frame, ip + PROTOCOL_OFFSET) != ICMP
            || (BigEndian.u16(frame, ip + FRAGMENT_OFFSET) & FRAGMENT_MASK) != 0) {
            return 0;
        }
        final long end = offset + length;
        final long icmp = ip + (BigEndian.u8(frame, ip) & 0x0F) * 4L;
        if (icmp + ICMP_HEADER_LENGTH > end) {
            return 0;
        }
        final int type = BigEndian.u8(frame, icmp);
        if (type == ICMP_ECHO_REPLY) {
            return Integer.remainderUnsigned(BigEndian.u16(frame, icmp + 4), shards);
        }
        if (type != ICMP_DESTINATION_UNREACHABLE && type != ICMP_SOURCE_QUENCH && type != ICMP_TIME_EXCEEDED
            && type != ICMP_PARAMETER_PROBLEM) {
            return 0;
        }
        final long quoted = icmp + ICMP_HEADER_LENGTH;
        if (quoted + 20 > end) {
            return 0;
        }
        final int quotedHeaderLength = (BigEndian.u8(frame, quoted) & 0x0F) * 4;
        final int quotedProtocol = BigEndian.u8(frame, quoted + PROTOCOL_OFFSET);
        if (quotedHeaderLength < 20 || quotedProtocol != TCP && quotedProtocol != UDP
            || (BigEndian.u16(frame, quoted + FRAGMENT_OFFSET) & 0x1FFF) != 0
            || quoted + quotedHeaderLength + 4 > end) {
            return 0;
        }
        final int ports = BigEndian.i32(frame, quoted + quotedHeaderLength);
        final int quotedSource = BigEndian.i32(frame, quoted + SOURCE_OFFSET);
        final int hashed = rule.shardOf(BigEndian.i32(frame, quoted + DESTINATION_OFFSET), quotedSource, ports & 0xFFFF,
            ports >>> 16, shards);
        return quotedProtocol == UDP ? udpOwner(udpOwners, quotedSource, ports >>> 16, hashed) : hashed;
    }

    private static final int ICMPV6_DESTINATION_UNREACHABLE = 1;
    private static final int ICMPV6_PARAMETER_PROBLEM = 4;
    private static final int ICMPV6_ECHO_REPLY = 129;
    private static final int ICMPV6_ROUTER_ADVERTISEMENT = 134;
    private static final int ICMPV6_NEIGHBOUR_ADVERTISEMENT = 136;

    /**
     * {@link #icmpShardOf} for ICMPv6 (RFC 4443) carried directly in the fixed header: an error (destination
     * unreachable, packet too big, time exceeded, parameter problem) quoting a TCP or UDP packet of ours whose fixed
     * header names it goes to the quoted flow's shard; an echo reply to the shard its identifier names; the rest to 0.
     */
    private static int icmpv6ShardOf(MemorySegment frame, long offset, int length, int shards, ShardRule rule,
                                     UdpPortOwners udpOwners) {
        final long ip = offset + IPV4_OFFSET;
        final long end = offset + length;
        final long icmp = ip + IPV6_HEADER_LENGTH;
        if (icmp + ICMP_HEADER_LENGTH > end || BigEndian.u8(frame, ip + IPV6_NEXT_HEADER_OFFSET) != ICMPV6) {
            return 0;
        }
        final int type = BigEndian.u8(frame, icmp);
        if (type == ICMPV6_ECHO_REPLY) {
            return Integer.remainderUnsigned(BigEndian.u16(frame, icmp + 4), shards);
        }
        final long quoted = icmp + ICMP_HEADER_LENGTH;
        if (type < ICMPV6_DESTINATION_UNREACHABLE || type > ICMPV6_PARAMETER_PROBLEM
            || quoted + IPV6_HEADER_LENGTH + 4 > end) {
            return 0;
        }
        final int quotedProtocol = BigEndian.u8(frame, quoted + IPV6_NEXT_HEADER_OFFSET);
        if (quotedProtocol != TCP && quotedProtocol != UDP
            || BigEndian.u8(frame, quoted + IPV6_DESTINATION_OFFSET) == IPV6_MULTICAST_BYTE) {
            return 0;
        }
        final int ports = BigEndian.i32(frame, quoted + IPV6_HEADER_LENGTH);
        final int hashed = rule.unicastShardOf(foldAt(frame, quoted + IPV6_DESTINATION_OFFSET),
            foldAt(frame, quoted + IPV6_SOURCE_OFFSET), ports & 0xFFFF, ports >>> 16, shards);
        return quotedProtocol == UDP ? unicastUdpOwner(udpOwners, ports >>> 16, hashed) : hashed;
    }

    /**
     * An ICMP echo identifier near {@code candidate} that names {@code shard} of {@code shards}
     * ({@code identifier % shards == shard}), so that {@link #icmpShardOf} hands the replies to the shard that pings.
     */
    public static int echoIdentifier(int candidate, int shard, int shards) {
        if (shards <= 1) {
            return candidate & 0xFFFF;
        }
        int identifier = (candidate & 0xFFFF) / shards * shards + shard;
        if (identifier > 0xFFFF) {
            identifier -= shards;
        }
        return identifier;
    }

    // ------------------------------------------------------------------------------------------ classic BPF

    /** One classic BPF instruction ({@code struct sock_filter}: u16 code, u8 jt, u8 jf, u32 k). */
    public record Instruction(int code, int jt, int jf, int k) {
        public Instruction {
            if (code < 0 || code > 0xFFFF || jt < 0 || jt > 0xFF || jf < 0 || jf > 0xFF) {
                throw new IllegalArgumentException("not a classic BPF instruction: " + code + " " + jt + " " + jf);
            }
        }
    }

    /** {@code struct sock_filter}'s size: the program is this many bytes per instruction. */
    public static final int INSTRUCTION_SIZE = 8;

    // Classic BPF opcodes (linux/filter.h, linux/bpf_common.h).
    public static final int BPF_LD = 0x00;
    public static final int BPF_LDX = 0x01;
    public static final int BPF_ST = 0x02;
    public static final int BPF_ALU = 0x04;
    public static final int BPF_JMP = 0x05;
    public static final int BPF_RET = 0x06;
    public static final int BPF_MISC = 0x07;
    public static final int BPF_W = 0x00;
    public static final int BPF_H = 0x08;
    public static final int BPF_B = 0x10;
    public static final int BPF_ABS = 0x20;
    public static final int BPF_IND = 0x40;
    public static final int BPF_MEM = 0x60;
    /** {@code ldxb 4*([k]&0xf)}: X = an IPv4 header's length. */
    public static final int BPF_MSH = 0xA0;
    public static final int BPF_MUL = 0x20;
    public static final int BPF_AND = 0x50;
    public static final int BPF_LSH = 0x60;
    public static final int BPF_RSH = 0x70;
    public static final int BPF_MOD = 0x90;
    public static final int BPF_XOR = 0xA0;
    /** {@code ja k}: an unconditional jump forward by {@code k}. */
    public static final int BPF_JA = 0x00;
    public static final int BPF_JEQ = 0x10;
    public static final int BPF_JGE = 0x30;
    public static final int BPF_JSET = 0x40;
    public static final int BPF_K = 0x00;
    public static final int BPF_X = 0x08;
    public static final int BPF_A = 0x10;
    public static final int BPF_TAX = 0x00;
    /** Loads at {@code SKF_NET_OFF + k} read from the network header, wherever the packet's data starts. */
    public static final int SKF_NET_OFF = -0x10_0000;
    /** Ancillary load base; {@code SKF_AD_OFF + SKF_AD_PROTOCOL} reads {@code skb->protocol} (host order). */
    public static final int SKF_AD_OFF = -0x1000;
    public static final int SKF_AD_PROTOCOL = 0;
    /** {@code SKF_AD_OFF + SKF_AD_RANDOM}: an absolute word load there yields a random u32. */
    public static final int SKF_AD_RANDOM = 56;

    /**
     * The fanout program for {@code shards} sockets (PACKET_FANOUT_CBPF), IPv4 and IPv6: it returns {@link #shardOf} of each packet,
     * and the kernel hands the packet to the group's socket of that index (sockets are indexed in the order they
     * joined). Loads are relative to the network header ({@code SKF_NET_OFF}), because the kernel runs fanout
     * programs on received packets whose data starts there, and on outgoing ones whose data starts at the MAC header.
     */
    public static List<Instruction> fanoutProgram(int shards) {
        if (shards < 1) {
            throw new IllegalArgumentException("shards must be at least 1, got " + shards);
        }
        final List<Instruction> p = new ArrayList<>();
        final int net = SKF_NET_OFF;
        // Jump offsets are filled in once the targets' places are known.
        p.add(new Instruction(BPF_LD | BPF_H | BPF_ABS, 0, 0, SKF_AD_OFF + SKF_AD_PROTOCOL));
        final int checkIpv4 = p.size();
        p.add(null); // jeq #0x0800, ipv4, next
        final int checkIpv6 = p.size();
        p.add(null); // jeq #0x86dd, ipv6, shard0
        // IPv4: M[0] = source ^ destination, A = the ports word after the header and its options.
        final int ipv4 = p.size();
        p.add(new Instruction(BPF_LD | BPF_B | BPF_ABS, 0, 0, net + PROTOCOL_OFFSET));
        final int checkTcp = p.size();
        p.add(null); // jeq #6, fragments, next
        final int checkUdp = p.size();
        p.add(null); // jeq #17, next, shard0
        p.add(new Instruction(BPF_LD | BPF_H | BPF_ABS, 0, 0, net + FRAGMENT_OFFSET));
        final int checkFragment = p.size();
        p.add(null); // jset #0x3fff, shard0, next
        p.add(new Instruction(BPF_LD | BPF_W | BPF_ABS, 0, 0, net + DESTINATION_OFFSET));
        final int checkMulticast = p.size();
        p.add(null); // jge #0xe0000000, shard0, next
        p.add(new Instruction(BPF_MISC | BPF_TAX, 0, 0, 0));                       // X = destination
        p.add(new Instruction(BPF_LD | BPF_W | BPF_ABS, 0, 0, net + SOURCE_OFFSET)); // A = source
        p.add(new Instruction(BPF_ALU | BPF_XOR | BPF_X, 0, 0, 0));               // A = source ^ destination
        p.add(new Instruction(BPF_ST, 0, 0, 0));                                   // M[0] = A
        p.add(new Instruction(BPF_LD | BPF_B | BPF_ABS, 0, 0, net));               // A = version/IHL
        p.add(new Instruction(BPF_ALU | BPF_AND | BPF_K, 0, 0, 0x0F));
        p.add(new Instruction(BPF_ALU | BPF_LSH | BPF_K, 0, 0, 2));
        p.add(new Instruction(BPF_MISC | BPF_TAX, 0, 0, 0));                       // X = header length
        p.add(new Instruction(BPF_LD | BPF_W | BPF_IND, 0, 0, net));               // A = ports word
        final int toHash = p.size();
        p.add(null); // ja hash
        // IPv6: M[0] = the XOR of both addresses' eight words (fold(source) ^ fold(destination)), A = the ports word.
        final int ipv6 = p.size();
        p.add(new Instruction(BPF_LD | BPF_B | BPF_ABS, 0, 0, net + IPV6_NEXT_HEADER_OFFSET));
        final int checkTcp6 = p.size();
        p.add(null); // jeq #6, unicast6, next
        final int checkUdp6 = p.size();
        p.add(null); // jeq #17, next, shard0
        p.add(new Instruction(BPF_LD | BPF_B | BPF_ABS, 0, 0, net + IPV6_DESTINATION_OFFSET));
        final int checkMulticast6 = p.size();
        p.add(null); // jeq #0xff, shard0, next
        p.add(new Instruction(BPF_LD | BPF_W | BPF_ABS, 0, 0, net + IPV6_SOURCE_OFFSET));
        for (int word = 1; word < 8; word++) {
            p.add(new Instruction(BPF_MISC | BPF_TAX, 0, 0, 0));
            p.add(new Instruction(BPF_LD | BPF_W | BPF_ABS, 0, 0, net + IPV6_SOURCE_OFFSET + 4 * word));
            p.add(new Instruction(BPF_ALU | BPF_XOR | BPF_X, 0, 0, 0));
        }
        p.add(new Instruction(BPF_ST, 0, 0, 0));                                   // M[0] = A
        p.add(new Instruction(BPF_LD | BPF_W | BPF_ABS, 0, 0, net + IPV6_HEADER_LENGTH)); // A = ports word
        // Both families: h = M[0] ^ ports, mixed, modulo the shards.
        final int hash = p.size();
        p.add(new Instruction(BPF_LDX | BPF_W | BPF_MEM, 0, 0, 0));                // X = M[0]
        p.add(new Instruction(BPF_ALU | BPF_XOR | BPF_X, 0, 0, 0));               // h
        p.add(new Instruction(BPF_MISC | BPF_TAX, 0, 0, 0));
        p.add(new Instruction(BPF_ALU | BPF_RSH | BPF_K, 0, 0, 16));
        p.add(new Instruction(BPF_ALU | BPF_XOR | BPF_X, 0, 0, 0));               // h ^= h >>> 16
        p.add(new Instruction(BPF_ALU | BPF_MUL | BPF_K, 0, 0, MIX));              // h *= MIX
        p.add(new Instruction(BPF_MISC | BPF_TAX, 0, 0, 0));
        p.add(new Instruction(BPF_ALU | BPF_RSH | BPF_K, 0, 0, 16));
        p.add(new Instruction(BPF_ALU | BPF_XOR | BPF_X, 0, 0, 0));               // h ^= h >>> 16
        p.add(new Instruction(BPF_ALU | BPF_MOD | BPF_K, 0, 0, shards));           // unsigned h % shards
        p.add(new Instruction(BPF_RET | BPF_A, 0, 0, 0));
        final int shard0 = p.size();
        p.add(new Instruction(BPF_RET | BPF_K, 0, 0, 0));
        p.set(checkIpv4, jump(BPF_JEQ, EtherType.IPV4, checkIpv4, ipv4, checkIpv6));
        p.set(checkIpv6, jump(BPF_JEQ, EtherType.IPV6, checkIpv6, ipv6, shard0));
        p.set(checkTcp, jump(BPF_JEQ, TCP, checkTcp, checkFragment - 1, checkUdp));
        p.set(checkUdp, jump(BPF_JEQ, UDP, checkUdp, checkUdp + 1, shard0));
        p.set(checkFragment, jump(BPF_JSET, FRAGMENT_MASK, checkFragment, shard0, checkFragment + 1));
        p.set(checkMulticast, jump(BPF_JGE, FIRST_MULTICAST, checkMulticast, shard0, checkMulticast + 1));
        p.set(toHash, new Instruction(BPF_JMP | BPF_JA, 0, 0, hash - toHash - 1));
        p.set(checkTcp6, jump(BPF_JEQ, TCP, checkTcp6, checkMulticast6 - 1, checkUdp6));
        p.set(checkUdp6, jump(BPF_JEQ, UDP, checkUdp6, checkUdp6 + 1, shard0));
        p.set(checkMulticast6, jump(BPF_JEQ, IPV6_MULTICAST_BYTE, checkMulticast6, shard0, checkMulticast6 + 1));
        return List.copyOf(p);
    }

    /** A conditional jump at index {@code at} to {@code whenTrue} or {@code whenFalse} (absolute indexes, forward). */
    private static Instruction jump(int operation, int k, int at, int whenTrue, int whenFalse) {
        return new Instruction(BPF_JMP | operation | BPF_K, whenTrue - at - 1, whenFalse - at - 1, k);
    }
}
