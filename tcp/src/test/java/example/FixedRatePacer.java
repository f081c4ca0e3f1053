package example;

import dev.tern.tcp.AckSample;
import dev.tern.tcp.CongestionControl;
import dev.tern.tcp.TcpControlBlocks;

/**
 * Sends at a fixed rate whatever the network does, with a window too large to hold it back: the worked example of
 * a congestion control from outside Tern (docs/TCP.md "Your own congestion control"). Not for a shared network.
 */
public class FixedRatePacer implements CongestionControl {
    public static final String NAME = "fixedrate";
    /** 10 MB/s: the sender spaces segments by size / rate. */
    public static final long RATE = 10_000_000;
    /** 4 MiB: the pacer, not the window, sets the pace. */
    public static final int WINDOW = 4 << 20;

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public void init(TcpControlBlocks tcb, int c, int mss, int initialSegments, long nowNs) {
        tcb.cwnd(c, WINDOW);
        tcb.ssthresh(c, WINDOW);
        tcb.pacingRate(c, RATE);
    }

    @Override
    public void onAck(TcpControlBlocks tcb, int c, AckSample ack) {
        // A fixed rate learns nothing from an ACK.
    }

    @Override
    public void onCongestion(TcpControlBlocks tcb, int c, int flightSize, int mss, long nowNs) {
        // The recovery brings cwnd down to ssthresh: keep it where it was.
        tcb.ssthresh(c, WINDOW);
    }

    @Override
    public void onRetransmitTimeout(TcpControlBlocks tcb, int c, int flightSize, int mss, long nowNs) {
        tcb.cwnd(c, WINDOW);
        tcb.ssthresh(c, WINDOW);
    }

    @Override
    public void onIdleRestart(TcpControlBlocks tcb, int c, int mss, int initialSegments, long nowNs) {
        // The rate, not the window, limits a burst after idle.
    }

    @Override
    public boolean pacesItself() {
        return true; // the rate above, never Linux's from cwnd
    }
}
