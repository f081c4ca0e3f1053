package dev.tern.rawqp.testing;

import dev.tern.core.checksum.InternetChecksum;
import dev.tern.core.memory.BigEndian;

import java.lang.foreign.MemorySegment;

/**
 * Ethernet + IPv4 + UDP/TCP frames for the link tests, written in place (no allocation), with a 32-bit tag at the
 * start of the payload and payload bytes derived from the tag, so a receiver can check every byte.
 *
 * <pre>
 *   0        14          34         42 / 54
 *   +--------+-----------+----------+------+---------------------------------+
 *   | Ether  | IPv4 (20) | UDP (8) or TCP (20) | tag | payload(i) = tag * 31 + i |
 *   +--------+-----------+----------+------+---------------------------------+
 * </pre>
 */
public final class TestFrames {
    public static final int SOURCE_IP = 0xC612_0001;      // 198.18.0.1
    public static final int DESTINATION_IP = 0xC612_0002; // 198.18.0.2
    public static final int UDP_PAYLOAD = 14 + 20 + 8;
    public static final int TCP_PAYLOAD = 14 + 20 + 20;
    public static final int TCP_HEADER_AT = 14 + 20;

    private TestFrames() {
    }

    /**
     * A UDP frame of {@code length} bytes (at least 60). With {@code offload}, the IPv4 checksum is left 0 and the
     * UDP field holds the pseudo-header sum, as a stack asking for checksum offload writes it; otherwise both are
     * complete.
     */
    public static void udp(MemorySegment segment, long at, long destinationMac, long sourceMac, int tag, int length, boolean offload) {
        ipv4(segment, at, destinationMac, sourceMac, tag, length, 17);
        final long udp = at + 34;
        final int udpLength = length - 34;
        BigEndian.u16(segment, udp, 1000);
        BigEndian.u16(segment, udp + 2, 2000);
        BigEndian.u16(segment, udp + 4, udpLength);
        payload(segment, at + UDP_PAYLOAD, tag, length - UDP_PAYLOAD);
        checksums(segment, at, 17, udpLength, 6, offload);
    }

    /** A TCP frame with {@code payloadLength} bytes after a 20-byte TCP header, sequence {@code seq}, flags {@code flags}. */
    public static int tcp(MemorySegment segment, long at, long destinationMac, long sourceMac, int tag, int payloadLength, int seq, int flags,
                          boolean offload) {
        final int length = TCP_PAYLOAD + payloadLength;
        ipv4(segment, at, destinationMac, sourceMac, tag, length, 6);
        final long tcp = at + TCP_HEADER_AT;
        BigEndian.u16(segment, tcp, 1000);
        BigEndian.u16(segment, tcp + 2, 2000);
        BigEndian.i32(segment, tcp + 4, seq);
        BigEndian.i32(segment, tcp + 8, 0);
        BigEndian.u8(segment, tcp + 12, 5 << 4);
        BigEndian.u8(segment, tcp + 13, flags);
        BigEndian.u16(segment, tcp + 14, 65535);
        BigEndian.u16(segment, tcp + 18, 0);
        payload(segment, at + TCP_PAYLOAD, tag, payloadLength);
        checksums(segment, at, 6, length - 34, 16, offload);
        return length;
    }

    private static void ipv4(MemorySegment segment, long at, long destinationMac, long sourceMac, int tag, int length, int protocol) {
        BigEndian.u48(segment, at, destinationMac);
        BigEndian.u48(segment, at + 6, sourceMac);
        BigEndian.u16(segment, at + 12, 0x0800);
        final long ip = at + 14;
        BigEndian.u8(segment, ip, 0x45);
        BigEndian.u8(segment, ip + 1, 0);
        BigEndian.u16(segment, ip + 2, length - 14);
        BigEndian.u16(segment, ip + 4, tag & 0xFFFF);
        BigEndian.u16(segment, ip + 6, 0x4000);
        BigEndian.u8(segment, ip + 8, 64);
        BigEndian.u8(segment, ip + 9, protocol);
        BigEndian.u16(segment, ip + 10, 0);
        BigEndian.i32(segment, ip + 12, SOURCE_IP);
        BigEndian.i32(segment, ip + 16, DESTINATION_IP);
    }

    private static void payload(MemorySegment segment, long at, int tag, int length) {
        if (length >= 4) {
            BigEndian.i32(segment, at, tag);
        }
        for (int i = 4; i < length; i++) {
            BigEndian.u8(segment, at + i, tag * 31 + i);
        }
    }

    private static void checksums(MemorySegment segment, long at, int protocol, int l4Length, int field, boolean offload) {
        final long ip = at + 14;
        final long l4 = at + 34;
        BigEndian.u16(segment, l4 + field, 0);
        final long pseudo = InternetChecksum.pseudoHeader(SOURCE_IP, DESTINATION_IP, protocol, l4Length);
        if (offload) {
            BigEndian.u16(segment, l4 + field, InternetChecksum.fold(pseudo));
        } else {
            BigEndian.u16(segment, ip + 10, InternetChecksum.compute(segment, ip, 20));
            BigEndian.u16(segment, l4 + field, InternetChecksum.finish(InternetChecksum.add(pseudo, segment, l4, l4Length)));
        }
    }

    public static int tag(MemorySegment segment, long at, int payloadAt) {
        return BigEndian.i32(segment, at + payloadAt);
    }

    /** Every payload byte is what {@link #udp}/{@link #tcp} wrote for this tag. */
    public static boolean payloadIntact(MemorySegment segment, long at, int payloadAt, int length) {
        final int tag = tag(segment, at, payloadAt);
        for (int i = 4; i < length - payloadAt; i++) {
            if (BigEndian.u8(segment, at + payloadAt + i) != ((tag * 31 + i) & 0xFF)) {
                return false;
            }
        }
        return true;
    }

    /** The IPv4 header checksum and the TCP/UDP checksum both verify. */
    public static boolean checksumsValid(MemorySegment segment, long at) {
        final long ip = at + 14;
        if (!InternetChecksum.verifies(InternetChecksum.add(0, segment, ip, 20))) {
            return false;
        }
        final int protocol = BigEndian.u8(segment, ip + 9);
        final int l4Length = BigEndian.u16(segment, ip + 2) - 20;
        final long sum = InternetChecksum.add(InternetChecksum.pseudoHeader(BigEndian.i32(segment, ip + 12), BigEndian.i32(segment, ip + 16),
            protocol, l4Length), segment, ip + 20, l4Length);
        return InternetChecksum.verifies(sum);
    }
}
