package dev.tern.tcp;

import dev.tern.core.memory.BigEndian;
import dev.tern.ethernet.link.Offloads;
import dev.tern.ipv4.Ipv4Layer;
import dev.tern.ipv4.Ipv4Packet;
import dev.tern.ipv4.wire.IcmpHeader;
import dev.tern.ipv6.Ipv6Packet;
import dev.tern.ipv6.wire.Icmpv6Header;
import dev.tern.ipv6.wire.Ipv6Header;
import dev.tern.ipv6.wire.NextHeader;
import dev.tern.core.checksum.InternetChecksum;
import dev.tern.tcp.wire.TcpHeader;
import dev.tern.tcp.wire.TcpOptionFields;

import java.lang.foreign.MemorySegment;

import static dev.tern.tcp.TcpControlBlocks.F_FIN_SENT;
import static dev.tern.tcp.TcpControlBlocks.F_PASSIVE;
import static dev.tern.tcp.TcpControlBlocks.F_RTT_TIMING;
import static dev.tern.tcp.TcpControlBlocks.F_SACK;
import static dev.tern.tcp.TcpControlBlocks.F_TIMESTAMPS;
import static dev.tern.tcp.TcpControlBlocks.F_WINDOW_SCALING;
import static dev.tern.tcp.TcpState.CLOSE_WAIT;
import static dev.tern.tcp.TcpState.CLOSING;
import static dev.tern.tcp.TcpState.ESTABLISHED;
import static dev.tern.tcp.TcpState.FIN_WAIT_1;
import static dev.tern.tcp.TcpState.FIN_WAIT_2;
import static dev.tern.tcp.TcpState.LAST_ACK;
import static dev.tern.tcp.TcpState.SYN_RECEIVED;
import static dev.tern.tcp.TcpState.SYN_SENT;
import static dev.tern.tcp.TcpState.TIME_WAIT;
import static dev.tern.tcp.wire.TcpFlags.ACK;
import static dev.tern.tcp.wire.TcpFlags.FIN;
import static dev.tern.tcp.wire.TcpFlags.RST;
import static dev.tern.tcp.wire.TcpFlags.SYN;

/**
 * Segment arrival (RFC 9293 §3.10.7): the checks at the layer's entry, then processing by state: CLOSED
 * (§3.10.7.1, answer with a reset), LISTEN (§3.10.7.2, with SYN cookies), SYN-SENT (§3.10.7.3), and the
 * synchronized states (§3.10.7.4: PAWS, the acceptability test, RST, SYN, ACK, segment text, FIN), with the
 * protections of RFC 5961 (challenge ACKs, the ACK range check), or RFC 793's rules where {@link SegmentChecks} asks.
 *
 * <p>This class dispatches by state and keeps the checks every segment passes; what the ACK field means for the
 * sending side is {@link TcpSender#onAck}'s business, the segment text and FIN {@link TcpReceiver}'s, and every state
 * change goes through {@link ConnectionLifecycle#transition}.
 *
 * <p>Output is not sent from here, except for answers that have no connection behind them (resets, cookies),
 * challenge or duplicate ACKs, and the receiver's immediate ACKs for out-of-order data: a connection that needs to
 * send is queued ({@link OutputQueue#request}) and served once per poll, so a batch of in-order segments gets one
 * ACK. Events are queued likewise.
 *
 * <p>Owned by the shard thread; not thread-safe. The segment's memory is valid only during {@link #onPacket}.
 */
final class TcpInput {
    /** RFC 7323 §5.5: TS.Recent older than 24 days is not trusted for PAWS. */
    private static final long PAWS_IDLE_NS = 24L * 24 * 3600 * 1_000_000_000L;
    /** Linux's tcp_invalid_ratelimit default. */
    private static final long OUT_OF_WINDOW_ACK_INTERVAL_NS = 500_000_000L;

    private final Ipv4Layer ipv4;
    private final TcpControlBlocks tcb;
    private final TcpOutput output;
    private final TcpSender sender;
    private final TcpReceiver receiver;
    private final RttEstimator rtt;
    private final TcpCounters counters;
    private final ConnectionSettings settings;
    private final ConnectionTable connections;
    private final TcpListeners listeners;
    private final ConnectionLifecycle lifecycle;
    private final SynCookies cookies;
    private final IsnGenerator isn;
    private final FastOpen fastOpen;
    private final ConnectionBuffers buffers;
    private final TcpPath path;
    private final OutputQueue outputQueue;
    private final SegmentChecks checks;
    private final Ecn ecn;
    private final TcpHeader rx = new TcpHeader();
    private final TcpSegment seg = new TcpSegment();
    /** See {@link #receivePressure(boolean, boolean)}. */
    private boolean receivePressure;
    /** See {@link #receivePressure(boolean, boolean)}. */
    private boolean synPressure;
    private long challengeWindowNs;
    private int challengeCount;

    TcpInput(Ipv4Layer ipv4, TcpControlBlocks tcb, TcpOutput output, TcpSender sender, TcpReceiver receiver,
             RttEstimator rtt, TcpCounters counters, ConnectionSettings settings, ConnectionTable connections,
             TcpListeners listeners, ConnectionLifecycle lifecycle, SynCookies cookies, IsnGenerator isn,
             FastOpen fastOpen, ConnectionBuffers buffers, TcpPath path, OutputQueue outputQueue, Ecn ecn) {
        this.ipv4 = ipv4;
        this.ecn = ecn;
        this.tcb = tcb;
        this.output = output;
        this.sender = sender;
        this.receiver = receiver;
        this.rtt = rtt;
        this.counters = counters;
        this.settings = settings;
        this.connections = connections;
        this.listeners = listeners;
        this.lifecycle = lifecycle;
        this.cookies = cookies;
        this.isn = isn;
        this.fastOpen = fastOpen;
        this.buffers = buffers;
        this.path = path;
        this.outputQueue = outputQueue;
        this.checks = settings.current().segmentChecks();
    }

    /**
     * Whether the link's receive ring was half full or more when this poll began (set by the stack each poll, before
     * the frames are handled): segments that would answer for no connection are then dropped, and SYNs to listeners
     * too when {@code dropSyns} (the stack leaves them through when it drops a few heavy sources' SYNs itself).
     */
    void receivePressure(boolean underPressure, boolean dropSyns) {
        receivePressure = underPressure;
        synPressure = underPressure && dropSyns;
    }

    /** RFC 5961 §7: at most challengeAckLimit challenge ACKs per second for the whole layer. */
    private boolean challengeAckAllowed(long nowNs) {
        if (nowNs - challengeWindowNs >= 1_000_000_000L) {
            challengeWindowNs = nowNs;
            challengeCount = 0;
        }
        return ++challengeCount <= settings.current().challengeAckLimit();
    }

    // ------------------------------------------------------------------------------------------------ entry

    void onPacket(Ipv4Packet packet, MemorySegment segment, long offset, int length, long nowNs) {
        if (!headerAccepted(segment, offset, length)) {
            return;
        }
        if ((packet.rxFlags() & (Offloads.RX_CHECKSUM_OK | Offloads.RX_CHECKSUM_PARTIAL)) == 0
            && !rx.checksumValid(packet.source(), packet.destination())) {
            counters.drop(TcpCounters.DROP_BAD_CHECKSUM);
            return;
        }
        if (packet.kind() != Ipv4Packet.UNICAST) {
            // RFC 1122 §4.2.3.10: a SYN to a broadcast or multicast address is ignored; TCP is unicast only.
            counters.drop(TcpCounters.DROP_NOT_UNICAST);
            return;
        }
        if (portsAccepted()) {
            process(seg.read(rx, packet.source(), packet.destination(), segment, offset, length),
                packet.tos() & Ecn.IP_MASK, nowNs);
        }
    }

    /**
     * A segment over IPv6 (RFC 8200 §8): the checksum over its pseudo-header, never to a group; its addresses enter
     * the rest of TCP as their folds, and the connection's row is checked against them whole.
     */
    void onPacket(Ipv6Packet packet, MemorySegment segment, long offset, int length, long nowNs) {
        if (!headerAccepted(segment, offset, length)) {
            return;
        }
        if ((packet.rxFlags() & (Offloads.RX_CHECKSUM_OK | Offloads.RX_CHECKSUM_PARTIAL)) == 0
            && !InternetChecksum.verifies(InternetChecksum.add(Ipv6Header.pseudoHeaderSum(segment,
            packet.headerOffset(), length, NextHeader.TCP), segment, offset, length))) {
            counters.drop(TcpCounters.DROP_BAD_CHECKSUM);
            return;
        }
        if (packet.multicastDestination()) {
            counters.drop(TcpCounters.DROP_NOT_UNICAST);
            return;
        }
        if (portsAccepted()) {
            final long sh = packet.sourceHigh();
            final long sl = packet.sourceLow();
            final long dh = packet.destinationHigh();
            final long dl = packet.destinationLow();
            process(seg.read6(rx, sh, sl, dh, dl, isn.remoteFold(sh, sl, dh, dl), isn.fold(dh, dl), segment, offset, length),
                packet.trafficClass() & Ecn.IP_MASK, nowNs);
        }
    }

    private boolean headerAccepted(MemorySegment segment, long offset, int length) {
        counters.rxSegments.incrementRelease();
        rx.wrap(segment, offset, length);
        final int reason = rx.check();
        if (reason != TcpHeader.OK) {
            counters.drop(reason == TcpHeader.DROP_TOO_SHORT ? TcpCounters.DROP_TOO_SHORT
                : TcpCounters.DROP_BAD_DATA_OFFSET);
            return false;
        }
        return true;
    }

    private boolean portsAccepted() {
        if (rx.sourcePort() == 0 || rx.destinationPort() == 0) {
            // Port 0 names no socket on either side (RFC 6335 §6: reserved); nothing may answer it, not even a
            // reset, or a forged segment turns us into a reflector aimed at port 0.
            counters.drop(TcpCounters.DROP_ZERO_PORT);
            return false;
        }
        return true;
    }

    /** The segment just read, of either family: to its connection, its listener, or CLOSED's answer. */
    private void process(boolean optionsRead, int ipEcn, long nowNs) {
        seg.ipEcn = ipEcn;
        if (!optionsRead) {
            // Deviation: RFC 9293 §3.1 suggests resetting on an illegal option length; like Linux, we stop parsing
            // options there and go on with the segment.
            counters.rxBadOptions.incrementRelease();
        }
        if (checks.synFin() == SegmentChecks.SynFin.DROP && (seg.flags & (SYN | FIN)) == (SYN | FIN)) {
            // FreeBSD's drop_synfin: SYN and FIN together, in any state, are a scanner's probe, not a peer's opening.
            counters.drop(TcpCounters.DROP_SYN_FIN);
            return;
        }
        final int c = connections.get(ConnectionTable.key(seg.sourceAddress, seg.sourcePort, seg.destinationPort));
        if (c >= 0 && !tcb.sameAddresses(c, seg)) {
            // The key is another connection's: of the other family, or of an IPv6 peer whose fold is this one's (a
            // chance of one in 2^32 a pair, at the same ports). No row can be made for this segment, nor answered.
            counters.drop(TcpCounters.DROP_KEY_COLLISION);
            return;
        }
        if (c >= 0) {
            switch (tcb.state(c)) {
                case SYN_SENT -> synSent(c, nowNs);
                case TIME_WAIT -> timeWait(c, nowNs);
                default -> synchronizedArrives(c, nowNs);
            }
            return;
        }
        final int listener = listeners.on(seg.destinationPort);
        if (listener >= 0) {
            listen(listener, nowNs, 0);
        } else {
            closed(nowNs);
        }
    }

    // -------------------------------------------------------------------------------------- CLOSED, LISTEN

    /** RFC 9293 §3.10.7.1: no connection; answer anything but a reset with a reset. */
    private void closed(long nowNs) {
        counters.drop(TcpCounters.DROP_NO_SOCKET);
        if (seg.has(RST)) {
            return;
        }
        if (receivePressure) {
            // Falling behind the link (a flood of segments for no connection, a scan): the reset would cost a
            // transmit, and the peer's answer to it another receive, taken from established connections. Linux drops
            // at its backlog the same way before any socket is looked up. The sender retries or gives up.
            counters.unansweredUnderPressure.incrementRelease();
            return;
        }
        if (seg.has(ACK)) {
            output.sendReset(seg, seg.ack, 0, RST, nowNs);
        } else {
            output.sendReset(seg, 0,
                seg.seq + seg.sequenceLength(), RST | ACK, nowNs);
        }
    }

    /**
     * RFC 9293 §3.10.7.2: a listener. A SYN makes a connection in SYN-RECEIVED (or a SYN cookie when the SYN queue is
     * full); an ACK is a returning cookie or gets a reset. {@code issFloor}, when not 0, is a sequence number the
     * new ISS must exceed (a SYN that ended a TIME-WAIT, RFC 6191).
     */
    private void listen(int listener, long nowNs, int issFloor) {
        if (seg.has(RST)) {
            counters.drop(TcpCounters.DROP_RST_IGNORED);
            return;
        }
        if (seg.has(ACK)) {
            if (!seg.has(SYN) && listeners.cookiesRecentlySent(listener, nowNs) && acceptCookie(listener, nowNs)) {
                return;
            }
            counters.drop(TcpCounters.DROP_NO_SOCKET);
            output.sendReset(seg, seg.ack, 0, RST, nowNs);
            return;
        }
        if (!seg.has(SYN)) {
            counters.drop(TcpCounters.DROP_BAD_STATE);
            return;
        }
        if (seg.has(FIN) && checks.synFin() != SegmentChecks.SynFin.ANSWER) {
            // SYN and FIN together are no opening a peer means (a scanner's probe): dropped unanswered, as Linux does.
            // Answered, the SYN is taken and the FIN left for the peer to send again, as data on a SYN is (below).
            counters.drop(TcpCounters.DROP_SYN_FIN);
            return;
        }
        if (synPressure) {
            // Shedding under load: the link's receive ring is half full or more, so the stack is falling behind (a SYN
            // flood). A SYN costs a SYN-ACK (or a cookie) and, from a flood's spoofed or closed source, a reset back;
            // dropping it here keeps the ring for segments of established connections, whose loss would stall
            // transfers in retransmission timeouts. A real client sends its SYN again after 1 s (RFC 6298 §2.1);
            // the drop stops as soon as the ring drains below half.
            counters.drop(TcpCounters.DROP_SYN_PRESSURE);
            return;
        }
        if (!path.routable(seg, nowNs)) {
            // No route back (a spoofed flood's off-subnet sources with no gateway): a SYN-ACK could not leave, and a
            // half-open row would live through its retransmissions, taking the queue from real clients.
            counters.drop(TcpCounters.DROP_NO_ROUTE);
            return;
        }
        if (listeners.acceptQueueFull(listener)) {
            // As Linux: with the accept queue full, SYNs are dropped (the peer retries) rather than answered.
            listeners.overflow();
            return;
        }
        if (listeners.synQueueFull(listener)) {
            if (settings.current().synCookies()) {
                sendCookie(listener, nowNs);
            } else {
                listeners.drop(TcpCounters.DROP_SYN_QUEUE_FULL);
            }
            return;
        }
        final int fastOpenDecision = fastOpen.onSyn(listener, seg);
        if (seg.payloadLength > 0 && fastOpenDecision < FastOpen.ACCEPT) {
            // Data on a SYN without Fast Open (RFC 7413) is not queued nor acknowledged: the peer sends it again after
            // the handshake, as Linux does.
            counters.drop(TcpCounters.DROP_SYN_DATA);
        }
        final int c = lifecycle.newPassive(listener, seg, nowNs);
        if (c < 0) {
            // As Linux under tcp_mem's limit: the SYN is dropped, the peer retries.
            listeners.drop(c == ConnectionLifecycle.NO_MEMORY ? TcpCounters.DROP_MEMORY_LIMIT
                : TcpCounters.DROP_NO_CONNECTION_SLOT);
            return;
        }
        if (issFloor != 0 && SeqNum.le(tcb.iss(c), issFloor)) {
            tcb.iss(c, issFloor + 1);
        }
        sender.init(c, tcb.iss(c));
        tcb.irs(c, seg.seq);
        tcb.rcvNxt(c, seg.seq + 1);
        tcb.rcvAdv(c, seg.seq + 1);
        negotiate(c, nowNs);
        ecn.onSyn(c, seg);
        // The window of a SYN is never scaled (RFC 7323 §2.2).
        tcb.sndWnd(c, seg.window);
        tcb.maxSndWnd(c, seg.window);
        tcb.sndWl1(c, seg.seq);
        tcb.sndWl2(c, seg.ack);
        lifecycle.transition(c, SYN_RECEIVED, nowNs);
        counters.passiveOpens.incrementRelease();
        fastOpen.synReceived(c, fastOpenDecision, seg, receiver);
        if (fastOpen.pending(c)) {
            // It may send before the last ACK (RFC 7413 §4.2.2): its congestion window starts now.
            sender.established(c, nowNs);
        }
        lifecycle.sendSyn(c, nowNs);
    }

    private void sendCookie(int listener, long nowNs) {
        final TcpOptionFields options = seg.options;
        final int peerMss = peerMss(options);
        final int mssIndex = SynCookies.mssIndex(Math.min(peerMss, path.mss(seg, nowNs)));
        final int iss = cookies.encode(seg.sourceAddress, seg.sourcePort, seg.destinationPort, seg.seq, mssIndex,
            nowNs);
        listeners.cookieSent(listener, nowNs);
        output.sendCookieSynAck(seg, iss, seg.seq + 1, SynCookies.MSS_TABLE[mssIndex], listeners.receiveSize(listener),
            nowNs);
    }

    /** The ACK completing a cookie handshake: rebuild the connection, established, and process the segment. */
    private boolean acceptCookie(int listener, long nowNs) {
        final int mssIndex = cookies.decode(seg.ack - 1, seg.sourceAddress, seg.sourcePort, seg.destinationPort,
            seg.seq - 1, nowNs);
        if (mssIndex < 0) {
            counters.drop(TcpCounters.DROP_BAD_COOKIE);
            return false;
        }
        if (listeners.acceptQueueFull(listener)) {
            // As Linux: the cookie's ACK is dropped (no state is kept); the peer's retransmission of its data, or
            // of this ACK, brings the cookie again.
            listeners.overflow();
            return true;
        }
        final int c = lifecycle.newPassive(listener, seg, nowNs);
        if (c < 0) {
            listeners.drop(c == ConnectionLifecycle.NO_MEMORY ? TcpCounters.DROP_MEMORY_LIMIT
                : TcpCounters.DROP_NO_CONNECTION_SLOT);
            return true;
        }
        counters.cookiesValidated.incrementRelease();
        counters.passiveOpens.incrementRelease();
        listeners.leaveSynQueue(c);
        final int iss = seg.ack - 1;
        tcb.iss(c, iss);
        sender.init(c, iss);
        tcb.sndNxt(c, seg.ack);
        tcb.sndMax(c, seg.ack);
        tcb.irs(c, seg.seq - 1);
        tcb.rcvNxt(c, seg.seq);
        tcb.rcvAdv(c, seg.seq + Math.min(buffers.receiveSize(c), 65535));
        tcb.clearFlag(c, F_TIMESTAMPS | F_SACK | F_WINDOW_SCALING | F_RTT_TIMING);
        tcb.sndScale(c, 0);
        tcb.rcvScale(c, 0);
        tcb.sndMss(c, TcpSocketOptions.clampMss(tcb, c,
            Math.min(SynCookies.MSS_TABLE[mssIndex], path.mss(seg, nowNs))));
        tcb.sndWnd(c, seg.window);
        tcb.maxSndWnd(c, seg.window);
        tcb.sndWl1(c, seg.seq);
        tcb.sndWl2(c, seg.ack);
        lifecycle.transition(c, SYN_RECEIVED, nowNs);
        if (!lifecycle.establish(c, nowNs)) {
            return true;
        }
        if (processAck(c, nowNs) && (seg.payloadLength > 0 || seg.has(FIN))) {
            receiver.receiveText(c, seg, nowNs);
        }
        return true;
    }

    /**
     * The peer's MSS from its SYN's options. Absent: 536 over IPv4, 1220 over IPv6 (RFC 9293 §3.7.1 MUST-15, RFC
     * 1122 §4.2.2.6; RFC 8200's smallest MTU, 1280, less the headers). An option of 0 means
     * nothing and counts as absent, as Linux takes it; a value below {@link #MIN_PEER_MSS} is raised to it (Linux's
     * tcp_min_snd_mss), so a peer cannot make Tern cut its data into segments of a few bytes each (CVE-2019-11479).
     * Both are counted as bad options.
     */
    private int peerMss(TcpOptionFields options) {
        final int mss = options.mss();
        final int absent = seg.ipv6 ? TcpOutput.DEFAULT_MSS6 : TcpOutput.DEFAULT_MSS;
        if (mss == TcpOptionFields.ABSENT) {
            return absent;
        }
        if (mss == 0) {
            counters.rxBadOptions.incrementRelease();
            return absent;
        }
        if (mss < MIN_PEER_MSS) {
            counters.rxBadOptions.incrementRelease();
            return MIN_PEER_MSS;
        }
        return mss;
    }

    /** The smallest MSS taken from a peer (Linux's net.ipv4.tcp_min_snd_mss default). */
    static final int MIN_PEER_MSS = 48;

    /** Options of a SYN (RFC 9293 §3.7.1 MSS; RFC 7323 window scale and timestamps; RFC 2018 SACK-permitted). */
    private void negotiate(int c, long nowNs) {
        final TcpOptionFields options = seg.options;
        tcb.sndMss(c, TcpSocketOptions.clampMss(tcb, c,
            Math.min(peerMss(options), path.mss(seg, nowNs))));
        if (tcb.hasFlag(c, F_WINDOW_SCALING) && options.windowScale() != TcpOptionFields.ABSENT) {
            tcb.sndScale(c, options.windowScale());
        } else {
            tcb.clearFlag(c, F_WINDOW_SCALING);
            tcb.sndScale(c, 0);
            tcb.rcvScale(c, 0);
        }
        if (tcb.hasFlag(c, F_TIMESTAMPS) && options.hasTimestamp()) {
            tcb.tsRecent(c, options.tsVal());
            tcb.tsRecentAgeNs(c, nowNs);
        } else {
            tcb.clearFlag(c, F_TIMESTAMPS);
        }
        if (!(tcb.hasFlag(c, F_SACK) && options.sackPermitted())) {
            tcb.clearFlag(c, F_SACK);
        }
    }

    // -------------------------------------------------------------------------------------------- SYN-SENT

    /** RFC 9293 §3.10.7.3. */
    private void synSent(int c, long nowNs) {
        final boolean hasAck = seg.has(ACK);
        if (hasAck && (SeqNum.le(seg.ack, tcb.iss(c)) || SeqNum.gt(seg.ack, tcb.sndMax(c)))) {
            counters.drop(TcpCounters.DROP_BAD_ACK);
            if (!seg.has(RST)) {
                output.sendReset(seg, seg.ack, 0, RST, nowNs);
            }
            return;
        }
        if (seg.has(RST)) {
            // RFC 5961 §3.2 keeps RFC 793's rule here: a reset is acceptable only if it acknowledges our SYN.
            if (hasAck) {
                counters.refused.incrementRelease();
                lifecycle.terminate(c, TcpError.REFUSED, nowNs);
            } else {
                counters.drop(TcpCounters.DROP_RST_IGNORED);
            }
            return;
        }
        if (!seg.has(SYN)) {
            counters.drop(TcpCounters.DROP_BAD_STATE);
            return;
        }
        if (hasAck && tcb.hasFlag(c, F_TIMESTAMPS) && seg.options.hasTimestamp() && seg.options.tsEcr() != 0
            && SeqNum.gt(seg.options.tsEcr(), output.tsVal(c, nowNs))) {
            // As Linux's tcp_rcv_synsent_state_process (PAWSActiveRejected): a SYN-ACK echoing a timestamp we have
            // not sent yet answers no SYN of ours; it is reset and the connection waits on in SYN-SENT (RFC 7323 §3.2
            // leaves the check to the implementation).
            counters.drop(TcpCounters.DROP_PAWS);
            output.sendReset(seg, seg.ack, 0, RST, nowNs);
            return;
        }
        tcb.irs(c, seg.seq);
        tcb.rcvNxt(c, seg.seq + 1);
        tcb.rcvAdv(c, seg.seq + 1 + receiver.synWindow(c));
        negotiate(c, nowNs);
        tcb.sndWnd(c, seg.window);
        tcb.maxSndWnd(c, seg.window);
        tcb.sndWl1(c, seg.seq);
        tcb.sndWl2(c, seg.ack);
        if (hasAck) {
            ecn.onSynAck(c, seg);
            fastOpen.onSynAck(c, seg, nowNs);
            tcb.sndUna(c, seg.ack);
            if (tcb.hasFlag(c, F_RTT_TIMING) && SeqNum.ge(seg.ack, tcb.rttSeq(c))) {
                rtt.sample(tcb, c, nowNs - tcb.rttStartNs(c));
                tcb.clearFlag(c, F_RTT_TIMING);
            }
            final boolean text = seg.payloadLength > 0 || seg.has(FIN);
            final boolean takesText = text && (settings.current().synSentText() == TcpConfig.SynSentText.ALWAYS
                || tcb.hasFlag(c, TcpControlBlocks.F_FAST_OPEN_ACTIVE));
            if (seg.payloadLength > 0 && !takesText) {
                counters.drop(TcpCounters.DROP_SYN_DATA);
            }
            if (!lifecycle.establish(c, nowNs)) {
                return;
            }
            if (takesText) {
                // RFC 9293 §3.10.7.3: "continue processing at the sixth step": the text after the SYN's number.
                seg.seq++;
                seg.flags &= ~SYN;
                receiver.receiveText(c, seg, nowNs);
            }
            outputQueue.ackNow(c);
            return;
        }
        // Simultaneous open (RFC 9293 §3.5, figure 8): both SYNs crossed. ECN is settled as by a listener, from the
        // peer's SYN alone (as FreeBSD).
        ecn.onSyn(c, seg);
        lifecycle.transition(c, SYN_RECEIVED, nowNs);
        tcb.clearFlag(c, F_RTT_TIMING);
        tcb.retries(c, 0);
        final int sent = tcb.sndMax(c);
        lifecycle.sendSyn(c, nowNs);
        // A Fast Open SYN's data did go: the peer's SYN-ACK may acknowledge it, as Linux's keeps it in flight. SND.NXT
        // stays after the SYN, so what the ACK leaves unacknowledged is sent again once ESTABLISHED.
        tcb.sndMax(c, SeqNum.max(sent, tcb.sndMax(c)));
    }

    // -------------------------------------------------------------------------------------------- TIME-WAIT

    private void timeWait(int c, long nowNs) {
        if ((seg.flags & (SYN | ACK | RST)) == SYN) {
            // RFC 6191 (and RFC 9293 §3.6.1 note): a new SYN may end TIME-WAIT when it is provably newer, by
            // timestamp or, without timestamps, by sequence number.
            final boolean newer = tcb.hasFlag(c, F_TIMESTAMPS) && seg.options.hasTimestamp()
                ? SeqNum.gt(seg.options.tsVal(), tcb.tsRecent(c))
                : SeqNum.gt(seg.seq, tcb.rcvNxt(c));
            final int listener = listeners.on(seg.destinationPort);
            if (newer && listener >= 0) {
                final int floor = tcb.sndNxt(c) + 65535 + 2;
                counters.timeWaitReused.incrementRelease();
                lifecycle.free(c);
                listen(listener, nowNs, floor == 0 ? 1 : floor);
                return;
            }
        }
        synchronizedArrives(c, nowNs);
    }

    // ------------------------------------------------------------------------------------ synchronized states

    /** RFC 9293 §3.10.7.4, "Otherwise": SYN-RECEIVED through TIME-WAIT. */
    private void synchronizedArrives(int c, long nowNs) {
        final int state = tcb.state(c);
        if (state == SYN_RECEIVED && (seg.flags & (SYN | RST | ACK)) == SYN && seg.seq == tcb.irs(c)) {
            // The peer did not get our SYN-ACK and sent its SYN again: answer with the SYN-ACK (as Linux does).
            lifecycle.sendSyn(c, nowNs);
            return;
        }
        final boolean synAgain = state == SYN_RECEIVED && !tcb.hasFlag(c, F_PASSIVE)
            && (seg.flags & (SYN | RST | ACK)) == (SYN | ACK) && seg.seq == tcb.irs(c);
        if (synAgain) {
            // Simultaneous open (RFC 9293 figure 8, line 6): the peer's SYN-ACK; its SYN we have, its ACK is news.
            // As Linux, the SYN it repeats is a duplicate, acknowledged at once with a D-SACK (RFC 2883).
            seg.seq++;
            seg.flags &= ~SYN;
            receiver.dsack(c, seg.seq - 1, seg.seq);
            outputQueue.ackNow(c);
        }
        tcb.lastReceiveNs(c, nowNs);
        tcb.probes(c, 0);
        if (pawsRejects(c, nowNs)) {
            counters.drop(TcpCounters.DROP_PAWS);
            duplicateAck(c, nowNs);
            return;
        }
        final int rcvNxt = tcb.rcvNxt(c);
        final int rcvWnd = receiver.acceptanceWindow(c);
        if (seg.has(RST) ? !acceptable(seg.seq, seg.sequenceLength(), rcvNxt, rcvWnd)
            : !acceptableEdges(seg.seq, seg.sequenceLength(), rcvNxt, rcvWnd)) {
            notAcceptable(c, state, rcvNxt, nowNs);
            return;
        }
        if (seg.has(RST)) {
            if (seg.seq == rcvNxt || checks.inWindowResets()) {
                // RFC 793 §3.4 takes any reset in the window (the setting); RFC 5961 §3.2 only one at RCV.NXT.
                reset(c, state, nowNs);
            } else {
                // RFC 5961 §3.2: in the window but not exactly RCV.NXT: a challenge ACK; a real peer answers with
                // a reset at the right number, a blind attacker cannot.
                challengeAck(c, nowNs);
            }
            return;
        }
        if (seg.has(SYN)) {
            if (checks.inWindowSyns() && state != SYN_RECEIVED && state != TIME_WAIT
                && SeqNum.inWindow(seg.seq, rcvNxt, rcvWnd)) {
                // RFC 793 §3.9, the setting: a SYN in the window is an error; reset and close. Not in SYN-RECEIVED,
                // where the peer's SYN is news, nor in TIME-WAIT, kept as resets do not end it (RFC 1337).
                counters.synResets.incrementRelease();
                output.sendReset(c, nowNs);
                lifecycle.terminate(c, TcpError.RESET, nowNs);
            } else {
                // RFC 5961 §4.2: a SYN in a synchronized state, whatever its sequence number, gets a challenge ACK.
                challengeAck(c, nowNs);
            }
            return;
        }
        if (!seg.has(ACK)) {
            counters.drop(TcpCounters.DROP_NO_ACK);
            return;
        }
        if (ecn.changesCeState(c, seg) && tcb.lastAckSent(c) != tcb.rcvNxt(c)) {
            output.sendAck(c, nowNs);
        }
        if (ecn.onSegment(c, seg)) {
            outputQueue.ackNow(c);
        }
        if (state == SYN_RECEIVED) {
            if (SeqNum.lt(tcb.sndUna(c), seg.ack) && SeqNum.le(seg.ack, tcb.sndMax(c))) {
                if (!lifecycle.establish(c, nowNs)) {
                    return;
                }
                if (!tcb.hasFlag(c, F_PASSIVE) && SeqNum.lt(seg.ack, tcb.sndMax(c))) {
                    // A simultaneous open whose Fast Open SYN's data the peer did not take: it goes again now.
                    tcb.sndNxt(c, seg.ack);
                    tcb.sndMax(c, seg.ack);
                }
                tcb.sndWnd(c, seg.window << tcb.sndScale(c));
                tcb.maxSndWnd(c, Math.max(tcb.maxSndWnd(c), tcb.sndWnd(c)));
                tcb.sndWl1(c, seg.seq);
                tcb.sndWl2(c, seg.ack);
            } else {
                counters.drop(TcpCounters.DROP_BAD_ACK);
                output.sendReset(seg, seg.ack, 0, RST, nowNs);
                return;
            }
        }
        if (!processAck(c, nowNs)) {
            return;
        }
        if (state == TIME_WAIT && seg.payloadLength == 0 && !seg.has(FIN) && seg.seq != rcvNxt) {
            // A bare ACK that is not at RCV.NXT in TIME-WAIT gets an ACK back, rate-limited, as Linux's
            // tcp_timewait_state_process (TCP_TW_ACK) and FreeBSD's tcp_twcheck answer it.
            duplicateAck(c, nowNs);
            return;
        }
        // Sixth step, URG: Deviation: the urgent pointer is ignored and urgent data is delivered in line, which is
        // what RFC 6093 §5 recommends applications assume.
        if (seg.payloadLength > 0 || seg.has(FIN)) {
            receiver.receiveText(c, seg, nowNs);
        }
    }

    /** RFC 9293 §3.10.7.4, first check: the four cases of segment length against receive window. */
    static boolean acceptable(int seq, int length, int rcvNxt, int rcvWnd) {
        if (length == 0) {
            return rcvWnd == 0 ? seq == rcvNxt : SeqNum.inWindow(seq, rcvNxt, rcvWnd);
        }
        if (rcvWnd == 0) {
            return false;
        }
        return SeqNum.inWindow(seq, rcvNxt, rcvWnd) || SeqNum.inWindow(seq + length - 1, rcvNxt, rcvWnd);
    }

    /**
     * The acceptability test with both window edges included, as Linux's tcp_sequence: a segment that ends exactly at
     * RCV.NXT (a retransmission of the last bytes received) or starts exactly at the right edge (an ACK carrying the
     * peer's SND.NXT when it filled our window, a zero-window probe) is accepted; its data is then trimmed to nothing
     * but its ACK, window and timestamp are processed.
     *
     * <p>Deviation: RFC 9293 §3.10.7.4 rejects both. With both ends' windows full and an ACK lost, the strict test
     * lets neither side ever read the other's acknowledgment (every pure ACK sits at the edge, every retransmission
     * ends at RCV.NXT): the connection stalls with both sides backing off. Resets keep the strict test (RFC 5961).
     */
    static boolean acceptableEdges(int seq, int length, int rcvNxt, int rcvWnd) {
        return SeqNum.ge(seq + length, rcvNxt) && SeqNum.le(seq, rcvNxt + rcvWnd)
            && (length > 0 || SeqNum.ge(seq, rcvNxt));
    }

    /** A segment outside the window: "If an incoming segment is not acceptable, an acknowledgment should be sent". */
    private void notAcceptable(int c, int state, int rcvNxt, long nowNs) {
        if (seg.has(RST)) {
            // RFC 5961 §3.2: "If the RST bit is set and the sequence number is outside the current receive window,
            // silently drop the segment."
            counters.drop(TcpCounters.DROP_RST_IGNORED);
            return;
        }
        counters.drop(TcpCounters.DROP_OUT_OF_WINDOW);
        final int dataStart = seg.seq + (seg.has(SYN) ? 1 : 0);
        if (seg.payloadLength > 0 && SeqNum.le(dataStart + seg.payloadLength, rcvNxt)) {
            // An old duplicate: report it (RFC 2883 §4, D-SACK).
            counters.rxDuplicateBytes.getAndAddRelease(seg.payloadLength);
            receiver.dsack(c, dataStart, dataStart + seg.payloadLength);
        }
        if (state == TIME_WAIT && seg.has(FIN)) {
            // RFC 9293 TIME-WAIT: a retransmitted FIN is acknowledged and restarts the 2 MSL timeout.
            lifecycle.restartTimeWait(c, nowNs);
        }
        if (seg.has(SYN)) {
            challengeAck(c, nowNs);
        } else {
            duplicateAck(c, nowNs);
        }
    }

    /**
     * The ACK owed for a segment we could not accept. Deviation (as Linux's tcp_invalid_ratelimit): for a segment
     * without data, SYN or FIN, at most one per 500 ms per connection, so two confused ends cannot answer each
     * other's ACKs forever (an ACK war); data segments are always answered, their sender needs to know.
     */
    private void duplicateAck(int c, long nowNs) {
        if (seg.payloadLength == 0 && (seg.flags & (SYN | FIN)) == 0) {
            if (nowNs - tcb.lastOowAckNs(c) < OUT_OF_WINDOW_ACK_INTERVAL_NS) {
                counters.txDuplicateAcksSuppressed.incrementRelease();
                return;
            }
            tcb.lastOowAckNs(c, nowNs);
        }
        output.sendAck(c, nowNs);
    }

    /** RFC 7323 §5.3 R1: a segment whose TSval is older than TS.Recent is an old duplicate (not for resets). */
    private boolean pawsRejects(int c, long nowNs) {
        if (!tcb.hasFlag(c, F_TIMESTAMPS) || !seg.options.hasTimestamp() || seg.has(RST)) {
            return false;
        }
        if (!SeqNum.lt(seg.options.tsVal(), tcb.tsRecent(c))) {
            return false;
        }
        if (nowNs - tcb.tsRecentAgeNs(c) > PAWS_IDLE_NS) {
            // RFC 7323 §5.5: after 24 days idle TS.Recent is invalid; take the segment's instead.
            tcb.tsRecent(c, seg.options.tsVal());
            tcb.tsRecentAgeNs(c, nowNs);
            return false;
        }
        return true;
    }

    /** An acceptable reset, exactly at RCV.NXT (RFC 9293 §3.10.7.4 second check, RFC 5961 §3.2). */
    private void reset(int c, int state, long nowNs) {
        switch (state) {
            case SYN_RECEIVED -> {
                if (tcb.hasFlag(c, F_PASSIVE)) {
                    // "return this connection to the LISTEN state": the listener goes on; the half-open one goes.
                    counters.halfOpenResets.incrementRelease();
                    lifecycle.endHalfOpen(c, TcpError.RESET, nowNs);
                } else {
                    counters.refused.incrementRelease();
                    lifecycle.terminate(c, TcpError.REFUSED, nowNs);
                }
            }
            case ESTABLISHED, FIN_WAIT_1, FIN_WAIT_2, CLOSE_WAIT, CLOSING, LAST_ACK -> {
                // Deviation for CLOSING and LAST-ACK: RFC 9293 §3.10.7.4 closes them without a signal; Linux
                // (tcp_reset) and FreeBSD report ECONNRESET, so an owner still holding the handle learns that its FIN
                // was never acknowledged.
                counters.resetsReceived.incrementRelease();
                lifecycle.terminate(c, TcpError.RESET, nowNs);
            }
            default -> {
                // Deviation: RFC 9293 closes TIME-WAIT on a reset; we keep it, as RFC 1337 recommends against
                // TIME-WAIT assassination (old duplicates could otherwise reach a new incarnation).
                counters.drop(TcpCounters.DROP_RST_IGNORED);
            }
        }
    }

    /** RFC 5961 §7: a challenge ACK, within the layer's rate limit. */
    private void challengeAck(int c, long nowNs) {
        if (challengeAckAllowed(nowNs)) {
            counters.challengeAcks.incrementRelease();
            output.sendAck(c, nowNs);
        } else {
            counters.challengeAcksSuppressed.incrementRelease();
        }
    }

    /**
     * RFC 9293 §3.10.7.4, fifth check (the ACK field), with RFC 5961 §5.2's range test. Returns false when the
     * segment was dropped or the connection ended.
     */
    private boolean processAck(int c, long nowNs) {
        final int ack = seg.ack;
        final int sndUna = tcb.sndUna(c);
        final int sndMax = tcb.sndMax(c);
        if (SeqNum.gt(ack, sndMax)) {
            // "If the ACK acks something not yet sent (SEG.ACK > SND.NXT), then send an ACK, drop the segment".
            counters.drop(TcpCounters.DROP_BAD_ACK);
            challengeAck(c, nowNs);
            return false;
        }
        if (SeqNum.lt(ack, sndUna - tcb.maxSndWnd(c))) {
            // RFC 5961 §5.2: an ACK too far below SND.UNA is not one the peer could send; answer and drop.
            counters.drop(TcpCounters.DROP_BAD_ACK);
            challengeAck(c, nowNs);
            return false;
        }
        if (tcb.hasFlag(c, F_TIMESTAMPS) && seg.options.hasTimestamp()
            && SeqNum.ge(seg.options.tsVal(), tcb.tsRecent(c)) && SeqNum.le(seg.seq, tcb.lastAckSent(c))) {
            // RFC 7323 §4.3 (2): remember the newest TSval of a segment that reaches our last ACK; only once its ACK
            // is found acceptable: a segment acknowledging data never sent (or far below SND.UNA) "MUST be discarded"
            // (RFC 5961 §5.2), so it must not set what later segments are held to by PAWS (as Linux, which takes
            // TS.Recent in tcp_ack after the same checks). Above, the ACK it gets back echoes the old TS.Recent.
            tcb.tsRecent(c, seg.options.tsVal());
            tcb.tsRecentAgeNs(c, nowNs);
        }
        sender.onAck(c, seg, nowNs);
        if (tcb.hasFlag(c, F_FIN_SENT) && SeqNum.gt(tcb.sndUna(c), tcb.finSeq(c))) {
            // Our FIN is acknowledged.
            switch (tcb.state(c)) {
                case FIN_WAIT_1 -> lifecycle.transition(c, FIN_WAIT_2, nowNs);
                case CLOSING -> {
                    lifecycle.transition(c, TIME_WAIT, nowNs);
                    return false;
                }
                case LAST_ACK -> {
                    lifecycle.terminate(c, TcpError.NONE, nowNs);
                    return false;
                }
                default -> {
                }
            }
        }
        return true;
    }

    // ---------------------------------------------------------------------------------------------- ICMP

    /**
     * An ICMP error about a segment we sent (RFC 1122 §4.2.3.9, RFC 5927): validated by the quoted sequence number.
     * Fragmentation needed lowers the MSS (RFC 1191); while connecting, unreachable errors end the attempt (as Linux
     * does); on a synchronized connection they are soft errors (RFC 5461), reported only if it later times out.
     */
    void onIcmpError(int type, int code, int nextHopMtu, int originalDestination, MemorySegment segment, long offset,
                     int length, long nowNs) {
        if (length < 8) {
            return;
        }
        final int c = connections.get(ConnectionTable.key(originalDestination, BigEndian.u16(segment, offset + 2),
            BigEndian.u16(segment, offset)));
        if (c < 0 || tcb.ipv6(c) || !aboutSegmentInFlight(c, BigEndian.i32(segment, offset + 4))) {
            return;
        }
        counters.icmpErrors.incrementRelease();
        if (type == IcmpHeader.DESTINATION_UNREACHABLE && code == IcmpHeader.FRAGMENTATION_NEEDED) {
            if (nextHopMtu > 0) {
                // Only now, with the quoted segment found in flight, does the path learn the MTU (RFC 5927 §7.3).
                ipv4.icmp().learnPathMtu(originalDestination, nextHopMtu, nowNs);
                pathMtuDropped(c, nextHopMtu - 40, nowNs);
            }
            return;
        }
        final int error;
        if (type == IcmpHeader.DESTINATION_UNREACHABLE) {
            error = switch (code) {
                case IcmpHeader.NET_UNREACHABLE -> TcpError.NET_UNREACHABLE;
                case IcmpHeader.PROTOCOL_UNREACHABLE, IcmpHeader.PORT_UNREACHABLE -> TcpError.REFUSED;
                default -> TcpError.HOST_UNREACHABLE;
            };
        } else {
            error = TcpError.HOST_UNREACHABLE;
        }
        unreachable(c, error, nowNs);
    }

    /**
     * An ICMPv6 error about a segment we sent (RFC 4443 §2.4(d)), checked as over IPv4. A packet too big has already
     * lowered the path MTU (RFC 8201): the MSS follows it. Unreachables map as Linux's icmpv6_err_convert: no route
     * to the network unreachable, port unreachable to refused, the rest (and time exceeded, parameter problems) to
     * host unreachable.
     */
    void onIcmpError6(int type, int code, long sourceHigh, long sourceLow, long destinationHigh, long destinationLow,
                      MemorySegment segment, long offset, int length, long nowNs) {
        if (length < 8) {
            return;
        }
        final int c = connections.get(ConnectionTable.key(isn.remoteFold(destinationHigh, destinationLow, sourceHigh,
                sourceLow),
            BigEndian.u16(segment, offset + 2), BigEndian.u16(segment, offset)));
        if (c < 0 || !tcb.ipv6(c) || tcb.remoteAddressHigh(c) != destinationHigh
            || tcb.remoteAddressLow(c) != destinationLow || !aboutSegmentInFlight(c, BigEndian.i32(segment, offset + 4))) {
            return;
        }
        counters.icmpErrors.incrementRelease();
        if (type == Icmpv6Header.PACKET_TOO_BIG) {
            pathMtuDropped(c, path.mssOf(c, nowNs), nowNs);
            return;
        }
        final int error = type != Icmpv6Header.DESTINATION_UNREACHABLE ? TcpError.HOST_UNREACHABLE : switch (code) {
            case Icmpv6Header.NO_ROUTE -> TcpError.NET_UNREACHABLE;
            case Icmpv6Header.PORT_UNREACHABLE -> TcpError.REFUSED;
            default -> TcpError.HOST_UNREACHABLE;
        };
        unreachable(c, error, nowNs);
    }

    /**
     * RFC 5927 §4.1: the quoted sequence number lies in SND.UNA =< SEG.SEQ < SND.NXT, a number sent and not yet
     * acknowledged. Linux takes SND.NXT itself too, where only our pure ACKs start: nothing in flight an error could be
     * about.
     */
    private boolean aboutSegmentInFlight(int c, int seq) {
        final int sndUna = tcb.sndUna(c);
        return SeqNum.inWindow(seq, sndUna, tcb.sndMax(c) - sndUna) && tcb.state(c) != TIME_WAIT;
    }

    /** The path now carries segments of {@code mss} at most (RFC 1191, RFC 8201). */
    private void pathMtuDropped(int c, int mss, long nowNs) {
        final int state = tcb.state(c);
        if (state == SYN_SENT && SeqNum.gt(tcb.sndMax(c), tcb.iss(c) + 1)) {
            lifecycle.resendSynWithoutData(c, nowNs);
            return;
        }
        if (mss >= 64 && mss < tcb.sndMss(c)) {
            tcb.sndMss(c, mss);
            counters.pmtuUpdates.incrementRelease();
            if (state >= ESTABLISHED) {
                sender.onPathMtuDrop(c);
            }
        }
    }

    /**
     * While connecting, unreachable errors end the attempt (as Linux does); on a synchronized connection they are
     * soft errors (RFC 5461), reported only if it later times out.
     */
    private void unreachable(int c, int error, long nowNs) {
        final int state = tcb.state(c);
        if (state == SYN_SENT) {
            if (error == TcpError.REFUSED) {
                counters.refused.incrementRelease();
            }
            lifecycle.terminate(c, error, nowNs);
        } else if (state == SYN_RECEIVED && tcb.hasFlag(c, F_PASSIVE)) {
            lifecycle.endHalfOpen(c, error, nowNs);
        } else {
            tcb.softError(c, error);
        }
    }
}
