package dev.tern.ethernet.pcap;

import dev.tern.core.time.Clock;
import dev.tern.ethernet.link.ForwardingLink;
import dev.tern.ethernet.link.FrameHandler;
import dev.tern.ethernet.link.Link;
import dev.tern.ethernet.link.TxChecksums;
import dev.tern.ethernet.link.TxFrame;

import java.lang.foreign.MemorySegment;

/**
 * A {@link Link} that records every frame of the link it wraps, received and transmitted, into a
 * {@link PcapWriter}, as tcpdump would on that interface. Transmitted frames are recorded as the wire will carry
 * them: the checksums the frame asks the link to fill in (IPv4 header, L4 partial) are completed in a copy, so that
 * tshark finds them right where the link offloads them (tcpdump on a Linux sender with offload records them partial,
 * which only confuses a reader). A segmentation request is recorded as its one large frame, as tcpdump records it.
 *
 * <p>Owned by the wrapped link's thread. Closing the tap closes the wrapped link, not the writer (it may be shared).
 */
public final class PcapTap extends ForwardingLink {
    private final PcapWriter writer;
    private final Clock clock;
    private final FrameHandler recordingHandler = this::recordReceived;
    private FrameHandler handler;
    private MemorySegment copy = MemorySegment.ofArray(new byte[2048]);

    public PcapTap(Link link, PcapWriter writer, Clock clock) {
        super(link);
        this.writer = writer;
        this.clock = clock;
    }

    @Override
    public int receive(FrameHandler frameHandler, int maxFrames) {
        this.handler = frameHandler;
        try {
            return link.receive(recordingHandler, maxFrames);
        } finally {
            this.handler = null;
        }
    }

    private void recordReceived(MemorySegment segment, long offset, int length, int flags) {
        writer.write(segment, offset, length, clock.epochNanos(clock.nanoTime()));
        handler.onFrame(segment, offset, length, flags);
    }

    @Override
    public void commit(TxFrame frame) {
        final long nowNs = clock.epochNanos(clock.nanoTime());
        if (frame.ipChecksum() || frame.checksumStart() >= 0) {
            writer.write(completed(frame), 0, frame.length(), nowNs);
        } else {
            writer.write(frame.segment(), frame.offset(), frame.length(), nowNs);
        }
        link.commit(frame);
    }

    /** A copy of {@code frame} with the checksums it asks the link for filled in; the link gets the frame untouched. */
    private MemorySegment completed(TxFrame frame) {
        final int length = frame.length();
        if (copy.byteSize() < length) {
            copy = MemorySegment.ofArray(new byte[length]);   // grows to the largest frame once
        }
        MemorySegment.copy(frame.segment(), frame.offset(), copy, 0, length);
        if (frame.ipChecksum()) {
            TxChecksums.fillIpv4HeaderChecksum(copy, 0, length);
        }
        final int start = frame.checksumStart();
        final int field = frame.checksumOffset();
        if (start >= 0 && field >= 0 && start + field + 2 <= length) {
            TxChecksums.completeL4Checksum(copy, 0, start, field, length);
        }
        return copy;
    }
}
