package dev.tern.tcp;

/**
 * TCP_USER_TIMEOUT (RFC 5482), with Linux's meaning: once set, how long sent data may stay unacknowledged before the
 * connection aborts with {@code TIMED_OUT}, in place of the retry count (RFC 9293's R2). The time counts from the
 * first transmission of the data a retransmission is for (Linux's retrans_stamp, tcp_timer.c), and the timer that
 * would fire after it is brought forward to it. A zero window is bounded too: from the first persist probe, however
 * often the peer answers it (Linux's icsk_probes_tstamp). With keepalive on, it replaces the probe count: the
 * connection ends at the first probe timeout at least this long after the last segment received.
 *
 * <p>Its state is in the connection's row ({@link TcpControlBlocks#userTimeoutMs}, {@code stallStartNs}, {@code
 * zeroWindowSinceNs}). Owned by the shard thread; nothing here allocates.
 */
final class UserTimeout {
    private final TcpControlBlocks tcb;
    private final TcpCounters counters;

    UserTimeout(TcpControlBlocks tcb, TcpCounters counters) {
        this.tcb = tcb;
        this.counters = counters;
    }

    /** The user timeout ends the connection: counted, then the caller ends it with {@code TIMED_OUT}. */
    private boolean ends(boolean expired) {
        if (expired) {
            counters.userTimeouts.incrementRelease();
        }
        return expired;
    }

    private long timeoutNs(int c) {
        return tcb.userTimeoutMs(c) * 1_000_000L;
    }

    /** A segment first sent at {@code firstSentNs} goes again: the stall starts there unless it already started. */
    void retransmitting(int c, long firstSentNs) {
        if (tcb.stallStartNs(c) == 0) {
            tcb.stallStartNs(c, Math.max(1, firstSentNs));
        }
    }

    /** New data was acknowledged: the data still waiting has not stalled yet. */
    void progressed(int c) {
        tcb.stallStartNs(c, 0);
    }

    /** Whether the retransmission timeout that fired ends the connection: the user timeout if set, else R2. */
    boolean retransmissionsExpired(int c, int retries, int retryLimit, long nowNs) {
        if (tcb.userTimeoutMs(c) == 0) {
            return retries > retryLimit;
        }
        final long since = tcb.stallStartNs(c);
        return ends(since != 0 && nowNs - since >= timeoutNs(c));
    }

    /** The next retransmission deadline, brought forward to the user timeout (Linux's tcp_clamp_rto_to_user_timeout). */
    long clampRetransmission(int c, long deadlineNs) {
        final long since = tcb.stallStartNs(c);
        return tcb.userTimeoutMs(c) == 0 || since == 0 ? deadlineNs : Math.min(deadlineNs, since + timeoutNs(c));
    }

    /** The persist timer is armed for a window that just closed: its probing has not started. */
    void windowClosed(int c) {
        tcb.zeroWindowSinceNs(c, 0);
    }

    /**
     * The persist timer fired on a zero window: whether the probing has lasted the user timeout; the first probe
     * starts the clock, as Linux's.
     */
    boolean probingExpired(int c, int probes, int retryLimit, long nowNs) {
        if (tcb.userTimeoutMs(c) == 0) {
            return probes > retryLimit;
        }
        final long since = tcb.zeroWindowSinceNs(c);
        if (since == 0) {
            tcb.zeroWindowSinceNs(c, nowNs);
            return false;
        }
        return ends(nowNs - since >= timeoutNs(c));
    }

    /** The next probe's deadline, brought forward to the user timeout (Linux's tcp_clamp_probe0_to_user_timeout). */
    long clampProbe(int c, long deadlineNs) {
        final long since = tcb.zeroWindowSinceNs(c);
        return tcb.userTimeoutMs(c) == 0 || since == 0 ? deadlineNs : Math.min(deadlineNs, since + timeoutNs(c));
    }

    /**
     * A keepalive probe is due after {@code probes} unanswered ones: whether the connection ends now. With a user
     * timeout, once a probe went unanswered and the connection has been silent that long (Linux's
     * tcp_keepalive_timer); else after the probe count.
     */
    boolean keepaliveExpired(int c, int probes, long idleSinceNs, long nowNs) {
        if (tcb.userTimeoutMs(c) == 0) {
            return probes >= tcb.keepProbes(c);
        }
        return ends(probes > 0 && nowNs - idleSinceNs >= timeoutNs(c));
    }
}
