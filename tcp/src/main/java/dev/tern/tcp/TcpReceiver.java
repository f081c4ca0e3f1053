package dev.tern.tcp;

import dev.tern.core.io.ByteRing;
import dev.tern.tcp.wire.TcpFlags;

import static dev.tern.tcp.TcpControlBlocks.F_ACK_NOW;
import static dev.tern.tcp.TcpControlBlocks.F_ALLOCATED;
import static dev.tern.tcp.TcpControlBlocks.F_DSACK;
import static dev.tern.tcp.TcpControlBlocks.F_FIN_PENDING;
import static dev.tern.tcp.TcpControlBlocks.F_RECEIVE_RECLAIMED;
import static dev.tern.tcp.TcpControlBlocks.F_RELEASED;
import static dev.tern.tcp.TcpControlBlocks.F_RINGS;
import static dev.tern.tcp.TcpControlBlocks.F_SACK;
import static dev.tern.tcp.TcpControlBlocks.F_WINDOW_CLAMPED;
import static dev.tern.tcp.TcpControlBlocks.T_DELAYED_ACK;

/**
 * The receiving half of TCP: the receive sequence space (RCV.NXT, the advertised edge), segment text into the receive
 * ring (in order or ahead of a hole, {@link ReassemblyQueue}), the FIN, when ACKs go (delayed, quick, immediate),
 * the SACK and D-SACK blocks they carry, and the window they advertise.
 *
 * <h2>Where each rule lives</h2>
 * <ul>
 *   <li>Segment text, RFC 9293 §3.10.7.4 seventh check (trimmed to the window): {@link #receiveText}; data into the
 *       ring and RCV.NXT: {@link #storeData}; the FIN, eighth check: {@link #finArrives}.</li>
 *   <li>ACK policy, RFC 5681 §4.2 and RFC 9293 §3.8.6.3: every second full segment (or every second segment, by
 *       the {@link ReceivePolicy}), at once for an out-of-order segment (without SACK one per segment; with SACK one
 *       per new range, the rest at the end of the burst) or one that fills a hole, else within the delayed-ACK time:
 *       {@link #storeData}, {@link #onDelayedAckTimeout}.</li>
 *   <li>SACK blocks, RFC 2018 §4 (most recent first) and RFC 2883 (a D-SACK first): {@link #sackBlocks}.</li>
 *   <li>The window, RFC 9293 §3.8.6.2.2 (receiver silly window avoidance) and RFC 7323 §2.3, by the configured
 *       rule: {@link ReceiveWindow}, {@link #onAckSent}, {@link #consumed}; held back under memory pressure and
 *       reopened after it ({@link TcpMemoryPressure}, {@link #reopenClampedWindows}).</li>
 *   <li>Zero-copy receive (not an RFC matter; docs/DESIGN.md "Zero-copy receive"): in-order text offered in place to
 *       the owner's {@link TcpReceiveHandler}, the ring as fallback, order kept: {@link #storeData}.</li>
 * </ul>
 *
 * <p>Owned by the shard thread; not thread-safe.
 */
final class TcpReceiver {
    private final TcpControlBlocks tcb;
    private final TcpOutput output;
    private final ReassemblyQueue reassembly;
    private final TcpCounters counters;
    private final ConnectionSettings settings;
    private final TcpTimers timers;
    private final ConnectionBuffers buffers;
    private final ReceiveHandlers handlers;
    private final OutputQueue outputQueue;
    private final EventQueue events;
    private final TcpMemoryPressure memoryPressure;
    private final ConnectionLifecycle lifecycle;
    private final TcpSender sender;
    private final ReceiveWindow window;
    private final ReceivePolicy.AckRule ackRule;

    TcpReceiver(TcpControlBlocks tcb, TcpOutput output, ReassemblyQueue reassembly, TcpCounters counters,
                ConnectionSettings settings, TcpTimers timers, ConnectionBuffers buffers, ReceiveHandlers handlers,
                OutputQueue outputQueue, EventQueue events, TcpMemoryPressure memoryPressure,
                ConnectionLifecycle lifecycle, TcpSender sender) {
        this.tcb = tcb;
        this.output = output;
        this.reassembly = reassembly;
        this.counters = counters;
        this.settings = settings;
        this.timers = timers;
        this.buffers = buffers;
        this.handlers = handlers;
        this.outputQueue = outputQueue;
        this.events = events;
        this.memoryPressure = memoryPressure;
        this.lifecycle = lifecycle;
        this.sender = sender;
        this.window = new ReceiveWindow(tcb, buffers, handlers, memoryPressure, settings.current());
        this.ackRule = settings.current().receivePolicy().acks();
    }

    // ------------------------------------------------------------------------------------------- segment text

    /** Seventh and eighth checks: the data (trimmed to the window) and the FIN. */
    void receiveText(int c, TcpSegment seg, long nowNs) {
        final int state = tcb.state(c);
        if (!TcpState.canReceive(state)) {
            // CLOSE-WAIT, CLOSING, LAST-ACK, TIME-WAIT: the peer's FIN came already; "Ignore the segment text". A
            // retransmission of what we have (its FIN, say: our ACK was lost) is acknowledged again, and in
            // TIME-WAIT restarts the 2 MSL timeout. In TIME-WAIT any text is answered with an ACK, as Linux's
            // tcp_timewait_state_process and FreeBSD's tcp_twcheck answer all but a bare ACK at RCV.NXT.
            if (SeqNum.lt(seg.seq, tcb.rcvNxt(c)) || state == TcpState.TIME_WAIT) {
                if (state == TcpState.TIME_WAIT && seg.has(TcpFlags.FIN)) {
                    lifecycle.restartTimeWait(c, nowNs);
                }
                outputQueue.ackNow(c);
            }
            return;
        }
        final int rcvNxt = tcb.rcvNxt(c);
        final int dataStart = seg.seq;
        final int dataEnd = dataStart + seg.payloadLength;
        boolean fin = seg.has(TcpFlags.FIN);
        boolean acked = false;
        if (seg.payloadLength > 0) {
            final int skip = SeqNum.lt(dataStart, rcvNxt) ? rcvNxt - dataStart : 0;
            if (skip > 0) {
                // Partly old: report the duplicate part (RFC 2883 §4.1.1).
                counters.rxDuplicateBytes.getAndAddRelease(Math.min(skip, seg.payloadLength));
                dsack(c, dataStart, SeqNum.min(rcvNxt, dataEnd));
            }
            final int start = SeqNum.max(dataStart, rcvNxt);
            // The receive ring is attached with the first data (rings on demand, ConnectionBuffers.ensureRings).
            if (!buffers.ensureRings(c)) {
                counters.drop(TcpCounters.DROP_BAD_STATE);
                return;
            }
            // Trim to the receive window (what we offered, or by FreeBSD's rule the free room if more), and to the
            // room the ring really has.
            final int free = buffers.receiveRing(c).freeSpace();
            final int windowEnd = SeqNum.min(rcvNxt + window.acceptance(c), rcvNxt + free);
            final int end = SeqNum.min(dataEnd, windowEnd);
            if (SeqNum.lt(end, dataEnd)) {
                // RFC 9293 §3.10.7.4: text beyond the window is trimmed; the peer will send it again.
                counters.rxBeyondWindowBytes.getAndAddRelease(dataEnd - SeqNum.max(end, start));
                fin = false;
            }
            if (SeqNum.gt(end, start)) {
                if (tcb.hasFlag(c, F_RELEASED)) {
                    // Data for a connection its owner closed can never be read: reset (RFC 9293 §3.10.4 lets CLOSE
                    // discard; Linux answers with a reset, "TCPAbortOnData").
                    counters.drop(TcpCounters.DROP_DATA_AFTER_CLOSE);
                    output.sendReset(c, nowNs);
                    counters.aborted.incrementRelease();
                    lifecycle.terminate(c, TcpError.ABORTED, nowNs);
                    return;
                }
                acked = storeData(c, seg, start, end, seg.payloadOffset + (start - dataStart), nowNs);
            } else if (skip == 0) {
                counters.drop(TcpCounters.DROP_OUT_OF_WINDOW);
                outputQueue.ackNow(c);
            } else {
                outputQueue.ackNow(c);
            }
        }
        if (fin) {
            finArrives(c, dataEnd, !acked, nowNs);
        }
    }

    /**
     * Copies {@code [start, end)} into the receive ring at its place; moves RCV.NXT when it is next in order.
     *
     * <p>RFC 5681 §4.2: "A TCP receiver SHOULD send an immediate duplicate ACK when an out-of-order segment arrives",
     * and "an immediate ACK [...] when the incoming segment fills in all or part of a gap". A segment that fills a
     * hole is acknowledged at once: that ACK moves SND.UNA and ends the sender's recovery, and sending it apart from
     * the rest of its burst keeps one lost ACK from leaving the sender with nothing but its RTO. Without SACK every
     * out-of-order segment gets its own ACK too: the peer counts duplicate ACKs. With SACK the information is in the
     * blocks, not the count, so an out-of-order segment is acknowledged at once only when it opens a new range or
     * repeats held data (D-SACK); one that grows a held range waits for the end of the receive burst, whose ACK
     * reports that range first (RFC 2018 §4). The flight after a loss then costs two ACKs, not one per segment.
     * Returns true when an immediate ACK went (it covered the segment's out-of-order FIN too).
     */
    private boolean storeData(int c, TcpSegment seg, int start, int end, long sourceOffset, long nowNs) {
        final ByteRing ring = buffers.receiveRing(c);
        final int rcvNxt = tcb.rcvNxt(c);
        final int length = end - start;
        int block = tcb.oooBlock(c);
        if (tcb.hasFlag(c, F_RECEIVE_RECLAIMED)) {
            // The ring's pages went back while it idled (TcpMemoryPressure); they come back as this text is written.
            tcb.clearFlag(c, F_RECEIVE_RECLAIMED);
        }
        if (start == rcvNxt) {
            // Zero-copy receive: next in order with nothing held beyond it, so the owner's handler may take it where
            // it lies; the ring gets what it leaves. Behind a hole the ring holds later bytes at their places, so a
            // filling segment goes into the ring and the handler gets the joined run from there (below).
            final boolean handler = handlers.has(c);
            int drained = 0;
            int inPlace = 0;
            if (handler && block < 0) {
                if (ring.available() > 0) {
                    drained = handlers.drain(c);
                }
                if (ring.available() == 0) {
                    inPlace = handlers.offerInPlace(c, seg.payloadSegment, sourceOffset, length);
                }
            }
            final long producer = ring.producerPosition();
            if (inPlace < length) {
                copyIntoRing(ring, producer, seg, sourceOffset + inPlace, length - inPlace);
            }
            int next = end;
            boolean filledHole = false;
            if (block >= 0) {
                // A first duplicate, before RCV.NXT, was reported already: RFC 2883 has one D-SACK block per ACK.
                repeatsHeld(c, block, start, end, start == seg.seq);
                next = reassembly.advance(block, end);
                filledHole = true;
                if (reassembly.count(block) == 0) {
                    reassembly.release(block);
                    tcb.oooBlock(c, -1);
                }
            }
            ring.publish(producer + (next - rcvNxt) - inPlace);
            if (filledHole && handler) {
                drained += handlers.drain(c);
            }
            tcb.rcvNxt(c, next);
            if (drained > 0 && window.updateWorthSending(c)) {
                // The handler took what it had left in the ring: the window that opened goes now, not at the
                // delayed ACK.
                counters.txWindowUpdates.incrementRelease();
                outputQueue.ackNow(c);
            }
            tcb.bytesReceived(c, tcb.bytesReceived(c) + (next - rcvNxt));
            tcb.lastDataReceiveNs(c, nowNs);
            counters.rxBytes.getAndAddRelease(next - rcvNxt);
            if (length > tcb.rcvMss(c)) {
                tcb.rcvMss(c, Math.min(length, tcb.advMss(c)));
            }
            events.signal(c, TcpControlBlocks.EV_READABLE);
            tcb.setSenderFlag(c, SenderState.S_ACK_TIMED);
            final int unacked = tcb.unackedBytes(c) + length;
            tcb.unackedBytes(c, unacked);
            if (tcb.hasFlag(c, F_FIN_PENDING) && tcb.rcvFinSeq(c) == next) {
                finArrives(c, next, true, nowNs);
                return false;
            }
            if (filledHole) {
                ackImmediately(c, nowNs);
                return true;
            } else if (tcb.quickAcks(c) > 0 && !tcb.hasSenderFlag(c, SenderState.S_INTERACTIVE)
                || secondSegment(c, length, unacked) || tcb.hasFlag(c, F_DSACK)) {
                // RFC 5681 §4.2 / RFC 9293 §3.8.6.3: ACK at least every second full-sized segment (by the policy's
                // rule), and at once while still in quick-ACK mode and not interactive; a D-SACK goes at once too.
                // Else within the delayed ACK time.
                outputQueue.ackNow(c);
            } else if (!timers.armed(c, T_DELAYED_ACK)) {
                timers.arm(c, TimerKind.DELAYED_ACK, nowNs + settings.of(c).delayedAckNs());
            }
            return false;
        }
        counters.rxOutOfOrder.incrementRelease();
        if (block >= 0 && memoryPressure.atLimit() && SeqNum.gt(start, reassembly.end(block, 0))) {
            // At the memory limit text beyond the first range held is refused (TcpMemoryPressure): the peer sends it
            // again once the first hole is filled. Nothing held is dropped, so nothing SACKed is reneged on.
            counters.drop(TcpCounters.DROP_OUT_OF_ORDER_MEMORY);
            ackImmediately(c, nowNs);
            return true;
        }
        copyIntoRing(ring, ring.producerPosition() + (start - rcvNxt), seg, sourceOffset, length);
        if (block < 0) {
            block = reassembly.acquire();
            if (block < 0) {
                counters.drop(TcpCounters.DROP_OUT_OF_ORDER_FULL);
                ackImmediately(c, nowNs);
                return true;
            }
            tcb.oooBlock(c, block);
        }
        repeatsHeld(c, block, start, end, true);
        final int result = reassembly.add(block, start, end);
        if (result == ReassemblyQueue.FULL) {
            counters.drop(TcpCounters.DROP_OUT_OF_ORDER_FULL);
        } else if (result == ReassemblyQueue.MERGED && tcb.hasFlag(c, F_SACK)) {
            // It grew a range already held: the ACK at the end of the burst reports that range first, with all it
            // holds now, so no block goes unreported by waiting (an ACK per such segment cost the receiver its
            // ring: over veth the kernel's AF_PACKET drops multiplied).
            outputQueue.ackNow(c);
            return false;
        }
        if (tcb.hasFlag(c, F_FIN_PENDING) || !seg.has(TcpFlags.FIN)) {
            ackImmediately(c, nowNs);
            return true;
        }
        // The FIN rides beyond the hole: note it first, so this one ACK reports both.
        tcb.setFlag(c, F_FIN_PENDING);
        tcb.rcvFinSeq(c, seg.seq + seg.payloadLength);
        ackImmediately(c, nowNs);
        return true;
    }

    /**
     * In-order text of {@code length} bytes left {@code unacked} bytes waiting for an ACK: whether the ACK rule
     * ({@link ReceivePolicy.AckRule}) sends it now. Linux's: two full-sized segments' worth of bytes wait. FreeBSD's:
     * another segment waited already (its delayed ACK runs), or this one is larger than the segments sent with.
     * Without delayed ACKs: always.
     */
    private boolean secondSegment(int c, int length, int unacked) {
        return switch (ackRule) {
            case SECOND_FULL_SEGMENT -> unacked >= 2 * tcb.rcvMss(c);
            case SECOND_SEGMENT -> unacked > length || length > tcb.sndMss(c);
            case EVERY_SEGMENT -> true;
        };
    }

    /**
     * The data of a SYN a listener accepted by Fast Open (RFC 7413 §4.2.2), before the handshake completes: what fits
     * the window the SYN-ACK offers and the ring goes into the ring at RCV.NXT, the rest is trimmed (counted as
     * beyond the window; the client sends it again after the handshake). Returns the bytes taken.
     */
    int takeSynData(int c, TcpSegment seg) {
        if (seg.payloadLength == 0 || !buffers.ensureRings(c)) {
            return 0;
        }
        final ByteRing ring = buffers.receiveRing(c);
        final int taken = Math.min(seg.payloadLength, Math.min(ring.freeSpace(), tcb.rcvAdv(c) - tcb.rcvNxt(c)));
        if (taken < seg.payloadLength) {
            counters.rxBeyondWindowBytes.getAndAddRelease(seg.payloadLength - taken);
        }
        if (taken <= 0) {
            return 0;
        }
        copyIntoRing(ring, ring.producerPosition(), seg, seg.payloadOffset, taken);
        ring.publish(ring.producerPosition() + taken);
        tcb.rcvNxt(c, tcb.rcvNxt(c) + taken);
        tcb.bytesReceived(c, tcb.bytesReceived(c) + taken);
        counters.rxBytes.getAndAddRelease(taken);
        events.signal(c, TcpControlBlocks.EV_READABLE);
        return taken;
    }

    /** Copies segment text into the receive ring at {@code position} (not yet published): the copy receiving costs. */
    private void copyIntoRing(ByteRing ring, long position, TcpSegment seg, long sourceOffset, int length) {
        ring.put(position, seg.payloadSegment, sourceOffset, length);
        counters.rxCopiedBytes.getAndAddRelease(length);
    }

    /** An ACK goes now, from inside input (out of order data, a filled hole), carrying the current SACK blocks. */
    private void ackImmediately(int c, long nowNs) {
        counters.txImmediateAcks.incrementRelease();
        output.sendAck(c, nowNs);
    }

    /**
     * The peer's FIN at {@code finSeq} (RFC 9293 §3.10.7.4, eighth check). {@code ackOwed} is false when an ACK for
     * this segment already went.
     */
    private void finArrives(int c, int finSeq, boolean ackOwed, long nowNs) {
        if (finSeq != tcb.rcvNxt(c)) {
            // Beyond a hole: remember it until the data before it arrives.
            tcb.setFlag(c, F_FIN_PENDING);
            tcb.rcvFinSeq(c, finSeq);
            if (ackOwed) {
                outputQueue.ackNow(c);
            }
            return;
        }
        tcb.clearFlag(c, F_FIN_PENDING);
        tcb.rcvNxt(c, finSeq + 1);
        lifecycle.releaseOutOfOrder(c);
        outputQueue.ackNow(c);
        events.signal(c, TcpControlBlocks.EV_READABLE);
        switch (tcb.state(c)) {
            case TcpState.SYN_RECEIVED, TcpState.ESTABLISHED -> lifecycle.transition(c, TcpState.CLOSE_WAIT, nowNs);
            case TcpState.FIN_WAIT_1 -> lifecycle.transition(c, TcpState.CLOSING, nowNs);
            case TcpState.FIN_WAIT_2 -> lifecycle.transition(c, TcpState.TIME_WAIT, nowNs);
            default -> {
            }
        }
    }

    /**
     * Text {@code [start, end)} that repeats bytes held out of order, all of it or a part (RFC 2883 §4.1.2, §4.2.1):
     * the repeated bytes are counted, and with {@code report} the first repeated range is the next ACK's D-SACK
     * block, as Linux and FreeBSD report it.
     */
    private void repeatsHeld(int c, int block, int start, int end, boolean report) {
        final int first = reassembly.firstOverlap(block, start, end);
        if (first < 0) {
            return;
        }
        counters.rxDuplicateBytes.getAndAddRelease(reassembly.heldBytes(block, start, end));
        if (report) {
            dsack(c, SeqNum.max(start, reassembly.start(block, first)), SeqNum.min(end, reassembly.end(block, first)));
        }
    }

    /** A duplicate range to report in the next ACK (RFC 2883), which goes at once. */
    void dsack(int c, int start, int end) {
        if (tcb.hasFlag(c, F_SACK)) {
            tcb.dsackStart(c, start);
            tcb.dsackEnd(c, end);
            tcb.setFlag(c, F_DSACK);
        }
        tcb.setFlag(c, F_ACK_NOW);
    }

    // ------------------------------------------------------------------------------------------ ACKs and SACK

    /**
     * The SACK blocks for the next segment, as left/right pairs into {@code out} (at most {@code max}): a pending
     * D-SACK block first (RFC 2883 §4), then the out-of-order ranges, the most recently grown first (RFC 2018 §4).
     * Returns how many; sets {@code dsackFirst[0]} when the first is a D-SACK.
     */
    int sackBlocks(int c, int[] out, int max, boolean[] dsackFirst) {
        dsackFirst[0] = false;
        if (!tcb.hasFlag(c, F_SACK)) {
            return 0;
        }
        int count = 0;
        if (tcb.hasFlag(c, TcpControlBlocks.F_DSACK)) {
            out[0] = tcb.dsackStart(c);
            out[1] = tcb.dsackEnd(c);
            count = 1;
            dsackFirst[0] = true;
        }
        final int block = tcb.oooBlock(c);
        if (block >= 0) {
            count += reassembly.recentBlocks(block, max - count, out, 2 * count);
        }
        return count;
    }

    /**
     * A segment with data went (new or again): sent within the delayed ACK time of the last data that arrived, it is
     * a reply, and the exchange interactive: quick ACKs stop until a delayed ACK goes unanswered (Linux's
     * tcp_event_data_sent and pingpong mode, with its minimum ato, the delayed ACK time). RFC 1122 §4.2.3.2 lets the
     * receiver delay; a reply soon after the request carries the ACK anyway.
     */
    void onDataSent(int c, long nowNs) {
        if (tcb.hasSenderFlag(c, SenderState.S_ACK_TIMED) && tcb.quickAcks(c) > 0
            && nowNs - tcb.lastDataReceiveNs(c) < settings.of(c).delayedAckNs()) {
            tcb.setSenderFlag(c, SenderState.S_INTERACTIVE);
        }
    }

    /**
     * A segment carrying our ACK of RCV.NXT and {@code window} went out: no ACK is owed any more, the delayed ACK
     * is off, Last.ACK.sent (RFC 7323 §4.3) and the advertised edge move.
     */
    void onAckSent(int c, int rcvNxt, int window, boolean dsackSent) {
        if (tcb.unackedBytes(c) > 0 && tcb.quickAcks(c) > 0) {
            tcb.quickAcks(c, tcb.quickAcks(c) - 1);
        }
        tcb.unackedBytes(c, 0);
        tcb.clearFlag(c, F_ACK_NOW);
        timers.disarm(c, T_DELAYED_ACK);
        tcb.lastAckSent(c, rcvNxt);
        tcb.rcvAdv(c, SeqNum.max(tcb.rcvAdv(c), rcvNxt + window));
        if (dsackSent) {
            tcb.clearFlag(c, F_DSACK);
        }
    }

    void onDelayedAckTimeout(int c, long nowNs) {
        if (tcb.unackedBytes(c) > 0 || tcb.hasFlag(c, F_ACK_NOW)) {
            // No reply carried the ACK: the exchange is not interactive (Linux leaves pingpong mode here).
            tcb.clearSenderFlag(c, SenderState.S_INTERACTIVE);
            counters.txDelayedAcks.incrementRelease();
            tcb.setFlag(c, F_ACK_NOW);
            sender.output(c, nowNs, false);
        }
    }

    // ------------------------------------------------------------------------------------------------ window

    /** The window to advertise, in bytes, by the configured rule ({@link ReceiveWindow#offer}). */
    int receiveWindow(int c) {
        return window.offer(c);
    }

    /** RCV.WND for the acceptability test and the trimming of text ({@link ReceiveWindow#acceptance}). */
    int acceptanceWindow(int c) {
        return window.acceptance(c);
    }

    /** The window our SYN or SYN-ACK offers ({@link ReceiveWindow#synWindow}). */
    int synWindow(int c) {
        return window.synWindow(c);
    }

    /**
     * The owner read from the receive ring: advertise the larger window when it grew enough to matter, by the
     * window rule's measure ({@link ReceiveWindow#updateWorthSending}).
     */
    void consumed(int c, long nowNs) {
        if (!TcpState.canReceive(tcb.state(c)) || !tcb.hasFlag(c, F_RINGS)) {
            return;
        }
        if (window.updateWorthSending(c)) {
            counters.txWindowUpdates.incrementRelease();
            tcb.setFlag(c, F_ACK_NOW);
            sender.output(c, nowNs, false);
        }
    }

    /**
     * The memory pressure ended ({@link TcpMemoryPressure#takeReopen}): each connection whose window it held back is
     * queued for a window update when it can offer more than remains of the window it offered (whatever it sends at
     * the next output carries the window). A scan of the rows ever taken, once per pressure episode. Returns how many
     * were queued.
     */
    int reopenClampedWindows() {
        int reopened = 0;
        final int rows = tcb.highWater();
        for (int c = 0; c < rows; c++) {
            if (!tcb.hasFlag(c, F_WINDOW_CLAMPED)) {
                continue;
            }
            tcb.clearFlag(c, F_WINDOW_CLAMPED);
            if (tcb.hasFlag(c, F_ALLOCATED) && TcpState.canReceive(tcb.state(c)) && window.opened(c)) {
                counters.memoryPressureReopens.incrementRelease();
                counters.txWindowUpdates.incrementRelease();
                outputQueue.ackNow(c);
                reopened++;
            }
        }
        return reopened;
    }
}
