package dev.tern.tcp;

import dev.tern.core.checksum.InternetChecksum;
import dev.tern.core.io.ByteRing;
import dev.tern.ipv4.Ipv4Layer;
import dev.tern.tcp.wire.TcpFlags;
import dev.tern.tcp.wire.TcpHeader;
import dev.tern.tcp.wire.TcpOption;

import java.lang.foreign.MemorySegment;

import static dev.tern.tcp.TcpControlBlocks.F_FAST_OPEN;
import static dev.tern.tcp.TcpControlBlocks.F_RETRANSMITTED;
import static dev.tern.tcp.TcpControlBlocks.F_RTT_TIMING;
import static dev.tern.tcp.TcpControlBlocks.F_SACK;
import static dev.tern.tcp.TcpControlBlocks.F_TIMESTAMPS;
import static dev.tern.tcp.TcpControlBlocks.F_WINDOW_SCALING;

/**
 * Builds and sends segments, in place in the link frame: the header, the options (encoded in one place,
 * {@link #writeOptions}, for SYN, SYN-ACK, cookie SYN-ACK and every other segment), the payload copied once from the
 * send ring and summed in the same pass unless the link offloads the checksum. What to send and when is the
 * {@link TcpSender}'s and the {@link TcpReceiver}'s business; every segment carries the receiver's ACK and window, and
 * tells the receiver it did ({@link TcpReceiver#onAckSent}).
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
    /** The send MSS over IPv6 until the peer's SYN says otherwise (RFC 9293 §3.7.1: 1280 - 60). */
    static final int DEFAULT_MSS6 = 1220;

    private final TcpControlBlocks tcb;
    private final IpOutput ip;
    private final TcpPath path;
    private final TcpCounters counters;
    private final Ecn ecn;
    private final TcpHeader tx = new TcpHeader();
    private final int[] sack = new int[2 * TcpOption.MAX_SACK_BLOCKS];
    private final boolean[] dsackFirst = new boolean[1];
    private int sackCount;
    private TcpReceiver receiver;
    /** The Fast Open option of the next SYN or SYN-ACK ({@link #fastOpenOnNextSyn}): cookie bytes, or -1 for none. */
    private int synCookieLength = -1;
    private long synCookie;
    private long synCookieLow;
    private boolean synCookieExperimental;
    /** Bytes from the send ring the next SYN carries ({@link #synDataOnNextSyn}, Fast Open's client). */
    private int synData;

    private final ConnectionBuffers buffers;
    private final OutputQueue outputQueue;

    TcpOutput(TcpControlBlocks tcb, IpOutput ip, TcpPath path, TcpCounters counters, ConnectionBuffers buffers,
              OutputQueue outputQueue, Ecn ecn, ConnectionSettings settings) {
        this.settings = settings;
        this.tcb = tcb;
        this.ecn = ecn;
        this.ip = ip;
        this.path = path;
        this.counters = counters;
        this.buffers = buffers;
        this.outputQueue = outputQueue;
    }

    /** Per-connection settings: whether a connection's SYN offers no option (TCP_NOOPT). */
    private final ConnectionSettings settings;

    void receiver(TcpReceiver receiver) {
        this.receiver = receiver;
    }

    // ------------------------------------------------------------------------------------ special segments

    /**
     * An ACK now: <SEQ=SND.NXT><ACK=RCV.NXT><CTL=ACK>, with timestamps and SACK blocks as negotiated. The sequence
     * number is the highest we sent (SND.MAX), as Linux's tcp_acceptable_seq.
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
     * The next {@link #sendSyn} carries a Fast Open option (RFC 7413 §4.1.1) with {@code length} bytes of the cookie
     * {@code high} then {@code low} (its first byte on top of {@code high}; 0 bytes: a cookie request), as kind 254
     * with ExID 0xF989 if {@code experimental}. Only that one: a retransmitted SYN or SYN-ACK goes without, as Linux's.
     */
    void fastOpenOnNextSyn(int length, long high, long low, boolean experimental) {
        synCookieLength = length;
        synCookie = high;
        synCookieLow = low;
        synCookieExperimental = experimental;
    }

    /** The next {@link #sendSyn} (an active open's first) carries the first {@code bytes} of the send ring. */
    void synDataOnNextSyn(int bytes) {
        synData = bytes;
    }

    /** Bytes of the Fast Open option the next SYN carries, padded to a multiple of four (0 without one). */
    private int fastOpenSpace() {
        if (synCookieLength < 0) {
            return 0;
        }
        final int base = synCookieExperimental ? TcpOption.FAST_OPEN_EXPERIMENTAL_BASE_LENGTH
            : TcpOption.FAST_OPEN_BASE_LENGTH;
        return (base + synCookieLength + 3) & ~3;
    }

    /**
     * The Fast Open option at option byte {@code at}, as Linux writes it (after the others, two NOPs after it when
     * its length leaves two bytes of a word); returns the offset after it.
     */
    private int writeFastOpen(int at) {
        final int space = fastOpenSpace();
        int i = at;
        if (synCookieExperimental) {
            tx.optionByte(i, TcpOption.EXPERIMENTAL)
                .optionByte(i + 1, TcpOption.FAST_OPEN_EXPERIMENTAL_BASE_LENGTH + synCookieLength)
                .option16(i + 2, TcpOption.FAST_OPEN_MAGIC);
            i += TcpOption.FAST_OPEN_EXPERIMENTAL_BASE_LENGTH;
        } else {
            tx.optionByte(i, TcpOption.FAST_OPEN).optionByte(i + 1, TcpOption.FAST_OPEN_BASE_LENGTH + synCookieLength);
            i += TcpOption.FAST_OPEN_BASE_LENGTH;
        }
        for (int b = 0; b < synCookieLength; b++) {
            final long word = b < 8 ? synCookie : synCookieLow;
            tx.optionByte(i++, (int) (word >>> (56 - 8 * (b % 8))) & 0xFF);
        }
        while (i < at + space) {
            tx.optionByte(i++, TcpOption.NOP);
        }
        return i;
    }

    /** Our SYN (SYN-SENT) or SYN-ACK (SYN-RECEIVED), with the options we offer or accepted; arms the SYN timer. */
    int sendSyn(int c, long nowNs) {
        final boolean synAck = tcb.state(c) == TcpState.SYN_RECEIVED;
        final boolean timestamps = tcb.hasFlag(c, F_TIMESTAMPS);
        final boolean sackOk = tcb.hasFlag(c, F_SACK);
        final int scale = tcb.hasFlag(c, F_WINDOW_SCALING) ? tcb.rcvScale(c) : -1;
        final boolean mss = !settings.noOptions(c); // TCP_NOOPT: not even the MSS (RFC 9293 §3.7.1's 536 then holds)
        final int headerLength = TcpHeader.MIN_LENGTH + optionsLength(mss, scale, sackOk, timestamps, 0)
            + fastOpenSpace();
        final int data = synAck ? 0 : synData;
        // RFC 3168 §6.1.1: a SYN or SYN-ACK is never ECT.
        final int result = ip.open(c, headerLength + data, tcb.tos(c) & ~Ecn.IP_MASK, nowNs);
        if (result != Ipv4Layer.OK) {
            counters.txNoBuffer.incrementRelease();
        } else {
            final int window = receiver.synWindow(c);
            final MemorySegment out = ip.segment();
            final long at = ip.payloadOffset();
            final int rcvNxt = tcb.rcvNxt(c);
            tx.wrap(out, at, headerLength + data).write(tcb.localPort(c), tcb.remotePort(c), tcb.iss(c),
                synAck ? rcvNxt : 0, headerLength, (synAck ? TcpFlags.SYN | TcpFlags.ACK : TcpFlags.SYN)
                | ecn.synFlags(c, synAck), window);
            final int written = writeOptions(mss ? tcb.advMss(c) : -1, scale, sackOk, timestamps, tsVal(c, nowNs),
                synAck ? tcb.tsRecent(c) : 0, 0);
            if (synCookieLength >= 0) {
                writeFastOpen(written);
            }
            long payloadSum = 0;
            if (data > 0) {
                // Fast Open's data in the SYN (RFC 7413 §4.2.1): the ring's first bytes, summed while copied.
                final ByteRing ring = buffers.sendRing(c);
                if (checksumOffloaded(0)) {
                    ring.peek(ring.consumerPosition(), out, at + headerLength, data);
                } else {
                    payloadSum = ring.peekAndAdd(0, ring.consumerPosition(), out, at + headerLength, data);
                }
                counters.txBytes.getAndAddRelease(data);
            }
            finish(out, at, headerLength, data, payloadSum, 0);
            if (synAck) {
                tcb.rcvAdv(c, rcvNxt + window);
                tcb.lastAckSent(c, rcvNxt);
            }
        }
        synCookieLength = -1;   // sent or not, the option and data were for this SYN only
        synData = 0;
        final int iss = tcb.iss(c);
        final boolean again = tcb.retries(c) != 0 || tcb.hasFlag(c, F_RETRANSMITTED);
        if (tcb.retries(c) == 0 && !tcb.hasFlag(c, F_RETRANSMITTED)) {
            tcb.setFlag(c, F_RTT_TIMING);
            tcb.rttSeq(c, iss + 1);
            tcb.rttStartNs(c, nowNs);
        } else if (result == Ipv4Layer.OK) {
            // Karn's rule (RFC 6298 §3): a retransmitted SYN gives no RTT sample. One that never left is not counted.
            counters.txRetransmits.incrementRelease();
            tcb.retransmits(c, tcb.retransmits(c) + 1);
            tcb.clearFlag(c, F_RTT_TIMING);
            tcb.setFlag(c, F_RETRANSMITTED);
            tcb.retransmitTsVal(c, tsVal(c, nowNs));
        }
        if (synAck && tcb.hasFlag(c, F_FAST_OPEN) && SeqNum.gt(tcb.sndMax(c), iss + 1)) {
            // A Fast Open connection's SYN-ACK again: the data it sent since stays in flight (its record holds it).
            return result;
        }
        tcb.sndNxt(c, iss + 1 + (result == Ipv4Layer.OK ? data : 0));
        // SND.MAX never falls: a SYN sent again without the first one's Fast Open data (RFC 7413 §4.2.1) leaves that
        // data sent, and a SYN-ACK that acknowledges it is acceptable (as Linux's).
        tcb.sndMax(c, again && SeqNum.gt(tcb.sndMax(c), tcb.sndNxt(c)) ? tcb.sndMax(c) : tcb.sndNxt(c));
        return result;
    }

    /**
     * A SYN-ACK carrying a SYN cookie (RFC 4987) in answer to {@code syn}: no state behind it, only the MSS option
     * (see {@link SynCookies}).
     */
    void sendCookieSynAck(TcpSegment syn, int iss, int ack, int mss, int window, long nowNs) {
        final int headerLength = TcpHeader.MIN_LENGTH + optionsLength(true, -1, false, false, 0);
        if (ip.openAnswer(syn, headerLength, nowNs) != Ipv4Layer.OK) {
            counters.txNoBuffer.incrementRelease();
            return;
        }
        final MemorySegment out = ip.segment();
        final long at = ip.payloadOffset();
        tx.wrap(out, at, headerLength).write(syn.destinationPort, syn.sourcePort, iss, ack, headerLength,
            TcpFlags.SYN | TcpFlags.ACK, Math.min(window, 65535));
        writeOptions(mss, -1, false, false, 0, 0, 0);
        finish(out, at, headerLength);
        counters.cookiesSent.incrementRelease();
    }

    // -------------------------------------------------------------------------------------------------- options

    /**
     * Bytes of the options {@link #writeOptions} writes for the same arguments ({@code mss} true when an MSS option
     * goes, on a SYN).
     */
    private static int optionsLength(boolean mss, int scale, boolean sackPermitted, boolean timestamps,
                                     int sackBlocks) {
        int length = mss ? TcpOption.MSS_LENGTH : 0;
        if (timestamps) {
            length += TIMESTAMP_SPACE;
        } else if (sackPermitted) {
            length += 4;
        }
        if (scale >= 0) {
            length += 4;
        }
        if (sackBlocks > 0) {
            length += 4 + 8 * sackBlocks;
        }
        return length;
    }

    /**
     * Every option Tern sends, in Linux's order and padding (so captures compare with the kernel's): MSS (if
     * {@code mss} &gt;= 0), SACK-permitted sharing the timestamp's word or padded with two NOPs, timestamps
     * (RFC 7323 §3) after two NOPs, window scale after a NOP (if {@code scale} &gt;= 0), and the {@code sackBlocks}
     * blocks of {@link #sack} after two NOPs (RFC 2018 §3). Returns the bytes written, always a multiple of four.
     */
    private int writeOptions(int mss, int scale, boolean sackPermitted, boolean timestamps, int tsVal, int tsEcr,
                             int sackBlocks) {
        int i = 0;
        if (mss >= 0) {
            tx.optionByte(0, TcpOption.MSS).optionByte(1, TcpOption.MSS_LENGTH).option16(2, mss);
            i = TcpOption.MSS_LENGTH;
        }
        if (timestamps) {
            if (sackPermitted) {
                tx.optionByte(i, TcpOption.SACK_PERMITTED).optionByte(i + 1, TcpOption.SACK_PERMITTED_LENGTH);
            } else {
                tx.optionByte(i, TcpOption.NOP).optionByte(i + 1, TcpOption.NOP);
            }
            tx.optionByte(i + 2, TcpOption.TIMESTAMP).optionByte(i + 3, TcpOption.TIMESTAMP_LENGTH)
                .option32(i + 4, tsVal).option32(i + 8, tsEcr);
            i += TIMESTAMP_SPACE;
        } else if (sackPermitted) {
            tx.optionByte(i, TcpOption.NOP).optionByte(i + 1, TcpOption.NOP)
                .optionByte(i + 2, TcpOption.SACK_PERMITTED).optionByte(i + 3, TcpOption.SACK_PERMITTED_LENGTH);
            i += 4;
        }
        if (scale >= 0) {
            tx.optionByte(i, TcpOption.NOP).optionByte(i + 1, TcpOption.WINDOW_SCALE)
                .optionByte(i + 2, TcpOption.WINDOW_SCALE_LENGTH).optionByte(i + 3, scale);
            i += 4;
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
        return i;
    }

    /**
     * A reset with no connection behind it (RFC 9293 §3.10.7.1) in answer to {@code seg}, from the address and port it
     * was sent to: <SEQ=seq><ACK=ack><CTL=flags>.
     */
    void sendReset(TcpSegment seg, int seq, int ack, int flags, long nowNs) {
        final int headerLength = TcpHeader.MIN_LENGTH;
        if (ip.openAnswer(seg, headerLength, nowNs) != Ipv4Layer.OK) {
            counters.txNoBuffer.incrementRelease();
            return;
        }
        writeReset(seg.destinationPort, seg.sourcePort, seq, ack, flags, headerLength, false, 0, 0);
    }

    /**
     * Aborts a connection towards the peer (RFC 9293 §3.10.5): <SEQ=SND.NXT><ACK=RCV.NXT><CTL=RST,ACK>, as Linux;
     * with the timestamp option where it was negotiated (RFC 7323 §3.2: SHOULD be sent in a RST), its TSval from the
     * connection's clock and TSecr its TS.Recent, as Linux's active reset.
     */
    void sendReset(int c, long nowNs) {
        final boolean timestamps = tcb.hasFlag(c, F_TIMESTAMPS);
        final int headerLength = TcpHeader.MIN_LENGTH + optionsLength(false, -1, false, timestamps, 0);
        if (ip.open(c, headerLength, 0, nowNs) != Ipv4Layer.OK) {
            counters.txNoBuffer.incrementRelease();
            return;
        }
        writeReset(tcb.localPort(c), tcb.remotePort(c), acceptableSeq(c), tcb.rcvNxt(c), TcpFlags.RST | TcpFlags.ACK,
            headerLength, timestamps, tsVal(c, nowNs), tcb.tsRecent(c));
    }

    /** The reset's header and options into the open packet, and the commit. */
    private void writeReset(int localPort, int remotePort, int seq, int ack, int flags, int headerLength,
                            boolean timestamps, int tsVal, int tsEcr) {
        final MemorySegment out = ip.segment();
        final long at = ip.payloadOffset();
        tx.wrap(out, at, headerLength).write(localPort, remotePort, seq, ack, headerLength, flags, 0);
        writeOptions(-1, -1, false, timestamps, tsVal, tsEcr, 0);
        finish(out, at, headerLength);
        counters.txResets.incrementRelease();
    }

    // ------------------------------------------------------------------------------------- building segments

    /**
     * Chooses the options of the next segment that is not a SYN: timestamps if negotiated, and the receiver's SACK
     * blocks if any ({@link TcpReceiver#sackBlocks}; three with timestamps, else four, RFC 2018 §3). Returns the
     * option bytes; {@link #send} uses what was chosen.
     */
    int prepareOptions(int c) {
        final boolean timestamps = tcb.hasFlag(c, F_TIMESTAMPS);
        sackCount = receiver.sackBlocks(c, sack, timestamps ? 3 : TcpOption.MAX_SACK_BLOCKS, dsackFirst);
        return optionsLength(false, -1, false, timestamps, sackCount);
    }

    /** SACK blocks the last {@link #prepareOptions} chose (the sender sends no TSO frame while there are any). */
    int sackBlocksPrepared() {
        return sackCount;
    }

    /**
     * Builds and sends one segment with the options chosen by the last {@link #prepareOptions}: {@code length} data
     * bytes from the send ring starting at sequence number {@code seq}. With {@code segmentSize} above zero the link
     * cuts it into segments of that size (TSO). {@code flags} may add {@link Ecn#PROBE} (a window probe, never ECT).
     * Returns the data length sent, {@link #FAILED} or {@link #RETRY}.
     */
    int send(int c, int seq, int length, int flags, long nowNs, int segmentSize) {
        final boolean timestamps = tcb.hasFlag(c, F_TIMESTAMPS);
        final int sackBlocks = sackCount;
        final int headerLength = TcpHeader.MIN_LENGTH + optionsLength(false, -1, false, timestamps, sackBlocks);
        final int total = headerLength + length;
        final int tos = ecn.tos(c, seq, length, flags);
        final int result = segmentSize > 0 ? ip.openSegmented(c, total, tos, segmentSize, nowNs)
            : ip.open(c, total, tos, nowNs);
        if (result != Ipv4Layer.OK) {
            return sendFailed(c, result, segmentSize, nowNs);
        }
        final MemorySegment out = ip.segment();
        final long at = ip.payloadOffset();
        final int rcvNxt = tcb.rcvNxt(c);
        final int window = receiver.receiveWindow(c);
        tx.wrap(out, at, total).write(tcb.localPort(c), tcb.remotePort(c), seq, rcvNxt, headerLength,
            ecn.flags(c, seq, length, flags), window >>> tcb.rcvScale(c));
        writeOptions(-1, -1, false, timestamps, tsVal(c, nowNs), tcb.tsRecent(c), sackBlocks);
        long payloadSum = 0;
        if (length > 0) {
            final ByteRing ring = buffers.sendRing(c);
            // In SYN-RECEIVED (Fast Open) the unacknowledged SYN takes SND.UNA, which holds no byte of the ring.
            final long position = ring.consumerPosition() + (seq - tcb.sndUna(c))
                - (tcb.state(c) == TcpState.SYN_RECEIVED ? 1 : 0);
            if (checksumOffloaded(segmentSize)) {
                ring.peek(position, out, at + headerLength, length);
            } else {
                // One pass over the payload: summed while copied. The header is a whole number of 32-bit words
                // (RFC 9293 §3.1, Data Offset), so the payload starts on a 16-bit word and its sum adds up directly.
                payloadSum = ring.peekAndAdd(0, position, out, at + headerLength, length);
            }
        }
        finish(out, at, headerLength, length, payloadSum, segmentSize);
        counters.txBytes.getAndAddRelease(length);
        if (length > 0) {
            receiver.onDataSent(c, nowNs);
        }
        // Every segment carries the ACK.
        receiver.onAckSent(c, rcvNxt, window, sackBlocks > 0 && dsackFirst[0]);
        if (sackBlocks > 0) {
            counters.txSackBlocks.getAndAddRelease(sackBlocks);
            if (dsackFirst[0]) {
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
            final int mss = path.mssOf(c, nowNs);
            if (mss < tcb.sndMss(c) && mss >= 64) {
                tcb.sndMss(c, mss);
                counters.pmtuUpdates.incrementRelease();
                return RETRY;
            }
        } else if (result == Ipv4Layer.ERR_NO_BUFFER) {
            counters.txNoBuffer.incrementRelease();
            outputQueue.request(c);
        } else if (result == Ipv4Layer.ERR_NO_ROUTE) {
            tcb.softError(c, TcpError.NET_UNREACHABLE);
        }
        return FAILED;
    }

    /** {@link #finish(MemorySegment, long, int, int, long, int)} for a segment without data (SYN, RST). */
    private void finish(MemorySegment out, long at, int headerLength) {
        finish(out, at, headerLength, 0, 0, 0);
    }

    /**
     * Writes the checksum (or leaves it to the link, RFC 1071 partial sum as Linux CHECKSUM_PARTIAL) and commits.
     * Where the checksum is ours, {@code payloadSum} is the unfolded sum of the {@code payloadLength} data bytes,
     * taken as they were copied in; only the header is summed here.
     */
    private void finish(MemorySegment out, long at, int headerLength, int payloadLength, long payloadSum,
                        int segmentSize) {
        final long pseudo = ip.pseudoHeaderSum(headerLength + payloadLength);
        if (checksumOffloaded(segmentSize)) {
            // As Linux (CHECKSUM_PARTIAL, and GSO: the link adjusts the length for each segment it cuts).
            tx.checksum(InternetChecksum.fold(pseudo));
            ip.requestChecksum(TcpHeader.CHECKSUM_OFFSET);
        } else {
            tx.checksum(InternetChecksum.finish(InternetChecksum.add(pseudo + payloadSum, out, at, headerLength)));
        }
        ip.commit();
        counters.txSegments.incrementRelease();
    }

    /** True when the link completes the checksum of the open frame: always with TSO, else if it offers to. */
    private boolean checksumOffloaded(int segmentSize) {
        return segmentSize > 0 || ip.checksumOffload();
    }

    /** Our TSval (RFC 7323 §5.4): a millisecond clock plus the connection's random offset. */
    int tsVal(int c, long nowNs) {
        return (int) (nowNs / 1_000_000L) + tcb.tsOffset(c);
    }
}
