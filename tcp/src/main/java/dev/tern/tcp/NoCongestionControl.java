package dev.tern.tcp;

/**
 * No congestion control: the window is whatever the receiver offers. For a private memory wire or a lab; never on
 * a shared network (RFC 5681 §3: a sender MUST use congestion control there).
 */
public final class NoCongestionControl implements CongestionControl {
    public static final String NAME = "none";

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public void init(TcpControlBlocks tcb, int c, int mss, int initialSegments, long nowNs) {
        tcb.cwnd(c, TcpControlBlocks.MAX_CWND);
        tcb.ssthresh(c, TcpControlBlocks.MAX_CWND);
        tcb.pacingRate(c, 0);
    }

    @Override
    public void onAck(TcpControlBlocks tcb, int c, AckSample ack) {
    }

    @Override
    public void onCongestion(TcpControlBlocks tcb, int c, int flightSize, int mss, long nowNs) {
        tcb.ssthresh(c, TcpControlBlocks.MAX_CWND);
    }

    @Override
    public void onRetransmitTimeout(TcpControlBlocks tcb, int c, int flightSize, int mss, long nowNs) {
    }

    @Override
    public void onIdleRestart(TcpControlBlocks tcb, int c, int mss, int initialSegments, long nowNs) {
    }
}
