package dev.tern.ethernet.pcap;

import dev.tern.core.time.Clock;
import dev.tern.ethernet.link.ForwardingLink;
import dev.tern.ethernet.link.FrameHandler;
import dev.tern.ethernet.link.Link;
import dev.tern.ethernet.link.TxFrame;

import java.lang.foreign.MemorySegment;

/**
 * A {@link Link} that records every frame of the link it wraps, received and transmitted, into a
 * {@link PcapWriter}, as tcpdump would on that interface. Transmitted frames are recorded as committed (before any
 * offload completes them, as on a Linux sender with checksum offload).
 *
 * <p>Owned by the wrapped link's thread. Closing the tap closes the wrapped link, not the writer (it may be shared).
 */
public final class PcapTap extends ForwardingLink {
    private final PcapWriter writer;
    private final Clock clock;
    private final FrameHandler recordingHandler = this::recordReceived;
    private FrameHandler handler;

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
        writer.write(frame.segment(), frame.offset(), frame.length(), clock.epochNanos(clock.nanoTime()));
        link.commit(frame);
    }
}
