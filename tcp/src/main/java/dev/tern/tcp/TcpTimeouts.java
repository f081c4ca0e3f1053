package dev.tern.tcp;

import static dev.tern.tcp.TcpControlBlocks.F_KEEPALIVE;
import static dev.tern.tcp.TcpControlBlocks.F_PASSIVE;
import static dev.tern.tcp.TcpControlBlocks.F_SYN_UNSENT;
import static dev.tern.tcp.TcpControlBlocks.T_DELAYED_ACK;
import static dev.tern.tcp.TcpControlBlocks.T_KEEPALIVE;
import static dev.tern.tcp.TcpControlBlocks.T_PACE;
import static dev.tern.tcp.TcpControlBlocks.T_SENDER;
import static dev.tern.tcp.TcpControlBlocks.T_STATE;

/**
 * What each of a connection's deadlines does when it comes (RFC 9293 §3.8): the delayed ACK goes, the sender's timer
 * (the SYN timer while connecting, RFC 6298 §5; then retransmission, persist, probe or reordering, the sender's),
 * the pacer's next segment, a keepalive probe (§3.8.4), the end of TIME-WAIT or of an orphan's FIN-WAIT-2. The
 * deadlines themselves are {@link TcpTimers}'.
 *
 * <p>Owned by the shard thread; not thread-safe. Nothing here allocates.
 */
final class TcpTimeouts {
    private final TcpControlBlocks tcb;
    private final TcpTimers timers;
    private final TcpReceiver receiver;
    private final TcpSender sender;
    private final ConnectionLifecycle lifecycle;
    private final TcpOutput output;
    private final RttEstimator rtt;
    private final TcpPath path;
    private final TcpCounters counters;
    private final ConnectionSettings settings;
    private final UserTimeout userTimeout;

    TcpTimeouts(TcpControlBlocks tcb, TcpTimers timers, TcpReceiver receiver, TcpSender sender,
                ConnectionLifecycle lifecycle, TcpOutput output, RttEstimator rtt, TcpPath path, TcpCounters counters,
                ConnectionSettings settings) {
        this.tcb = tcb;
        this.timers = timers;
        this.receiver = receiver;
        this.sender = sender;
        this.lifecycle = lifecycle;
        this.output = output;
        this.rtt = rtt;
        this.path = path;
        this.counters = counters;
        this.settings = settings;
        this.userTimeout = new UserTimeout(tcb, counters);
    }

    /** The connection's wheel timer fired: each kind whose deadline came, while the row is still the same connection. */
    void onTimer(long payload, long nowNs) {
        final int c = timers.fired(payload);
        if (c < 0) {
            return;
        }
        final int generation = tcb.generation(c);
        if (timers.due(c, T_DELAYED_ACK, tcb.delayedAckDeadlineNs(c), nowNs)) {
            receiver.onDelayedAckTimeout(c, nowNs);
        }
        if (timers.alive(c, generation) && timers.due(c, T_SENDER, tcb.senderTimerNs(c), nowNs)) {
            senderTimerExpired(c, nowNs);
        }
        if (timers.alive(c, generation) && timers.due(c, T_PACE, tcb.nextSendNs(c), nowNs)) {
            sender.onPacingTimer(c, nowNs);
        }
        if (timers.alive(c, generation) && timers.due(c, T_KEEPALIVE, tcb.keepaliveDeadlineNs(c), nowNs)) {
            if (tcb.hasFlag(c, F_KEEPALIVE)) {
                keepaliveExpired(c, nowNs);
            }
        }
        if (timers.alive(c, generation) && timers.due(c, T_STATE, tcb.stateDeadlineNs(c), nowNs)) {
            stateTimeout(c, nowNs);
        }
        if (timers.alive(c, generation)) {
            timers.rearm(c);
        }
    }

    /**
     * The sender timer fired. While connecting it is the SYN timer (RFC 6298 §5 with Linux's retry counts: the SYN or
     * SYN-ACK goes again with the RTO doubled, until the retries run out); after that, the sender's.
     */
    private void senderTimerExpired(int c, long nowNs) {
        final int state = tcb.state(c);
        if (state != TcpState.SYN_SENT && state != TcpState.SYN_RECEIVED) {
            final int error = sender.onTimer(c, nowNs);
            if (error != TcpSender.GOES_ON) {
                lifecycle.terminate(c, error, nowNs);
            }
            return;
        }
        if (tcb.hasFlag(c, F_SYN_UNSENT)) {
            // The SYN never left (no transmit buffer): send it now, no retry counted and no back-off.
            tcb.clearFlag(c, F_SYN_UNSENT);
            lifecycle.sendSyn(c, nowNs);
            return;
        }
        counters.rtoExpired.incrementRelease();
        final int retries = tcb.retries(c) + 1;
        tcb.retries(c, retries);
        final int limit = tcb.maxRetries(c) > 0 ? tcb.maxRetries(c)
            : state == TcpState.SYN_SENT || !tcb.hasFlag(c, F_PASSIVE) ? settings.synRetries(c) : settings.of(c).synAckRetries();
        if (retries > limit) {
            if (tcb.hasFlag(c, F_PASSIVE)) {
                // A half-open connection whose SYN-ACKs went unanswered (a spoofed or unroutable source).
                counters.halfOpenExpired.incrementRelease();
                lifecycle.endHalfOpen(c, TcpError.TIMED_OUT, nowNs);
            } else {
                lifecycle.terminate(c, tcb.softError(c) != TcpError.NONE ? tcb.softError(c) : TcpError.TIMED_OUT,
                    nowNs);
            }
            return;
        }
        if (!tcb.hasFlag(c, F_PASSIVE)) {
            // An active open's SYN counts toward R1 (RFC 1122 §4.2.3.5); a passive SYN-ACK does not: its peer may be
            // a spoofed source, and a flood of them would probe the gateway once per half-open connection.
            path.retransmittedAgain(c, retries, nowNs);
        }
        counters.txTimeoutRetransmits.incrementRelease();
        rtt.backOff(tcb, c);
        lifecycle.sendSyn(c, nowNs);
    }

    /**
     * SO_KEEPALIVE (RFC 9293 §3.8.4, RFC 1122 §4.2.3.6: off by default, at least two hours idle by default): the
     * connection's idle time, interval and probe count (0 keeps the current); on, the probe timer runs from the last
     * segment received. Returns 0 or {@code -INVALID}.
     */
    int keepalive(int c, boolean enabled, long idleNs, long intervalNs, int probes) {
        if (idleNs < 0 || intervalNs < 0 || probes < 0) {
            return -TcpError.INVALID;
        }
        if (idleNs > 0) {
            tcb.keepIdleMs(c, (int) (idleNs / 1_000_000L));
        }
        if (intervalNs > 0) {
            tcb.keepIntervalMs(c, (int) (intervalNs / 1_000_000L));
        }
        if (probes > 0) {
            tcb.keepProbes(c, probes);
        }
        if (enabled) {
            tcb.setFlag(c, F_KEEPALIVE);
            tcb.probes(c, 0);
            if (TcpState.isSynchronized(tcb.state(c))) {
                timers.arm(c, TimerKind.KEEPALIVE, tcb.lastReceiveNs(c) + tcb.keepIdleMs(c) * 1_000_000L);
            }
        } else {
            tcb.clearFlag(c, F_KEEPALIVE);
            timers.disarm(c, T_KEEPALIVE);
        }
        return 0;
    }

    /** RFC 9293 §3.8.4 (RFC 1122 §4.2.3.6): probe an idle connection; give up after the configured probes. */
    private void keepaliveExpired(int c, long nowNs) {
        final int state = tcb.state(c);
        if (state != TcpState.ESTABLISHED && state != TcpState.CLOSE_WAIT && state != TcpState.FIN_WAIT_2) {
            return;
        }
        final long idleNs = tcb.keepIdleMs(c) * 1_000_000L;
        final long intervalNs = tcb.keepIntervalMs(c) * 1_000_000L;
        final int probes = tcb.probes(c);
        final long idleSince = tcb.lastReceiveNs(c);
        if (probes == 0 && nowNs - idleSince < idleNs) {
            timers.arm(c, TimerKind.KEEPALIVE, idleSince + idleNs);
            return;
        }
        if (tcb.sndUna(c) != tcb.sndMax(c)) {
            // Data is outstanding: the retransmission timer watches the connection.
            timers.arm(c, TimerKind.KEEPALIVE, nowNs + idleNs);
            return;
        }
        if (userTimeout.keepaliveExpired(c, probes, idleSince, nowNs)) {
            lifecycle.terminate(c, TcpError.TIMED_OUT, nowNs);
            return;
        }
        tcb.probes(c, probes + 1);
        output.sendKeepalive(c, nowNs);
        timers.arm(c, TimerKind.KEEPALIVE, nowNs + intervalNs);
    }

    /** End of TIME-WAIT (2 MSL), or of the FIN-WAIT-2 timeout of an orphan. */
    private void stateTimeout(int c, long nowNs) {
        final int state = tcb.state(c);
        if (state == TcpState.TIME_WAIT || state == TcpState.FIN_WAIT_2) {
            lifecycle.terminate(c, TcpError.NONE, nowNs);
        } else if ((state == TcpState.SYN_SENT || state == TcpState.SYN_RECEIVED) && !tcb.hasFlag(c, F_PASSIVE)) {
            // TCP_KEEPINIT ran out before the handshake completed (an active open, or its simultaneous open).
            counters.connectTimeouts.incrementRelease();
            lifecycle.terminate(c, tcb.softError(c) != TcpError.NONE ? tcb.softError(c) : TcpError.TIMED_OUT, nowNs);
        }
    }
}
