package dev.tern.tcp;

import dev.tern.core.io.ByteRing;

/**
 * The socket options an owner sets on an open connection beyond {@link TcpOptions}, with Linux's meanings:
 * TCP_USER_TIMEOUT (RFC 5482, {@link UserTimeout}), TCP_NOTSENT_LOWAT (writable only while few bytes wait unsent),
 * TCP_MAXSEG (the MSS bound, also given before the handshake as {@link TcpOptions#maxSegment}), TCP_NODELAY and
 * TCP_CORK. Handles are {@link TcpLayer}'s; every method returns 0 or a value, or {@code -INVALID} for a handle that
 * is not open.
 *
 * <p>Owned by the shard thread; not thread-safe. Cold path: nothing here runs per segment but {@link #clampMss}.
 */
public final class TcpSocketOptions {
    /** Linux's MSS of a socket that has not connected yet (TCP_MSS_DEFAULT, include/net/tcp.h). */
    public static final int UNCONNECTED_MSS = 536;
    /** The largest TCP_SYNCNT Linux takes (MAX_TCP_SYNCNT, include/net/tcp.h). */
    public static final int MAX_SYN_COUNT = 127;
    /** Linux's TCP_INFO and TCP_MAXSEG give the MSS less the timestamp option (TCPOLEN_TSTAMP_ALIGNED). */
    private static final int TIMESTAMP_OPTION = 12;

    private final TcpControlBlocks tcb;
    private final ConnectionBuffers buffers;
    private final ConnectionSettings settings;
    private final TcpListeners listeners;
    private final TcpSender sender;
    private final ReceiveHandlers handlers;
    private final OutputQueue outputQueue;

    TcpSocketOptions(TcpControlBlocks tcb, ConnectionBuffers buffers, ConnectionSettings settings, TcpListeners listeners,
                     TcpSender sender, ReceiveHandlers handlers, OutputQueue outputQueue) {
        this.tcb = tcb;
        this.buffers = buffers;
        this.settings = settings;
        this.listeners = listeners;
        this.sender = sender;
        this.handlers = handlers;
        this.outputQueue = outputQueue;
    }

    /**
     * TCP_CORK: while on, data written leaves in full segments only; a short one waits until the cork comes off, the
     * FIN follows it, or nothing else is in flight for an RTO (the persist timer sends it: Linux's ceiling on
     * corking, its probe timer, is the same). Taking the cork off sends what waited. Returns 0 or {@code -INVALID}.
     */
    public int cork(int connection, boolean on, long nowNs) {
        final int c = tcb.ownedSlot(connection);
        if (c < 0) {
            return -TcpError.INVALID;
        }
        if (on) {
            tcb.setSenderFlag(c, SenderState.S_CORKED);
        } else {
            tcb.clearSenderFlag(c, SenderState.S_CORKED);
            output(c, nowNs, false);
        }
        return 0;
    }

    /** Whether TCP_CORK is on; false for a bad handle. */
    public boolean corked(int connection) {
        final int c = tcb.ownedSlot(connection);
        return c >= 0 && tcb.hasSenderFlag(c, SenderState.S_CORKED);
    }

    /**
     * The owner wrote with MSG_MORE: what may go now goes, but a short tail waits as under TCP_CORK, for this
     * output only (Linux corks the push at the end of that send call); later output, on an ACK, sends it as usual.
     * Until the next plain write ({@link TcpLayer#sendable}) the data goes without PSH: the owner has not pushed it.
     */
    public void sendableMore(int connection, long nowNs) {
        final int c = tcb.ownedSlot(connection);
        if (c >= 0 && TcpState.isSynchronized(tcb.state(c)) && !handlers.inHandler()) {
            tcb.setSenderFlag(c, SenderState.S_MORE | SenderState.S_UNPUSHED);
            sender.output(c, nowNs, false);
            tcb.clearSenderFlag(c, SenderState.S_MORE);
        } else if (c >= 0) {
            tcb.setSenderFlag(c, SenderState.S_UNPUSHED);
            output(c, nowNs, false);
        }
    }

    /**
     * MSG_EOR: the bytes written so far end a record; no segment will carry them together with bytes written after
     * ({@link RecordEnds}). Returns 0, {@code -INVALID} for a bad handle, or {@code -NO_BUFFER} while
     * {@link RecordEnds#MARKS} record ends wait to be sent (the owner waits for {@link #recordEndsFull} to clear).
     */
    public int endRecord(int connection) {
        final int c = tcb.ownedSlot(connection);
        if (c < 0 || !tcb.hasFlag(c, TcpControlBlocks.F_RINGS)) {
            return -TcpError.INVALID;
        }
        final ByteRing ring = buffers.sendRing(c);
        final RecordEnds ends = sender.recordEnds();
        return ends.end(c, ring.producerPosition(), sender.ringPosition(c, ring, tcb.sndMax(c))) ? 0
            : -TcpError.NO_BUFFER;
    }

    /** Whether a record end must wait: {@link RecordEnds#MARKS} wait to be sent; false for a bad handle. */
    public boolean recordEndsFull(int connection) {
        final int c = tcb.ownedSlot(connection);
        return c >= 0 && sender.recordEnds().full(c);
    }

    /**
     * TCP_NODELAY: Nagle's algorithm off or on. Setting it sends what waits now, a short segment held by the cork too
     * (Linux's TCP_NAGLE_PUSH), though the cork stays on for later writes. Returns 0 or {@code -INVALID}.
     */
    public int noDelay(int connection, boolean enabled, long nowNs) {
        final int c = tcb.ownedSlot(connection);
        if (c < 0) {
            return -TcpError.INVALID;
        }
        if (enabled) {
            tcb.setFlag(c, TcpControlBlocks.F_NO_DELAY);
            output(c, nowNs, tcb.hasSenderFlag(c, SenderState.S_CORKED));
        } else {
            tcb.clearFlag(c, TcpControlBlocks.F_NO_DELAY);
        }
        return 0;
    }

    /** Output on row {@code c}, as {@link TcpLayer#sendable}; {@code force} lets a short segment go. */
    private void output(int c, long nowNs, boolean force) {
        if (!TcpState.isSynchronized(tcb.state(c))) {
            return;
        }
        if (handlers.inHandler()) {
            outputQueue.request(c);
        } else {
            sender.output(c, nowNs, force);
        }
    }

    /** {@code mss} bounded by the connection's TCP_MAXSEG, if its owner set one (Linux's user_mss clamp). */
    static int clampMss(TcpControlBlocks tcb, int c, int mss) {
        final int own = tcb.userMss(c);
        return own > 0 ? Math.min(own, mss) : mss;
    }

    /**
     * TCP_USER_TIMEOUT in milliseconds: how long sent data may stay unacknowledged (or a zero window be probed)
     * before the connection ends with {@code TIMED_OUT}; 0 goes back to the retry count. Takes effect at the next
     * timeout, as Linux's. Returns 0 or {@code -INVALID} (also for a negative time).
     */
    public int userTimeout(int connection, int milliseconds) {
        final int c = tcb.ownedSlot(connection);
        if (c < 0 || milliseconds < 0) {
            return -TcpError.INVALID;
        }
        tcb.userTimeoutMs(c, milliseconds);
        return 0;
    }

    /** The connection's TCP_USER_TIMEOUT in milliseconds (0: none), or {@code -INVALID}. */
    public int userTimeout(int connection) {
        final int c = tcb.ownedSlot(connection);
        return c < 0 ? -TcpError.INVALID : tcb.userTimeoutMs(c);
    }

    /**
     * TCP_NOTSENT_LOWAT: the connection counts as writable ({@link #belowNotsentLowat}) only while fewer than
     * {@code bytes} wait unsent; 0 goes back to the layer's {@link TcpConfig#notsentLowat}. Returns 0 or
     * {@code -INVALID}.
     */
    public int notsentLowat(int connection, int bytes) {
        final int c = tcb.ownedSlot(connection);
        if (c < 0 || bytes < 0) {
            return -TcpError.INVALID;
        }
        tcb.notsentLowat(c, bytes);
        return 0;
    }

    /** The mark in force: the connection's own, else the layer's; 0 means none. {@code -INVALID} for a bad handle. */
    public int notsentLowat(int connection) {
        final int c = tcb.ownedSlot(connection);
        return c < 0 ? -TcpError.INVALID : tcb.notsentLowat(c) > 0 ? tcb.notsentLowat(c) : settings.of(c).notsentLowat();
    }

    /**
     * TCP_SYNCNT (Linux): how many times this connection's SYN is retransmitted before the attempt times out, in
     * place of its settings' {@link TcpConfig#synRetries}; 1 to {@link #MAX_SYN_COUNT}, as Linux takes it, and 0
     * goes back to the settings'. A per-connection R2 ({@link TcpLayer#maxRetries}) still wins. Returns 0 or
     * {@code -INVALID}.
     */
    public int synCount(int connection, int retries) {
        final int c = tcb.ownedSlot(connection);
        if (c < 0 || retries < 0 || retries > MAX_SYN_COUNT) {
            return -TcpError.INVALID;
        }
        settings.synRetries(c, retries);
        return 0;
    }

    /** The SYN retransmissions in force for this connection (TCP_SYNCNT or its settings'); {@code -INVALID}. */
    public int synCount(int connection) {
        final int c = tcb.ownedSlot(connection);
        return c < 0 ? -TcpError.INVALID : settings.synRetries(c);
    }

    /**
     * SO_MAX_PACING_RATE in bytes per second: the connection is paced at no more than this from now on, and, as in
     * Linux, setting a cap turns pacing on for a congestion control that does not pace itself (at Linux's rate from
     * cwnd and the RTT, {@link Pacer}). 0 removes the cap; such a control is then paced only if its settings ask
     * ({@link TcpConfig#pacing}). Returns 0 or {@code -INVALID} (also for a negative rate).
     */
    public int maxPacingRate(int connection, long bytesPerSecond) {
        final int c = tcb.ownedSlot(connection);
        if (c < 0 || bytesPerSecond < 0) {
            return -TcpError.INVALID;
        }
        final Pacer pacer = sender.pacer();
        pacer.maxRate(c, bytesPerSecond);
        if (bytesPerSecond == 0 && !settings.of(c).pacing()) {
            pacer.stopCwndPacing(c);
        }
        if (TcpState.isSynchronized(tcb.state(c))) {
            pacer.updateRate(c, tcb.sndMax(c) - tcb.sndUna(c));
        }
        return 0;
    }

    /** The connection's SO_MAX_PACING_RATE in bytes per second (0: none), or {@code -INVALID}. */
    public long maxPacingRate(int connection) {
        final int c = tcb.ownedSlot(connection);
        return c < 0 ? -TcpError.INVALID : sender.pacer().maxRate(c);
    }

    /** Bytes written into the send ring and not sent yet (Linux's write_seq - snd_nxt); 0 for a bad handle. */
    public int notsentBytes(int connection) {
        final int c = tcb.ownedSlot(connection);
        return c < 0 ? 0 : notsent(tcb, buffers, c);
    }

    /** The unsent bytes of row {@code c}: the ring's bytes less those sent (none before the handshake completed). */
    static int notsent(TcpControlBlocks tcb, ConnectionBuffers buffers, int c) {
        final ByteRing ring = tcb.hasFlag(c, TcpControlBlocks.F_RINGS) ? buffers.sendRing(c) : null;
        if (ring == null) {
            return 0;
        }
        if (!TcpState.isSynchronized(tcb.state(c))) {
            return ring.available();
        }
        return Math.max(0, ring.available() - (tcb.sndMax(c) - tcb.sndUna(c)));
    }

    /** Whether the unsent bytes are below the mark in force (always, without one), as Linux's poll asks. */
    public boolean belowNotsentLowat(int connection) {
        final int mark = notsentLowat(connection);
        return mark <= 0 || notsentBytes(connection) < mark;
    }

    /**
     * TCP_MAXSEG on an open connection: bounds the MSS used from now on (the one offered in the SYN is fixed by
     * {@link TcpOptions#maxSegment}); 0 removes the bound for later, as Linux's user_mss. Returns 0 or
     * {@code -INVALID} (outside {@link TcpOptions#MIN_MAX_SEGMENT} .. {@link TcpOptions#MAX_MAX_SEGMENT}).
     */
    public int maxSegment(int connection, int bytes) {
        final int c = tcb.ownedSlot(connection);
        if (c < 0 || (bytes != 0 && (bytes < TcpOptions.MIN_MAX_SEGMENT || bytes > TcpOptions.MAX_MAX_SEGMENT))) {
            return -TcpError.INVALID;
        }
        tcb.userMss(c, bytes);
        if (bytes > 0 && TcpState.isSynchronized(tcb.state(c))) {
            tcb.sndMss(c, Math.min(tcb.sndMss(c), bytes));
        }
        return 0;
    }

    /**
     * TCP_MAXSEG on a listening socket: the connections it makes from now on offer and use at most {@code bytes} (0:
     * no bound). Returns 0 or {@code -INVALID}.
     */
    public int listenerMaxSegment(int listener, int bytes) {
        if (!listeners.valid(listener)
            || (bytes != 0 && (bytes < TcpOptions.MIN_MAX_SEGMENT || bytes > TcpOptions.MAX_MAX_SEGMENT))) {
            return -TcpError.INVALID;
        }
        listeners.options(listener, listeners.options(listener).withMaxSegment(bytes));
        return 0;
    }

    /**
     * What Linux's getsockopt TCP_MAXSEG gives: before the handshake the owner's bound, else 536; after it the MSS
     * in use less the timestamp option when timestamps were negotiated. {@code -INVALID} for a bad handle.
     */
    public int maxSegment(int connection) {
        final int c = tcb.ownedSlot(connection);
        if (c < 0) {
            return -TcpError.INVALID;
        }
        if (!TcpState.isSynchronized(tcb.state(c))) {
            return tcb.userMss(c) > 0 ? tcb.userMss(c) : UNCONNECTED_MSS;
        }
        return tcb.sndMss(c) - (tcb.hasFlag(c, TcpControlBlocks.F_TIMESTAMPS) ? TIMESTAMP_OPTION : 0);
    }
}
