package dev.tern.tcp;

import dev.tern.tcp.wire.TcpFlags;

/**
 * Explicit Congestion Notification in TCP (RFC 3168 §6.1): the ECN-setup handshake, ECT(0) on new data, the
 * receiver's echo of Congestion Experienced (ECE until the sender's CWR) and the sender's one reduction per window.
 *
 * <p>The state is two cells of the connection's row: {@code ecnState} (the bits below) and {@code ecnHigh} (SND.MAX
 * when the window was last reduced, for any reason). The congestion response itself is the connection's
 * {@link CongestionControl#onEcn}; {@link TcpSender} calls it when {@link #onEcho} says a reduction is due.
 *
 * <p>Bad input is counted ({@code tcp.ecn.ignored}) and changes nothing (RFC 3168 §6.1.1): ECE, CWR or CE on a
 * connection that did not negotiate ECN, and ECT or CE on a SYN, which also keeps ECN off (as Linux, a marked SYN
 * suggests a path that rewrites the field).
 *
 * <p>Owned by the shard thread; not thread-safe; allocation-free.
 */
final class Ecn {
    /** The IP header's ECN field (RFC 3168 §5): the two low bits of the TOS byte. */
    static final int IP_MASK = 0b11;
    static final int NOT_ECT = 0b00;
    static final int ECT1 = 0b01;
    static final int ECT0 = 0b10;
    static final int CE = 0b11;

    /** Our SYN asked for ECN (an ECN-setup SYN, ECE and CWR). */
    static final int REQUESTED = 1;
    /** Negotiated: data goes ECT(0), marks are echoed and answered. */
    static final int NEGOTIATED = 1 << 1;
    /** Receiver: a CE arrived and no CWR since; every ACK carries ECE (RFC 3168 §6.1.3). */
    static final int ECHOING = 1 << 2;
    /** Sender: the window was reduced; the next new data segment carries CWR (RFC 3168 §6.1.2). */
    static final int CWR_DUE = 1 << 3;
    /** Sender: a reduction's window is open until SND.UNA passes {@code ecnHigh}; ECE within it is not answered. */
    static final int REDUCED = 1 << 4;
    /**
     * Receiver: DCTCP's feedback (RFC 8257 §3.2), for a connection whose congestion control
     * {@link CongestionControl#needsEcn}: {@link #ECHOING} is the CE state of the last data segment, not "until CWR".
     */
    static final int PER_SEGMENT = 1 << 5;

    /** Bits 8 and up of {@code ecnState}: the window reductions ECEs caused on this connection (for traces). */
    static final int REDUCTION_SHIFT = 8;

    /** A flag bit above the TCP header's for {@link TcpOutput#send}: the segment is a window probe, never ECT. */
    static final int PROBE = 1 << 16;

    private final TcpControlBlocks tcb;
    private final TcpCounters counters;
    private final ConnectionSettings settings;
    private final PlugPointRegistry plugPoints;

    Ecn(TcpControlBlocks tcb, TcpCounters counters, ConnectionSettings settings, PlugPointRegistry plugPoints) {
        this.tcb = tcb;
        this.counters = counters;
        this.settings = settings;
        this.plugPoints = plugPoints;
    }

    /** Whether connection {@code c}'s SYN asks for ECN: its policy is ON, or its congestion control needs ECN. */
    private boolean asks(int c) {
        return settings.of(c).ecn() == EcnMode.ON || plugPoints.congestionControl(c).needsEcn();
    }

    /** Whether connection {@code c} accepts a peer's request: its policy is not OFF, or its control needs ECN. */
    private boolean accepts(int c) {
        return settings.of(c).ecn() != EcnMode.OFF || plugPoints.congestionControl(c).needsEcn();
    }

    boolean negotiated(int c) {
        return (tcb.ecnState(c) & NEGOTIATED) != 0;
    }

    // ------------------------------------------------------------------------------------------- handshake

    /**
     * The ECN flags of our SYN or SYN-ACK (RFC 3168 §6.1.1): ECE and CWR on an active open's SYN under
     * {@link EcnMode#ON}, on its first {@code ecnSynRetries} retransmissions too (then the SYN goes plain, in case a
     * middlebox drops ECN-setup SYNs); ECE on the SYN-ACK of a connection that accepted the peer's request.
     */
    int synFlags(int c, boolean synAck) {
        final int state = tcb.ecnState(c);
        if (synAck) {
            return (state & NEGOTIATED) != 0 ? TcpFlags.ECE : 0;
        }
        if (asks(c) && tcb.retries(c) <= settings.of(c).ecnSynRetries()) {
            tcb.ecnState(c, state | REQUESTED);
            return TcpFlags.ECE | TcpFlags.CWR;
        }
        tcb.ecnState(c, state & ~REQUESTED);
        return 0;
    }

    /**
     * A peer's SYN (to a listener, or crossing ours in a simultaneous open): ECE and CWR together ask for ECN, which
     * is accepted unless the mode is {@link EcnMode#OFF} or the SYN itself arrived ECN-marked.
     */
    void onSyn(int c, TcpSegment seg) {
        final boolean asks = (seg.flags & (TcpFlags.ECE | TcpFlags.CWR)) == (TcpFlags.ECE | TcpFlags.CWR);
        tcb.ecnState(c, tcb.ecnState(c) & ~(REQUESTED | NEGOTIATED));
        if (seg.ipEcn != NOT_ECT) {
            counters.ecnIgnored.incrementRelease();
            return;
        }
        if (asks && accepts(c)) {
            negotiate(c);
        }
    }

    /** Our ECN-setup SYN's answer: a SYN-ACK with ECE and without CWR accepts (RFC 3168 §6.1.1). */
    void onSynAck(int c, TcpSegment seg) {
        final int state = tcb.ecnState(c);
        tcb.ecnState(c, state & ~REQUESTED);
        if ((state & REQUESTED) != 0 && (seg.flags & (TcpFlags.ECE | TcpFlags.CWR)) == TcpFlags.ECE) {
            negotiate(c);
        }
    }

    private void negotiate(int c) {
        tcb.ecnState(c, NEGOTIATED | (plugPoints.congestionControl(c).needsEcn() ? PER_SEGMENT : 0));
        counters.ecnNegotiated.incrementRelease();
    }

    // -------------------------------------------------------------------------------------------- receiver

    /**
     * An acceptable segment of a synchronized connection, receiver's side (RFC 3168 §6.1.3): CWR ends the echo, then
     * CE (on this same segment too) starts it again. Returns true when a CE starts the echo, so that the ACK carrying
     * it goes at once rather than after the delayed-ACK timer.
     */
    boolean onSegment(int c, TcpSegment seg) {
        final int state = tcb.ecnState(c);
        final boolean cwr = (seg.flags & TcpFlags.CWR) != 0;
        if ((state & NEGOTIATED) == 0) {
            if (cwr || seg.ipEcn == CE) {
                counters.ecnIgnored.incrementRelease();
            }
            return false;
        }
        if ((state & PER_SEGMENT) != 0) {
            return dctcpSegment(c, seg, state);
        }
        int next = state;
        if (cwr) {
            counters.ecnCwrReceived.incrementRelease();
            next &= ~ECHOING;
        }
        final boolean ce = seg.ipEcn == CE;
        if (ce) {
            counters.ecnCeReceived.incrementRelease();
            next |= ECHOING;
        }
        if (next != state) {
            tcb.ecnState(c, next);
        }
        return ce && (state & ECHOING) == 0;
    }

    /**
     * RFC 8257 §3.2: DCTCP's receiver echoes the CE state of each data segment (CWR means nothing to it), and a change
     * of state is acknowledged at once. Returns true on a change.
     */
    private boolean dctcpSegment(int c, TcpSegment seg, int state) {
        final boolean ce = seg.ipEcn == CE;
        if (ce) {
            counters.ecnCeReceived.incrementRelease();
        }
        if (seg.payloadLength == 0 || ce == ((state & ECHOING) != 0)) {
            return false;
        }
        tcb.ecnState(c, ce ? state | ECHOING : state & ~ECHOING);
        return true;
    }

    /**
     * Whether {@code seg} changes a DCTCP receiver's CE state (RFC 8257 §3.2): the data received before it is then
     * acknowledged first, with the state it arrived in, so the sender counts the marked bytes exactly.
     */
    boolean changesCeState(int c, TcpSegment seg) {
        final int state = tcb.ecnState(c);
        return (state & PER_SEGMENT) != 0 && seg.payloadLength > 0 && (seg.ipEcn == CE) != ((state & ECHOING) != 0);
    }

    // ---------------------------------------------------------------------------------------------- sender

    /**
     * The TOS byte of a segment (RFC 3168 §6.1.5, §6.1.6): the owner's DSCP, and ECT(0) only on new data of an ECN
     * connection; never on retransmissions, pure ACKs or window probes, nor on a SYN or reset (which do not come
     * here). The owner's own ECN bits are never sent on TCP, as on Linux.
     */
    int tos(int c, int seq, int length, int flags) {
        final int dscp = tcb.tos(c) & ~IP_MASK;
        return length > 0 && (flags & PROBE) == 0 && seq == tcb.sndMax(c) && negotiated(c) ? dscp | ECT0 : dscp;
    }

    /**
     * The flags of a segment that is going out: ECE while echoing, CWR on the first new data after a reduction.
     * Call only once the segment is sure to be sent.
     */
    int flags(int c, int seq, int length, int flags) {
        final int state = tcb.ecnState(c);
        if ((state & NEGOTIATED) == 0) {
            return flags & ~PROBE;
        }
        int out = flags & ~PROBE;
        if ((state & ECHOING) != 0) {
            out |= TcpFlags.ECE;
            counters.ecnEceSent.incrementRelease();
        }
        if ((state & CWR_DUE) != 0 && length > 0 && (flags & PROBE) == 0 && seq == tcb.sndMax(c)) {
            out |= TcpFlags.CWR;
            tcb.ecnState(c, state & ~CWR_DUE);
            counters.ecnCwrSent.incrementRelease();
        }
        return out;
    }

    /**
     * An ACK arrived: does its ECE call for a reduction (RFC 3168 §6.1.2)? Only on an ECN connection, and at most once
     * per window of data: not while the ACK is within the last reduction's window.
     */
    boolean onEcho(int c, TcpSegment seg) {
        if ((seg.flags & TcpFlags.ECE) == 0) {
            return false;
        }
        final int state = tcb.ecnState(c);
        if ((state & NEGOTIATED) == 0) {
            counters.ecnIgnored.incrementRelease();
            return false;
        }
        counters.ecnEceReceived.incrementRelease();
        return (state & REDUCED) == 0 || SeqNum.gt(seg.ack, tcb.ecnHigh(c));
    }

    /** An ECE reduced the window (counted for {@link TcpTrace}; saturates). */
    void countReduction(int c) {
        final int state = tcb.ecnState(c);
        if (state >>> REDUCTION_SHIFT < (-1 >>> REDUCTION_SHIFT)) {
            tcb.ecnState(c, state + (1 << REDUCTION_SHIFT));
        }
    }

    /** The ECE reductions of connection {@code c} so far, from its state bits. */
    static int reductions(int ecnState) {
        return ecnState >>> REDUCTION_SHIFT;
    }

    /**
     * The congestion window was reduced, for any reason (an ECE, fast retransmit, a timeout): the next new data
     * carries CWR, and ECE is not answered again within this window of data (RFC 3168 §6.1.2).
     */
    void windowReduced(int c) {
        final int state = tcb.ecnState(c);
        if ((state & NEGOTIATED) != 0) {
            tcb.ecnState(c, state | CWR_DUE | REDUCED);
            tcb.ecnHigh(c, tcb.sndMax(c));
        }
    }
}
