package dev.tern.tcp;

import dev.tern.ipv4.Ipv4Layer;
import dev.tern.ipv6.Ipv6Layer;

/**
 * What TCP learns of and tells IP about the path to each peer: the MSS the path carries (RFC 9293 §3.7.1 with the
 * path MTU of RFC 1191), forward progress as reachability of the next hop (RFC 4861 §7.3.1, at most once a second per
 * connection), and negative advice when a segment was retransmitted R1 times (RFC 1122 §4.2.3.5). Over IPv6 the
 * headers take 60 bytes, not 40 (RFC 8200 §8.3), and the path MTU is IPv6's (RFC 8201).
 *
 * <p>Owned by the shard thread; not thread-safe.
 */
final class TcpPath {
    private static final long NEIGHBOUR_CONFIRM_NS = 1_000_000_000L;

    private final Ipv4Layer ipv4;
    /** Null when the stack has no IPv6. */
    private final Ipv6Layer ipv6;
    private final TcpControlBlocks tcb;
    private final TcpCounters counters;
    private final ConnectionSettings settings;
    private final int localAddress;
    /** When each connection last confirmed its next hop. */
    private final long[] lastConfirmNs;

    /**
     * Whether a datagram to {@code address} has a route: on-link or through a gateway. A SYN from a source without one
     * could never be answered, so the listener keeps nothing for it (Linux looks the route up in tcp_conn_request).
     */
    boolean routable(TcpSegment seg, long nowNs) {
        return seg.ipv6 ? ipv6.routable(seg.sourceHigh, seg.sourceLow, nowNs)
            : ipv4.routes().lookup(seg.sourceAddress) != dev.tern.ipv4.RoutingTable.NO_ROUTE;
    }

    TcpPath(Ipv4Layer ipv4, Ipv6Layer ipv6, TcpControlBlocks tcb, TcpCounters counters, ConnectionSettings settings) {
        this.ipv4 = ipv4;
        this.ipv6 = ipv6;
        this.tcb = tcb;
        this.counters = counters;
        this.settings = settings;
        this.localAddress = ipv4.address().address();
        this.lastConfirmNs = new long[tcb.capacity()];
    }

    /** A new connection in row {@code c}: its next hop counts as confirmed now. */
    void opened(int c, long nowNs) {
        lastConfirmNs[c] = nowNs;
    }

    /**
     * Largest payload the path to {@code remote} carries without options (RFC 9293 §3.7.1, RFC 1191): the path MTU
     * (itself at most the link MTU) less 40 bytes of headers; also the MSS we offer towards it.
     */
    int mss(int remote, long nowNs) {
        final int mtu = remote == localAddress ? ipv4.mtu() : ipv4.pathMtus().mtu(remote, ipv4.mtu(), nowNs);
        return Math.max(64, mtu - 40);
    }

    /** {@link #mss(int, long)} towards an IPv6 peer: its path MTU less 60 bytes of headers. */
    int mss6(long high, long low, long nowNs) {
        return Math.max(64, ipv6.pathMtu(high, low, nowNs) - 60);
    }

    /** The MSS towards the sender of {@code seg}. */
    int mss(TcpSegment seg, long nowNs) {
        return seg.ipv6 ? mss6(seg.sourceHigh, seg.sourceLow, nowNs) : mss(seg.sourceAddress, nowNs);
    }

    /** The MSS towards connection {@code c}'s peer. */
    int mssOf(int c, long nowNs) {
        return tcb.ipv6(c) ? mss6(tcb.remoteAddressHigh(c), tcb.remoteAddressLow(c), nowNs)
            : mss(tcb.remoteAddress(c), nowNs);
    }

    /**
     * An ACK showed forward progress: the next hop toward the peer (its gateway, or the peer on-link) is reachable
     * (RFC 4861 §7.3.1), at most once a second.
     */
    void confirmNeighbour(int c, long nowNs) {
        if (nowNs - lastConfirmNs[c] >= NEIGHBOUR_CONFIRM_NS) {
            lastConfirmNs[c] = nowNs;
            if (tcb.ipv6(c)) {
                ipv6.neighbours().confirm(tcb.remoteAddressHigh(c), tcb.remoteAddressLow(c), nowNs);
            } else {
                ipv4.confirmNextHop(tcb.remoteAddress(c), nowNs);
            }
        }
    }

    /**
     * RFC 1122 §4.2.3.5 (RFC 9293 MUST-20): the same segment has now been retransmitted {@code retries} times. At R1
     * ({@link TcpConfig#retries1}, 3 by default: SHLD-10) TCP passes negative advice to IP, which probes the next
     * hop's neighbour entry again (RFC 1122 §3.3.1.4; a dead gateway or a neighbour that changed its MAC shows there),
     * and tells the owner through the soft error (SHLD-9: "between R1 and R2"): TIMED_OUT unless an ICMP error already
     * said more. Once per stall: the retry count starts again at the next ACK of new data. Linux gives the advice at
     * tcp_retries1 too (dst_negative_advice) but sets no soft error.
     */
    void retransmittedAgain(int c, int retries, long nowNs) {
        if (retries != settings.of(c).retries1()) {
            return;
        }
        counters.r1Advice.incrementRelease();
        if (!tcb.ipv6(c)) {
            ipv4.negativeAdvice(tcb.remoteAddress(c), nowNs); // IPv6's neighbour cache probes by its own timers
        }
        if (tcb.softError(c) == TcpError.NONE) {
            tcb.softError(c, TcpError.TIMED_OUT);
        }
    }
}
