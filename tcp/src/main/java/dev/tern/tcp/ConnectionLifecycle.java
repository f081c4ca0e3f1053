package dev.tern.tcp;

import dev.tern.core.net.Ipv4Address;
import dev.tern.ethernet.link.ShardPorts;
import dev.tern.ipv4.Ipv4Layer;
import dev.tern.ipv6.Ipv6Layer;
import dev.tern.core.net.Ipv6Address;

import java.util.Objects;

import static dev.tern.tcp.TcpControlBlocks.EV_CLOSED;
import static dev.tern.tcp.TcpControlBlocks.EV_ESTABLISHED;
import static dev.tern.tcp.TcpControlBlocks.EV_READABLE;
import static dev.tern.tcp.TcpControlBlocks.F_ACCEPT_QUEUED;
import static dev.tern.tcp.TcpControlBlocks.F_ACK_NOW;
import static dev.tern.tcp.TcpControlBlocks.F_ALLOCATED;
import static dev.tern.tcp.TcpControlBlocks.F_FIN_QUEUED;
import static dev.tern.tcp.TcpControlBlocks.F_IN_SYN_QUEUE;
import static dev.tern.tcp.TcpControlBlocks.F_IN_TABLE;
import static dev.tern.tcp.TcpControlBlocks.F_KEEPALIVE;
import static dev.tern.tcp.TcpControlBlocks.F_NO_DELAY;
import static dev.tern.tcp.TcpControlBlocks.F_OWNED;
import static dev.tern.tcp.TcpControlBlocks.F_PASSIVE;
import static dev.tern.tcp.TcpControlBlocks.F_RELEASED;
import static dev.tern.tcp.TcpControlBlocks.F_RINGS;
import static dev.tern.tcp.TcpControlBlocks.F_SACK;
import static dev.tern.tcp.TcpControlBlocks.F_TIMESTAMPS;
import static dev.tern.tcp.TcpControlBlocks.F_TIME_WAIT_LISTED;
import static dev.tern.tcp.TcpControlBlocks.F_WINDOW_SCALING;
import static dev.tern.tcp.TcpControlBlocks.T_DELAYED_ACK;
import static dev.tern.tcp.TcpControlBlocks.T_KEEPALIVE;
import static dev.tern.tcp.TcpControlBlocks.T_PACE;
import static dev.tern.tcp.TcpControlBlocks.T_SENDER;

/**
 * A connection's life, from its row to its end (RFC 9293 §3.3.2): active OPEN with an ephemeral port (§3.10.1,
 * RFC 6056), the row a listener makes for a SYN, the handshake's end ({@link #establish}), every state change
 * ({@link #transition}, which refuses a move the state diagram does not have), CLOSE and ABORT (§3.10.4, §3.10.5),
 * TIME-WAIT (2 MSL on the {@link TimeWaitList}), CLOSED ({@link #terminate}) and the row's release ({@link #free}).
 *
 * <p>Owned by the shard thread; not thread-safe. Nothing here allocates per segment.
 */
final class ConnectionLifecycle {
    /** {@link #connect} and {@link #newPassive}: the socket buffer memory limit is reached. */
    static final int NO_MEMORY = -2;

    private final Ipv4Layer ipv4;
    /** Null when the stack has no IPv6. */
    private final Ipv6Layer ipv6;
    private final TcpControlBlocks tcb;
    private final ConnectionSettings settings;
    private final TcpCounters counters;
    private final ConnectionTable connections;
    private final ReassemblyQueue reassembly;
    private final IsnGenerator isn;
    private final RttEstimator rtt;
    private final PlugPointRegistry plugPoints;
    private final TcpListeners listeners;
    private final ConnectionBuffers buffers;
    private final ReceiveHandlers handlers;
    private final EventQueue events;
    private final TcpTimers timers;
    private final TcpOutput output;
    private final TcpSender sender;
    private final TcpPath path;
    private final TimeWaitList timeWait;
    private final FastOpen fastOpen;
    private final SendCompletions completions;
    private final int localAddress;
    private int ephemeralCounter;
    /** The ephemeral ports whose replies reach this layer's shard (all of them for a stack of its own). */
    private ShardPorts shardPorts = ShardPorts.ALONE;

    ConnectionLifecycle(Ipv4Layer ipv4, Ipv6Layer ipv6, TcpControlBlocks tcb, ConnectionSettings settings,
                        TcpCounters counters,
                        ConnectionTable connections, ReassemblyQueue reassembly, IsnGenerator isn, RttEstimator rtt,
                        PlugPointRegistry plugPoints, TcpListeners listeners, ConnectionBuffers buffers,
                        ReceiveHandlers handlers, EventQueue events, TcpTimers timers, TcpOutput output,
                        TcpSender sender, TcpPath path, TimeWaitList timeWait, FastOpen fastOpen,
                        SendCompletions completions) {
        this.ipv4 = ipv4;
        this.ipv6 = ipv6;
        this.tcb = tcb;
        this.settings = settings;
        this.counters = counters;
        this.connections = connections;
        this.reassembly = reassembly;
        this.isn = isn;
        this.rtt = rtt;
        this.plugPoints = plugPoints;
        this.listeners = listeners;
        this.buffers = buffers;
        this.handlers = handlers;
        this.events = events;
        this.timers = timers;
        this.output = output;
        this.sender = sender;
        this.path = path;
        this.timeWait = timeWait;
        this.fastOpen = fastOpen;
        this.completions = completions;
        this.localAddress = ipv4.address().address();
    }

    // ------------------------------------------------------------------------------------------ opening

    /** On a shard of a sharded stack, an active open's ephemeral port is one of {@code ports}. Cold path. */
    void shardPorts(ShardPorts ports) {
        shardPorts = Objects.requireNonNull(ports);
    }

    /**
     * Active OPEN (RFC 9293 §3.10.1) of checked ports and owner: the row, SYN-SENT, the SYN. Returns the row or a
     * negated {@link TcpError}.
     */
    int connect(int remoteAddress, int remotePort, int localPort, TcpOptions options, TcpEvents owner, long nowNs) {
        if (Ipv4Address.isMulticast(remoteAddress) || remoteAddress == Ipv4Address.LIMITED_BROADCAST
            || remoteAddress == ipv4.address().broadcast()) {
            // RFC 9293 MUST-46 (RFC 1122 §4.2.3.10): TCP is unicast only; an OPEN to a broadcast or multicast
            // address is an error, not a SYN sent to every host. Linux's tcp_v4_connect answers ENETUNREACH.
            return -TcpError.NET_UNREACHABLE;
        }
        return open(localAddress, remoteAddress, remotePort, localPort, options, owner, nowNs, false, 0, 0, 0, 0);
    }

    /**
     * Active OPEN over IPv6 to ({@code remoteHigh}, {@code remoteLow}), from the source address RFC 6724 picks for it.
     * Returns the row or a negated {@link TcpError}.
     */
    int connect6(long remoteHigh, long remoteLow, int remotePort, int localPort, TcpOptions options, TcpEvents owner,
                 long nowNs) {
        if (ipv6 == null) {
            return -TcpError.ADDRESS_NOT_AVAILABLE;
        }
        if (Ipv6Address.isMulticast(remoteHigh)) {
            return -TcpError.NET_UNREACHABLE; // unicast only, as over IPv4
        }
        final int source = ipv6.addresses().sourceFor(remoteHigh, remoteLow);
        if (source < 0) {
            return -TcpError.ADDRESS_NOT_AVAILABLE; // every address still tentative (RFC 4862 §5.4)
        }
        final long localHigh = ipv6.addresses().high(source);
        final long localLow = ipv6.addresses().low(source);
        return open(isn.fold(localHigh, localLow), isn.remoteFold(remoteHigh, remoteLow, localHigh, localLow), remotePort,
            localPort, options,
            owner, nowNs, true, localHigh, localLow, remoteHigh, remoteLow);
    }

    /** Active OPEN of either family; the addresses as {@link #newConnection} takes them. */
    private int open(int local, int remoteAddress, int remotePort, int localPort, TcpOptions options, TcpEvents owner,
                     long nowNs, boolean overIpv6, long localHigh, long localLow, long remoteHigh, long remoteLow) {
        if (!plugPoints.knows(options)) {
            return -TcpError.INVALID;
        }
        int port = localPort;
        if (port == 0) {
            port = ephemeralPort(local, remoteAddress, remotePort, overIpv6, localHigh, localLow, remoteHigh, remoteLow);
            if (port < 0) {
                return -TcpError.ADDRESS_NOT_AVAILABLE;
            }
        } else if (listeners.on(port) >= 0
            || connections.get(ConnectionTable.key(remoteAddress, remotePort, port)) >= 0) {
            // As Linux's bind(): a port a listener holds, or the same 4-tuple, is taken.
            return -TcpError.ADDRESS_IN_USE;
        }
        final int c = newConnection(local, remoteAddress, remotePort, port, options, owner, nowNs, overIpv6, localHigh,
            localLow, remoteHigh, remoteLow);
        if (c == NO_MEMORY) {
            counters.drop(TcpCounters.DROP_MEMORY_LIMIT);
            return -TcpError.NO_BUFFER;
        }
        if (c < 0) {
            return -TcpError.TOO_MANY_CONNECTIONS;
        }
        buffers.reserve(c);
        tcb.setFlag(c, F_OWNED);
        sender.init(c, tcb.iss(c));
        transition(c, TcpState.SYN_SENT, nowNs);
        counters.activeOpens.incrementRelease();
        if (options.fastOpen() && fastOpen.connect(c, nowNs)) {
            // RFC 7413 §4.2.1: the SYN will carry the owner's first data (sendDeferredSyn).
            tcb.setFlag(c, TcpControlBlocks.F_SYN_DEFERRED);
            return c;
        }
        if (sendSyn(c, nowNs) == Ipv4Layer.ERR_NO_ROUTE) {
            free(c);
            return -TcpError.NET_UNREACHABLE;
        }
        return c;
    }

    /**
     * RFC 6056 algorithm 3: a keyed start per destination, then the first port whose 4-tuple is free and, on a shard
     * of several, whose replies reach this shard (about one port in the shard count). Over IPv6 the addresses are
     * folds for the key and whole for the steering, which hashes them as the link does.
     */
    private int ephemeralPort(int localAddress, int remoteAddress, int remotePort, boolean overIpv6, long localHigh,
                              long localLow, long remoteHigh, long remoteLow) {
        final int first = settings.current().ephemeralFirst();
        final int range = settings.current().ephemeralLast() - first + 1;
        final int offset = isn.portOffset(localAddress, remoteAddress, remotePort);
        for (int i = 0; i < range; i++) {
            final int port = first + (int) (((long) offset + ephemeralCounter + i) % range);
            final boolean reachesUs = overIpv6
                ? shardPorts.repliesReach6(localHigh, localLow, port, remoteHigh, remoteLow, remotePort)
                : shardPorts.repliesReach(localAddress, port, remoteAddress, remotePort);
            if (reachesUs && listeners.on(port) < 0
                && connections.get(ConnectionTable.key(remoteAddress, remotePort, port)) < 0) {
                ephemeralCounter += i + 1;
                return port;
            }
        }
        return -1;
    }

    /**
     * A row for a new connection, in the table, with options applied; not yet in any state. Returns -1 when the
     * table is full (or, over IPv6, the key is another connection's), {@link #NO_MEMORY} when its buffers would take
     * socket memory beyond the configured limit. Over IPv6 ({@code overIpv6}) {@code local} and {@code remoteAddress}
     * are the folds of the whole addresses that follow.
     */
    private int newConnection(int local, int remoteAddress, int remotePort, int localPort, TcpOptions options,
                              TcpEvents owner, long nowNs, boolean overIpv6, long localHigh, long localLow,
                              long remoteHigh, long remoteLow) {
        final long key = ConnectionTable.key(remoteAddress, remotePort, localPort);
        if (connections.get(key) >= 0) {
            return -1;
        }
        final long sizes = buffers.sizesFor(options);
        if (sizes < 0) {
            return NO_MEMORY;
        }
        int c = tcb.allocate();
        if (c < 0 && recycleTimeWait()) {
            c = tcb.allocate();
        }
        if (c < 0) {
            return -1;
        }
        settings.opened(c);
        final TcpConfig config = settings.of(c);
        tcb.localAddress(c, local);
        tcb.remoteAddress(c, remoteAddress);
        if (overIpv6) {
            tcb.ipv6(c, localHigh, localLow, remoteHigh, remoteLow);
            tcb.flowLabel(c, isn.flowLabel(local, localPort, remoteAddress, remotePort));
        }
        tcb.localPort(c, localPort);
        tcb.remotePort(c, remotePort);
        tcb.iss(c, isn.isn(local, localPort, remoteAddress, remotePort, nowNs));
        tcb.tsOffset(c, isn.timestampOffset(local, localPort, remoteAddress, remotePort));
        buffers.sizes(c, sizes);
        int flags = tcb.flags(c) | F_IN_TABLE;
        if (options.noDelay()) {
            flags |= F_NO_DELAY;
        }
        if (options.keepalive()) {
            flags |= F_KEEPALIVE;
        }
        if (config.timestamps()) {
            flags |= F_TIMESTAMPS;
        }
        if (config.sack()) {
            flags |= F_SACK;
        }
        if (options.noOptions()) {
            // FreeBSD's TCP_NOOPT: nothing offered, so nothing negotiated (RFC 7323 §1.3, RFC 2018 §2 need both SYNs).
            flags &= ~(F_TIMESTAMPS | F_SACK);
            settings.noOptions(c, true);
        }
        settings.connectTimeoutMs(c, options.connectTimeoutMs() > 0 ? options.connectTimeoutMs()
            : (int) Math.min(Integer.MAX_VALUE, config.connectTimeoutNs() / 1_000_000L));
        if (config.windowScaling() && !options.noOptions()) {
            flags |= F_WINDOW_SCALING;
            int scale = 0;
            // FreeBSD scales for the largest buffer a socket may grow to (TcpConfig.windowScaleBufferSize).
            final long covered = config.windowScaleBufferSize() > 0 ? config.windowScaleBufferSize()
                : buffers.receiveSize(c);
            while (scale < 14 && (covered >>> scale) > 65535) {
                scale++;
            }
            tcb.rcvScale(c, scale);
        }
        tcb.flags(c, flags);
        tcb.keepIdleMs(c, (int) ((options.keepaliveIdleNs() == 0 ? config.keepaliveIdleNs() : options.keepaliveIdleNs())
            / 1_000_000L));
        tcb.keepIntervalMs(c, (int) ((options.keepaliveIntervalNs() == 0 ? config.keepaliveIntervalNs()
            : options.keepaliveIntervalNs()) / 1_000_000L));
        tcb.keepProbes(c, options.keepaliveProbes() == 0 ? config.keepaliveProbes() : options.keepaliveProbes());
        plugPoints.choose(c, options);
        tcb.userMss(c, options.maxSegment());
        tcb.advMss(c, TcpSocketOptions.clampMss(tcb, c, path.mssOf(c, nowNs)));
        tcb.sndMss(c, TcpOutput.DEFAULT_MSS);
        tcb.rcvMss(c, Math.min(TcpOutput.DEFAULT_MSS, tcb.advMss(c)));
        tcb.finPosition(c, -1);
        tcb.lastReceiveNs(c, nowNs);
        tcb.lastSendNs(c, nowNs);
        tcb.lastOowAckNs(c, nowNs - 1_000_000_000L);
        rtt.init(tcb, c);
        events.owner(c, owner);
        path.opened(c, nowNs);
        connections.put(key, c);
        return c;
    }

    /**
     * A connection made by a listener for the SYN (or cookie) {@code seg}, over its family: SYN-RECEIVED's row,
     * counted in the SYN queue. A listener takes both families, as a Linux socket bound to {@code [::]} does.
     */
    int newPassive(int l, TcpSegment seg, long nowNs) {
        final int c = newConnection(seg.ipv6 ? seg.destinationAddress : localAddress, seg.sourceAddress,
            seg.sourcePort, seg.destinationPort, listeners.options(l), listeners.events(l), nowNs, seg.ipv6,
            seg.destinationHigh, seg.destinationLow, seg.sourceHigh, seg.sourceLow);
        if (c < 0) {
            return c;
        }
        tcb.setFlag(c, F_PASSIVE);
        listeners.joinSynQueue(c, l);
        return c;
    }

    /**
     * Our SYN or SYN-ACK (again), with the SYN timer (RFC 6298 §5 applies to it too). One that found the link's
     * transmit ring full never left: the timer then fires after {@link #SYN_UNSENT_RETRY_NS}, not the RTO, and sends it
     * as if for the first time (TcpTimeouts), so that a burst of other traffic costs a peer a millisecond, not its 1 s
     * retry.
     */
    int sendSyn(int c, long nowNs) {
        fastOpen.beforeSyn(c);
        if (tcb.retries(c) == 0 && !tcb.hasFlag(c, TcpControlBlocks.F_RETRANSMITTED)
            && settings.connectTimeoutMs(c) > 0 && !tcb.hasFlag(c, TcpControlBlocks.F_PASSIVE)) {
            // TCP_KEEPINIT: the attempt's deadline from its first SYN, whatever retries remain (TcpTimeouts).
            timers.arm(c, TimerKind.STATE, nowNs + settings.connectTimeoutMs(c) * 1_000_000L);
        }
        final int result = output.sendSyn(c, nowNs);
        tcb.senderTimerKind(c, TcpSender.TIMER_RTO);
        if (result == Ipv4Layer.ERR_NO_BUFFER) {
            tcb.setFlag(c, TcpControlBlocks.F_SYN_UNSENT);
            timers.arm(c, TimerKind.SENDER, nowNs + SYN_UNSENT_RETRY_NS);
        } else {
            timers.arm(c, TimerKind.SENDER, nowNs + rtt.rtoNs(tcb, c));
        }
        return result;
    }

    /** How soon a SYN or SYN-ACK that found no transmit buffer is tried again. */
    static final long SYN_UNSENT_RETRY_NS = 1_000_000L;

    /**
     * ICMP says a SYN with Fast Open data was too big for the path: the SYN goes again at once, without the data and
     * with the MSS the path now allows, as Linux's tcp_simple_retransmit; the data follows the handshake.
     */
    void resendSynWithoutData(int c, long nowNs) {
        final int pathMss = TcpSocketOptions.clampMss(tcb, c, path.mssOf(c, nowNs));
        tcb.advMss(c, Math.min(tcb.advMss(c), pathMss));
        tcb.sndNxt(c, tcb.iss(c) + 1);
        tcb.sndMax(c, tcb.iss(c) + 1);
        tcb.setFlag(c, TcpControlBlocks.F_RETRANSMITTED);
        sendSyn(c, nowNs);
    }

    /**
     * A Fast Open connect that held its SYN back got the owner's data: the SYN goes now, carrying it. Returns whether
     * it was such a connection (the caller then has nothing more to send).
     */
    boolean sendDeferredSyn(int c, long nowNs) {
        if (!fastOpen.releaseSyn(c)) {
            return false;
        }
        if (sendSyn(c, nowNs) == Ipv4Layer.ERR_NO_ROUTE) {
            terminate(c, TcpError.NET_UNREACHABLE, nowNs);
        }
        return true;
    }

    /**
     * The handshake completed (SYN-SENT or SYN-RECEIVED to ESTABLISHED, or to FIN-WAIT-1 when the owner already asked
     * for shutdown). A passive connection gets its rings and joins the accept queue. Returns false when that failed.
     */
    boolean establish(int c, long nowNs) {
        if (fastOpen.pending(c)) {
            // Opened by Fast Open: in the accept queue (or accepted) since its SYN, with its buffers reserved.
            listeners.leaveSynQueue(c);
            fastOpen.left(c);
        } else if (tcb.hasFlag(c, F_PASSIVE)) {
            final int l = tcb.listener(c);
            if (listeners.valid(l) && listeners.acceptQueueFull(l)) {
                // As Linux with tcp_abort_on_overflow = 0: the handshake's last ACK is dropped (ListenOverflows,
                // ListenDrops) and the connection stays half-open in the SYN queue with its SYN-ACK timer running.
                // The peer answers the retransmitted SYN-ACK (or sends its data) and that ACK completes the
                // handshake once the owner has accepted and made room; after synAckRetries it expires.
                listeners.overflow();
                return false;
            }
            if (listeners.valid(l) && !buffers.fitsLimit(c)) {
                // Other handshakes completed first and took the memory this one's SYN was let in against. As Linux
                // when it cannot make the child socket (tcp_check_req's listen_overflow, tcp_abort_on_overflow = 0):
                // the last ACK is dropped and counted, and the connection stays half-open in the SYN queue with its
                // SYN-ACK timer running; the peer's retransmitted data, or its answer to the retransmitted SYN-ACK,
                // completes the handshake once closes or idle connections gave budget back. A reset would end a
                // connection the peer already holds open, for a shortage that lasts as long as a burst.
                listeners.drop(TcpCounters.DROP_MEMORY_LIMIT);
                if (!tcb.hasFlag(c, F_IN_SYN_QUEUE)) {
                    free(c);    // rebuilt from a cookie just now: no state kept, the peer's retransmission brings it
                }
                return false;
            }
            listeners.leaveSynQueue(c);
            if (!listeners.valid(l)) {
                counters.drop(TcpCounters.DROP_NO_SOCKET);
                output.sendReset(c, nowNs);
                free(c);
                return false;
            }
            buffers.reserve(c);
            listeners.enqueue(l, c);
        } else {
            events.signal(c, EV_ESTABLISHED);
        }
        transition(c, tcb.hasFlag(c, F_FIN_QUEUED) ? TcpState.FIN_WAIT_1 : TcpState.ESTABLISHED, nowNs);
        tcb.retries(c, 0);
        // The SYN or SYN-ACK arrived: TCP_INFO's first delivered segment, as Linux counts it (its data with it).
        tcb.deliveredSegments(c, tcb.deliveredSegments(c) + 1);
        // TCP_INFO's last_data_recv counts from here until data arrives, as Linux's lrcvtime.
        tcb.lastDataReceiveNs(c, nowNs);
        tcb.quickAcks(c, settings.of(c).receivePolicy().quickAcks());
        timers.disarm(c, T_SENDER);
        sender.established(c, nowNs);
        if (tcb.hasFlag(c, F_KEEPALIVE)) {
            timers.arm(c, TimerKind.KEEPALIVE, nowNs + tcb.keepIdleMs(c) * 1_000_000L);
        }
        counters.established.incrementRelease();
        return true;
    }

    /** The owner accepted the connection from its listener's queue: the handle is its now. */
    void accepted(int c) {
        tcb.setFlag(c, F_OWNED);
        if (fastOpen.pending(c)) {
            // Accepted before its handshake completed (Fast Open): the owner's now, so closing the listener leaves it.
            listeners.leaveSynQueue(c);
        }
        counters.accepted.incrementRelease();
        final int state = tcb.state(c);
        if (state == TcpState.TIME_WAIT || state == TcpState.CLOSED) {
            events.signal(c, EV_CLOSED);
        } else if (state != TcpState.ESTABLISHED) {
            events.signal(c, EV_READABLE);
        }
    }

    // ------------------------------------------------------------------------------------------ state changes

    /**
     * Every state change of a connection goes through here (RFC 9293 §3.3.2), with what entering the state means:
     * FIN-WAIT-2 of an orphan (closed by its owner) waits at most finWait2Timeout; TIME-WAIT keeps the row for 2 MSL
     * (without rings once the owner let go) on the TIME-WAIT list; CLOSED is {@link #terminate}'s. A move the state
     * diagram does not have ({@link TcpState#mayMove}) is a bug in the stack, not a peer's doing: it throws.
     */
    void transition(int c, int state, long nowNs) {
        final int from = tcb.state(c);
        if (!TcpState.mayMove(from, state)) {
            throw new IllegalStateException("illegal TCP transition " + TcpState.name(from) + " -> "
                + TcpState.name(state) + " (row " + c + ")");
        }
        tcb.state(c, state);
        if (state == TcpState.ESTABLISHED && settings.connectTimeoutMs(c) > 0) {
            timers.disarm(c, TcpControlBlocks.T_STATE); // TCP_KEEPINIT's deadline: the handshake completed in time
        }
        if (state == TcpState.FIN_WAIT_2 && tcb.hasFlag(c, F_RELEASED)) {
            timers.arm(c, TimerKind.STATE, nowNs + settings.of(c).finWait2TimeoutNs());
        } else if (state == TcpState.TIME_WAIT) {
            enterTimeWait(c, nowNs);
        }
    }

    /** RFC 9293: TIME-WAIT for 2 MSL; the row stays (without rings once the owner let go), on the TIME-WAIT list. */
    private void enterTimeWait(int c, long nowNs) {
        timers.disarm(c, T_SENDER | T_DELAYED_ACK | T_KEEPALIVE | T_PACE);
        releaseOutOfOrder(c);
        counters.closed.incrementRelease();
        final boolean overflow = !tcb.hasFlag(c, F_TIME_WAIT_LISTED) && timeWait.count() >= settings.current().maxTimeWait();
        if (settings.of(c).mslNs() == 0 || overflow) {
            // Linux's tcp_max_tw_buckets: beyond it a connection skips TIME-WAIT (TCPTimeWaitOverflow). The ACK of
            // the peer's FIN, if owed, goes first, as tcp_fin sends it before tcp_time_wait.
            if (overflow) {
                counters.timeWaitOverflows.incrementRelease();
            }
            if (tcb.hasFlag(c, F_ACK_NOW)) {
                output.sendAck(c, nowNs);
            }
            terminate(c, TcpError.NONE, nowNs);
            return;
        }
        timers.arm(c, TimerKind.STATE, nowNs + 2 * settings.of(c).mslNs());
        timeWait.add(c);
        if (tcb.hasFlag(c, F_RELEASED) || !tcb.hasFlag(c, F_OWNED) && !tcb.hasFlag(c, F_ACCEPT_QUEUED)) {
            buffers.detach(c);
        } else {
            events.signalClosed(c);
        }
    }

    /** A retransmitted FIN in TIME-WAIT: 2 MSL from now (RFC 9293 §3.10.7.4). */
    void restartTimeWait(int c, long nowNs) {
        timers.arm(c, TimerKind.STATE, nowNs + 2 * settings.of(c).mslNs());
    }

    /** With every row taken, the oldest TIME-WAIT connection whose owner let go makes room (Linux tw_buckets). */
    private boolean recycleTimeWait() {
        final int c = timeWait.oldestOrphan();
        if (c < 0) {
            return false;
        }
        counters.timeWaitRecycled.incrementRelease();
        free(c);
        return true;
    }

    // ------------------------------------------------------------------------------------------ closing

    /**
     * Half-close (RFC 9293 §3.10.4 for the sending side): a FIN follows the data queued so far. In SYN-SENT and
     * SYN-RECEIVED it waits for the handshake ({@link #establish} moves to FIN-WAIT-1).
     */
    void queueFin(int c, long nowNs) {
        if (tcb.hasFlag(c, F_FIN_QUEUED)) {
            return;
        }
        final int state = tcb.state(c);
        if (state != TcpState.SYN_SENT && state != TcpState.SYN_RECEIVED && !TcpState.canSend(state)) {
            return;
        }
        // The sender sends from the rings (the FIN included): a connection that never carried data takes them now.
        if (!buffers.ensureRings(c)) {
            return;
        }
        tcb.setFlag(c, F_FIN_QUEUED);
        tcb.finPosition(c, buffers.sendRing(c).producerPosition());
        if (state == TcpState.ESTABLISHED) {
            transition(c, TcpState.FIN_WAIT_1, nowNs);
        } else if (state == TcpState.CLOSE_WAIT) {
            transition(c, TcpState.LAST_ACK, nowNs);
        } else {
            return;
        }
        sender.output(c, nowNs, false);
    }

    /**
     * CLOSE (RFC 9293 §3.10.4) of an owned row: a graceful close sends a FIN after the queued data and the protocol
     * finishes on its own. Unread received data turns it into an abort with a reset, as Linux does (RFC 2525 §2.17).
     * A connection still connecting is simply dropped.
     */
    void close(int c, long nowNs) {
        final int state = tcb.state(c);
        if (tcb.hasFlag(c, F_RINGS) && buffers.receiveRing(c).available() > 0 && TcpState.isSynchronized(state)
            && state != TcpState.TIME_WAIT) {
            abort(c, nowNs);
            return;
        }
        tcb.setFlag(c, F_RELEASED);
        tcb.events(c, 0);
        events.owner(c, TcpEvents.NONE);
        handlers.handler(c, null);
        switch (state) {
            case TcpState.CLOSED -> free(c);
            case TcpState.SYN_SENT -> terminate(c, TcpError.NONE, nowNs);
            case TcpState.TIME_WAIT -> buffers.detach(c);
            case TcpState.FIN_WAIT_2 -> timers.arm(c, TimerKind.STATE, nowNs + settings.of(c).finWait2TimeoutNs());
            default -> queueFin(c, nowNs);
        }
    }

    /** ABORT (RFC 9293 §3.10.5) of an owned row: a reset if the peer knows the connection, then CLOSED. */
    void abort(int c, long nowNs) {
        final int state = tcb.state(c);
        tcb.setFlag(c, F_RELEASED);
        events.owner(c, TcpEvents.NONE);
        handlers.handler(c, null);
        if (TcpState.isSynchronized(state) && state != TcpState.TIME_WAIT) {
            output.sendReset(c, nowNs);
            counters.aborted.incrementRelease();
        }
        terminate(c, TcpError.ABORTED, nowNs);
    }

    /**
     * The stack is going away: every connection a peer knows of (a synchronized state but TIME-WAIT, half-open and
     * queued ones included) is reset as an abort would reset it (RFC 9293 §3.10.5), so that no peer is left
     * half-open waiting for a host that is gone. Rows a handle still names stay, CLOSED with ABORTED, until their
     * owner lets go. Returns how many were reset.
     */
    int resetAll(long nowNs) {
        int reset = 0;
        for (int c = 0; c < tcb.capacity(); c++) {
            final int state = tcb.state(c);
            if (tcb.hasFlag(c, F_ALLOCATED) && TcpState.isSynchronized(state) && state != TcpState.TIME_WAIT) {
                output.sendReset(c, nowNs);
                terminate(c, TcpError.ABORTED, nowNs);
                reset++;
            }
        }
        return reset;
    }

    /**
     * Whether every row (with {@code releasedOnly}, every row its owner closed and let go) is CLOSED or in TIME-WAIT.
     * Rows let go still send their data and FIN: a stop that waited for the owners' rows alone would reset these
     * under a FIN they had just sent.
     */
    boolean allEnded(boolean releasedOnly) {
        for (int c = 0; c < tcb.capacity(); c++) {
            final int state = tcb.state(c);
            // A connection whose owner shut its output down (its FIN queued or sent) is waited for as a closed one:
            // its owner said it has no more to send, and a kernel's socket would finish delivering it.
            final boolean finishing = tcb.hasFlag(c, F_RELEASED) || state == TcpState.FIN_WAIT_1
                || state == TcpState.FIN_WAIT_2 || state == TcpState.CLOSING || state == TcpState.LAST_ACK;
            if (tcb.hasFlag(c, F_ALLOCATED) && (!releasedOnly || finishing)
                && state != TcpState.CLOSED && state != TcpState.TIME_WAIT) {
                return false;
            }
        }
        return true;
    }

    /** Stops listening; half-open and not yet accepted connections are reset (as Linux does). No listener: nothing. */
    void closeListener(int l, long nowNs) {
        if (!listeners.valid(l)) {
            return;
        }
        int c;
        while ((c = listeners.take(l)) >= 0) {
            if (TcpState.isSynchronized(tcb.state(c)) && tcb.state(c) != TcpState.TIME_WAIT) {
                output.sendReset(c, nowNs);
            }
            free(c);
        }
        for (c = 0; c < tcb.capacity() && listeners.synCount(l) > 0; c++) {
            if (tcb.hasFlag(c, F_IN_SYN_QUEUE) && tcb.listener(c) == l) {
                output.sendReset(c, nowNs);
                free(c);
            }
        }
        listeners.remove(l);
    }

    /**
     * A passive connection in SYN-RECEIVED ends (a reset, an ICMP error, its SYN-ACKs unanswered): a half-open one
     * just goes, as RFC 9293 returns it to LISTEN; one Fast Open opened may have data its owner reads, so it closes
     * with {@code error} instead.
     */
    void endHalfOpen(int c, int error, long nowNs) {
        if (fastOpen.pending(c)) {
            terminate(c, error, nowNs);
        } else {
            free(c);
        }
    }

    /**
     * The connection enters CLOSED with {@code error}. It leaves the connection table at once; the row is freed now
     * when nobody holds the handle, else when its owner closes it.
     */
    void terminate(int c, int error, long nowNs) {
        listeners.leaveSynQueue(c);
        fastOpen.left(c);
        timeWait.remove(c);
        timers.cancelAll(c);
        releaseOutOfOrder(c);
        removeFromTable(c);
        completions.ended(c);
        final int state = tcb.state(c);
        transition(c, TcpState.CLOSED, nowNs);
        if (tcb.error(c) == TcpError.NONE) {
            tcb.error(c, error);
        }
        if (error == TcpError.TIMED_OUT) {
            counters.timedOut.incrementRelease();
        }
        if (error == TcpError.NONE && state != TcpState.TIME_WAIT) {
            counters.closed.incrementRelease();
        }
        // One waiting in the accept queue stays there, as Linux's: accept returns it, its text received (and
        // acknowledged) can still be read, then the error is reported. RFC 9293 is silent.
        if (tcb.hasFlag(c, F_RELEASED) || !tcb.hasFlag(c, F_OWNED) && !tcb.hasFlag(c, F_ACCEPT_QUEUED)) {
            free(c);
        } else {
            events.signalClosed(c);
        }
    }

    private void removeFromTable(int c) {
        if (tcb.hasFlag(c, F_IN_TABLE)) {
            connections.remove(ConnectionTable.key(tcb.remoteAddress(c), tcb.remotePort(c), tcb.localPort(c)));
            tcb.clearFlag(c, F_IN_TABLE);
        }
    }

    /** Frees the row and everything attached; a not yet accepted connection leaves its accept queue. */
    void free(int c) {
        listeners.leaveSynQueue(c);
        fastOpen.left(c);
        timeWait.remove(c);
        timers.cancelAll(c);
        releaseOutOfOrder(c);
        removeFromTable(c);
        if (tcb.hasFlag(c, F_ACCEPT_QUEUED)) {
            listeners.removeQueued(c);
        }
        buffers.detach(c);
        events.owner(c, null);
        handlers.forget(c);
        sender.trace(c, null);
        completions.forget(c);
        tcb.release(c);
    }

    /** The connection's out-of-order ranges go back to the reassembly pool. */
    void releaseOutOfOrder(int c) {
        final int block = tcb.oooBlock(c);
        if (block >= 0) {
            reassembly.release(block);
            tcb.oooBlock(c, -1);
        }
    }
}
