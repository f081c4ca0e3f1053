package dev.tern.tcp.testing;

import dev.tern.core.checksum.InternetChecksum;
import dev.tern.core.memory.BigEndian;
import dev.tern.ethernet.link.ForwardingLink;
import dev.tern.ethernet.link.Link;
import dev.tern.ethernet.link.Offloads;
import dev.tern.ethernet.link.TxFrame;
import dev.tern.ethernet.wire.EthernetHeader;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * A link that offers TCP segmentation and checksum offload in front of another link, doing in software what a NIC
 * (or Linux GSO) does: a frame committed with a segment size is cut into MSS-sized frames, each with its own IP
 * length, identification and checksum, TCP sequence number and checksum; FIN and PSH stay on the last piece only. A
 * frame asking for L4 checksum completion gets it (the field holds the pseudo-header sum, CHECKSUM_PARTIAL).
 */
public final class SegmentingLink extends ForwardingLink {
    private static final int MAX_FRAME = 65535 + EthernetHeader.LENGTH + 64;

    private final MemorySegment buffer = Arena.ofAuto().allocate(MAX_FRAME);
    private final TxFrame innerFrame = new TxFrame();
    public long superFrames;
    public long segmentsCut;

    public SegmentingLink(Link inner) {
        super(inner);
    }

    @Override
    public String name() {
        return "gso:" + link.name();
    }

    @Override
    public int offloads() {
        return Offloads.TX_TCP_SEGMENTATION | Offloads.TX_L4_CHECKSUM;
    }

    @Override
    public boolean claim(TxFrame frame) {
        frame.claimed(buffer, 0, MAX_FRAME, 0);
        return true;
    }

    @Override
    public void commit(TxFrame frame) {
        final int length = frame.length();
        final long ip = EthernetHeader.LENGTH;
        final int ipHeader = (BigEndian.u8(buffer, ip) & 0xF) * 4;
        final long tcp = ip + ipHeader;
        final int tcpHeader = (BigEndian.u8(buffer, tcp + 12) >>> 4) * 4;
        final int payload = length - (int) tcp - tcpHeader;
        final int mss = frame.segmentSize();
        if (mss == TxFrame.NO_SEGMENTATION || payload <= mss) {
            emit(length, frame.checksumStart() >= 0);
            return;
        }
        superFrames++;
        final int seq = BigEndian.i32(buffer, tcp + 4);
        final int flags = BigEndian.u8(buffer, tcp + 13);
        final int id = BigEndian.u16(buffer, ip + 4);
        final long headers = tcp + tcpHeader;
        for (int offset = 0, k = 0; offset < payload; offset += mss, k++) {
            final int piece = Math.min(mss, payload - offset);
            final boolean last = offset + piece == payload;
            if (!link.claim(innerFrame)) {
                return;
            }
            final MemorySegment out = innerFrame.segment();
            final long at = innerFrame.offset();
            MemorySegment.copy(buffer, 0, out, at, headers);
            MemorySegment.copy(buffer, headers + offset, out, at + headers, piece);
            BigEndian.u16(out, at + ip + 2, ipHeader + tcpHeader + piece);
            BigEndian.u16(out, at + ip + 4, (id + k) & 0xFFFF);
            BigEndian.u16(out, at + ip + 10, 0);
            BigEndian.u16(out, at + ip + 10, InternetChecksum.compute(out, at + ip, ipHeader));
            BigEndian.i32(out, at + tcp + 4, seq + offset);
            BigEndian.u8(out, at + tcp + 13, last ? flags : flags & ~0x09);
            fillTcpChecksum(out, at, ipHeader, tcpHeader + piece);
            innerFrame.length((int) headers + piece);
            link.commit(innerFrame);
            segmentsCut++;
        }
    }

    private void emit(int length, boolean completeChecksum) {
        if (!link.claim(innerFrame)) {
            return;
        }
        MemorySegment.copy(buffer, 0, innerFrame.segment(), innerFrame.offset(), length);
        if (completeChecksum) {
            final int ipHeader = (BigEndian.u8(buffer, EthernetHeader.LENGTH) & 0xF) * 4;
            fillTcpChecksum(innerFrame.segment(), innerFrame.offset(), ipHeader,
                length - EthernetHeader.LENGTH - ipHeader);
        }
        innerFrame.length(length);
        link.commit(innerFrame);
    }

    private static void fillTcpChecksum(MemorySegment out, long at, int ipHeader, int tcpLength) {
        final long ip = at + EthernetHeader.LENGTH;
        final long tcp = ip + ipHeader;
        BigEndian.u16(out, tcp + 16, 0);
        final long pseudo = InternetChecksum.pseudoHeader(BigEndian.i32(out, ip + 12), BigEndian.i32(out, ip + 16), 6,
            tcpLength);
        BigEndian.u16(out, tcp + 16, InternetChecksum.finish(InternetChecksum.add(pseudo, out, tcp, tcpLength)));
    }

    @Override
    public void abort(TxFrame frame) {
    }
}
