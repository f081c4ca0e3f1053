package dev.tern.tcp;

import dev.tern.tcp.testing.Captured;
import dev.tern.tcp.testing.Seg;
import dev.tern.tcp.testing.TcpHarness;
import org.junit.jupiter.api.Test;

import java.util.List;

import static dev.tern.tcp.testing.TcpHarness.MS;
import static dev.tern.tcp.testing.TcpHarness.bytes;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Pacing: a congestion control that sets a pacing rate (as BBR would) gets its segments spaced by size / rate, and
 * the plug point needs nothing else from the sender.
 */
class PacingTest {
    static final int MSS = 1460;
    /** 1460 bytes every millisecond. */
    static final long RATE = 1_460_000;

    /** A window of 100 segments, paced at {@link #RATE}: a stand-in for a model-based algorithm. */
    static final class PacedWindow implements CongestionControl {
        @Override
        public String name() {
            return "paced-test";
        }

        @Override
        public void init(TcpControlBlocks tcb, int c, int mss, int initialSegments, long nowNs) {
            tcb.cwnd(c, 100 * mss);
            tcb.ssthresh(c, 1 << 30);
            tcb.pacingRate(c, RATE);
        }

        @Override
        public void onAck(TcpControlBlocks tcb, int c, AckSample ack) {
        }

        @Override
        public void onCongestion(TcpControlBlocks tcb, int c, int flightSize, int mss, long nowNs) {
        }

        @Override
        public void onRetransmitTimeout(TcpControlBlocks tcb, int c, int flightSize, int mss, long nowNs) {
        }

        @Override
        public boolean pacesItself() {
            return true;
        }
    }

    @Test
    void aPacingRateSpacesSegmentsBySizeOverRate() {
        final TcpHarness h = new TcpHarness(TcpHarness.config().build());
        try (h) {
            h.tcp.registerCongestionControl(new PacedWindow());
            h.connect(TcpOptions.DEFAULT.withCongestionControl("paced-test"));
            h.expect(Seg.SYN);
            h.send(Seg.SYN_ACK.mss(1460).seq(TcpHarness.REMOTE_ISS).ack(TcpHarness.LOCAL_ISS + 1));
            h.expect(Seg.ACK);
            h.write(bytes(10 * MSS));
            h.advance(50 * MS);
            final List<Captured> sent = h.pending();
            assertEquals(10, sent.size(), "all ten segments went, none held for the window");
            for (int i = 1; i < sent.size(); i++) {
                final long gap = sent.get(i).atNs() - sent.get(i - 1).atNs();
                assertTrue(gap >= MS - 50_000 && gap <= MS + 1_100_000, "segment " + i + " after " + gap / 1e3 + " µs");
            }
            assertEquals(RATE, h.tcp.info(h.conn).pacingRate());
        }
    }
}
