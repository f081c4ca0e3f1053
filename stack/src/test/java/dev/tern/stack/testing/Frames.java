package dev.tern.stack.testing;

import dev.tern.arp.wire.ArpPacket;
import dev.tern.core.checksum.InternetChecksum;
import dev.tern.ethernet.wire.EtherType;
import dev.tern.ethernet.wire.EthernetHeader;
import dev.tern.ipv4.wire.IcmpHeader;
import dev.tern.ipv4.wire.IpProtocol;
import dev.tern.ipv4.wire.Ipv4Header;

import dev.tern.ethernet.link.TxFrame;
import dev.tern.ethernet.memory.MemoryLink;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;

/**
 * Hand-made frames for tests that play a peer: each method returns the bytes of one whole Ethernet frame, with
 * correct checksums unless a test breaks them on purpose.
 */
public final class Frames {
    private Frames() {
    }

    public static byte[] ethernet(long destination, long source, int etherType, byte[] payload) {
        final int length = Math.max(EthernetHeader.MIN_FRAME_LENGTH, EthernetHeader.LENGTH + payload.length);
        final byte[] frame = new byte[length];
        new EthernetHeader().wrap(MemorySegment.ofArray(frame), 0, length).destination(destination).source(source)
            .etherType(etherType);
        System.arraycopy(payload, 0, frame, EthernetHeader.LENGTH, payload.length);
        return frame;
    }

    public static byte[] arp(int operation, long senderMac, int senderIp, long targetMac, int targetIp) {
        final byte[] packet = new byte[ArpPacket.LENGTH];
        new ArpPacket().wrap(MemorySegment.ofArray(packet), 0, packet.length)
            .write(operation, senderMac, senderIp, targetMac, targetIp);
        return packet;
    }

    /** An option-less IPv4 datagram around {@code payload}. */
    public static byte[] ipv4(int source, int destination, int protocol, int identification, int flagsAndOffset,
                              int ttl, byte[] payload) {
        final byte[] packet = new byte[Ipv4Header.MIN_LENGTH + payload.length];
        new Ipv4Header().wrap(MemorySegment.ofArray(packet), 0, packet.length).write(0, packet.length, identification,
            flagsAndOffset, ttl, protocol, source, destination);
        System.arraycopy(payload, 0, packet, Ipv4Header.MIN_LENGTH, payload.length);
        return packet;
    }

    /**
     * {@code datagram} (option-less) with {@code options} after its 20-byte header, padded with End of Option List to
     * a 4-byte multiple (RFC 791 §3.1); header length, total length and header checksum are rewritten to match.
     */
    public static byte[] withOptions(byte[] datagram, int... options) {
        final int optionsLength = (options.length + 3) & ~3;
        final byte[] out = new byte[datagram.length + optionsLength];
        System.arraycopy(datagram, 0, out, 0, Ipv4Header.MIN_LENGTH);
        for (int i = 0; i < options.length; i++) {
            out[Ipv4Header.MIN_LENGTH + i] = (byte) options[i];
        }
        System.arraycopy(datagram, Ipv4Header.MIN_LENGTH, out, Ipv4Header.MIN_LENGTH + optionsLength,
            datagram.length - Ipv4Header.MIN_LENGTH);
        final Ipv4Header header = new Ipv4Header().wrap(MemorySegment.ofArray(out), 0, out.length);
        header.headerLength(Ipv4Header.MIN_LENGTH + optionsLength).totalLength(out.length).fillChecksum();
        return out;
    }

    /** An ICMP message with a correct checksum. */
    public static byte[] icmp(int type, int code, int restOfHeader, byte[] data) {
        final byte[] message = new byte[IcmpHeader.LENGTH + data.length];
        final MemorySegment segment = MemorySegment.ofArray(message);
        new IcmpHeader().wrap(segment, 0, message.length).type(type).code(code).checksum(0).restOfHeader(restOfHeader);
        System.arraycopy(data, 0, message, IcmpHeader.LENGTH, data.length);
        new IcmpHeader().wrap(segment, 0, message.length).checksum(InternetChecksum.compute(segment, 0, message.length));
        return message;
    }

    public static byte[] echoRequest(int identifier, int sequence, byte[] data) {
        return icmp(IcmpHeader.ECHO_REQUEST, 0, (identifier << 16) | sequence, data);
    }

    /** An IPv4/ICMP echo request frame. */
    public static byte[] echoRequestFrame(long dstMac, long srcMac, int src, int dst, int id, int seq, byte[] data) {
        return ethernet(dstMac, srcMac, EtherType.IPV4, ipv4(src, dst, IpProtocol.ICMP, seq, 0, 64,
            echoRequest(id, seq, data)));
    }

    public static byte[] concat(byte[]... parts) {
        int length = 0;
        for (byte[] part : parts) {
            length += part.length;
        }
        final ByteBuffer buffer = ByteBuffer.allocate(length);
        for (byte[] part : parts) {
            buffer.put(part);
        }
        return buffer.array();
    }

    public static byte[] pattern(int length, int seed) {
        final byte[] data = new byte[length];
        for (int i = 0; i < length; i++) {
            data[i] = (byte) (i * 7 + seed);
        }
        return data;
    }

    /** Puts {@code frame} on {@code link} through {@code tx} and flushes (delivered on the next simulation step). */
    public static void send(MemoryLink link, TxFrame tx, byte[] frame) {
        if (!link.claim(tx)) {
            throw new IllegalStateException("wire out of buffers");
        }
        MemorySegment.copy(frame, 0, tx.segment(), ValueLayout.JAVA_BYTE, tx.offset(), frame.length);
        tx.length(frame.length);
        link.commit(tx);
        link.flush();
    }

    /**
     * Puts each of {@code frames} on {@code link} through {@code tx} and flushes: the peer's side of an allocation
     * test's round (allocates nothing; the frames are prepared off-heap once).
     */
    public static void send(MemoryLink link, TxFrame tx, MemorySegment[] frames) {
        for (MemorySegment frame : frames) {
            link.claim(tx);
            MemorySegment.copy(frame, 0, tx.segment(), tx.offset(), frame.byteSize());
            tx.length((int) frame.byteSize());
            link.commit(tx);
        }
        link.flush();
    }
}
