package dev.tern.tcp;

import dev.tern.core.checksum.InternetChecksum;
import dev.tern.core.io.ByteRing;
import dev.tern.ipv4.Ipv4Layer;
import dev.tern.ipv4.wire.IpProtocol;
import dev.tern.tcp.wire.TcpFlags;
import dev.tern.tcp.wire.TcpHeader;
import dev.tern.tcp.wire.TcpOption;

import java.lang.foreign.MemorySegment;

import static dev.tern.tcp.TcpControlBlocks.F_ACK_NOW;
import static dev.tern.tcp.TcpControlBlocks.F_CWND_LIMITED;
import static dev.tern.tcp.TcpControlBlocks.F_DSACK;
import static dev.tern.tcp.TcpControlBlocks.F_FIN_QUEUED;
import static dev.tern.tcp.TcpControlBlocks.F_FIN_SENT;
import static dev.tern.tcp.TcpControlBlocks.F_IN_RECOVERY;
import static dev.tern.tcp.TcpControlBlocks.F_NO_DELAY;
import static dev.tern.tcp.TcpControlBlocks.F_PERSIST;
import static dev.tern.tcp.TcpControlBlocks.F_RETRANSMITTED;
import static dev.tern.tcp.TcpControlBlocks.F_RINGS;
import static dev.tern.tcp.TcpControlBlocks.F_RTT_TIMING;
import static dev.tern.tcp.TcpControlBlocks.F_SACK;
import static dev.tern.tcp.TcpControlBlocks.F_TIMESTAMPS;
import static dev.tern.tcp.TcpControlBlocks.F_WINDOW_SCALING;
import static dev.tern.tcp.TcpControlBlocks.T_DELAYED_ACK;
import static dev.tern.tcp.TcpControlBlocks.T_RTO;

/**
 * Everything that leaves: deciding what a connection may send now (RFC 9293 §3.7 and §3.8.6: window, Nagle,
 * silly-window avoidance; RFC 5681 congestion window; RFC 3042 limited transmit), building segments in place in the
 * link frame (header, options, payload copied once from the send ring and summed in the same pass unless the link
 * offloads the checksum), and the bookkeeping of what was sent (SND.NXT, SND.MAX, RTT timing, the retransmission and
 * persist timers, the ACK state).
 *
 * <p>Segments are MSS-sized, or up to 64 KiB when the link segments TCP itself (TSO, {@code beginSegmented}).
 * Stateless answers (RST for a closed port, a SYN cookie's SYN-ACK) are built here too.
 *
 * <p>Owned by the shard thread; not thread-safe.
 */
final class TcpOutput {
    /** {@link #send} could not send now (no buffer, no route): try again later. */
    static final int FAILED = -1;
    /** The path MTU shrank (or TSO was refused): size the segment again. */
    static final int RETRY = -2;
    private static final int TIMESTAMP_SPACE = 12;
    /** RFC 9293 §3.7.1: the MSS to assume when the peer sent none. */
    static final int DEFAULT_MSS = 536;
    private static final int TSO_MAX_PAYLOAD = 65535 - 20 - TcpHeader.MAX_LENGTH;

    private final TcpLayer layer;
    private final TcpControlBlocks tcb;
    private final Ipv4Layer ipv4;
    private final TcpCounters counters;
    private final ReassemblyQueue reassembly;
    private final RttEstimator rtt;
    private final TcpConfig config;
    private final TcpHeader tx = new TcpHeader();
    private final int[] sack = new int[2 * TcpOption.MAX_SACK_BLOCKS];
    private int sackCount;
    private boolean sackHasDsack;
    private TcpTimers timers;

    TcpOutput(TcpLayer layer, TcpControlBlocks tcb, Ipv4Layer ipv4, TcpCounters counters, ReassemblyQueue reassembly,
              RttEstimator rtt, TcpConfig config) {
        this.layer = layer;
        this.tcb = tcb;
        this.ipv4 = ipv4;
        this.counters = counters;
        this.reassembly = reassembly;
        this.rtt = rtt;
        this.config = config;
    }

    void timers(TcpTimers timers) {
        this.timers = timers;
    }

    // ------------------------------------------------------------------------------------------ send decisions

    /**
     * Sends what the windows, Nagle and silly-window avoidance allow, then an ACK if one is owed and nothing carried
     * it; arms the retransmission or persist timer as needed. With {@code force}, one segment goes even if it is
     * small (the persist timer's override, RFC 9293 §3.8.6.2.1 (4)).
     */
    void output(int c, long nowNs, boolean force) {
        final int state = tcb.state(c);
        if (state == TcpState.TIME_WAIT) {
            if (tcb.hasFlag(c, F_ACK_NOW)) {
                sendAck(c, nowNs);
            }
            return;
        }
        if (state < TcpState.ESTABLISHED || !tcb.hasFlag(c, F_RINGS)) {
            return;
        }
        final ByteRing ring = layer.sendRings[c];
        boolean sent = false;
        boolean allowSmall = force;
        // With TSO the link cuts large frames; a refusal (loopback, next hop not resolved) falls back for this call.
        boolean tso = ipv4.segmentationOffload();
        tcb.clearFlag(c, F_CWND_LIMITED);
        while (true) {
            final int sndUna = tcb.sndUna(c);
            final int sndNxt = tcb.sndNxt(c);
            final int queued = queuedData(c, ring);
            final int unsent = queued - dataSent(c, sndNxt);
            final boolean finWanted = finWanted(c, sndNxt);
            final int inFlight = sndNxt - sndUna;
            if (unsent > 0 && inFlight == 0 && sndNxt == tcb.sndMax(c)
                && nowNs - tcb.lastSendNs(c) > rtt.rtoNs(tcb, c)) {
                // RFC 5681 §4.1: after an idle period longer than the RTO, restart from the initial window.
                layer.congestionControl(c).onIdleRestart(tcb, c, tcb.sndMss(c), config.initialCwndSegments(), nowNs);
                tcb.lastSendNs(c, nowNs);
            }
            final int sndWnd = tcb.sndWnd(c);
            final int cwnd = congestionWindow(c);
            final int usable = Math.min(sndWnd, cwnd) - inFlight;
            final int optionSpace = prepareOptions(c);
            final int mss = Math.max(1, tcb.sndMss(c) - optionSpace);
            if (unsent > 0) {
                int length = Math.min(unsent, usable);
                if (length <= 0) {
                    if (cwnd <= sndWnd) {
                        tcb.setFlag(c, F_CWND_LIMITED);
                    }
                    break;
                }
                int segmentSize = 0;
                if (length > mss) {
                    if (tso && sackCount == 0) {
                        // One TSO frame of whole segments; the tail of the queue may ride as a short last one.
                        final int max = TSO_MAX_PAYLOAD - optionSpace;
                        if (length > max || length < unsent) {
                            length = Math.min(length, max);
                            length -= length % mss;
                        }
                        segmentSize = length > mss ? mss : 0;
                    } else {
                        length = mss;
                    }
                }
                if (!allowSmall && !sendAllowed(c, length, unsent, mss, inFlight, finWanted)) {
                    break;
                }
                final boolean fin = finWanted && length == unsent;
                final int flags = TcpFlags.ACK | (length == unsent ? TcpFlags.PSH : 0) | (fin ? TcpFlags.FIN : 0);
                final int result = send(c, sndNxt, length, flags, nowNs, segmentSize);
                if (result == RETRY) {
                    tso = false;
                    continue;
                }
                if (result < 0) {
                    break;
                }
                if (segmentSize > 0) {
                    counters.tsoSegments.incrementRelease();
                }
                advance(c, sndNxt, length, fin, nowNs);
                if (length < mss) {
                    tcb.sndSml(c, sndNxt + length);
                }
                sent = true;
                allowSmall = false;
                continue;
            }
            if (finWanted && unsent == 0) {
                if (send(c, sndNxt, 0, TcpFlags.ACK | TcpFlags.FIN, nowNs, 0) >= 0) {
                    advance(c, sndNxt, 0, true, nowNs);
                    sent = true;
                }
            }
            break;
        }
        if (!sent && tcb.hasFlag(c, F_ACK_NOW)) {
            sendAck(c, nowNs);
        }
        updateTransmitTimer(c, nowNs, false);
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
        if (tcb.hasFlag(c, F_FIN_SENT) && SeqNum.gt(seq, tcb.finSeq(c)) && SeqNum.le(sndUna, tcb.finSeq(c))) {
            sent--;
        }
        return sent;
    }

    /** True when a FIN is queued and {@code seq} has not gone past it (first send, or again after a go-back-N). */
    private boolean finWanted(int c, int seq) {
        return tcb.hasFlag(c, F_FIN_QUEUED) && (!tcb.hasFlag(c, F_FIN_SENT) || SeqNum.le(seq, tcb.finSeq(c)));
    }

    /** cwnd, plus up to two segments for the first duplicate ACKs (RFC 3042 limited transmit). */
    private int congestionWindow(int c) {
        final int cwnd = tcb.cwnd(c);
        final int dupAcks = tcb.dupAcks(c);
        if (dupAcks > 0 && dupAcks < LossRecovery.DUP_THRESHOLD && !tcb.hasFlag(c, F_IN_RECOVERY)) {
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
    private boolean sendAllowed(int c, int length, int unsent, int mss, int inFlight, boolean finWanted) {
        if (length >= mss) {
            return true;
        }
        final boolean nagle = tcb.hasFlag(c, F_NO_DELAY) || inFlight == 0 || finWanted
            || !SeqNum.gt(tcb.sndSml(c), tcb.sndUna(c));
        if (length == unsent) {
            return nagle;
        }
        return nagle && length >= tcb.maxSndWnd(c) / 2;
    }

    /** Moves SND.NXT (and SND.MAX) over a segment just sent; times it or marks it a retransmission. */
    private void advance(int c, int seq, int length, boolean fin, long nowNs) {
        final int end = seq + length + (fin ? 1 : 0);
        if (fin) {
            tcb.setFlag(c, F_FIN_SENT);
            tcb.finSeq(c, seq + length);
        }
        if (SeqNum.lt(seq, tcb.sndMax(c))) {
            retransmitted(c, nowNs);
        } else if (!tcb.hasFlag(c, F_RTT_TIMING)) {
            tcb.setFlag(c, F_RTT_TIMING);
            tcb.rttSeq(c, end);
            tcb.rttStartNs(c, nowNs);
        }
        tcb.sndNxt(c, end);
        if (SeqNum.gt(end, tcb.sndMax(c))) {
            tcb.sndMax(c, end);
        }
        if (length > 0) {
            tcb.lastSendNs(c, nowNs);
        }
    }

    /**
     * Karn's rule (RFC 6298 §3): a retransmitted segment gives no RTT sample, so stop timing; and remember our clock,
     * so that an echoed timestamp from before the retransmission is not taken as a sample either.
     */
    private void retransmitted(int c, long nowNs) {
        counters.txRetransmits.incrementRelease();
        tcb.retransmits(c, tcb.retransmits(c) + 1);
        tcb.clearFlag(c, F_RTT_TIMING);
        tcb.setFlag(c, F_RETRANSMITTED);
        tcb.retransmitTsVal(c, tsVal(c, nowNs));
    }

    /**
     * RFC 6298 §5: the retransmission timer runs while data is outstanding (restarted when {@code restart}, on an ACK
     * of new data); the persist timer runs instead while the peer's window is zero, or too small to send into with
     * nothing outstanding (RFC 9293 §3.8.6.1).
     */
    void updateTransmitTimer(int c, long nowNs, boolean restart) {
        final int state = tcb.state(c);
        if (state < TcpState.ESTABLISHED || state == TcpState.TIME_WAIT || !tcb.hasFlag(c, F_RINGS)) {
            return;
        }
        final int sndUna = tcb.sndUna(c);
        final boolean inFlight = tcb.sndMax(c) != sndUna;
        final int sndNxt = tcb.sndNxt(c);
        final boolean waiting = queuedData(c, layer.sendRings[c]) > dataSent(c, sndNxt) || finWanted(c, sndNxt);
        final boolean rtoArmed = timers.armed(c, T_RTO);
        final boolean persist = tcb.hasFlag(c, F_PERSIST);
        if ((tcb.sndWnd(c) == 0 && (inFlight || waiting)) || (!inFlight && waiting)) {
            if (!rtoArmed || !persist) {
                tcb.setFlag(c, F_PERSIST);
                timers.arm(c, T_RTO, nowNs + rtt.rtoNs(tcb, c));
            }
        } else if (inFlight) {
            if (restart || !rtoArmed || persist) {
                tcb.clearFlag(c, F_PERSIST);
                timers.arm(c, T_RTO, nowNs + rtt.rtoNs(tcb, c));
            }
        } else {
            tcb.clearFlag(c, F_PERSIST);
            timers.disarm(c, T_RTO);
        }
    }

    // ------------------------------------------------------------------------------------ special segments

    /**
     * An ACK now: <SEQ=SND.NXT><ACK=RCV.NXT><CTL=ACK>, with timestamps and SACK blocks as negotiated. The sequence
     * number is the highest we sent (SND.MAX): after a go-back-N rewind SND.NXT may lie below what the peer already
     * received, and an ACK carrying it would be out of the peer's window (Linux's tcp_acceptable_seq does the same).
     */
    void sendAck(int c, long nowNs) {
        prepareOptions(c);
        send(c, acceptableSeq(c), 0, TcpFlags.ACK, nowNs, 0);
    }

    /**
     * The sequence number for a segment without data: SND.MAX, unless that lies beyond the peer's window (a probe
     * byte, a window that shrank), then the window's right edge (Linux's tcp_acceptable_seq).
     */
    private int acceptableSeq(int c) {
        final int sndMax = tcb.sndMax(c);
        final int windowEnd = tcb.sndUna(c) + tcb.sndWnd(c);
        return SeqNum.le(sndMax, windowEnd) ? sndMax : windowEnd;
    }

    /** A keepalive probe (RFC 9293 §3.8.4): <SEQ=SND.UNA-1><ACK=RCV.NXT>, no data, which the peer must answer. */
    void sendKeepalive(int c, long nowNs) {
        prepareOptions(c);
        if (send(c, tcb.sndUna(c) - 1, 0, TcpFlags.ACK, nowNs, 0) >= 0) {
            counters.txKeepalives.incrementRelease();
        }
    }

    /**
     * A zero-window probe (RFC 9293 §3.8.6.1): one byte beyond the window, the first unacknowledged one again if
     * data is in flight, else the next new one (or the FIN).
     */
    void sendWindowProbe(int c, long nowNs) {
        final ByteRing ring = layer.sendRings[c];
        final int sndUna = tcb.sndUna(c);
        final int sndNxt = tcb.sndNxt(c);
        final int queued = queuedData(c, ring);
        prepareOptions(c);
        if (sndNxt != sndUna) {
            if (queued > 0) {
                if (send(c, sndUna, 1, TcpFlags.ACK, nowNs, 0) >= 0) {
                    retransmitted(c, nowNs);
                }
            } else if (tcb.hasFlag(c, F_FIN_SENT)) {
                send(c, sndUna, 0, TcpFlags.ACK | TcpFlags.FIN, nowNs, 0);
            }
        } else if (queued > dataSent(c, sndNxt)) {
            if (send(c, sndNxt, 1, TcpFlags.ACK, nowNs, 0) >= 0) {
                advance(c, sndNxt, 1, false, nowNs);
            }
        } else if (finWanted(c, sndNxt)) {
            if (send(c, sndNxt, 0, TcpFlags.ACK | TcpFlags.FIN, nowNs, 0) >= 0) {
                advance(c, sndNxt, 0, true, nowNs);
            }
        }
        counters.txWindowProbes.incrementRelease();
    }

    /**
     * Retransmits the first unacknowledged segment without moving SND.NXT (fast retransmit, RFC 5681 §3.2; a NewReno
     * partial ACK, RFC 6582 §3.2 step 5).
     */
    void retransmitHead(int c, long nowNs) {
        final int sndUna = tcb.sndUna(c);
        final int inFlightData = dataSent(c, tcb.sndMax(c));
        final int optionSpace = prepareOptions(c);
        final int mss = Math.max(1, tcb.sndMss(c) - optionSpace);
        if (inFlightData > 0) {
            final int length = Math.min(mss, inFlightData);
            final boolean fin = tcb.hasFlag(c, F_FIN_SENT) && sndUna + length == tcb.finSeq(c);
            if (send(c, sndUna, length, TcpFlags.ACK | (fin ? TcpFlags.FIN : 0), nowNs, 0) >= 0) {
                retransmitted(c, nowNs);
            }
        } else if (tcb.hasFlag(c, F_FIN_SENT) && sndUna == tcb.finSeq(c)) {
            if (send(c, sndUna, 0, TcpFlags.ACK | TcpFlags.FIN, nowNs, 0) >= 0) {
                retransmitted(c, nowNs);
            }
        }
    }

    /** Our SYN (SYN-SENT) or SYN-ACK (SYN-RECEIVED), with the options we offer or accepted; arms the SYN timer. */
    int sendSyn(int c, long nowNs) {
        final boolean synAck = tcb.state(c) == TcpState.SYN_RECEIVED;
        final boolean timestamps = tcb.hasFlag(c, F_TIMESTAMPS);
        final boolean sackOk = tcb.hasFlag(c, F_SACK);
        final boolean scaling = tcb.hasFlag(c, F_WINDOW_SCALING);
        final int optionsLength = synOptionsLength(timestamps, sackOk, scaling);
        final int headerLength = TcpHeader.MIN_LENGTH + optionsLength;
        final int remote = tcb.remoteAddress(c);
        final int result = ipv4.begin(0, remote, IpProtocol.TCP, headerLength, 0, 0, true, nowNs);
        if (result != Ipv4Layer.OK) {
            counters.txNoBuffer.incrementRelease();
        } else {
            final int window = Math.min(layer.receiveSize[c], 65535);
            final MemorySegment out = ipv4.segment();
            final long at = ipv4.payloadOffset();
            final int rcvNxt = tcb.rcvNxt(c);
            tx.wrap(out, at, headerLength).write(tcb.localPort(c), tcb.remotePort(c), tcb.iss(c), synAck ? rcvNxt : 0,
                headerLength, synAck ? TcpFlags.SYN | TcpFlags.ACK : TcpFlags.SYN, window);
            writeSynOptions(tcb.advMss(c), timestamps, tsVal(c, nowNs), synAck ? tcb.tsRecent(c) : 0, sackOk,
                scaling ? tcb.rcvScale(c) : -1);
            finish(remote, out, at, headerLength);
            if (synAck) {
                tcb.rcvAdv(c, rcvNxt + window);
                tcb.lastAckSent(c, rcvNxt);
            }
        }
        final int iss = tcb.iss(c);
        if (tcb.retries(c) == 0 && !tcb.hasFlag(c, F_RETRANSMITTED)) {
            tcb.setFlag(c, F_RTT_TIMING);
            tcb.rttSeq(c, iss + 1);
            tcb.rttStartNs(c, nowNs);
        } else {
            retransmitted(c, nowNs);
        }
        tcb.sndNxt(c, iss + 1);
        tcb.sndMax(c, iss + 1);
        timers.arm(c, T_RTO, nowNs + rtt.rtoNs(tcb, c));
        return result;
    }

    private static int synOptionsLength(boolean timestamps, boolean sackOk, boolean scaling) {
        int length = TcpOption.MSS_LENGTH;
        if (timestamps) {
            length += TIMESTAMP_SPACE;
        } else if (sackOk) {
            length += 4;
        }
        if (scaling) {
            length += 4;
        }
        return length;
    }

    /** Linux's order: mss, sackOK (sharing the timestamp's word), TS, nop, wscale. */
    private void writeSynOptions(int mss, boolean timestamps, int tsVal, int tsEcr, boolean sackOk, int scale) {
        tx.optionByte(0, TcpOption.MSS).optionByte(1, TcpOption.MSS_LENGTH).option16(2, mss);
        int i = 4;
        if (timestamps) {
            if (sackOk) {
                tx.optionByte(i, TcpOption.SACK_PERMITTED).optionByte(i + 1, TcpOption.SACK_PERMITTED_LENGTH);
            } else {
                tx.optionByte(i, TcpOption.NOP).optionByte(i + 1, TcpOption.NOP);
            }
            tx.optionByte(i + 2, TcpOption.TIMESTAMP).optionByte(i + 3, TcpOption.TIMESTAMP_LENGTH)
                .option32(i + 4, tsVal).option32(i + 8, tsEcr);
            i += TIMESTAMP_SPACE;
        } else if (sackOk) {
            tx.optionByte(i, TcpOption.NOP).optionByte(i + 1, TcpOption.NOP)
                .optionByte(i + 2, TcpOption.SACK_PERMITTED).optionByte(i + 3, TcpOption.SACK_PERMITTED_LENGTH);
            i += 4;
        }
        if (scale >= 0) {
            tx.optionByte(i, TcpOption.NOP).optionByte(i + 1, TcpOption.WINDOW_SCALE)
                .optionByte(i + 2, TcpOption.WINDOW_SCALE_LENGTH).optionByte(i + 3, scale);
        }
    }

    /** A SYN-ACK carrying a SYN cookie (RFC 4987): no state behind it, only the MSS option (see {@link SynCookies}). */
    void sendCookieSynAck(int remote, int localPort, int remotePort, int iss, int ack, int mss, int window, long nowNs) {
        final int headerLength = TcpHeader.MIN_LENGTH + TcpOption.MSS_LENGTH;
        if (ipv4.begin(0, remote, IpProtocol.TCP, headerLength, 0, 0, true, nowNs) != Ipv4Layer.OK) {
            counters.txNoBuffer.incrementRelease();
            return;
        }
        final MemorySegment out = ipv4.segment();
        final long at = ipv4.payloadOffset();
        tx.wrap(out, at, headerLength).write(localPort, remotePort, iss, ack, headerLength,
            TcpFlags.SYN | TcpFlags.ACK, Math.min(window, 65535));
        tx.optionByte(0, TcpOption.MSS).optionByte(1, TcpOption.MSS_LENGTH).option16(2, mss);
        finish(remote, out, at, headerLength);
        counters.cookiesSent.incrementRelease();
    }

    /** A reset with no connection behind it (RFC 9293 §3.10.7.1): <SEQ=seq><ACK=ack><CTL=flags>. */
    void sendReset(int remote, int localPort, int remotePort, int seq, int ack, int flags, long nowNs) {
        if (ipv4.begin(0, remote, IpProtocol.TCP, TcpHeader.MIN_LENGTH, 0, 0, true, nowNs) != Ipv4Layer.OK) {
            counters.txNoBuffer.incrementRelease();
            return;
        }
        final MemorySegment out = ipv4.segment();
        final long at = ipv4.payloadOffset();
        tx.wrap(out, at, TcpHeader.MIN_LENGTH).write(localPort, remotePort, seq, ack, TcpHeader.MIN_LENGTH, flags, 0);
        finish(remote, out, at, TcpHeader.MIN_LENGTH);
        counters.txResets.incrementRelease();
    }

    /** Aborts a connection towards the peer (RFC 9293 §3.10.5): <SEQ=SND.NXT><ACK=RCV.NXT><CTL=RST,ACK>, as Linux. */
    void sendReset(int c, long nowNs) {
        sendReset(tcb.remoteAddress(c), tcb.localPort(c), tcb.remotePort(c), acceptableSeq(c), tcb.rcvNxt(c),
            TcpFlags.RST | TcpFlags.ACK, nowNs);
    }

    // ------------------------------------------------------------------------------------- building segments

    /**
     * Chooses the options of the next non-SYN segment: timestamps if negotiated, and SACK blocks (a pending D-SACK
     * block first, RFC 2883 §4; then the most recent out-of-order ranges, RFC 2018 §4) if negotiated and there is
     * anything to report. Returns the option bytes; {@link #send} uses what was chosen.
     */
    private int prepareOptions(int c) {
        final boolean timestamps = tcb.hasFlag(c, F_TIMESTAMPS);
        int space = timestamps ? TIMESTAMP_SPACE : 0;
        sackCount = 0;
        sackHasDsack = false;
        if (tcb.hasFlag(c, F_SACK)) {
            final int max = timestamps ? 3 : TcpOption.MAX_SACK_BLOCKS;
            if (tcb.hasFlag(c, F_DSACK)) {
                sack[0] = tcb.dsackStart(c);
                sack[1] = tcb.dsackEnd(c);
                sackCount = 1;
                sackHasDsack = true;
            }
            final int block = tcb.oooBlock(c);
            if (block >= 0) {
                sackCount += reassembly.recentBlocks(block, max - sackCount, sack, 2 * sackCount);
            }
            if (sackCount > 0) {
                space += 4 + 8 * sackCount;
            }
        }
        return space;
    }

    /**
     * Builds and sends one segment with the options chosen by the last {@link #prepareOptions}: {@code length} data
     * bytes from the send ring starting at sequence number {@code seq}. With {@code segmentSize} above zero the link
     * cuts it into segments of that size (TSO). Returns the data length sent, {@link #FAILED} or {@link #RETRY}.
     */
    int send(int c, int seq, int length, int flags, long nowNs, int segmentSize) {
        final boolean timestamps = tcb.hasFlag(c, F_TIMESTAMPS);
        final int sackBlocks = sackCount;
        final int optionSpace = (timestamps ? TIMESTAMP_SPACE : 0) + (sackBlocks > 0 ? 4 + 8 * sackBlocks : 0);
        final int headerLength = TcpHeader.MIN_LENGTH + optionSpace;
        final int total = headerLength + length;
        final int remote = tcb.remoteAddress(c);
        final int result = segmentSize > 0
            ? ipv4.beginSegmented(remote, IpProtocol.TCP, total, 0, 0, segmentSize, nowNs)
            : ipv4.begin(0, remote, IpProtocol.TCP, total, 0, 0, true, nowNs);
        if (result != Ipv4Layer.OK) {
            return sendFailed(c, result, segmentSize, nowNs);
        }
        final MemorySegment out = ipv4.segment();
        final long at = ipv4.payloadOffset();
        final int rcvNxt = tcb.rcvNxt(c);
        final int window = receiveWindow(c);
        final int scale = tcb.rcvScale(c);
        tx.wrap(out, at, total).write(tcb.localPort(c), tcb.remotePort(c), seq, rcvNxt, headerLength, flags,
            window >>> scale);
        int i = 0;
        if (timestamps) {
            tx.optionByte(0, TcpOption.NOP).optionByte(1, TcpOption.NOP).optionByte(2, TcpOption.TIMESTAMP)
                .optionByte(3, TcpOption.TIMESTAMP_LENGTH).option32(4, tsVal(c, nowNs)).option32(8, tcb.tsRecent(c));
            i = TIMESTAMP_SPACE;
        }
        if (sackBlocks > 0) {
            tx.optionByte(i, TcpOption.NOP).optionByte(i + 1, TcpOption.NOP).optionByte(i + 2, TcpOption.SACK)
                .optionByte(i + 3, 2 + 8 * sackBlocks);
            i += 4;
            for (int b = 0; b < 2 * sackBlocks; b++) {
                tx.option32(i, sack[b]);
                i += 4;
            }
        }
        long payloadSum = 0;
        if (length > 0) {
            final ByteRing ring = layer.sendRings[c];
            final long position = ring.consumerPosition() + (seq - tcb.sndUna(c));
            if (checksumOffloaded(segmentSize)) {
                ring.peek(position, out, at + headerLength, length);
            } else {
                // One pass over the payload: summed while copied. The header is a whole number of 32-bit words
                // (RFC 9293 §3.1, Data Offset), so the payload starts on a 16-bit word and its sum adds up directly.
                payloadSum = ring.peekAndAdd(0, position, out, at + headerLength, length);
            }
        }
        finish(remote, out, at, headerLength, length, payloadSum, segmentSize);
        counters.txBytes.getAndAddRelease(length);
        // Every segment carries the ACK: the delayed ACK, if any, has been sent.
        if (tcb.unackedBytes(c) > 0 && tcb.quickAcks(c) > 0) {
            tcb.quickAcks(c, tcb.quickAcks(c) - 1);
        }
        tcb.unackedBytes(c, 0);
        tcb.clearFlag(c, F_ACK_NOW);
        timers.disarm(c, T_DELAYED_ACK);
        tcb.lastAckSent(c, rcvNxt);
        tcb.rcvAdv(c, advertised(c, rcvNxt, window));
        if (sackBlocks > 0) {
            counters.txSackBlocks.getAndAddRelease(sackBlocks);
            if (sackHasDsack) {
                tcb.clearFlag(c, F_DSACK);
                counters.txDsack.incrementRelease();
            }
        }
        return length;
    }

    private int sendFailed(int c, int result, int segmentSize, long nowNs) {
        if (result == Ipv4Layer.ERR_MESSAGE_TOO_LONG) {
            if (segmentSize > 0) {
                return RETRY;
            }
            // The path MTU dropped below our segment size since we last looked (RFC 1191): use the smaller size.
            final int mss = ipv4.pathMtus().mtu(tcb.remoteAddress(c), ipv4.mtu(), nowNs) - 40;
            if (mss < tcb.sndMss(c) && mss >= 64) {
                tcb.sndMss(c, mss);
                counters.pmtuUpdates.incrementRelease();
                return RETRY;
            }
        } else if (result == Ipv4Layer.ERR_NO_BUFFER) {
            counters.txNoBuffer.incrementRelease();
            layer.requestOutput(c);
        } else if (result == Ipv4Layer.ERR_NO_ROUTE) {
            tcb.softError(c, TcpError.NET_UNREACHABLE);
        }
        return FAILED;
    }

    /** {@link #finish(int, MemorySegment, long, int, int, long, int)} for a segment without data (SYN, RST). */
    private void finish(int remote, MemorySegment out, long at, int headerLength) {
        finish(remote, out, at, headerLength, 0, 0, 0);
    }

    /**
     * Writes the checksum (or leaves it to the link, RFC 1071 partial sum as Linux CHECKSUM_PARTIAL) and commits.
     * Where the checksum is ours, {@code payloadSum} is the unfolded sum of the {@code payloadLength} data bytes,
     * taken as they were copied in; only the header is summed here.
     */
    private void finish(int remote, MemorySegment out, long at, int headerLength, int payloadLength, long payloadSum,
                        int segmentSize) {
        final long pseudo = InternetChecksum.pseudoHeader(ipv4.address().address(), remote, IpProtocol.TCP,
            headerLength + payloadLength);
        if (checksumOffloaded(segmentSize)) {
            // As Linux (CHECKSUM_PARTIAL, and GSO: the link adjusts the length for each segment it cuts).
            tx.checksum(InternetChecksum.fold(pseudo));
            ipv4.requestL4Checksum(TcpHeader.CHECKSUM_OFFSET);
        } else {
            tx.checksum(InternetChecksum.finish(InternetChecksum.add(pseudo + payloadSum, out, at, headerLength)));
        }
        ipv4.commit();
        counters.txSegments.incrementRelease();
    }

    /** True when the link completes the checksum of the open frame: always with TSO, else if it offers to. */
    private boolean checksumOffloaded(int segmentSize) {
        return segmentSize > 0 || ipv4.l4ChecksumOffload();
    }

    /** Our TSval (RFC 7323 §5.4): a millisecond clock plus the connection's random offset. */
    int tsVal(int c, long nowNs) {
        return (int) (nowNs / 1_000_000L) + tcb.tsOffset(c);
    }

    /**
     * The window to advertise, in bytes (RFC 9293 §3.8.6.2.2): free room in the receive ring, capped by what the
     * window field can say, moving the right edge forward only in steps of at least min(buffer / 2, MSS) (receiver
     * silly window avoidance), and a multiple of the window scale unit, rounded down. Never more than the ring's
     * room: a byte offered is a byte the ring can hold. Rounding down can offer an edge up to one unit short of one
     * offered before, which RFC 7323 Appendix F allows; the edge the peer may fill stays the furthest one offered
     * ({@code rcvAdv} only grows, see {@link #advertised}), and the ring has room up to it because its room
     * plus RCV.NXT never decreases. Rounding up instead (as Linux does, with slack in its buffer accounting) made the
     * peer send bytes past the ring's end, trimmed and retransmitted (the veth benchmark's SACK recoveries).
     */
    int receiveWindow(int c) {
        final int capacity = layer.receiveSize[c];
        final int free = tcb.hasFlag(c, F_RINGS) ? layer.receiveRings[c].freeSpace() : capacity;
        final int scale = tcb.rcvScale(c);
        int window = Math.min(free, 65535 << scale);
        final int current = Math.max(0, tcb.rcvAdv(c) - tcb.rcvNxt(c));
        if (window > current && window - current < Math.min(capacity / 2, tcb.advMss(c))) {
            window = current;
        }
        return (window >>> scale) << scale;
    }

    /** The right edge offered so far after advertising {@code window} at {@code rcvNxt}: it never moves back. */
    private int advertised(int c, int rcvNxt, int window) {
        return SeqNum.max(tcb.rcvAdv(c), rcvNxt + window);
    }
}
