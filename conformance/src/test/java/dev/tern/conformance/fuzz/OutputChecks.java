package dev.tern.conformance.fuzz;

import dev.tern.conformance.replay.CapturedFrame;
import dev.tern.core.checksum.InternetChecksum;

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
 *   <li>IPv4 (RFC 791): version 4, no options, total length within the frame, valid header checksum, from our
 *       address, to a unicast address that is not ours, TTL above zero; fragments of one datagram fit together.</li>
 *   <li>ICMP (RFC 792, RFC 1122 §3.2.2): valid checksum over the (reassembled) message; an echo reply or an error;
 *       an error is at most 576 bytes, quotes an IPv4 header, and never answers an ICMP error.</li>
 * </ul>
 */
final class OutputChecks {
    private static final int ETH = 14;

    private OutputChecks() {
    }

    static void check(List<CapturedFrame> sent) {
        final Map<Integer, TreeMap<Integer, byte[]>> fragments = new HashMap<>();
        final Map<Integer, Integer> fragmentedLength = new HashMap<>();
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
            require(frame.u8(ETH) == 0x45, where, "IPv4 without options");
            final int total = frame.u16(ETH + 2);
            require(total >= 20 && ETH + total <= frame.length(), where, "total length within the frame");
            require(InternetChecksum.verifies(InternetChecksum.add(0, MemorySegment.ofArray(b), ETH, 20)), where, "header checksum");
            require(frame.i32(ETH + 12) == FuzzStack.IP, where, "from our address");
            final int destination = frame.i32(ETH + 16);
            require(destination != FuzzStack.IP && destination != 0 && destination != -1 && destination != FuzzStack.BROADCAST_IP
                && (destination & 0xF000_0000) != 0xE000_0000, where, "to a unicast address not ours");
            require(frame.u8(ETH + 8) > 0, where, "TTL above zero");
            require(frame.u8(ETH + 9) == 1, where, "ICMP (the only IPv4 payload Tern sends on its own now)");
            final int flagsAndOffset = frame.u16(ETH + 6);
            final byte[] payload = java.util.Arrays.copyOfRange(b, ETH + 20, ETH + total);
            if ((flagsAndOffset & 0x3FFF) == 0) {
                checkIcmp(payload, where);
                continue;
            }
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
            checkIcmp(whole, "reassembled datagram " + datagram.getKey());
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
