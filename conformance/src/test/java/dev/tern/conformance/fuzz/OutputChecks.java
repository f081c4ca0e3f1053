package dev.tern.conformance.fuzz;

import dev.tern.conformance.replay.CapturedFrame;
import dev.tern.core.checksum.InternetChecksum;
import dev.tern.core.memory.BigEndian;

import java.lang.foreign.MemorySegment;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * What every frame Tern sends must look like, whatever it received: the fuzzers' oracle for output. A violation is
 * an {@link AssertionError} naming the frame and the rule.
 *
 * <ul>
 *   <li>Ethernet: from our MAC, 60 to MTU + 14 bytes, ARP or IPv4.</li>
 *   <li>ARP (RFC 826): Ethernet/IPv4 sizes, request or reply, sender is us.</li>
 *   <li>IPv4 (RFC 791): version 4, no options (IGMP: exactly the Router Alert option), total length within the
 *       frame, valid header checksum, from our address, to a unicast address that is not ours (IGMP: to a group),
 *       TTL above zero; fragments of one datagram fit together.</li>
 *   <li>ICMP (RFC 792, RFC 1122 §3.2.2): valid checksum over the (reassembled) message; an echo reply or an error;
 *       an error is at most 576 bytes, quotes an IPv4 header, and never answers an ICMP error.</li>
 *   <li>UDP (RFC 768): the length field is the datagram's, the checksum is present and valid, ports are not 0.</li>
 *   <li>TCP (RFC 9293 §3.1): the data offset within the segment, the checksum valid, neither port 0 (Tern drops
 *       segments from or to port 0 unanswered, where Linux would answer them), no SYN with RST or FIN, no data on a
 *       RST.</li>
 *   <li>IGMP (RFC 3376 §4): TTL 1, Router Alert, a valid checksum.</li>
 * </ul>
 */
final class OutputChecks {
    private static final int ETH = 14;

    private OutputChecks() {
    }

    static void check(List<CapturedFrame> sent) {
        final Map<Integer, TreeMap<Integer, byte[]>> fragments = new HashMap<>();
        final Map<Integer, Integer> fragmentedLength = new HashMap<>();
        final Map<Integer, Integer> protocols = new HashMap<>();
        final Map<Integer, Integer> destinations = new HashMap<>();
        for (int i = 0; i < sent.size(); i++) {
            final CapturedFrame frame = sent.get(i);
            final String where = "sent frame " + (i + 1) + " " + frame;
            require(frame.length() >= 60 && frame.length() <= FuzzStack.MTU + ETH, where, "length 60.." + (FuzzStack.MTU + ETH));
            require(frame.source() == FuzzStack.MAC, where, "from our MAC");
            if (frame.etherType() == CapturedFrame.ETHERTYPE_ARP) {
                checkArp(frame, where);
                continue;
            }
            require(frame.etherType() == CapturedFrame.ETHERTYPE_IPV4, where, "ARP or IPv4");
            final byte[] b = frame.bytes();
            final int protocol = frame.u8(ETH + 9);
            require(protocol == 1 || protocol == 2 || protocol == 6 || protocol == 17, where, "ICMP, IGMP, TCP or UDP");
            final int headerLength = protocol == 2 ? 24 : 20;
            require(frame.u8(ETH) == 0x40 + headerLength / 4, where, protocol == 2 ? "IGMP with one option" : "IPv4 without options");
            final int total = frame.u16(ETH + 2);
            require(total >= headerLength && ETH + total <= frame.length(), where, "total length within the frame");
            require(InternetChecksum.verifies(InternetChecksum.add(0, MemorySegment.ofArray(b), ETH, headerLength)), where,
                "header checksum");
            require(frame.i32(ETH + 12) == FuzzStack.IP, where, "from our address");
            final int destination = frame.i32(ETH + 16);
            if (protocol == 2) {
                require((destination & 0xF000_0000) == 0xE000_0000, where, "IGMP to a group");
            } else {
                require(destination != FuzzStack.IP && destination != 0 && destination != -1 && destination != FuzzStack.BROADCAST_IP
                    && (destination & 0xF000_0000) != 0xE000_0000, where, "to a unicast address not ours");
            }
            require(frame.u8(ETH + 8) > 0, where, "TTL above zero");
            final int flagsAndOffset = frame.u16(ETH + 6);
            final byte[] payload = java.util.Arrays.copyOfRange(b, ETH + headerLength, ETH + total);
            if ((flagsAndOffset & 0x3FFF) == 0) {
                checkTransport(protocol, payload, destination, where);
                if (protocol == 2) {
                    checkIgmpEnvelope(frame, where);
                }
                continue;
            }
            protocols.put(frame.u16(ETH + 4), protocol);
            destinations.put(frame.u16(ETH + 4), destination);
            final int id = frame.u16(ETH + 4);
            final int offset = (flagsAndOffset & 0x1FFF) * 8;
            require((flagsAndOffset & 0x2000) == 0 || payload.length % 8 == 0, where, "a fragment before the last carries a multiple of 8 bytes");
            require(fragments.computeIfAbsent(id, k -> new TreeMap<>()).put(offset, payload) == null, where, "one fragment per offset");
            if ((flagsAndOffset & 0x2000) == 0) {
                fragmentedLength.put(id, offset + payload.length);
            }
        }
        for (Map.Entry<Integer, TreeMap<Integer, byte[]>> datagram : fragments.entrySet()) {
            final Integer length = fragmentedLength.get(datagram.getKey());
            require(length != null, "datagram " + datagram.getKey(), "its last fragment was sent");
            final byte[] whole = new byte[length];
            int next = 0;
            for (Map.Entry<Integer, byte[]> piece : datagram.getValue().entrySet()) {
                require(piece.getKey() == next, "datagram " + datagram.getKey(), "fragments neither overlap nor leave holes");
                System.arraycopy(piece.getValue(), 0, whole, next, piece.getValue().length);
                next += piece.getValue().length;
            }
            require(next == length, "datagram " + datagram.getKey(), "fragments add up to its length");
            checkTransport(protocols.get(datagram.getKey()), whole, destinations.get(datagram.getKey()),
                "reassembled datagram " + datagram.getKey());
        }
    }

    /**
     * RFC 1122 §3.2.2: no ICMP error about a datagram sent as a link-layer broadcast (or multicast), and none about a
     * datagram whose source is not a single host (RFC 1122 §3.2.1.3, RFC 1812 §4.3.2.7). Each error sent is matched
     * to the received frame whose IPv4 header it quotes.
     */
    static void checkErrorsAgainstInput(List<CapturedFrame> sent, List<CapturedFrame> received) {
        for (int i = 0; i < sent.size(); i++) {
            final CapturedFrame frame = sent.get(i);
            final int type = frame.icmpType();
            if (type != 3 && type != 11 && type != 12 || frame.length() < ETH + 28 + 20) {
                continue;
            }
            final String where = "sent frame " + (i + 1) + " (ICMP error type " + type + ") " + frame;
            final byte[] quoted = java.util.Arrays.copyOfRange(frame.bytes(), ETH + 28, ETH + 28 + 20);
            final int quotedSource = frame.i32(ETH + 28 + 12);
            require(quotedSource != 0 && quotedSource != -1 && quotedSource != FuzzStack.BROADCAST_IP
                && (quotedSource & 0xF000_0000) != 0xE000_0000 && (quotedSource & 0xF000_0000) != 0xF000_0000
                && (quotedSource >>> 24) != 127, where, "an error only about a datagram from a single host");
            boolean quotesAReceivedDatagram = false;
            boolean receivedAsUnicast = false;
            for (CapturedFrame in : received) {
                if (in.isIpv4() && in.length() >= ETH + 20 && java.util.Arrays.equals(in.bytes(), ETH, ETH + 20, quoted, 0, 20)) {
                    quotesAReceivedDatagram = true;
                    receivedAsUnicast |= in.destination() == FuzzStack.MAC;
                }
            }
            require(!quotesAReceivedDatagram || receivedAsUnicast, where,
                "no ICMP error about a datagram received as a link-layer broadcast or multicast (RFC 1122 §3.2.2)");
        }
    }

    private static void checkArp(CapturedFrame frame, String where) {
        require(frame.u16(ETH) == 1 && frame.u16(ETH + 2) == 0x0800 && frame.u8(ETH + 4) == 6 && frame.u8(ETH + 5) == 4,
            where, "ARP for Ethernet and IPv4");
        final int operation = frame.arpOperation();
        require(operation == 1 || operation == 2, where, "ARP request or reply");
        require(frame.u48(ETH + 8) == FuzzStack.MAC && frame.arpSenderIp() == FuzzStack.IP, where, "ARP sender is us");
    }

    private static void checkTransport(int protocol, byte[] payload, int destination, String where) {
        switch (protocol) {
            case 1 -> checkIcmp(payload, where);
            case 2 -> require(InternetChecksum.verifies(InternetChecksum.add(0, MemorySegment.ofArray(payload), 0, payload.length)),
                where, "IGMP checksum");
            case 6 -> checkTcp(payload, destination, where);
            default -> checkUdp(payload, destination, where);
        }
    }

    private static long pseudoHeaderSum(int destination, int protocol, int length) {
        return InternetChecksum.pseudoHeader(FuzzStack.IP, destination, protocol, length);
    }

    private static void checkUdp(byte[] datagram, int destination, String where) {
        require(datagram.length >= 8, where, "a UDP header");
        final MemorySegment s = MemorySegment.ofArray(datagram);
        require(BigEndian.u16(s, 4) == datagram.length, where, "UDP length is the datagram's");
        require(BigEndian.u16(s, 0) != 0 && BigEndian.u16(s, 2) != 0, where, "UDP ports not 0");
        require(BigEndian.u16(s, 6) != 0, where, "a UDP checksum (Tern always sends one)");
        require(InternetChecksum.verifies(InternetChecksum.add(pseudoHeaderSum(destination, 17, datagram.length), s, 0,
            datagram.length)), where, "UDP checksum");
    }

    private static void checkTcp(byte[] segment, int destination, String where) {
        require(segment.length >= 20, where, "a TCP header");
        final MemorySegment s = MemorySegment.ofArray(segment);
        final int dataOffset = (BigEndian.u8(s, 12) >>> 4) * 4;
        require(dataOffset >= 20 && dataOffset <= segment.length, where, "TCP data offset within the segment");
        final int flags = BigEndian.u8(s, 13);
        // Port 0 is reserved (RFC 6335 §6). Linux answers a SYN from port 0 with a SYN-ACK to it and a segment to
        // port 0 with a reset from it (seen on this kernel); Tern answers neither (tcp.drop.zero_port).
        require(BigEndian.u16(s, 0) != 0 && BigEndian.u16(s, 2) != 0, where, "TCP ports not 0");
        require(InternetChecksum.verifies(InternetChecksum.add(pseudoHeaderSum(destination, 6, segment.length), s, 0,
            segment.length)), where, "TCP checksum");
        final boolean syn = (flags & 0x02) != 0;
        require(!(syn && (flags & 0x05) != 0), where, "no SYN with RST or FIN");
        require((flags & 0x04) == 0 || segment.length == dataOffset, where, "no data on a RST");
    }

    /** RFC 3376 §4: TTL 1 and the Router Alert option (RFC 2113: 0x94 0x04 0x0000). */
    private static void checkIgmpEnvelope(CapturedFrame frame, String where) {
        require(frame.u8(ETH + 8) == 1, where, "IGMP with TTL 1");
        require(frame.i32(ETH + 20) == 0x9404_0000, where, "IGMP with Router Alert");
    }

    private static void checkIcmp(byte[] message, String where) {
        require(message.length >= 8, where, "an ICMP header");
        require(InternetChecksum.verifies(InternetChecksum.add(0, MemorySegment.ofArray(message), 0, message.length)), where,
            "ICMP checksum");
        final int type = message[0] & 0xFF;
        require(type == 0 || type == 3 || type == 11 || type == 12, where, "an echo reply or an error, not type " + type);
        if (type != 0) {
            require(20 + message.length <= 576, where, "an error is at most 576 bytes");
            require(message.length >= 8 + 20 && (message[8] & 0xF0) == 0x40, where, "an error quotes an IPv4 header");
            final int quotedHeader = (message[8] & 0x0F) * 4;
            if ((message[8 + 9] & 0xFF) == 1 && message.length > 8 + quotedHeader) {
                final int quotedType = message[8 + quotedHeader] & 0xFF;
                // RFC 1122 §3.2.2: the error types are 3, 4, 5, 11 and 12.
                require(quotedType != 3 && quotedType != 4 && quotedType != 5 && quotedType != 11 && quotedType != 12,
                    where, "never an error about an ICMP error (quoted type " + quotedType + ")");
            }
        }
    }

    private static void require(boolean rule, String where, String what) {
        if (!rule) {
            throw new AssertionError(where + ": breaks '" + what + "'");
        }
    }

}
