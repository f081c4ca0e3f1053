package dev.tern.testkit.netns;

import java.nio.ByteBuffer;

/**
 * Ethernet frames carrying one IPv6 TCP segment (no extension header, no options, no data), checksum right: what a
 * test's peer sends with {@link NetnsHarness#peerSendFrames} where no tool here writes IPv6 TCP (hping3 has no IPv6).
 */
public final class Ipv6Segments {
    private static final int TCP = 6;

    private Ipv6Segments() {
    }

    /**
     * From {@code sourceMac} and {@code source} port {@code sourcePort} to {@code destinationMac} and
     * {@code destination} port {@code destinationPort}, with TCP {@code flags}; addresses are 16 bytes each.
     */
    public static byte[] frame(long destinationMac, long sourceMac, byte[] destination, byte[] source, int sourcePort,
                               int destinationPort, int flags) {
        final ByteBuffer b = ByteBuffer.allocate(14 + 40 + 20);
        b.putShort((short) (destinationMac >>> 32)).putInt((int) destinationMac);
        b.putShort((short) (sourceMac >>> 32)).putInt((int) sourceMac);
        b.putShort((short) 0x86DD);
        b.putInt(0x6000_0000).putShort((short) 20).put((byte) TCP).put((byte) 64).put(source).put(destination);
        b.putShort((short) sourcePort).putShort((short) destinationPort).putInt(0x1234_5678).putInt(0)
            .put((byte) 0x50).put((byte) flags).putShort((short) 65535).putInt(0);
        final byte[] frame = b.array();
        long sum = 20 + TCP; // RFC 8200 §8.1: the pseudo-header's length and next header, then both addresses
        for (int i = 14 + 8; i < frame.length; i += 2) {
            sum += (frame[i] & 0xFF) << 8 | frame[i + 1] & 0xFF;
        }
        while (sum >>> 16 != 0) {
            sum = (sum & 0xFFFF) + (sum >>> 16);
        }
        final int checksum = (int) ~sum & 0xFFFF;
        frame[14 + 40 + 16] = (byte) (checksum >> 8);
        frame[14 + 40 + 17] = (byte) checksum;
        return frame;
    }
}
