package dev.tern.afpacket;

import dev.tern.core.checksum.InternetChecksum;
import dev.tern.core.memory.BigEndian;

import java.lang.foreign.MemorySegment;

/**
 * Hand-built frames for the veth tests (ARP, ICMP echo, UDP, TCP over IPv4), written in place at (segment, offset),
 * and checks on received bytes. The stack's own flyweights do not exist yet; these are deliberately plain.
 */
final class Packets {
    static final int ETHERTYPE_IPV4 = 0x0800;
    static final int ETHERTYPE_ARP = 0x0806;
    static final int ETHERTYPE_VLAN = 0x8100;
    static final int ETHERTYPE_EXPERIMENT = 0x88B5;
    static final int IP_ICMP = 1;
    static final int IP_TCP = 6;
    static final int IP_UDP = 17;
    static final int ETH = 14;
    static final int IP = 20;
    static final int UDP = 8;
    static final int TCP = 20;

    /** What to put in the L4 checksum field. */
    enum Checksum {
        /** The finished checksum. */
        FULL,
        /** The folded pseudo-header sum: what a CHECKSUM_PARTIAL sender leaves for the NIC to complete. */
        PARTIAL
    }

    private Packets() {
    }

    static void ethernet(MemorySegment s, long o, long destination, long source, int etherType) {
        BigEndian.u48(s, o, destination);
        BigEndian.u48(s, o + 6, source);
        BigEndian.u16(s, o + 12, etherType);
    }

    /** ARP over Ethernet for IPv4 (RFC 826); returns the frame length (42). */
    static int arp(MemorySegment s, long o, int operation, long senderMac, int senderIp, long targetMac, int targetIp, long ethernetDestination) {
        ethernet(s, o, ethernetDestination, senderMac, ETHERTYPE_ARP);
        final long a = o + ETH;
        BigEndian.u16(s, a, 1);
        BigEndian.u16(s, a + 2, ETHERTYPE_IPV4);
        BigEndian.u8(s, a + 4, 6);
        BigEndian.u8(s, a + 5, 4);
        BigEndian.u16(s, a + 6, operation);
        BigEndian.u48(s, a + 8, senderMac);
        BigEndian.i32(s, a + 14, senderIp);
        BigEndian.u48(s, a + 18, targetMac);
        BigEndian.i32(s, a + 24, targetIp);
        return ETH + 28;
    }

    /** An IPv4 header without options, DF set, TTL 64, checksum filled in. */
    static void ipv4(MemorySegment s, long ip, int protocol, int source, int destination, int payloadLength, int id) {
        BigEndian.u8(s, ip, 0x45);
        BigEndian.u8(s, ip + 1, 0);
        BigEndian.u16(s, ip + 2, IP + payloadLength);
        BigEndian.u16(s, ip + 4, id);
        BigEndian.u16(s, ip + 6, 0x4000);
        BigEndian.u8(s, ip + 8, 64);
        BigEndian.u8(s, ip + 9, protocol);
        BigEndian.u16(s, ip + 10, 0);
        BigEndian.i32(s, ip + 12, source);
        BigEndian.i32(s, ip + 16, destination);
        BigEndian.u16(s, ip + 10, InternetChecksum.compute(s, ip, IP));
    }

    /** ICMP echo request (type 8) or reply (type 0) with {@code payload}; returns the frame length. */
    static int icmpEcho(MemorySegment s, long o, long sourceMac, long destinationMac, int sourceIp, int destinationIp,
                        int type, int identifier, int sequence, byte[] payload) {
        ethernet(s, o, destinationMac, sourceMac, ETHERTYPE_IPV4);
        final int icmpLength = 8 + payload.length;
        ipv4(s, o + ETH, IP_ICMP, sourceIp, destinationIp, icmpLength, sequence);
        final long icmp = o + ETH + IP;
        BigEndian.u8(s, icmp, type);
        BigEndian.u8(s, icmp + 1, 0);
        BigEndian.u16(s, icmp + 2, 0);
        BigEndian.u16(s, icmp + 4, identifier);
        BigEndian.u16(s, icmp + 6, sequence);
        MemorySegment.copy(MemorySegment.ofArray(payload), 0, s, icmp + 8, payload.length);
        BigEndian.u16(s, icmp + 2, InternetChecksum.compute(s, icmp, icmpLength));
        return ETH + IP + icmpLength;
    }

    /** UDP over IPv4; returns the frame length. */
    static int udp(MemorySegment s, long o, long sourceMac, long destinationMac, int sourceIp, int destinationIp,
                   int sourcePort, int destinationPort, byte[] payload, Checksum checksum) {
        ethernet(s, o, destinationMac, sourceMac, ETHERTYPE_IPV4);
        final int udpLength = UDP + payload.length;
        ipv4(s, o + ETH, IP_UDP, sourceIp, destinationIp, udpLength, 1);
        final long udp = o + ETH + IP;
        BigEndian.u16(s, udp, sourcePort);
        BigEndian.u16(s, udp + 2, destinationPort);
        BigEndian.u16(s, udp + 4, udpLength);
        MemorySegment.copy(MemorySegment.ofArray(payload), 0, s, udp + UDP, payload.length);
        l4Checksum(s, udp, udp + 6, IP_UDP, sourceIp, destinationIp, udpLength, checksum);
        return ETH + IP + udpLength;
    }

    /** TCP over IPv4 without options; returns the frame length. */
    static int tcp(MemorySegment s, long o, long sourceMac, long destinationMac, int sourceIp, int destinationIp,
                   int sourcePort, int destinationPort, int sequence, int acknowledgment, int flags, byte[] payload, Checksum checksum) {
        ethernet(s, o, destinationMac, sourceMac, ETHERTYPE_IPV4);
        final int tcpLength = TCP + payload.length;
        ipv4(s, o + ETH, IP_TCP, sourceIp, destinationIp, tcpLength, 1);
        final long tcp = o + ETH + IP;
        BigEndian.u16(s, tcp, sourcePort);
        BigEndian.u16(s, tcp + 2, destinationPort);
        BigEndian.i32(s, tcp + 4, sequence);
        BigEndian.i32(s, tcp + 8, acknowledgment);
        BigEndian.u8(s, tcp + 12, (TCP / 4) << 4);
        BigEndian.u8(s, tcp + 13, flags);
        BigEndian.u16(s, tcp + 14, 65535);
        BigEndian.u16(s, tcp + 18, 0);
        MemorySegment.copy(MemorySegment.ofArray(payload), 0, s, tcp + TCP, payload.length);
        l4Checksum(s, tcp, tcp + 16, IP_TCP, sourceIp, destinationIp, tcpLength, checksum);
        return ETH + IP + tcpLength;
    }

    private static void l4Checksum(MemorySegment s, long l4, long field, int protocol, int sourceIp, int destinationIp,
                                   int length, Checksum checksum) {
        final long pseudo = InternetChecksum.pseudoHeader(sourceIp, destinationIp, protocol, length);
        BigEndian.u16(s, field, 0);
        if (checksum == Checksum.PARTIAL) {
            BigEndian.u16(s, field, InternetChecksum.fold(pseudo));
        } else {
            final int value = InternetChecksum.finish(InternetChecksum.add(pseudo, s, l4, length));
            BigEndian.u16(s, field, value == 0 ? 0xFFFF : value);
        }
    }

    /** True when the IPv4 header checksum of an untagged frame verifies. */
    static boolean ipv4HeaderChecksumValid(byte[] frame) {
        final MemorySegment s = MemorySegment.ofArray(frame);
        final int headerLength = (BigEndian.u8(s, ETH) & 0xF) * 4;
        return InternetChecksum.verifies(InternetChecksum.add(0, s, ETH, headerLength));
    }

    /** True when the TCP or UDP checksum of an untagged IPv4 frame verifies (pseudo-header included). */
    static boolean l4ChecksumValid(byte[] frame) {
        final MemorySegment s = MemorySegment.ofArray(frame);
        final int headerLength = (BigEndian.u8(s, ETH) & 0xF) * 4;
        final int totalLength = BigEndian.u16(s, ETH + 2);
        final int protocol = BigEndian.u8(s, ETH + 9);
        final int l4Length = totalLength - headerLength;
        final long pseudo = InternetChecksum.pseudoHeader(BigEndian.i32(s, ETH + 12), BigEndian.i32(s, ETH + 16), protocol, l4Length);
        return InternetChecksum.verifies(InternetChecksum.add(pseudo, s, ETH + headerLength, l4Length));
    }

    /** The L4 checksum field holds exactly the folded pseudo-header sum (what a CHECKSUM_PARTIAL sender leaves). */
    static boolean l4ChecksumIsPseudoHeaderSum(byte[] frame) {
        final MemorySegment s = MemorySegment.ofArray(frame);
        final int headerLength = (BigEndian.u8(s, ETH) & 0xF) * 4;
        final int totalLength = BigEndian.u16(s, ETH + 2);
        final int protocol = BigEndian.u8(s, ETH + 9);
        final long pseudo = InternetChecksum.pseudoHeader(BigEndian.i32(s, ETH + 12), BigEndian.i32(s, ETH + 16), protocol,
            totalLength - headerLength);
        final int field = BigEndian.u16(s, ETH + headerLength + (protocol == IP_UDP ? 6 : 16));
        return field == InternetChecksum.fold(pseudo);
    }

    static int u8(byte[] frame, int offset) {
        return frame[offset] & 0xFF;
    }

    static int u16(byte[] frame, int offset) {
        return BigEndian.u16(MemorySegment.ofArray(frame), offset);
    }

    static int i32(byte[] frame, int offset) {
        return BigEndian.i32(MemorySegment.ofArray(frame), offset);
    }

    static long u48(byte[] frame, int offset) {
        return BigEndian.u48(MemorySegment.ofArray(frame), offset);
    }

    static boolean isIpv4(byte[] frame, int protocol) {
        return frame.length >= ETH + IP && u16(frame, 12) == ETHERTYPE_IPV4 && u8(frame, ETH + 9) == protocol;
    }
}
