package dev.tern.conformance.interop;

import dev.tern.conformance.replay.CapturedFrame;
import dev.tern.core.checksum.InternetChecksum;
import dev.tern.core.memory.BigEndian;
import dev.tern.stack.testing.Frames;

import java.lang.foreign.MemorySegment;

/**
 * A TCP segment (RFC 9293 §3.1) read from a captured frame, and hand-made segments for a raw socket to send.
 */
record TcpFrame(int source, int destination, int sourcePort, int destinationPort, long seq, long ack, int flags,
                int window, int dataLength, boolean checksumValid) {
    static final int FIN = 0x01;
    static final int SYN = 0x02;
    static final int RST = 0x04;
    static final int PSH = 0x08;
    static final int ACK = 0x10;
    private static final int ETH = 14;

    static boolean is(CapturedFrame frame) {
        return frame.ipProtocol() == 6 && !frame.isLaterFragment();
    }

    static TcpFrame parse(CapturedFrame frame) {
        final int ip = ETH;
        final int headerLength = (frame.u8(ip) & 0x0F) * 4;
        final int total = frame.u16(ip + 2);
        final int tcp = ip + headerLength;
        final int segmentLength = total - headerLength;
        final int dataOffset = (frame.u8(tcp + 12) >>> 4) * 4;
        final long sum = InternetChecksum.add(InternetChecksum.pseudoHeader(frame.i32(ip + 12), frame.i32(ip + 16), 6,
            segmentLength), MemorySegment.ofArray(frame.bytes()), tcp, segmentLength);
        return new TcpFrame(frame.i32(ip + 12), frame.i32(ip + 16), frame.u16(tcp), frame.u16(tcp + 2),
            frame.i32(tcp + 4) & 0xFFFF_FFFFL, frame.i32(tcp + 8) & 0xFFFF_FFFFL, frame.u8(tcp + 13), frame.u16(tcp + 14),
            segmentLength - dataOffset, InternetChecksum.verifies(sum));
    }

    boolean has(int flag) {
        return (flags & flag) != 0;
    }

    /** An IPv4 datagram carrying one option-less TCP segment with a correct checksum. */
    static byte[] datagram(int source, int destination, int sourcePort, int destinationPort, long seq, long ack, int flags,
                           byte[] data) {
        final byte[] segment = new byte[20 + data.length];
        final MemorySegment s = MemorySegment.ofArray(segment);
        BigEndian.u16(s, 0, sourcePort);
        BigEndian.u16(s, 2, destinationPort);
        BigEndian.i32(s, 4, (int) seq);
        BigEndian.i32(s, 8, (int) ack);
        BigEndian.u8(s, 12, 5 << 4);
        BigEndian.u8(s, 13, flags);
        BigEndian.u16(s, 14, 65535);
        System.arraycopy(data, 0, segment, 20, data.length);
        final long sum = InternetChecksum.add(InternetChecksum.pseudoHeader(source, destination, 6, segment.length), s, 0,
            segment.length);
        BigEndian.u16(s, 16, InternetChecksum.finish(sum));
        return Frames.ipv4(source, destination, 6, 0x7C00 + (sourcePort & 0xFF), 0x4000, 64, segment);
    }

    @Override
    public String toString() {
        return "tcp " + sourcePort + ">" + destinationPort + " seq " + seq + " ack " + ack + " flags 0x" + Integer.toHexString(flags)
            + " win " + window + " len " + dataLength + (checksumValid ? "" : " BAD CHECKSUM");
    }
}
