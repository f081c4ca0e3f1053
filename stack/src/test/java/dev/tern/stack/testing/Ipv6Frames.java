package dev.tern.stack.testing;

import dev.tern.core.net.Ipv6Address;
import dev.tern.ethernet.wire.EtherType;

import java.nio.ByteBuffer;

/**
 * IPv6 packets and ICMPv6 messages made by hand for tests, with their own checksum code (RFC 8200 §8.1, RFC 1071)
 * so that a test checks the stack's arithmetic rather than repeating it.
 */
public final class Ipv6Frames {
    public static final int ICMPV6 = 58;
    public static final int NS = 135;
    public static final int NA = 136;
    public static final int ECHO_REQUEST = 128;
    public static final int ECHO_REPLY = 129;

    private Ipv6Frames() {
    }

    public static byte[] frame(long dstMac, long srcMac, byte[] packet) {
        return Frames.ethernet(dstMac, srcMac, EtherType.IPV6, packet);
    }

    /** An IPv6 packet: the fixed header, then {@code payload} (extension headers included) after {@code nextHeader}. */
    public static byte[] packet(Ipv6Address source, Ipv6Address destination, int nextHeader, int hopLimit,
                                byte[] payload) {
        final ByteBuffer b = ByteBuffer.allocate(40 + payload.length);
        b.putInt(6 << 28).putShort((short) payload.length).put((byte) nextHeader).put((byte) hopLimit);
        b.putLong(source.high()).putLong(source.low()).putLong(destination.high()).putLong(destination.low());
        b.put(payload);
        return b.array();
    }

    /** An ICMPv6 message with a correct checksum for the given addresses: type, code, the second word, then body. */
    public static byte[] icmp(Ipv6Address source, Ipv6Address destination, int type, int code, int word, byte[] body) {
        final ByteBuffer b = ByteBuffer.allocate(8 + body.length);
        b.put((byte) type).put((byte) code).putShort((short) 0).putInt(word).put(body);
        final byte[] message = b.array();
        final int sum = checksum(source, destination, ICMPV6, message);
        message[2] = (byte) (sum >>> 8);
        message[3] = (byte) sum;
        return message;
    }

    /** An ICMPv6 packet with the hop limit {@code hopLimit}. */
    public static byte[] icmpPacket(Ipv6Address source, Ipv6Address destination, int hopLimit, int type, int code,
                                    int word, byte[] body) {
        return packet(source, destination, ICMPV6, hopLimit, icmp(source, destination, type, code, word, body));
    }

    /** A neighbour solicitation or advertisement body: the target, then a link-layer option (type 1 or 2) if mac >= 0. */
    public static byte[] ndBody(Ipv6Address target, int optionType, long mac) {
        final ByteBuffer b = ByteBuffer.allocate(16 + (mac >= 0 ? 8 : 0));
        b.putLong(target.high()).putLong(target.low());
        if (mac >= 0) {
            b.put((byte) optionType).put((byte) 1).putShort((short) (mac >>> 32)).putInt((int) mac);
        }
        return b.array();
    }

    /** A fragment header (RFC 8200 §4.5) and the fragment's data. */
    public static byte[] fragment(int nextHeader, int offset, boolean more, int identification, byte[] data) {
        return ByteBuffer.allocate(8 + data.length).put((byte) nextHeader).put((byte) 0)
            .putShort((short) (offset | (more ? 1 : 0))).putInt(identification).put(data).array();
    }

    /** The ones'-complement checksum of the pseudo-header and {@code upper} (whose checksum field is zero). */
    public static int checksum(Ipv6Address source, Ipv6Address destination, int nextHeader, byte[] upper) {
        final ByteBuffer pseudo = ByteBuffer.allocate(40 + upper.length + 1);
        pseudo.putLong(source.high()).putLong(source.low()).putLong(destination.high()).putLong(destination.low());
        pseudo.putInt(upper.length).putInt(nextHeader).put(upper);
        final byte[] all = pseudo.array();
        long sum = 0;
        for (int i = 0; i + 1 < 40 + upper.length + 1; i += 2) {
            sum += ((all[i] & 0xff) << 8) | (all[i + 1] & 0xff);
        }
        while ((sum >>> 16) != 0) {
            sum = (sum & 0xffff) + (sum >>> 16);
        }
        final int result = (int) (~sum & 0xffff);
        return result;
    }

    /** True when the ICMPv6 message at {@code offset} of {@code packet} (an IPv6 packet) has a correct checksum. */
    public static boolean checksumHolds(byte[] packet) {
        final ByteBuffer b = ByteBuffer.wrap(packet);
        final Ipv6Address source = new Ipv6Address(b.getLong(8), b.getLong(16));
        final Ipv6Address destination = new Ipv6Address(b.getLong(24), b.getLong(32));
        final int length = b.getShort(4) & 0xffff;
        final byte[] upper = java.util.Arrays.copyOfRange(packet, 40, 40 + length);
        final int stored = ((upper[2] & 0xff) << 8) | (upper[3] & 0xff);
        upper[2] = 0;
        upper[3] = 0;
        return checksum(source, destination, b.get(6) & 0xff, upper) == stored;
    }
}
