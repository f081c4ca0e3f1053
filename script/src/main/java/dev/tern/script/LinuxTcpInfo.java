package dev.tern.script;

import dev.tern.tcp.TcpInfo;

import java.util.List;
import java.util.Map;

/**
 * The fields of Linux's {@code struct tcp_info} Tern can fill, by their names, from a connection's {@link TcpInfo}
 * (Linux's tcp_get_info in net/ipv4/tcp.c): what {@code getsockopt TCP_INFO} and a Python block compare
 * (docs/SCRIPTS.md lists each with how it is computed). Fields Linux keeps and Tern does not (the segment counters
 * {@code tcpi_segs_out} ...) are not in {@link #FIELDS}, so a script naming one is rejected.
 */
final class LinuxTcpInfo {
    /** Every field {@link #field} gives. */
    static final List<String> FIELDS = List.of("tcpi_state", "tcpi_ca_state", "tcpi_retransmits", "tcpi_probes",
        "tcpi_backoff", "tcpi_options", "tcpi_snd_wscale", "tcpi_rcv_wscale", "tcpi_rto", "tcpi_snd_mss",
        "tcpi_rcv_mss", "tcpi_unacked", "tcpi_sacked", "tcpi_lost", "tcpi_retrans", "tcpi_last_data_sent",
        "tcpi_last_data_recv", "tcpi_last_ack_recv", "tcpi_rtt", "tcpi_rttvar", "tcpi_snd_ssthresh",
        "tcpi_snd_cwnd", "tcpi_advmss", "tcpi_total_retrans", "tcpi_bytes_acked", "tcpi_bytes_received",
        "tcpi_notsent_bytes", "tcpi_min_rtt", "tcpi_snd_wnd", "tcpi_busy_time", "tcpi_rwnd_limited",
        "tcpi_sndbuf_limited", "tcpi_delivered", "tcpi_delivered_ce", "tcpi_reordering", "tcpi_reord_seen");

    /** Linux's value of tcpi_snd_ssthresh before the first loss (its TCP_INFINITE_SSTHRESH, include/net/tcp.h). */
    static final long INFINITE_SSTHRESH = 0x7fffffffL;

    /** Linux's tcpi_options bits (include/uapi/linux/tcp.h). */
    static final long OPT_TIMESTAMPS = 1;
    static final long OPT_SACK = 2;
    static final long OPT_WSCALE = 4;
    static final long OPT_ECN = 8;
    static final long OPT_SYN_DATA = 32;

    /**
     * The names packetdrill defines for a Python block (its code.c) that mean something for these fields. TCPI_OPT_ECN
     * says ECN was negotiated (TCPI_OPT_ECN_SEEN, a CE seen, is never set); TCPI_OPT_SYN_DATA says the SYN's data was
     * acknowledged by Fast Open (RFC 7413).
     */
    static final Map<String, Long> CONSTANTS = Map.ofEntries(
        Map.entry("TCP_ESTABLISHED", 1L), Map.entry("TCP_SYN_SENT", 2L), Map.entry("TCP_SYN_RECV", 3L),
        Map.entry("TCP_FIN_WAIT1", 4L), Map.entry("TCP_FIN_WAIT2", 5L), Map.entry("TCP_TIME_WAIT", 6L),
        Map.entry("TCP_CLOSE", 7L), Map.entry("TCP_CLOSE_WAIT", 8L), Map.entry("TCP_LAST_ACK", 9L),
        Map.entry("TCP_LISTEN", 10L), Map.entry("TCP_CLOSING", 11L),
        Map.entry("TCP_INFINITE_SSTHRESH", INFINITE_SSTHRESH),
        Map.entry("TCP_CA_Open", 0L), Map.entry("TCP_CA_Disorder", 1L), Map.entry("TCP_CA_CWR", 2L),
        Map.entry("TCP_CA_Recovery", 3L), Map.entry("TCP_CA_Loss", 4L),
        Map.entry("TCPI_OPT_TIMESTAMPS", OPT_TIMESTAMPS), Map.entry("TCPI_OPT_SACK", OPT_SACK),
        Map.entry("TCPI_OPT_WSCALE", OPT_WSCALE), Map.entry("TCPI_OPT_ECN", OPT_ECN), Map.entry("TCPI_OPT_ECN_SEEN", 16L),
        Map.entry("TCPI_OPT_SYN_DATA", OPT_SYN_DATA));

    /** The timestamp option Linux's segment size leaves out (TCPOLEN_TSTAMP_ALIGNED). */
    private static final int TIMESTAMP_OPTION = 12;

    private LinuxTcpInfo() {
    }

    /**
     * Field {@code name} of {@link #FIELDS}: {@code info} is the connection's (null for a listener or a connection
     * gone: every field but the state is then 0), {@code linuxState} Linux's number of its state, {@code nowNs} the
     * stack's clock (for the {@code last_*} fields, in ms ago).
     */
    static long field(TcpInfo info, long linuxState, long nowNs, String name) {
        if (name.equals("tcpi_state")) {
            return linuxState;
        }
        if (info == null) {
            return 0;
        }
        final int mss = Math.max(1, info.sndMss());
        return switch (name) {
            case "tcpi_ca_state" -> caState(info);
            case "tcpi_retransmits" -> info.retries();
            case "tcpi_probes" -> info.probes();
            case "tcpi_backoff" -> info.backoff();
            case "tcpi_options" -> (info.timestamps() ? OPT_TIMESTAMPS : 0) | (info.sack() ? OPT_SACK : 0)
                | (info.windowScaling() ? OPT_WSCALE : 0) | (info.synData() ? OPT_SYN_DATA : 0)
                | (info.ecn() ? OPT_ECN : 0);
            case "tcpi_snd_wscale" -> info.sndScale();
            case "tcpi_rcv_wscale" -> info.rcvScale();
            case "tcpi_rto" -> info.rtoNs() / 1000;
            // Tern's MSS is before options; Linux's segment size leaves the timestamp option out. Tern's scripts
            // have always compared Tern's (docs/SCRIPTS.md); the TCP_MAXSEG getsockopt gives Linux's.
            case "tcpi_snd_mss" -> info.sndMss();
            case "tcpi_rcv_mss" -> info.rcvMss();
            case "tcpi_unacked" -> info.unackedSegments();
            case "tcpi_sacked" -> info.sackedSegments();
            case "tcpi_lost" -> info.lostSegments();
            case "tcpi_retrans" -> info.retransmittingSegments();
            case "tcpi_last_data_sent" -> msAgo(nowNs, info.lastSendNs());
            case "tcpi_last_data_recv" -> msAgo(nowNs, info.lastDataReceiveNs());
            case "tcpi_last_ack_recv" -> msAgo(nowNs, info.lastReceiveNs());
            case "tcpi_rtt" -> info.srttNs() / 1000;
            case "tcpi_rttvar" -> info.rttvarNs() / 1000;
            // Tern's "no threshold yet" is a window no connection reaches (1 GiB and more).
            case "tcpi_snd_ssthresh" -> info.ssthresh() >= 1 << 30 ? INFINITE_SSTHRESH : info.ssthresh() / mss;
            case "tcpi_snd_cwnd" -> info.cwnd() / mss;
            case "tcpi_advmss" -> info.advMss() - (info.timestamps() ? TIMESTAMP_OPTION : 0);
            case "tcpi_total_retrans" -> info.retransmits();
            case "tcpi_bytes_acked" -> info.bytesAcked();
            case "tcpi_bytes_received" -> info.bytesReceived();
            case "tcpi_notsent_bytes" -> info.notsentBytes();
            case "tcpi_min_rtt" -> info.minRttNs() == 0 ? 0xFFFFFFFFL : info.minRttNs() / 1000;
            case "tcpi_snd_wnd" -> info.sndWnd();
            case "tcpi_busy_time" -> info.busyTimeUs();
            case "tcpi_rwnd_limited" -> info.rwndLimitedUs();
            case "tcpi_sndbuf_limited" -> info.sndbufLimitedUs();
            case "tcpi_delivered" -> info.deliveredSegments();
            case "tcpi_delivered_ce" -> info.deliveredCe();
            case "tcpi_reordering" -> info.reordering();
            case "tcpi_reord_seen" -> info.reorderings();
            default -> throw new IllegalStateException("not a field of LinuxTcpInfo.FIELDS: " + name);
        };
    }

    /**
     * Linux's congestion state (tcp_set_ca_state): Loss after a timeout, Recovery in fast recovery, Disorder while
     * open with SACKed segments or duplicate ACKs, else Open. Tern lowers the window for an ECE at once, so it
     * has no CWR state to report.
     */
    private static long caState(TcpInfo info) {
        return switch (info.senderState()) {
            case "loss" -> 4;
            case "recovery" -> 3;
            default -> info.sackedSegments() > 0 || info.dupAcks() > 0 ? 1 : 0;
        };
    }

    private static long msAgo(long nowNs, long thenNs) {
        return Math.max(0, nowNs - thenNs) / 1_000_000L;
    }
}
