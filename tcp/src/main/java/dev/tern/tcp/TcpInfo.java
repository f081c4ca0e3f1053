package dev.tern.tcp;

import dev.tern.core.net.Ipv4Address;

/**
 * One connection's state and statistics as values, like Linux's {@code struct tcp_info}; made on request (tools,
 * tests), never on the hot path. {@code pipe}, {@code sackedBytes} and {@code lostBytes} are the sender's scoreboard
 * (RFC 6675); {@code senderState} is "open", "recovery" or "loss". The segment counts ({@code unackedSegments} and
 * the three after it) are counted over the record of sent segments when asked for: Linux's packets_out, sacked_out,
 * lost_out and retrans_out. {@code retries} is the timeouts in a row without progress (Linux's icsk_retransmits),
 * {@code backoff} the RTO's doublings, {@code probes} the zero-window or keepalive probes unanswered;
 * {@code lastDataReceiveNs}, {@code lastSendNs} (data) and {@code lastReceiveNs} (any segment) are times on the
 * stack's clock; {@code notsentBytes} are written and not yet sent; {@code synData} says the SYN's data was
 * acknowledged by Fast Open (RFC 7413), Linux's {@code TCPI_OPT_SYN_DATA}; {@code ecn} that ECN was negotiated
 * (RFC 3168), Linux's {@code TCPI_OPT_ECN}. {@code busyTimeUs}, {@code rwndLimitedUs} and {@code sndbufLimitedUs}
 * are Linux's {@code tcpi_busy_time}, {@code tcpi_rwnd_limited} and {@code tcpi_sndbuf_limited} ({@link SendChrono}):
 * microseconds with data queued or in flight (all of it, the limited spells included, as Linux sums it), of that
 * the time the peer's window kept data back, and the time the send buffer was full; the running spell counts up to
 * the time asked for ({@link TcpLayer#info(int, long)}). {@code deliveredSegments} and {@code deliveredCe} are Linux's
 * {@code tcpi_delivered} and {@code tcpi_delivered_ce} (the handshake's SYN or SYN-ACK and each segment delivered,
 * of those the ones an ACK with ECE delivered); {@code reordering} and {@code reorderings} its {@code tcpi_reordering}
 * and {@code tcpi_reord_seen} ({@link ReorderingDegree}).
 */
public record TcpInfo(int state, int error, int localAddress, int localPort, int remoteAddress, int remotePort,
                      int sndUna, int sndNxt, int rcvNxt, int sndWnd, int rcvWnd, int sndMss, int advMss,
                      int sndScale, int rcvScale, boolean timestamps, boolean sack, int cwnd, int ssthresh,
                      long srttNs, long rttvarNs, long rtoNs, long retransmits, long bytesAcked, long bytesReceived,
                      String congestionControl, String lossDetection, String recovery, String senderState, int pipe,
                      int sackedBytes, int lostBytes, long minRttNs, long pacingRate, boolean windowScaling,
                      int rcvMss, int dupAcks, int unackedSegments, int sackedSegments, int lostSegments,
                      int retransmittingSegments, int retries, int backoff, int probes, long lastDataReceiveNs,
                      long lastSendNs, long lastReceiveNs, int notsentBytes, int userTimeoutMs,
                      boolean synData, boolean ecn, long busyTimeUs, long rwndLimitedUs, long sndbufLimitedUs,
                      int deliveredSegments, int deliveredCe, int reordering, int reorderings) {
    /** Row {@code c} as a value, with its record of sent segments when it has rings. Allocates. */
    static TcpInfo of(TcpControlBlocks tcb, int c, RttEstimator rtt, PlugPointRegistry plugPoints,
                      ConnectionBuffers buffers, SendChrono chrono, long lastNs) {
        final SentSegments sent = buffers.sent(c);
        final long rwndUs = chrono.totalUs(c, SendChrono.RWND_LIMITED, lastNs);
        final long sndbufUs = chrono.totalUs(c, SendChrono.SNDBUF_LIMITED, lastNs);
        return new TcpInfo(tcb.state(c), tcb.error(c), tcb.localAddress(c), tcb.localPort(c), tcb.remoteAddress(c),
            tcb.remotePort(c), tcb.sndUna(c), tcb.sndNxt(c), tcb.rcvNxt(c), tcb.sndWnd(c),
            Math.max(0, tcb.rcvAdv(c) - tcb.rcvNxt(c)), tcb.sndMss(c), tcb.advMss(c), tcb.sndScale(c), tcb.rcvScale(c),
            tcb.hasFlag(c, TcpControlBlocks.F_TIMESTAMPS), tcb.hasFlag(c, TcpControlBlocks.F_SACK), tcb.cwnd(c),
            tcb.ssthresh(c), tcb.srttUs(c) * 1000L, tcb.rttvarUs(c) * 1000L, rtt.rtoNs(tcb, c), tcb.retransmits(c),
            tcb.bytesAcked(c), tcb.bytesReceived(c), plugPoints.congestionControl(c).name(),
            plugPoints.lossDetection(c).name(), plugPoints.recovery(c).name(), SenderState.STATE_NAMES[tcb.senderState(c)],
            sent == null ? 0 : sent.pipe(tcb.sndMax(c) - tcb.sndUna(c)), sent == null ? 0 : sent.sackedBytes(),
            sent == null ? 0 : sent.lostBytes(), tcb.minRttUs(c) * 1000L, tcb.pacingRate(c),
            tcb.hasFlag(c, TcpControlBlocks.F_WINDOW_SCALING), tcb.rcvMss(c), tcb.dupAcks(c),
            sent == null ? 0 : sent.count(), count(sent, SentSegments.SACKED), count(sent, SentSegments.LOST),
            count(sent, SentSegments.RETRANS_IN_FLIGHT), tcb.retries(c), tcb.backoff(c), tcb.probes(c),
            tcb.lastDataReceiveNs(c), tcb.lastSendNs(c), tcb.lastReceiveNs(c), TcpSocketOptions.notsent(tcb, buffers, c),
            tcb.userTimeoutMs(c), tcb.hasFlag(c, TcpControlBlocks.F_SYN_DATA),
            (tcb.ecnState(c) & Ecn.NEGOTIATED) != 0, chrono.totalUs(c, SendChrono.BUSY, lastNs) + rwndUs + sndbufUs,
            rwndUs, sndbufUs, tcb.deliveredSegments(c), tcb.deliveredCe(c), tcb.reordering(c), tcb.reorderings(c));
    }

    /** Entries of the record of sent segments with {@code flag} set. */
    private static int count(SentSegments sent, int flag) {
        return sent == null ? 0 : sent.countFlagged(flag);
    }

    @Override
    public String toString() {
        return Ipv4Address.format(localAddress) + ":" + localPort + " > " + Ipv4Address.format(remoteAddress) + ":"
            + remotePort + " " + TcpState.name(state) + (error != 0 ? " (" + TcpError.describe(error) + ")" : "")
            + " mss " + sndMss + " wscale " + sndScale + "/" + rcvScale + (timestamps ? " ts" : "") + (sack ? " sack" : "")
            + " cwnd " + cwnd + " ssthresh " + ssthresh + " srtt " + srttNs / 1000 + "us rto " + rtoNs / 1_000_000
            + "ms snd_wnd " + sndWnd + " rcv_wnd " + rcvWnd + " retrans " + retransmits + " acked " + bytesAcked
            + " received " + bytesReceived + " cc " + congestionControl + " " + lossDetection + "/" + recovery + " "
            + senderState + " pipe " + pipe + " sacked " + sackedBytes + " lost " + lostBytes;
    }
}
