package dev.tern.tcp;

import dev.tern.core.io.ByteRing;
import dev.tern.tcp.wire.TcpFlags;

import static dev.tern.tcp.SenderState.LOSS;
import static dev.tern.tcp.SenderState.OPEN;
import static dev.tern.tcp.SenderState.RECOVERY;
import static dev.tern.tcp.SenderState.S_FRTO;
import static dev.tern.tcp.SenderState.S_RESCUE_SENT;
import static dev.tern.tcp.SenderState.S_TLP_IS_RETRANS;
import static dev.tern.tcp.SenderState.S_TLP_OUTSTANDING;
import static dev.tern.tcp.SenderState.S_UNDO_DSACKED;
import static dev.tern.tcp.SenderState.S_UNDO_POSSIBLE;
import static dev.tern.tcp.SenderState.S_UNDO_TS;
import static dev.tern.tcp.TcpControlBlocks.F_ACK_NOW;
import static dev.tern.tcp.TcpControlBlocks.F_CWND_LIMITED;
import static dev.tern.tcp.TcpControlBlocks.F_FAST_OPEN;
import static dev.tern.tcp.TcpControlBlocks.F_FIN_QUEUED;
import static dev.tern.tcp.TcpControlBlocks.F_FIN_SENT;
import static dev.tern.tcp.TcpControlBlocks.F_NO_DELAY;
import static dev.tern.tcp.TcpControlBlocks.F_RETRANSMITTED;
import static dev.tern.tcp.TcpControlBlocks.F_RINGS;
import static dev.tern.tcp.TcpControlBlocks.F_RTT_TIMING;
import static dev.tern.tcp.TcpControlBlocks.F_SACK;
import static dev.tern.tcp.TcpControlBlocks.F_TIMESTAMPS;
import static dev.tern.tcp.TcpControlBlocks.T_PACE;
import static dev.tern.tcp.TcpControlBlocks.T_SENDER;

/**
 * The sending half of TCP: the send sequence space (SND.UNA, SND.NXT, SND.MAX, SND.WND), the record of sent segments
 * ({@link SentSegments}), what goes out next, retransmission, loss detection and recovery, congestion control,
 * pacing, and the sender's timers (retransmission, persist, tail loss probe, RACK's reordering timer).
 *
 * <h2>Where each rule lives</h2>
 * <ul>
 *   <li>ACK arrival, RFC 9293 §3.10.7.4 fifth check: {@link #onAck}; SACK blocks (RFC 2018, RFC 2883 D-SACK, RFC 6675
 *       §5 validity): {@link #readSackBlocks}; the cumulative acknowledgment and RTT samples (RFC 6298, RFC 7323
 *       §4): {@link #acknowledge}; the send window update (§3.10.7.4 SND.WL1/WL2): {@link #updateWindow}.</li>
 *   <li>What goes next, RFC 6675 §4 NextSeg: {@link #transmit} (rule 1: lost segments; rule 2: new data with Nagle and
 *       silly-window avoidance, RFC 9293 §3.7.4 and §3.8.6.2.1), {@link #rescue} (rules 3 and 4).</li>
 *   <li>Losses: the connection's {@link LossDetection} (RACK-TLP by default); tail loss probes, RFC 8985 §7:
 *       {@link #onProbeTimeout}, {@link #processProbeAck}.</li>
 *   <li>Recovery: entering and leaving ({@link #enterRecovery}, {@link #afterAck}), the window while in it (the
 *       connection's {@link LossRecovery}, PRR by default); the retransmission timeout, RFC 6298 §5 and RFC 5681
 *       §3.1: {@link #onRetransmitTimeout}; undoing spurious reductions, RFC 3708 and RFC 3522: {@link #tryUndo}.</li>
 *   <li>The window's size and the pacing rate: the connection's {@link CongestionControl} (CUBIC by default).</li>
 * </ul>
 *
 * <p>States ({@code senderState}): {@link SenderState#OPEN}; {@link SenderState#RECOVERY}, fast recovery after a detected loss until the
 * recovery point (SND.MAX when it began) is acknowledged; {@link SenderState#LOSS}, after a retransmission timeout until the
 * same. One sender timer per connection (the wheel's {@code T_SENDER}), armed for one of {@code TIMER_*}.
 *
 * <p>Owned by the shard thread; not thread-safe. Nothing here allocates.
 */
final class TcpSender {
    static final int TIMER_RTO = 0;
    static final int TIMER_PERSIST = 1;
    static final int TIMER_PROBE = 2;
    static final int TIMER_REORDER = 3;

    /** RFC 8985 §7.2: WCDelAckT, the worst case delayed ACK timer a probe of one segment waits for. */
    static final long WORST_CASE_DELAYED_ACK_NS = 200_000_000L;
    /**
     * Segments of new data a tail loss probe sends. Deviation from RFC 8985 §7.3 (one segment), as RFC 9002 §6.2.4
     * allows QUIC (up to two): when what was lost is the one ACK that covered a whole flight (a receiver that reads a
     * burst at once acknowledges it once), the receiver holds nothing unacknowledged, and a lone in-order segment may
     * wait for its delayed-ACK timer (RFC 5681 §4.2; Linux 40 ms, up to 500 ms allowed); a second full-sized segment
     * gets its ACK at once (RFC 1122 §4.2.3.2: every second full-sized segment). Seen on veth at 0.1 % loss against a
     * Linux receiver: a 2 ms probe, then a 40 ms wait, several times a second.
     */
    static final int PROBE_SEGMENTS = 2;
    /** The least probe timeout: two ticks of the timer wheel (Linux: TCP_TIMEOUT_MIN, two jiffies). */
    static final long MIN_PROBE_TIMEOUT_NS = 2_000_000L;
    /** The minimum RTT is the least sample of this long (Linux: tcp_min_rtt_wlen, 300 s). */
    static final long MIN_RTT_WINDOW_NS = 300_000_000_000L;
    /** RFC 5681 §3.2: duplicate ACKs before limited transmit stops. */
    static final int DUP_THRESHOLD = 3;
    /** Cause of a retransmission, for the counters. */
    private static final int FAST = 0;
    private static final int TIMEOUT = 1;
    private static final int PROBE = 2;
    private static final int RESCUE = 3;
    private static final int TSO_MAX_PAYLOAD = 65535 - 20 - dev.tern.tcp.wire.TcpHeader.MAX_LENGTH;

    /** {@link #onTimer}: the connection goes on (else it returns the error the connection ends with). */
    static final int GOES_ON = -1;

    private final TcpControlBlocks tcb;
    private final TcpOutput output;
    private final IpOutput ip;
    private final TcpCounters counters;
    private final RttEstimator rtt;
    private final ConnectionSettings settings;
    private final TcpTimers timers;
    private final ConnectionBuffers buffers;
    private final OutputQueue outputQueue;
    private final EventQueue events;
    private final PlugPointRegistry plugPoints;
    private final TcpPath path;
    private final UserTimeout userTimeout;
    private final SendCompletions completions;
    private final Ecn ecn;
    private final AckSample sample = new AckSample();
    private final DeliveryRateSampler rate;
    private final Pacer pacer;
    private final SendChrono chrono;
    private final ReorderingDegree reordering;
    private final RecordEnds recordEnds;
    /** Each connection's trace, or null (off). */
    private final TcpTrace[] traces;

    TcpSender(TcpControlBlocks tcb, TcpOutput output, IpOutput ip, TcpCounters counters, RttEstimator rtt,
              ConnectionSettings settings, TcpTimers timers, ConnectionBuffers buffers, OutputQueue outputQueue,
              EventQueue events, PlugPointRegistry plugPoints, TcpPath path, SendCompletions completions, Ecn ecn) {
        this.tcb = tcb;
        this.ecn = ecn;
        this.output = output;
        this.ip = ip;
        this.counters = counters;
        this.rtt = rtt;
        this.settings = settings;
        this.timers = timers;
        this.buffers = buffers;
        this.outputQueue = outputQueue;
        this.events = events;
        this.plugPoints = plugPoints;
        this.path = path;
        this.userTimeout = new UserTimeout(tcb, counters);
        this.completions = completions;
        this.traces = new TcpTrace[tcb.capacity()];
        this.rate = new DeliveryRateSampler(tcb, counters);
        this.pacer = new Pacer(tcb, settings, plugPoints);
        this.chrono = new SendChrono(tcb.capacity());
        this.reordering = new ReorderingDegree(tcb);
        this.recordEnds = new RecordEnds(tcb.capacity());
    }

    /** The pacer (the owner's SO_MAX_PACING_RATE). */
    Pacer pacer() {
        return pacer;
    }

    /** What has held each sender (TCP_INFO's busy and limited times). */
    SendChrono chrono() {
        return chrono;
    }

    /** Where the owner ended records (MSG_EOR). */
    RecordEnds recordEnds() {
        return recordEnds;
    }

    /** The send ring's position of sequence number {@code seq} (SND.MAX: what has been sent). */
    long ringPosition(int c, ByteRing ring, int seq) {
        return ring.consumerPosition() + dataSent(c, seq);
    }

    /** Starts (or with null stops) tracing the connection: a record on every ACK and timeout. Returns 0. */
    int trace(int c, TcpTrace trace) {
        traces[c] = trace;
        return 0;
    }

    // --------------------------------------------------------------------------------------------- lifecycle

    /** Sender state of a new connection (before the handshake). */
    void init(int c, int iss) {
        tcb.sndUna(c, iss);
        tcb.sndNxt(c, iss);
        tcb.sndMax(c, iss);
        tcb.recover(c, iss);
        tcb.sndSml(c, iss);
        tcb.fack(c, iss);
        tcb.senderState(c, OPEN);
        tcb.senderFlags(c, 0);
        tcb.reoWndMult(c, 1);
        pacer.clear(c);
        chrono.clear(c);
        reordering.init(c);
        recordEnds.clear(c);
    }

    /** The handshake completed: the initial window (the congestion control), the minimum RTT from the handshake. */
    void established(int c, long nowNs) {
        tcb.senderState(c, OPEN);
        tcb.fack(c, tcb.sndUna(c));
        if (tcb.srttUs(c) > 0) {
            tcb.minRttUs(c, tcb.srttUs(c));
            tcb.minRttAtNs(c, nowNs);
        }
        plugPoints.congestionControl(c).init(tcb, c, tcb.sndMss(c), settings.of(c).initialCwndSegments(), nowNs);
        pacer.updateRate(c, 0);
    }

    // ------------------------------------------------------------------------------------------ ACK arrival

    /**
     * The ACK field of an acceptable segment (RFC 9293 §3.10.7.4, fifth check), after the range test: SACK blocks into
     * the scoreboard, the cumulative acknowledgment, the window, then loss detection, recovery and the congestion
     * window, and the timers. {@code seg} is the segment being processed.
     */
    void onAck(int c, TcpSegment seg, long nowNs) {
        final SentSegments sent = buffers.sent(c);
        final int ack = seg.ack;
        final int sndUna = tcb.sndUna(c);
        final int outstanding = tcb.sndMax(c) - sndUna;
        if (outstanding == 0 && ack == sndUna && seg.options.sackCount() == 0) {
            // A receiver's steady state: the peer's data with nothing of ours in flight. Nothing can be acknowledged,
            // SACKed, lost or undone; only the window can move, and with it the persist timer.
            final int windowBefore = tcb.sndWnd(c);
            updateWindow(c, seg, seg.window << tcb.sndScale(c), nowNs);
            if (tcb.sndWnd(c) != windowBefore) {
                updateTimer(c, nowNs, false, false);
            }
            return;
        }
        final AckSample s = sample.reset(nowNs, tcb.sndMss(c));
        s.senderState = tcb.senderState(c);
        s.priorInFlight = sent == null ? outstanding : sent.pipe(outstanding);
        final int cwnd = tcb.cwnd(c);
        // RFC 7661: a window grows only while the sender uses it (in slow start, at least half of it).
        s.windowLimited = tcb.hasFlag(c, F_CWND_LIMITED) || (cwnd < tcb.ssthresh(c) && 2L * s.priorInFlight >= cwnd);
        final int sackedBefore = sent == null ? 0 : sent.sackedBytes();
        final int window = seg.window << tcb.sndScale(c);
        if (sent != null && tcb.hasFlag(c, F_SACK) && seg.options.sackCount() > 0) {
            readSackBlocks(c, sent, seg, s);
            if (tcb.senderState(c) != LOSS || tcb.hasSenderFlag(c, S_UNDO_POSSIBLE)) {
                // As Linux: after a timeout, SACKs that undo nothing measure no reordering.
                reordering.check(c, s, tcb.sndMss(c));
            }
            s.reordered = false;
        }
        final int dupAcksBefore = tcb.dupAcks(c);
        final int segmentsBefore = sent == null ? 0 : sent.count();
        if (SeqNum.gt(ack, sndUna)) {
            acknowledge(c, sent, ack, seg, s);
            if (tcb.hasFlag(c, F_SACK)) {
                reordering.check(c, s, tcb.sndMss(c));
            }
        } else if (ack == sndUna && isDuplicateAck(c, window, seg)) {
            s.duplicate = true;
            tcb.dupAcks(c, tcb.dupAcks(c) + 1);
            if (tcb.dupAcks(c) < DUP_THRESHOLD && tcb.senderState(c) == OPEN) {
                outputQueue.request(c); // RFC 3042 limited transmit
            }
        }
        updateWindow(c, seg, window, nowNs);
        if (sent == null) {
            return;
        }
        s.deliveredBytes = s.ackedBytes + (sent.sackedBytes() - sackedBefore);
        if (s.deliveredBytes > 0) {
            tcb.delivered(c, tcb.delivered(c) + s.deliveredBytes);
        }
        s.ece = (seg.flags & TcpFlags.ECE) != 0 && ecn.negotiated(c);
        final int deliveredSegments = countDelivered(c, s, dupAcksBefore, segmentsBefore);
        if (!tcb.hasFlag(c, F_SACK) && !s.duplicate && dupAcksBefore > 0 && deliveredSegments > 0) {
            // Without SACK the duplicate ACKs stood for segments that arrived; the ACK that ends them delivers the
            // rest only, and the window grows by that, as Linux's grows by its newly delivered count.
            s.deliveredBytes = Math.min(s.deliveredBytes, deliveredSegments * s.mss);
        }
        processProbeAck(c, seg, s);
        final boolean echo = ecn.onEcho(c, seg);
        if (echo) {
            // As Linux: the ACK that brings the ECE does not grow the window it reduces.
            s.windowLimited = false;
        }
        afterAck(c, sent, seg, s);
        if (echo) {
            answerEcho(c, s);
        }
        pacer.updateRate(c, s.inFlight);
        final TcpTrace trace = traces[c];
        if (trace != null) {
            trace.record(tcb, c, sent, rtt.rtoNs(tcb, c), nowNs);
        }
        if (s.deliveredBytes > 0 || s.newlyLostBytes > 0 || s.duplicate) {
            outputQueue.request(c);
        }
        updateTimer(c, nowNs, s.ackedBytes > 0, false);
    }

    /**
     * TCP_INFO's delivered segments, as Linux counts tp->delivered: with SACK each segment the first time it is
     * SACKed or cumulatively acknowledged; without SACK each duplicate ACK stands for one segment that arrived, up to
     * all but one of those in flight, and a cumulative ACK delivers the segments it removes less those the duplicates
     * already counted, at least one (Linux's tcp_add_reno_sack and tcp_remove_reno_sacks). Counted also under
     * delivered CE when the ACK echoes congestion (RFC 3168 §6.1.3). Returns the segments counted.
     */
    private int countDelivered(int c, AckSample s, int dupAcksBefore, int segmentsBefore) {
        int delivered = s.deliveredSegments;
        if (!tcb.hasFlag(c, F_SACK)) {
            if (s.duplicate) {
                delivered = tcb.dupAcks(c) < segmentsBefore ? 1 : 0;
            } else if (delivered > 0) {
                delivered = Math.max(1, delivered - Math.min(dupAcksBefore, segmentsBefore - 1));
            }
        }
        if (delivered > 0) {
            tcb.deliveredSegments(c, tcb.deliveredSegments(c) + delivered);
            if (s.ece) {
                tcb.deliveredCe(c, tcb.deliveredCe(c) + delivered);
            }
        }
        return delivered;
    }

    /**
     * RFC 5681 §2: a duplicate ACK acknowledges nothing new while data is outstanding, carries no data, SYN or FIN,
     * and does not change the window. While the window is zero (persist), ACKs of probes are not duplicates.
     */
    private boolean isDuplicateAck(int c, int window, TcpSegment seg) {
        return tcb.sndMax(c) != tcb.sndUna(c) && seg.payloadLength == 0
            && (seg.flags & (TcpFlags.SYN | TcpFlags.FIN)) == 0 && window == tcb.sndWnd(c) && window != 0
            && !persisting(c);
    }

    private boolean persisting(int c) {
        return timers.armed(c, T_SENDER) && tcb.senderTimerKind(c) == TIMER_PERSIST;
    }

    /**
     * The SACK blocks of an ACK (RFC 2018 §3): a first block below the cumulative acknowledgment, or inside the second
     * block, is a D-SACK (RFC 2883 §4); the others mark whole recorded segments SACKed. A block outside
     * [SND.UNA, SND.MAX], empty or inverted, is counted and ignored (RFC 6675 §5), as is a D-SACK for data never sent:
     * one reaching beyond SND.MAX, or below the first data byte (ISS + 1), which no window of old data goes below.
     */
    private void readSackBlocks(int c, SentSegments sent, TcpSegment seg, AckSample s) {
        final int count = seg.options.sackCount();
        final int sndUna = tcb.sndUna(c);
        final int sndMax = tcb.sndMax(c);
        final int floor = SeqNum.max(sndUna, seg.ack);
        final int oldest = SeqNum.max(sndUna - tcb.maxSndWnd(c) - 1, tcb.iss(c) + 1);
        for (int b = 0; b < count; b++) {
            final int left = seg.options.sackLeft(b);
            final int right = seg.options.sackRight(b);
            final boolean valid = SeqNum.lt(left, right) && SeqNum.le(right, sndMax) && SeqNum.ge(left, oldest);
            if (b == 0 && isDsack(seg, count)) {
                if (valid) {
                    s.dsack = true;
                    counters.rxDsack.incrementRelease();
                    dsackArrived(c, sent, left, right);
                } else {
                    counters.rxBadSackBlocks.incrementRelease();
                }
                continue;
            }
            if (!valid) {
                counters.rxBadSackBlocks.incrementRelease();
                continue;
            }
            if (SeqNum.le(right, floor)) {
                continue; // already acknowledged: an ACK that arrived late, or after a newer one
            }
            markSacked(c, sent, SeqNum.max(left, floor), right, s);
        }
    }

    /** RFC 2883 §4 (as Linux's tcp_check_dsack): is the first block a D-SACK? */
    private static boolean isDsack(TcpSegment seg, int count) {
        final int left = seg.options.sackLeft(0);
        if (SeqNum.lt(left, seg.ack)) {
            return true;
        }
        return count > 1 && SeqNum.ge(left, seg.options.sackLeft(1))
            && SeqNum.le(seg.options.sackRight(0), seg.options.sackRight(1));
    }

    /** Marks every recorded segment wholly inside {@code [left, right)} SACKed; each newly SACKed one is delivered. */
    private void markSacked(int c, SentSegments sent, int left, int right, AckSample s) {
        int i = sent.indexOf(left);
        if (i < 0) {
            return;
        }
        if (sent.start(i) != left) {
            i++; // partly covered: a receiver reports whole segments; a segment counts only when all of it arrived
        }
        final LossDetection detection = plugPoints.lossDetection(c);
        final int count = sent.count();
        for (; i < count && SeqNum.le(sent.end(i), right); i++) {
            if (sent.markSacked(i) > 0) {
                s.deliveredSegments++;
                reordering.delivered(c, sent, i, s);
                rate.onDelivered(c, sent, i, s);
                detection.onDelivered(tcb, c, sent, i, s);
                noteOriginal(c, sent, i, s);
            }
        }
    }

    /**
     * F-RTO (RFC 5682 §3, the SACK-enhanced variant, as Linux's FLAG_ORIG_SACK_ACKED): after a timeout, the delivery
     * of a segment sent before it and never sent again shows the original transmissions were getting through, so
     * the timeout was spurious.
     */
    private void noteOriginal(int c, SentSegments sent, int i, AckSample s) {
        if (tcb.hasSenderFlag(c, S_FRTO) && !sent.has(i, SentSegments.RETRANSMITTED)
            && sent.sentNs(i) - tcb.lossAtNs(c) < 0) {
            s.originalDelivered = true;
        }
    }

    /**
     * A D-SACK: the loss detection hears of it (reordering, RFC 8985 §6.2), and a duplicate of one of the episode's
     * retransmissions counts towards undoing it (RFC 3708 §3).
     */
    private void dsackArrived(int c, SentSegments sent, int left, int right) {
        plugPoints.lossDetection(c).onDsack(tcb, c);
        if (!tcb.hasSenderFlag(c, S_UNDO_POSSIBLE) || tcb.undoRetrans(c) <= 0
            || SeqNum.lt(left, tcb.undoMarker(c))) {
            return;
        }
        final int i = sent.indexOf(left);
        if (i < 0 || sent.has(i, SentSegments.RETRANSMITTED)) {
            tcb.undoRetrans(c, tcb.undoRetrans(c) - 1);
            tcb.setSenderFlag(c, S_UNDO_DSACKED);
        }
    }

    /**
     * New data acknowledged: the send ring frees it, the record drops its segments (the loss detection hears of the
     * ones not SACKed before), the RTT is sampled (RFC 6298 §3: never from a retransmitted segment; RFC 7323 §4.1 from
     * the echoed timestamp when every acknowledged segment was retransmitted).
     */
    private void acknowledge(int c, SentSegments sent, int ack, TcpSegment seg, AckSample s) {
        final int sndUna = tcb.sndUna(c);
        final long nowNs = s.nowNs;
        int dataAcked = ack - sndUna;
        if (sndUna == tcb.iss(c)) {
            dataAcked--;
        }
        if (tcb.hasFlag(c, F_FIN_SENT) && SeqNum.gt(ack, tcb.finSeq(c))) {
            dataAcked--;
        }
        if (dataAcked > 0 && tcb.hasFlag(c, F_RINGS)) {
            buffers.sendRing(c).consume(dataAcked);
            tcb.bytesAcked(c, tcb.bytesAcked(c) + dataAcked);
            events.signal(c, TcpControlBlocks.EV_WRITABLE);
            completions.acknowledged(c);
        }
        s.ackedBytes = ack - sndUna;
        tcb.sndUna(c, ack);
        if (SeqNum.lt(tcb.sndNxt(c), ack)) {
            tcb.sndNxt(c, ack);
        }
        tcb.retries(c, 0);
        userTimeout.progressed(c);
        if (tcb.softError(c) != TcpError.NONE) {
            // New data acknowledged: the path works again, so an earlier soft error (ICMP, or R1 reached) is stale,
            // as Linux's tcp_ack clears sk_err_soft ("something worked").
            tcb.softError(c, TcpError.NONE);
        }
        tcb.dupAcks(c, 0);
        tcb.probeCount(c, 0);
        long rttNs = -1;
        if (tcb.hasFlag(c, F_RTT_TIMING)) {
            // The handshake's timed SYN.
            if (SeqNum.ge(ack, tcb.rttSeq(c))) {
                rttNs = nowNs - tcb.rttStartNs(c);
                tcb.clearFlag(c, F_RTT_TIMING);
            }
        }
        if (sent != null) {
            final LossDetection detection = plugPoints.lossDetection(c);
            long cleanSentNs = 0;
            boolean clean = false;
            while (!sent.isEmpty() && SeqNum.le(sent.end(0), ack)) {
                final int flags = sent.flags(0);
                if ((flags & SentSegments.SACKED) == 0) {
                    s.deliveredSegments++;
                    reordering.delivered(c, sent, 0, s);
                    rate.onDelivered(c, sent, 0, s);
                    detection.onDelivered(tcb, c, sent, 0, s);
                    noteOriginal(c, sent, 0, s);
                    if ((flags & SentSegments.RETRANSMITTED) == 0) {
                        cleanSentNs = sent.sentNs(0);
                        clean = true;
                    }
                }
                if ((flags & SentSegments.RETRANSMITTED) != 0) {
                    s.retransmittedAcked = true;
                }
                sent.removeHead();
            }
            if (!sent.isEmpty() && SeqNum.lt(sent.start(0), ack)) {
                sent.trimHead(ack);
            }
            if (clean && !s.retransmittedAcked) {
                // Karn (RFC 6298 §3): an ACK that also covers retransmitted data is ambiguous. When a hole closes
                // after backed-off retransmissions, the clean segments behind it are acknowledged only then, and
                // their "RTT" would be the whole wait (a 29 s sample, RTO at its maximum, seen at 10 % loss).
                // Linux skips the sample alike (FLAG_RETRANS_DATA_ACKED); the echoed timestamp below still dates it.
                rttNs = nowNs - cleanSentNs;
            }
        }
        if (rttNs < 0 && tcb.hasFlag(c, F_TIMESTAMPS) && seg.options.hasTimestamp() && seg.options.tsEcr() != 0
            && !(tcb.hasFlag(c, F_RETRANSMITTED) && SeqNum.lt(seg.options.tsEcr(), tcb.retransmitTsVal(c)))) {
            // RFC 7323 §4.1 (RTTM): the echoed TSval dates the segment this ACK answers, retransmitted or not.
            // Deviation: an echo older than our last retransmission is not used. It dates the original transmission
            // of data whose ACK was lost (RFC 7323 §4.3 case C), so it includes the RTO wait; taking it inflates
            // the RTO, which inflates the next such sample, up to RTO max (seen with a 1 KiB window and 10 % loss).
            final int elapsedMs = output.tsVal(c, nowNs) - seg.options.tsEcr();
            if (elapsedMs >= 0) {
                rttNs = elapsedMs * 1_000_000L + 500_000L;
            }
        }
        if (rttNs >= 0) {
            rtt.sample(tcb, c, rttNs);
            s.rttUs = (int) Math.min(Integer.MAX_VALUE, Math.max(1, rttNs / 1000));
            updateMinRtt(c, s.rttUs, nowNs);
        }
        path.confirmNeighbour(c, nowNs);
    }

    /** RACK.min_RTT (RFC 8985 §6.2 step 1): the least RTT sample of the last {@link #MIN_RTT_WINDOW_NS}. */
    private void updateMinRtt(int c, int rttUs, long nowNs) {
        final int min = tcb.minRttUs(c);
        if (min == 0 || rttUs <= min || nowNs - tcb.minRttAtNs(c) > MIN_RTT_WINDOW_NS) {
            tcb.minRttUs(c, rttUs);
            tcb.minRttAtNs(c, nowNs);
        }
    }

    /**
     * RFC 9293 §3.10.7.4: the window is taken from a segment newer than the last one that set it (SND.WL1, SND.WL2).
     * When a zero window opens while probing, whatever was sent beyond it (the probe) was most likely dropped: it is
     * sent again at once rather than after an RTO.
     */
    private void updateWindow(int c, TcpSegment seg, int window, long nowNs) {
        final int ack = seg.ack;
        if (!(SeqNum.lt(tcb.sndWl1(c), seg.seq) || (tcb.sndWl1(c) == seg.seq && SeqNum.le(tcb.sndWl2(c), ack)))) {
            return;
        }
        final int before = tcb.sndWnd(c);
        tcb.sndWnd(c, window);
        tcb.sndWl1(c, seg.seq);
        tcb.sndWl2(c, ack);
        if (window > tcb.maxSndWnd(c)) {
            tcb.maxSndWnd(c, window);
        }
        if (window > before) {
            outputQueue.request(c);
            if (before == 0 && persisting(c)) {
                final SentSegments sent = buffers.sent(c);
                if (sent != null) {
                    for (int i = 0; i < sent.count(); i++) {
                        sent.markLost(i);
                    }
                }
                timers.disarm(c, T_SENDER);
            }
        }
    }

    // -------------------------------------------------------------------------------- loss, recovery, undo

    /** After the scoreboard took an ACK: undo, the end of recovery, loss detection, recovery and the window. */
    private void afterAck(int c, SentSegments sent, TcpSegment seg, AckSample s) {
        if (tcb.hasSenderFlag(c, S_UNDO_POSSIBLE)) {
            tryUndo(c, sent, seg, s);
        }
        final int sndUna = tcb.sndUna(c);
        if (tcb.senderState(c) != OPEN && SeqNum.ge(sndUna, tcb.recover(c))) {
            exitRecovery(c, s);
        }
        final LossDetection detection = plugPoints.lossDetection(c);
        final long timeoutNs = detection.detectLosses(tcb, c, sent, s);
        countMarks(detection, s);
        rate.generate(c, s);
        armReorderTimer(c, timeoutNs, s.nowNs);
        final int state = tcb.senderState(c);
        if (state == OPEN && s.newlyLostBytes > 0) {
            s.inFlight = sent.pipe(tcb.sndMax(c) - sndUna);
            enterRecovery(c, sent, s);
        } else if (state == RECOVERY) {
            s.inFlight = sent.pipe(tcb.sndMax(c) - sndUna);
            if (plugPoints.recovery(c).onAck(tcb, c, sent, s)) {
                retransmitFirstLost(c, sent, s.nowNs);
            }
            s.inFlight = sent.pipe(tcb.sndMax(c) - tcb.sndUna(c));
        } else {
            s.inFlight = sent.pipe(tcb.sndMax(c) - sndUna);
            if (s.ackedBytes > 0 && !plugPoints.congestionControl(c).seesEveryAck()) {
                // As Linux (tcp_may_raise_cwnd): the window grows, by everything delivered, only on forward progress of
                // the cumulative acknowledgment, not on duplicate ACKs that only SACK.
                plugPoints.congestionControl(c).onAck(tcb, c, s);
            }
        }
        final CongestionControl cc = plugPoints.congestionControl(c);
        if (cc.seesEveryAck() && (s.deliveredBytes > 0 || s.newlyLostBytes > 0)) {
            // A model-based control (BBR, as Linux's cong_control hook) sees every ACK, in recovery too, after the
            // recovery set its window, and has the last word on it.
            cc.onAck(tcb, c, s);
        }
    }

    /**
     * RFC 3168 §6.1.2: an ECE is answered as a loss would be, with nothing to send again: ssthresh from the congestion
     * control, cwnd down to it at once (Linux instead lowers it over a round with PRR, its CWR state). In recovery or
     * after a timeout (one this same ACK may have started) the window is already reduced; only CWR is owed.
     */
    private void answerEcho(int c, AckSample s) {
        if (tcb.senderState(c) == OPEN) {
            counters.ecnReductions.incrementRelease();
            ecn.countReduction(c);
            plugPoints.congestionControl(c).onEcn(tcb, c, s.priorInFlight, s.mss, s.nowNs);
            tcb.cwnd(c, Math.max(Math.min(tcb.cwnd(c), tcb.ssthresh(c)), s.mss));
        }
        ecn.windowReduced(c);
    }

    private void countMarks(LossDetection detection, AckSample s) {
        if (s.newlyLostSegments > 0) {
            (detection instanceof RackLossDetection ? counters.rackMarkedLost : counters.dupThreshMarkedLost)
                .getAndAddRelease(s.newlyLostSegments);
        }
    }

    private void armReorderTimer(int c, long timeoutNs, long nowNs) {
        if (timeoutNs > 0) {
            tcb.senderTimerKind(c, TIMER_REORDER);
            timers.arm(c, TimerKind.SENDER, nowNs + timeoutNs);
        } else if (tcb.senderTimerKind(c) == TIMER_REORDER) {
            tcb.senderTimerKind(c, TIMER_RTO);
            timers.disarm(c, T_SENDER);
        }
    }

    /**
     * RFC 6675 §5 step (4) (and RFC 5681 §3.2 without SACK): a loss while open starts fast recovery. The recovery
     * point is SND.MAX; the congestion control sets ssthresh; the recovery sets the window for this ACK.
     */
    private void enterRecovery(int c, SentSegments sent, AckSample s) {
        counters.recoveries.incrementRelease();
        if (tcb.hasFlag(c, F_SACK)) {
            counters.sackRecoveries.incrementRelease();
        }
        startEpisode(c);
        final int sndUna = tcb.sndUna(c);
        tcb.recover(c, tcb.sndMax(c));
        tcb.senderState(c, RECOVERY);
        tcb.highRxt(c, sndUna);
        tcb.clearSenderFlag(c, S_RESCUE_SENT);
        plugPoints.congestionControl(c).onCongestion(tcb, c, tcb.sndMax(c) - sndUna, s.mss, s.nowNs);
        ecn.windowReduced(c);
        plugPoints.recovery(c).enter(tcb, c, sent, s);
        retransmitFirstLost(c, sent, s.nowNs);
    }

    /** The first segment marked lost and not yet sent again goes now, whatever the window (a fast retransmit). */
    private void retransmitFirstLost(int c, SentSegments sent, long nowNs) {
        final int first = sent.firstLostNotRetransmitted();
        if (first >= 0) {
            retransmit(c, sent, first, FAST, nowNs);
        }
    }

    private void exitRecovery(int c, AckSample s) {
        final int state = tcb.senderState(c);
        if (state == RECOVERY) {
            plugPoints.recovery(c).exit(tcb, c, s);
            plugPoints.congestionControl(c).onRecoveryExit(tcb, c, s.mss, s.nowNs);
        }
        plugPoints.lossDetection(c).onRecoveryExit(tcb, c);
        tcb.senderState(c, OPEN);
        tcb.clearSenderFlag(c, S_FRTO);
        tcb.undoHorizon(c, tcb.sndMax(c));
    }

    /** A reduction that may be undone begins: remember the window, threshold and where the episode started. */
    private void startEpisode(int c) {
        tcb.priorCwnd(c, tcb.cwnd(c));
        tcb.priorSsthresh(c, tcb.ssthresh(c));
        tcb.undoMarker(c, tcb.sndUna(c));
        tcb.undoRetrans(c, 0);
        tcb.clearSenderFlag(c, S_UNDO_TS | S_UNDO_DSACKED);
        tcb.setSenderFlag(c, S_UNDO_POSSIBLE);
    }

    /**
     * Undoes a reduction shown spurious: every retransmission of the episode came back as a D-SACK (RFC 3708 §3), or
     * an acknowledgment of a retransmitted segment echoes a timestamp older than our first retransmission, so the
     * original arrived (the Eifel detection, RFC 3522 §3.2). The window and threshold come back, the lost marks go,
     * and the sender is open again. After recovery ended, D-SACKs may still undo it until data sent after its end is
     * acknowledged.
     */
    private void tryUndo(int c, SentSegments sent, TcpSegment seg, AckSample s) {
        final int state = tcb.senderState(c);
        final boolean byDsack = tcb.hasSenderFlag(c, S_UNDO_DSACKED) && tcb.undoRetrans(c) <= 0;
        final boolean byFrto = !byDsack && state == LOSS && s.originalDelivered;
        final boolean byTimestamp = !byDsack && !byFrto && state != OPEN && s.retransmittedAcked
            && tcb.hasSenderFlag(c, S_UNDO_TS) && tcb.hasFlag(c, F_TIMESTAMPS) && seg.options.hasTimestamp()
            && seg.options.tsEcr() != 0 && SeqNum.lt(seg.options.tsEcr(), tcb.undoTsVal(c));
        if (!byDsack && !byTimestamp && !byFrto) {
            if (state == OPEN && SeqNum.gt(tcb.sndUna(c), tcb.undoHorizon(c))) {
                // Data sent after the episode was acknowledged: its D-SACKs have had their flight to come back.
                tcb.clearSenderFlag(c, S_UNDO_POSSIBLE);
            }
            return;
        }
        (byDsack ? counters.undoDsack : byFrto ? counters.undoFrto : counters.undoTimestamp).incrementRelease();
        plugPoints.congestionControl(c).onUndo(tcb, c, s.nowNs);
        sent.unmarkLost();
        if (state != OPEN) {
            plugPoints.lossDetection(c).onRecoveryExit(tcb, c);
            tcb.senderState(c, OPEN);
        }
        tcb.clearSenderFlag(c, S_UNDO_POSSIBLE | S_FRTO);
    }

    /**
     * RFC 8985 §7.4 (as Linux's tcp_process_tlp_ack): once the ACK reaches TLP.end_seq, a probe of new data needs
     * nothing more; a D-SACK or a pure duplicate ACK shows the probed segment had arrived (no loss); an ACK beyond it
     * shows the probe repaired a loss, which gets a congestion response.
     */
    private void processProbeAck(int c, TcpSegment seg, AckSample s) {
        if (!tcb.hasSenderFlag(c, S_TLP_OUTSTANDING) || SeqNum.lt(seg.ack, tcb.tlpEndSeq(c))) {
            return;
        }
        if (!tcb.hasSenderFlag(c, S_TLP_IS_RETRANS) || s.dsack) {
            tcb.clearSenderFlag(c, S_TLP_OUTSTANDING);
        } else if (SeqNum.gt(seg.ack, tcb.tlpEndSeq(c))) {
            tcb.clearSenderFlag(c, S_TLP_OUTSTANDING);
            counters.probeRepairs.incrementRelease();
            if (tcb.senderState(c) == OPEN) {
                startEpisode(c);
                plugPoints.congestionControl(c).onCongestion(tcb, c, s.priorInFlight, s.mss, s.nowNs);
                tcb.cwnd(c, Math.min(tcb.cwnd(c), tcb.ssthresh(c)));
                ecn.windowReduced(c);
            }
        } else if (s.duplicate && s.deliveredBytes == 0) {
            tcb.clearSenderFlag(c, S_TLP_OUTSTANDING);
        }
    }

    // ----------------------------------------------------------------------------------------------- output

    /**
     * Sends what the windows allow, then an ACK if one is owed and nothing carried it; arms the sender timer. With
     * {@code force}, one segment goes even if it is small (the persist timer's override, RFC 9293 §3.8.6.2.1 (4)).
     */
    void output(int c, long nowNs, boolean force) {
        transmit(c, nowNs, force, false);
    }

    /**
     * RFC 6675 §5 step (C): while cwnd - pipe allows, NextSeg: (1) a segment marked lost and not yet sent again,
     * (2) new data, (3)/(4) in recovery, a segment not known lost ({@link #rescue}). With {@code probe}, up to
     * {@link #PROBE_SEGMENTS} segments of new data go whatever the congestion window says (a tail loss probe, RFC 8985 §7.3). Returns true if new
     * data went.
     */
    private boolean transmit(int c, long nowNs, boolean force, boolean probe) {
        final int state = tcb.state(c);
        if (state == TcpState.TIME_WAIT) {
            if (tcb.hasFlag(c, F_ACK_NOW)) {
                output.sendAck(c, nowNs);
            }
            return false;
        }
        if (state < TcpState.ESTABLISHED && !(state == TcpState.SYN_RECEIVED && tcb.hasFlag(c, F_FAST_OPEN))) {
            // Only a connection Fast Open opened sends data before the handshake's last ACK (RFC 7413 §4.2.2).
            return false;
        }
        if (!tcb.hasFlag(c, F_RINGS)) {
            // Rings come on demand (ConnectionBuffers.ensureRings): without them there is no data to send, but an ACK may be
            // owed (the handshake's last ACK, a window or duplicate ACK).
            if (tcb.hasFlag(c, F_ACK_NOW)) {
                output.sendAck(c, nowNs);
            }
            return false;
        }
        final ByteRing ring = buffers.sendRing(c);
        final SentSegments sent = buffers.sent(c);
        boolean sentAnything = false;
        boolean sentNew = false;
        boolean allowSmall = force;
        int probeSegments = 0;
        int burst = 0;
        // With TSO the link cuts large frames; a refusal (loopback, next hop not resolved) falls back for this call.
        boolean tso = ip.segmentationOffload(c);
        boolean rwndLimited = false;
        tcb.clearFlag(c, F_CWND_LIMITED);
        if (settings.of(c).slowStartAfterIdle() && tcb.sndUna(c) == tcb.sndMax(c) && queuedData(c, ring) > 0
            && nowNs - tcb.lastSendNs(c) > rtt.rtoNs(tcb, c)) {
            // RFC 5681 §4.1: after an idle period longer than the RTO, restart from the initial window (a SHOULD;
            // a configuration may keep the window, as Linux's tcp_slow_start_after_idle=0).
            plugPoints.congestionControl(c).onIdleRestart(tcb, c, tcb.sndMss(c), settings.of(c).initialCwndSegments(),
                nowNs);
            tcb.lastSendNs(c, nowNs);
        }
        while (true) {
            if (paced(c, nowNs)) {
                break;
            }
            final int sndUna = tcb.sndUna(c);
            final int sndMax = tcb.sndMax(c);
            final int outstanding = sndMax - sndUna;
            final int cwnd = congestionWindow(c);
            final int room = probe ? Integer.MAX_VALUE : cwnd - sent.pipe(outstanding);
            if (room > 0 && !probe) {
                // RFC 6675 §5 (C): a segment goes again only when cwnd - pipe holds it.
                final int lost = sent.firstLostNotRetransmitted();
                if (lost >= 0 && room >= Math.min(sent.length(lost), tcb.sndMss(c))) {
                    if (!retransmit(c, sent, lost, tcb.senderState(c) == LOSS ? TIMEOUT : FAST, nowNs)) {
                        break;
                    }
                    sentAnything = true;
                    continue;
                }
            }
            final int optionSpace = output.prepareOptions(c);
            final int mss = Math.max(1, tcb.sndMss(c) - optionSpace);
            final int queued = queuedData(c, ring);
            final int unsent = queued - dataSent(c, sndMax);
            final boolean finWanted = finWanted(c);
            if (unsent > 0) {
                // A segment never reaches past the end of a record (MSG_EOR): what it may carry, at most unsent.
                final int record = Math.min(unsent, recordEnds.bytesToEnd(c, ringPosition(c, ring, sndMax)));
                int length = Math.min(record, Math.min(room, tcb.sndWnd(c) - outstanding));
                if (probe) {
                    length = Math.min(length, mss);
                }
                final int wanted = Math.min(record, mss);
                // As Linux's tcp_write_xmit: the peer's window, not cwnd, keeps the next segment back.
                rwndLimited |= room >= wanted && tcb.sndWnd(c) - outstanding < wanted;
                if (room < wanted && cwnd <= tcb.sndWnd(c)) {
                    // The congestion window, not the application or the peer, keeps the next segment back (a sliver
                    // of window smaller than a segment counts): RFC 7661 lets the window grow.
                    tcb.setFlag(c, F_CWND_LIMITED);
                }
                if (length <= 0) {
                    if (room >= tcb.sndMss(c) && rescue(c, sent, nowNs)) {
                        sentAnything = true;
                        continue;
                    }
                    break;
                }
                final int free = sent.capacity() - sent.count();
                if (free == 0) {
                    counters.txRecordFull.incrementRelease();
                    break;
                }
                int segmentSize = 0;
                if (length > mss) {
                    if (tso && output.sackBlocksPrepared() == 0) {
                        // One TSO frame of whole segments; the tail of the queue may ride as a short last one.
                        // A paced sender's frame is sized by its rate (Linux's tcp_tso_autosize).
                        final int max = pacer.frameBytes(c, mss, Math.min(TSO_MAX_PAYLOAD - optionSpace, free * mss));
                        if (length > max || length < record) {
                            length = Math.min(length, max);
                            length -= length % mss;
                        }
                        segmentSize = length > mss ? mss : 0;
                    } else {
                        length = mss;
                    }
                }
                // A short segment that ends a record with more data behind it cannot grow: Nagle and the cork would
                // hold it for nothing (Linux sends every segment but the queue's last with TCP_NAGLE_PUSH).
                final boolean endsRecord = length == record && record < unsent;
                if (!allowSmall && !endsRecord && !sendAllowed(c, length, unsent, mss, outstanding, finWanted)) {
                    break;
                }
                final boolean fin = finWanted && length == unsent;
                // The end of a record is pushed as the end of what was written is: the owner finished a message.
                final boolean lastBuffered = endsRecord
                    || length == unsent && !tcb.hasSenderFlag(c, SenderState.S_UNPUSHED);
                // Only Linux's rule looks at frames and the burst's end; the default rule costs no more than before.
                final boolean push = lastBuffered || settings.of(c).pushRule() == PushRule.LINUX
                    && endsLinuxFrame(c, length, unsent, room, outstanding, mss, finWanted, probe, probeSegments,
                    segmentSize, burst);
                final int flags = TcpFlags.ACK | (push ? TcpFlags.PSH : 0) | (fin ? TcpFlags.FIN : 0);
                final int result = output.send(c, sndMax, length, flags, nowNs, segmentSize);
                if (result == TcpOutput.RETRY) {
                    tso = false;
                    continue;
                }
                if (result < 0) {
                    break;
                }
                if (segmentSize > 0) {
                    counters.tsoSegments.incrementRelease();
                }
                // A retransmission carries the application's push only: Linux forces PSH on a frame's copy.
                recordNew(c, sent, sndMax, length, segmentSize > 0 ? segmentSize : length, fin, lastBuffered, nowNs);
                if (length < mss) {
                    tcb.sndSml(c, sndMax + length);
                }
                sentAnything = true;
                sentNew = true;
                allowSmall = false;
                burst++;
                if (probe && ++probeSegments == PROBE_SEGMENTS) {
                    break;
                }
                continue;
            }
            if (finWanted && !sent.isFull()) {
                if (output.send(c, sndMax, 0, TcpFlags.ACK | TcpFlags.FIN, nowNs, 0) >= 0) {
                    recordNew(c, sent, sndMax, 0, 0, true, false, nowNs);
                    sentAnything = true;
                    sentNew = true;
                }
                break;
            }
            if (room >= tcb.sndMss(c) && !probe && rescue(c, sent, nowNs)) {
                sentAnything = true;
                continue;
            }
            break;
        }
        if (!sentAnything && tcb.hasFlag(c, F_ACK_NOW)) {
            output.sendAck(c, nowNs);
        }
        rate.checkAppLimited(c, sent, queuedData(c, ring) - dataSent(c, tcb.sndMax(c)), tcb.sndMss(c));
        chrono.update(c, queuedData(c, ring) > 0 || finWanted(c), rwndLimited, ring.freeSpace() == 0, nowNs);
        if (!probe) {
            updateTimer(c, nowNs, false, sentNew);
        }
        return sentNew;
    }

    /**
     * Whether the new-data segment about to go ends a frame {@link PushRule#LINUX} pushes: {@code burst} segments went
     * before it in this pass; a TSO frame of {@code segmentSize} segments is one frame of its own.
     */
    private boolean endsLinuxFrame(int c, int length, int unsent, int room, int outstanding, int mss, boolean finWanted,
                                   boolean probe, int probeSegments, int segmentSize, int burst) {
        final int frame = segmentSize > 0 ? (length + segmentSize - 1) / segmentSize
            : PushRule.frameSegments(tcb.cwnd(c), tcb.ssthresh(c), mss, tcb.srttUs(c), tcb.minRttUs(c));
        return PushRule.LINUX.push(false, endsBurst(c, length, unsent, room, outstanding, mss, finWanted, probe,
            probeSegments), segmentSize > 0 ? frame - 1 : burst, frame);
    }

    /**
     * Whether nothing more goes in this pass after {@code length} bytes of new data: the queue, cwnd or the peer's
     * window is used up, or what is left is a short segment the sender would hold back (for {@link PushRule#LINUX}).
     */
    private boolean endsBurst(int c, int length, int unsent, int room, int outstanding, int mss, boolean finWanted,
                              boolean probe, int probeSegments) {
        if (probe) {
            return probeSegments + 1 == PROBE_SEGMENTS || length == unsent;
        }
        final int next = Math.min(unsent - length, Math.min(room - length, tcb.sndWnd(c) - outstanding - length));
        return next <= 0 || next < mss && !sendAllowed(c, next, unsent - length, mss, outstanding + length, finWanted);
    }

    /**
     * cwnd, plus up to two segments for the first duplicate ACKs without SACK (RFC 3042 limited transmit). With SACK,
     * pipe already leaves out what the duplicates SACKed, which is RFC 6675 §5 (2)(c)'s limited transmit.
     */
    private int congestionWindow(int c) {
        final int cwnd = tcb.cwnd(c);
        final int dupAcks = tcb.dupAcks(c);
        if (dupAcks > 0 && dupAcks < DUP_THRESHOLD && tcb.senderState(c) == OPEN && !tcb.hasFlag(c, F_SACK)) {
            return (int) Math.min((long) cwnd + (long) dupAcks * tcb.sndMss(c), Integer.MAX_VALUE);
        }
        return cwnd;
    }

    /**
     * Nagle (RFC 9293 §3.7.4) and the sender's silly window avoidance (§3.8.6.2.1): a full segment always goes; a
     * short one goes when it empties the queue and Nagle allows it (or NODELAY, or the FIN follows), or when it is
     * at least half the largest window the peer ever offered.
     *
     * <p>Deviation: Nagle as Linux applies it (Minshall's variant): a short segment waits only while an earlier
     * short segment is unacknowledged, not while any data is. The tail of a large write then leaves at once, and
     * request/response exchanges of several segments keep their latency.
     */
    private boolean sendAllowed(int c, int length, int unsent, int mss, int outstanding, boolean finWanted) {
        if (length >= mss) {
            return true;
        }
        if (tcb.hasSenderFlag(c, SenderState.S_CORKED | SenderState.S_MORE) && !finWanted) {
            // TCP_CORK or MSG_MORE (Linux's TCP_NAGLE_CORK): the application says more is coming.
            return false;
        }
        final boolean nagle = tcb.hasFlag(c, F_NO_DELAY) || outstanding == 0 || finWanted
            || !SeqNum.gt(tcb.sndSml(c), tcb.sndUna(c));
        if (length == unsent) {
            return nagle;
        }
        return nagle && length >= tcb.maxSndWnd(c) / 2;
    }

    /**
     * Records new data just sent, {@code length} bytes from SND.MAX (plus the FIN), one entry per segment of
     * {@code segment} bytes, and moves SND.NXT and SND.MAX over it.
     */
    private void recordNew(int c, SentSegments sent, int seq, int length, int segment, boolean fin, boolean push,
                           long nowNs) {
        final long delivered = tcb.delivered(c);
        int at = seq;
        final int dataEnd = seq + length;
        do {
            final int end = length == 0 ? at : Math.min(dataEnd, at + segment);
            final boolean last = end == dataEnd;
            sent.append(at, last && fin ? end + 1 : end, last && fin, last && push, nowNs, delivered);
            rate.onSent(c, sent, sent.count() - 1, nowNs);
            at = end;
        } while (at != dataEnd);
        final int end = dataEnd + (fin ? 1 : 0);
        if (fin) {
            tcb.setFlag(c, F_FIN_SENT);
            tcb.finSeq(c, dataEnd);
        }
        tcb.sndNxt(c, end);
        tcb.sndMax(c, end);
        if (length > 0) {
            tcb.lastSendNs(c, nowNs);
        }
        if (tcb.senderState(c) == RECOVERY) {
            plugPoints.recovery(c).onSent(tcb, c, end - seq);
        }
        paceAfter(c, end - seq, nowNs);
    }

    /**
     * Sends recorded segment {@code i} again (in pieces of the current MSS if the path MTU shrank since), marks it
     * retransmitted, and keeps the books: Karn's rule (RFC 6298 §3) for RTT timing, HighRxt (RFC 6675 §2), the
     * episode's undo information, PRR's prr_out, the counters by cause. Returns false if nothing could be sent.
     */
    private boolean retransmit(int c, SentSegments sent, int i, int cause, long nowNs) {
        userTimeout.retransmitting(c, sent.sentNs(i));
        final int start = sent.start(i);
        final int end = sent.end(i);
        final int entryFlags = sent.flags(i);
        final boolean fin = (entryFlags & SentSegments.FIN) != 0;
        final int dataEnd = fin ? end - 1 : end;
        int at = start;
        boolean first = true;
        do {
            final int mss = Math.max(1, tcb.sndMss(c) - output.prepareOptions(c));
            final int length = Math.min(mss, dataEnd - at);
            final boolean last = at + length == dataEnd;
            final int flags = TcpFlags.ACK | (last && (entryFlags & SentSegments.PUSH) != 0 ? TcpFlags.PSH : 0)
                | (last && fin ? TcpFlags.FIN : 0);
            final int result = output.send(c, at, length, flags, nowNs, 0);
            if (result == TcpOutput.RETRY) {
                continue;
            }
            if (result < 0) {
                if (first) {
                    return false;
                }
                break;
            }
            first = false;
            at += length;
        } while (at != dataEnd);
        sent.retransmitted(i, nowNs, tcb.delivered(c));
        rate.onSent(c, sent, i, nowNs);
        counters.txRetransmits.incrementRelease();
        switch (cause) {
            case TIMEOUT -> counters.txTimeoutRetransmits.incrementRelease();
            case PROBE -> counters.txProbeRetransmits.incrementRelease();
            case RESCUE -> counters.txRescueRetransmits.incrementRelease();
            default -> counters.txFastRetransmits.incrementRelease();
        }
        tcb.retransmits(c, tcb.retransmits(c) + 1);
        final int tsVal = output.tsVal(c, nowNs);
        tcb.clearFlag(c, F_RTT_TIMING);
        tcb.setFlag(c, F_RETRANSMITTED);
        tcb.retransmitTsVal(c, tsVal);
        if (tcb.hasSenderFlag(c, S_UNDO_POSSIBLE) && tcb.senderState(c) != OPEN) {
            tcb.undoRetrans(c, tcb.undoRetrans(c) + 1);
            if (!tcb.hasSenderFlag(c, S_UNDO_TS)) {
                tcb.undoTsVal(c, tsVal);
                tcb.setSenderFlag(c, S_UNDO_TS);
            }
        }
        if (cause != RESCUE && SeqNum.gt(end, tcb.highRxt(c))) {
            tcb.highRxt(c, end);
        }
        if (tcb.senderState(c) == RECOVERY) {
            plugPoints.recovery(c).onSent(tcb, c, end - start);
        }
        paceAfter(c, end - start, nowNs);
        return true;
    }

    /**
     * RFC 6675 §4 NextSeg rules (3) and (4), in fast recovery with SACK when the recovery asks for them and nothing
     * lost or new could go: (3) the first unSACKed segment above HighRxt and below the highest SACKed sequence number;
     * (4) once per recovery, the rescue retransmission of the highest unSACKed segment (RescueRxt, HighRxt untouched).
     */
    private boolean rescue(int c, SentSegments sent, long nowNs) {
        if (tcb.senderState(c) != RECOVERY || !tcb.hasFlag(c, F_SACK) || !plugPoints.recovery(c).usesRescueRules()) {
            return false;
        }
        final int highRxt = tcb.highRxt(c);
        final int fack = tcb.fack(c);
        final int count = sent.count();
        int i = sent.indexOf(highRxt);
        if (i < 0) {
            i = SeqNum.lt(highRxt, tcb.sndUna(c)) ? 0 : count;
        }
        for (; i < count && SeqNum.le(sent.end(i), fack); i++) {
            final int flags = sent.flags(i);
            if ((flags & (SentSegments.SACKED | SentSegments.RETRANS_IN_FLIGHT)) == 0
                && SeqNum.ge(sent.start(i), highRxt)) {
                return retransmit(c, sent, i, FAST, nowNs);
            }
        }
        if (tcb.hasSenderFlag(c, S_RESCUE_SENT) && !SeqNum.gt(tcb.sndUna(c), tcb.rescueRxt(c))) {
            return false;
        }
        for (int j = count - 1; j >= 0; j--) {
            final int flags = sent.flags(j);
            if ((flags & SentSegments.SACKED) == 0) {
                if ((flags & SentSegments.RETRANS_IN_FLIGHT) != 0) {
                    return false;
                }
                tcb.setSenderFlag(c, S_RESCUE_SENT);
                tcb.rescueRxt(c, tcb.recover(c));
                return retransmit(c, sent, j, RESCUE, nowNs);
            }
        }
        return false;
    }

    /** Data in the send ring not yet acknowledged, up to where shutdownOutput put the FIN. */
    int queuedData(int c, ByteRing ring) {
        final int available = ring.available();
        if (tcb.hasFlag(c, F_FIN_QUEUED)) {
            return (int) Math.min(available, tcb.finPosition(c) - ring.consumerPosition());
        }
        return available;
    }

    /** Data bytes between SND.UNA and {@code seq} (our FIN, when passed, is no data byte). */
    private int dataSent(int c, int seq) {
        final int sndUna = tcb.sndUna(c);
        int sent = seq - sndUna;
        if (tcb.state(c) == TcpState.SYN_RECEIVED) {
            sent--;     // our SYN-ACK, unacknowledged, takes the first number (Fast Open sends data before its ACK)
        }
        if (tcb.hasFlag(c, F_FIN_SENT) && SeqNum.gt(seq, tcb.finSeq(c)) && SeqNum.le(sndUna, tcb.finSeq(c))) {
            sent--;
        }
        return sent;
    }

    /** A FIN is queued and not yet sent (once sent, it is in the record and retransmitted from there). */
    private boolean finWanted(int c) {
        return tcb.hasFlag(c, F_FIN_QUEUED) && !tcb.hasFlag(c, F_FIN_SENT);
    }

    // ----------------------------------------------------------------------------------------------- pacing

    /** True when the congestion control paces and the next segment is not due yet (the pacing timer is armed). */
    private boolean paced(int c, long nowNs) {
        if (!pacer.holds(c, nowNs)) {
            return false;
        }
        if (!timers.armed(c, T_PACE)) {
            timers.arm(c, TimerKind.PACE, tcb.nextSendNs(c));
        }
        return true;
    }

    /** The next segment may leave {@code bytes} / rate after this one ({@link Pacer#sent}). */
    private void paceAfter(int c, int bytes, long nowNs) {
        pacer.sent(c, bytes, nowNs);
    }

    // ----------------------------------------------------------------------------------------------- timers

    /**
     * Arms the sender timer for what the connection waits for (RFC 6298 §5, RFC 9293 §3.8.6.1, RFC 8985 §7.2): the
     * persist timer while the peer's window is zero (or too small to send into with nothing outstanding); while data
     * is outstanding, RACK's reordering timer if armed, else a tail loss probe if one may be sent, else the
     * retransmission timer. The RTO restarts on {@code restart} (new data acknowledged, RFC 6298 §5.3); the probe
     * timeout restarts when new data was sent or acknowledged.
     */
    void updateTimer(int c, long nowNs, boolean restart, boolean sentNew) {
        final int state = tcb.state(c);
        if (state < TcpState.ESTABLISHED || state == TcpState.TIME_WAIT || !tcb.hasFlag(c, F_RINGS)) {
            return;
        }
        final boolean outstanding = tcb.sndMax(c) != tcb.sndUna(c);
        final boolean waiting = queuedData(c, buffers.sendRing(c)) > dataSent(c, tcb.sndMax(c)) || finWanted(c);
        final boolean armed = timers.armed(c, T_SENDER);
        final int kind = tcb.senderTimerKind(c);
        if ((tcb.sndWnd(c) == 0 && (outstanding || waiting)) || (!outstanding && waiting)) {
            if (!armed || kind != TIMER_PERSIST) {
                userTimeout.windowClosed(c);
                tcb.senderTimerKind(c, TIMER_PERSIST);
                timers.arm(c, TimerKind.SENDER, nowNs + rtt.rtoNs(tcb, c));
            }
            return;
        }
        if (!outstanding) {
            timers.disarm(c, T_SENDER);
            return;
        }
        if (restart || !armed || kind == TIMER_PERSIST) {
            tcb.rtoExpiryNs(c, nowNs + rtt.rtoNs(tcb, c));
        }
        if (armed && kind == TIMER_REORDER) {
            return;
        }
        if (probeAllowed(c)) {
            if (restart || sentNew || !armed || kind != TIMER_PROBE) {
                tcb.senderTimerKind(c, TIMER_PROBE);
                timers.arm(c, TimerKind.SENDER, Math.min(nowNs + probeTimeoutNs(c), tcb.rtoExpiryNs(c)));
            }
            return;
        }
        if (!armed || kind != TIMER_RTO || restart || tcb.senderTimerNs(c) != tcb.rtoExpiryNs(c)) {
            tcb.senderTimerKind(c, TIMER_RTO);
            timers.arm(c, TimerKind.SENDER, tcb.rtoExpiryNs(c));
        }
    }

    /** RFC 8985 §7.2: a probe may be scheduled while open, with SACK, an RTT known and no probe unanswered. */
    private boolean probeAllowed(int c) {
        return tcb.senderState(c) == OPEN && tcb.hasFlag(c, F_SACK) && !tcb.hasSenderFlag(c, S_TLP_OUTSTANDING)
            && tcb.srttUs(c) > 0 && plugPoints.lossDetection(c).tailLossProbes();
    }

    /**
     * RFC 8985 §7.2, TLP_calc_PTO: twice SRTT, plus the worst-case delayed ACK when a single segment is outstanding
     * (its ACK may be delayed). Deviation: at least {@link #MIN_PROBE_TIMEOUT_NS}, as Linux, so scheduling noise on a
     * microsecond path does not fire probes.
     */
    long probeTimeoutNs(int c) {
        long pto = 2L * tcb.srttUs(c) * 1000L;
        if (tcb.sndMax(c) - tcb.sndUna(c) <= tcb.sndMss(c)) {
            pto += WORST_CASE_DELAYED_ACK_NS;
        }
        return Math.max(pto, MIN_PROBE_TIMEOUT_NS);
    }

    /**
     * The sender timer fired (a synchronized connection): by what it was armed for. Returns {@link #GOES_ON}, or the
     * error the connection ends with when its retries ran out (the caller ends it: the sender keeps no lifecycle).
     */
    int onTimer(int c, long nowNs) {
        switch (tcb.senderTimerKind(c)) {
            case TIMER_PERSIST -> {
                return onPersistTimeout(c, nowNs);
            }
            case TIMER_PROBE -> onProbeTimeout(c, nowNs);
            case TIMER_REORDER -> onReorderTimeout(c, nowNs);
            default -> {
                return onRetransmitTimeout(c, nowNs);
            }
        }
        return GOES_ON;
    }

    /**
     * RFC 6298 §5.4-5.7 with RFC 5681 §3.1: the retransmission timer expired. The congestion control falls to the loss
     * window, the loss detection marks what the timeout shows lost, the first outstanding segment goes again at once,
     * the RTO doubles; after the configured retries the connection times out. A receiver that reneged (the first
     * outstanding segment was SACKed yet never acknowledged, RFC 2018 §8) loses its SACK marks.
     */
    private int onRetransmitTimeout(int c, long nowNs) {
        final int state = tcb.state(c);
        if (state < TcpState.ESTABLISHED || state == TcpState.TIME_WAIT || tcb.sndUna(c) == tcb.sndMax(c)
            || !tcb.hasFlag(c, F_RINGS)) {
            return GOES_ON;
        }
        counters.rtoExpired.incrementRelease();
        final int retries = tcb.retries(c) + 1;
        tcb.retries(c, retries);
        if (userTimeout.retransmissionsExpired(c, retries, retryLimit(c), nowNs)) {
            return tcb.softError(c) != TcpError.NONE ? tcb.softError(c) : TcpError.TIMED_OUT;
        }
        path.retransmittedAgain(c, retries, nowNs);
        final SentSegments sent = buffers.sent(c);
        if (!sent.isEmpty() && sent.has(0, SentSegments.SACKED)) {
            counters.sackReneging.incrementRelease();
            sent.unmarkSacked();
        }
        if (tcb.senderState(c) == OPEN) {
            reordering.timedOut(c, sent.countFlagged(SentSegments.SACKED));
            startEpisode(c);
        }
        if (tcb.senderState(c) != LOSS) {
            tcb.setSenderFlag(c, S_FRTO);
            tcb.lossAtNs(c, nowNs);
        } else {
            tcb.clearSenderFlag(c, S_FRTO); // a second timeout: the loss was real
        }
        final int sndUna = tcb.sndUna(c);
        plugPoints.congestionControl(c).onRetransmitTimeout(tcb, c, tcb.sndMax(c) - sndUna, tcb.sndMss(c), nowNs);
        ecn.windowReduced(c);
        tcb.recover(c, tcb.sndMax(c));
        tcb.senderState(c, LOSS);
        tcb.highRxt(c, sndUna);
        tcb.dupAcks(c, 0);
        tcb.clearSenderFlag(c, S_TLP_OUTSTANDING | S_RESCUE_SENT);
        final int lostBefore = sent.lostBytes();
        plugPoints.lossDetection(c).onRetransmitTimeout(tcb, c, sent, nowNs);
        rate.lost(c, sent.lostBytes() - lostBefore);
        rtt.backOff(tcb, c);
        final int first = sent.firstLostNotRetransmitted();
        if (first >= 0) {
            // Before the deadline is set: the user timeout counts from this segment's first transmission.
            userTimeout.retransmitting(c, sent.sentNs(first));
        }
        tcb.rtoExpiryNs(c, userTimeout.clampRetransmission(c, nowNs + rtt.rtoNs(tcb, c)));
        tcb.senderTimerKind(c, TIMER_RTO);
        timers.arm(c, TimerKind.SENDER, tcb.rtoExpiryNs(c));
        if (first >= 0) {
            retransmit(c, sent, first, TIMEOUT, nowNs);
        }
        final TcpTrace trace = traces[c];
        if (trace != null) {
            trace.record(tcb, c, sent, rtt.rtoNs(tcb, c), nowNs);
        }
        output(c, nowNs, false);
        return GOES_ON;
    }

    /**
     * RFC 8985 §7.3: the probe timeout expired with no ACK. New data goes if the receiver's window
     * has room (ignoring cwnd), else the highest unSACKed segment again; TLP.end_seq becomes SND.MAX; the RTO timer
     * takes over.
     */
    private void onProbeTimeout(int c, long nowNs) {
        final int state = tcb.state(c);
        if (state < TcpState.ESTABLISHED || state == TcpState.TIME_WAIT || !tcb.hasFlag(c, F_RINGS)
            || tcb.sndUna(c) == tcb.sndMax(c) || tcb.senderState(c) != OPEN) {
            tcb.senderTimerKind(c, TIMER_RTO);
            updateTimer(c, nowNs, false, false);
            return;
        }
        final SentSegments sent = buffers.sent(c);
        boolean retransmission = false;
        if (!transmit(c, nowNs, true, true)) {
            for (int i = sent.count() - 1; i >= 0; i--) {
                if (!sent.has(i, SentSegments.SACKED)) {
                    retransmission = retransmit(c, sent, i, PROBE, nowNs);
                    break;
                }
            }
            if (!retransmission) {
                tcb.senderTimerKind(c, TIMER_RTO);
                updateTimer(c, nowNs, false, false);
                return;
            }
        }
        counters.txTailLossProbes.incrementRelease();
        tcb.probeCount(c, tcb.probeCount(c) + 1);
        tcb.tlpEndSeq(c, tcb.sndMax(c));
        tcb.setSenderFlag(c, S_TLP_OUTSTANDING);
        if (retransmission) {
            tcb.setSenderFlag(c, S_TLP_IS_RETRANS);
        } else {
            tcb.clearSenderFlag(c, S_TLP_IS_RETRANS);
        }
        tcb.rtoExpiryNs(c, nowNs + rtt.rtoNs(tcb, c));
        tcb.senderTimerKind(c, TIMER_RTO);
        timers.arm(c, TimerKind.SENDER, tcb.rtoExpiryNs(c));
    }

    /** RFC 8985 §6.2: RACK's reordering timer: look for losses again, now that more time has passed. */
    private void onReorderTimeout(int c, long nowNs) {
        tcb.senderTimerKind(c, TIMER_RTO);
        final int state = tcb.state(c);
        if (state < TcpState.ESTABLISHED || state == TcpState.TIME_WAIT || !tcb.hasFlag(c, F_RINGS)) {
            return;
        }
        final SentSegments sent = buffers.sent(c);
        final AckSample s = sample.reset(nowNs, tcb.sndMss(c));
        s.senderState = tcb.senderState(c);
        final int outstanding = tcb.sndMax(c) - tcb.sndUna(c);
        s.priorInFlight = sent.pipe(outstanding);
        final LossDetection detection = plugPoints.lossDetection(c);
        final long timeoutNs = detection.onReorderTimeout(tcb, c, sent, s);
        countMarks(detection, s);
        rate.lost(c, s.newlyLostBytes);
        s.inFlight = sent.pipe(outstanding);
        if (s.newlyLostBytes > 0) {
            counters.reorderTimeoutLosses.incrementRelease();
            if (tcb.senderState(c) == OPEN) {
                enterRecovery(c, sent, s);
            } else if (tcb.senderState(c) == RECOVERY && plugPoints.recovery(c).onAck(tcb, c, sent, s)) {
                retransmitFirstLost(c, sent, nowNs);
            }
        }
        armReorderTimer(c, timeoutNs, nowNs);
        output(c, nowNs, false);
    }

    /** The persist timer (RFC 9293 §3.8.6.1): probe a zero window, with backoff, as long as the peer answers. */
    private int onPersistTimeout(int c, long nowNs) {
        final int state = tcb.state(c);
        if (state < TcpState.ESTABLISHED || state == TcpState.TIME_WAIT || !tcb.hasFlag(c, F_RINGS)) {
            return GOES_ON;
        }
        tcb.senderTimerKind(c, TIMER_RTO);
        if (tcb.sndWnd(c) > 0) {
            // The window is open but too small for silly-window avoidance: send what fits anyway (§3.8.6.2.1 (4)).
            output(c, nowNs, true);
            return GOES_ON;
        }
        final int probes = tcb.probes(c) + 1;
        if (userTimeout.probingExpired(c, probes, retryLimit(c), nowNs)) {
            return TcpError.TIMED_OUT;
        }
        tcb.probes(c, probes);
        sendWindowProbe(c, nowNs);
        rtt.backOff(tcb, c);
        tcb.senderTimerKind(c, TIMER_PERSIST);
        timers.arm(c, TimerKind.SENDER, userTimeout.clampProbe(c, nowNs + rtt.rtoNs(tcb, c)));
        return GOES_ON;
    }

    /**
     * A zero-window probe (RFC 9293 §3.8.6.1): one byte beyond the window, the first unacknowledged one again if
     * data is outstanding, else the next new one (or the FIN).
     */
    private void sendWindowProbe(int c, long nowNs) {
        final ByteRing ring = buffers.sendRing(c);
        final SentSegments sent = buffers.sent(c);
        final int sndUna = tcb.sndUna(c);
        final int sndMax = tcb.sndMax(c);
        final int queued = queuedData(c, ring);
        output.prepareOptions(c);
        if (sndMax != sndUna) {
            if (queued > 0) {
                if (output.send(c, sndUna, 1, TcpFlags.ACK | Ecn.PROBE, nowNs, 0) >= 0) {
                    tcb.clearFlag(c, F_RTT_TIMING);
                    tcb.setFlag(c, F_RETRANSMITTED);
                    tcb.retransmitTsVal(c, output.tsVal(c, nowNs));
                }
            } else if (tcb.hasFlag(c, F_FIN_SENT)) {
                output.send(c, sndUna, 0, TcpFlags.ACK | TcpFlags.FIN, nowNs, 0);
            }
        } else if (!sent.isFull() && queued > dataSent(c, sndMax)) {
            if (output.send(c, sndMax, 1, TcpFlags.ACK | Ecn.PROBE, nowNs, 0) >= 0) {
                recordNew(c, sent, sndMax, 1, 1, false, false, nowNs);
            }
        } else if (finWanted(c) && !sent.isFull()) {
            if (output.send(c, sndMax, 0, TcpFlags.ACK | TcpFlags.FIN, nowNs, 0) >= 0) {
                recordNew(c, sent, sndMax, 0, 0, true, false, nowNs);
            }
        }
        counters.txWindowProbes.incrementRelease();
    }

    /** The pacing timer: the next segment is due. */
    void onPacingTimer(int c, long nowNs) {
        output(c, nowNs, false);
    }

    /**
     * The path MTU fell below what was sent (RFC 1191, an ICMP fragmentation needed): everything outstanding is sent
     * again at once in smaller segments, without a congestion response (the segments were not lost to congestion).
     */
    void onPathMtuDrop(int c) {
        final SentSegments sent = buffers.sent(c);
        if (sent != null) {
            for (int i = 0; i < sent.count(); i++) {
                sent.markLost(i);
            }
        }
        outputQueue.request(c);
    }

    /** R2 of RFC 9293 §3.8.3: the connection's own limit if its owner set one, else the layer's. */
    private int retryLimit(int c) {
        final int own = tcb.maxRetries(c);
        return own > 0 ? own : settings.of(c).maxRetries();
    }
}
