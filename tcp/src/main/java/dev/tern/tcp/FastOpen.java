package dev.tern.tcp;

import dev.tern.tcp.wire.TcpOptionFields;

import java.util.Arrays;
import java.util.Objects;

import static dev.tern.tcp.TcpControlBlocks.F_FAST_OPEN;
import static dev.tern.tcp.TcpControlBlocks.F_SYN_DATA;

/**
 * TCP Fast Open (RFC 7413), the server's side: which SYN gets a cookie in its SYN-ACK, which SYN's data is taken
 * before the handshake completes, and the listeners' Fast Open queues. The policy is Linux's ({@code
 * tcp_try_fastopen}), so that the suites written against Linux see the same segments:
 *
 * <ul>
 *   <li>a listener takes Fast Open only with the server bit set and a queue length above zero: set by
 *       {@link #listen} (the {@code TCP_FASTOPEN} socket option), or its backlog with {@link #SERVER_ALL_LISTENERS};
 *   <li>a SYN with an empty Fast Open option asks for a cookie (RFC 7413 §4.1.3): the SYN-ACK carries the cookie of
 *       the listener's primary key ({@link FastOpenKeys}), in the kind the SYN used (34, or 254 with ExID 0xF989);
 *   <li>a SYN whose cookie the primary or backup key made (§4.2.2) makes a connection in SYN-RECEIVED that joins the
 *       accept queue at once, its data in the receive ring and acknowledged by the SYN-ACK; a cookie of the backup key
 *       gets the primary's in the SYN-ACK;
 *   <li>a wrong cookie (another key, another address, another length) falls back to the plain handshake: the data is
 *       not acknowledged (the client sends it again), and the SYN-ACK carries the right cookie;
 *   <li>beyond the queue length pending Fast Open connections (SYN-RECEIVED, not yet acknowledged), SYNs fall back
 *       the same way without a cookie (§5.1, Linux's TCPFastOpenListenOverflow);
 *   <li>with {@link #SERVER_NO_COOKIE} a SYN with data, or with the option, is taken without a cookie.
 * </ul>
 *
 * <p>Owned by the shard thread; not thread-safe. Nothing here allocates per segment.
 */
public final class FastOpen {
    /** Linux's tcp_fastopen bit 0x1: a client may send data in its SYN. */
    public static final int CLIENT = 0x1;
    /** 0x2: listeners may take data in a SYN. */
    public static final int SERVER = 0x2;
    /** 0x4: a client sends data in its SYN without a cookie and without the option. */
    public static final int CLIENT_NO_COOKIE = 0x4;
    /** 0x200: a listener takes data in a SYN without any cookie. */
    public static final int SERVER_NO_COOKIE = 0x200;
    /** 0x400: every listener takes Fast Open, its queue as long as its backlog, without {@code TCP_FASTOPEN}. */
    public static final int SERVER_ALL_LISTENERS = 0x400;

    /** {@link #onSyn}: a plain handshake, no cookie in the SYN-ACK. */
    static final int PLAIN = 0;
    /** A plain handshake with a cookie in the SYN-ACK (asked for, or the client's was wrong). */
    static final int COOKIE = 1;
    /** The SYN's data is taken; the SYN-ACK carries no cookie. */
    static final int ACCEPT = 2;
    /** The SYN's data is taken; its cookie was the backup key's, the SYN-ACK carries the primary key's. */
    static final int ACCEPT_NEW_COOKIE = 3;

    private final TcpControlBlocks tcb;
    private final TcpListeners listeners;
    private final ConnectionBuffers buffers;
    private final TcpOutput output;
    private final TcpCounters counters;
    private final TcpConfig config;
    private FastOpenKeys keys;
    /** Per listener handle: the Fast Open queue length (0: off), pending connections, a key of its own or null. */
    private int[] queueLength = new int[8];
    private int[] pending = new int[8];
    private FastOpenKeys[] listenerKeys = new FastOpenKeys[8];
    /** The cookie {@link #onSyn} chose for the SYN-ACK. */
    private long cookie;
    private boolean experimental;

    FastOpen(TcpControlBlocks tcb, TcpListeners listeners, ConnectionBuffers buffers, TcpOutput output,
             TcpCounters counters, TcpConfig config) {
        this.tcb = tcb;
        this.listeners = listeners;
        this.buffers = buffers;
        this.output = output;
        this.counters = counters;
        this.config = config;
        this.keys = config.fastOpenKeys();
    }

    // ------------------------------------------------------------------------------------------ the owner's side

    /**
     * {@code TCP_FASTOPEN} on a listener: at most {@code queueLength} connections opened by Fast Open wait for the
     * handshake's last ACK at once (0 turns Fast Open off for the listener; bounded by the layer's backlog limit, as
     * Linux bounds it by somaxconn). Returns 0 or {@code -INVALID}. Cold path.
     */
    public int listen(int listener, int queueLength) {
        if (!listeners.valid(listener) || queueLength < 0) {
            return -TcpError.INVALID;
        }
        this.queueLength[listener] = Math.min(queueLength, config.maxBacklog());
        return 0;
    }

    /** The listener's Fast Open queue length (0: off), or {@code -INVALID}. */
    public int queueLength(int listener) {
        return listeners.valid(listener) ? queueLength[listener] : -TcpError.INVALID;
    }

    /**
     * {@code TCP_FASTOPEN_KEY} on a listener: its cookies are made and checked with {@code listenerKeys} instead of the
     * layer's; null goes back to the layer's. Returns 0 or {@code -INVALID}. Cold path.
     */
    public int key(int listener, FastOpenKeys listenerKeys) {
        if (!listeners.valid(listener)) {
            return -TcpError.INVALID;
        }
        this.listenerKeys[listener] = listenerKeys;
        return 0;
    }

    /** The layer's key from now on (rotation: give the new key with the old one as backup). Cold path. */
    public void keys(FastOpenKeys layerKeys) {
        keys = Objects.requireNonNull(layerKeys);
    }

    /** Whether the connection's SYN data was acknowledged (Linux's TCPI_OPT_SYN_DATA); false for a bad handle. */
    public boolean synDataAcked(int connection) {
        final int c = tcb.ownedSlot(connection);
        return c >= 0 && tcb.hasFlag(c, F_SYN_DATA);
    }

    /**
     * A listener was opened (or a handle refused, negative): its Fast Open state starts afresh, on with its backlog
     * under {@link #SERVER_ALL_LISTENERS}. Returns {@code listener}. Cold path.
     */
    int opened(int listener, int backlog) {
        if (listener < 0) {
            return listener;
        }
        if (listener >= queueLength.length) {
            final int size = Math.max(listener + 1, queueLength.length * 2);
            queueLength = Arrays.copyOf(queueLength, size);
            pending = Arrays.copyOf(pending, size);
            listenerKeys = Arrays.copyOf(listenerKeys, size);
        }
        final int bits = config.fastOpen();
        queueLength[listener] = (bits & SERVER) != 0 && (bits & SERVER_ALL_LISTENERS) != 0
            ? Math.min(Math.max(backlog, 1), config.maxBacklog()) : 0;
        pending[listener] = 0;
        listenerKeys[listener] = null;
        return listener;
    }

    // ------------------------------------------------------------------------------------------ a SYN arrives

    /**
     * What a listener does with the SYN {@code seg} (Linux's tcp_try_fastopen): {@link #PLAIN}, {@link #COOKIE},
     * {@link #ACCEPT} or {@link #ACCEPT_NEW_COOKIE}. Counts cookie requests, wrong cookies and queue overflows.
     */
    int onSyn(int listener, TcpSegment seg) {
        final TcpOptionFields options = seg.options;
        final int length = options.fastOpenLength();
        if (length == 0) {
            counters.fastOpenCookieRequests.incrementRelease();
        }
        final int bits = config.fastOpen();
        if ((bits & SERVER) == 0 || seg.payloadLength == 0 && length == TcpOptionFields.ABSENT
            || !queueAllows(listener)) {
            return PLAIN;
        }
        if ((bits & SERVER_NO_COOKIE) != 0) {
            return ACCEPT;
        }
        if (length == TcpOptionFields.ABSENT) {
            return PLAIN;
        }
        final FastOpenKeys k = listenerKeys[listener] != null ? listenerKeys[listener] : keys;
        cookie = k.cookie(seg.sourceAddress, seg.destinationAddress);
        experimental = options.fastOpenExperimental();
        if (length == 0) {
            return COOKIE;
        }
        final int key = length == FastOpenKeys.COOKIE_LENGTH
            ? k.check(options.fastOpenHigh(), seg.sourceAddress, seg.destinationAddress) : 0;
        if (key == 0) {
            counters.fastOpenPassiveFailures.incrementRelease();
            return COOKIE;
        }
        if (key == 2) {
            counters.fastOpenPassiveAlternateKey.incrementRelease();
            return ACCEPT_NEW_COOKIE;
        }
        return ACCEPT;
    }

    /** RFC 7413 §5.1: at most the queue length of pending Fast Open connections per listener. */
    private boolean queueAllows(int listener) {
        if (queueLength[listener] == 0) {
            return false;
        }
        if (pending[listener] >= queueLength[listener]) {
            counters.fastOpenListenOverflows.incrementRelease();
            return false;
        }
        return true;
    }

    /**
     * The connection {@code c} the SYN made is in SYN-RECEIVED and its SYN-ACK about to go: with {@code decision}
     * {@link #ACCEPT} or {@link #ACCEPT_NEW_COOKIE} it takes the SYN's data and joins the accept queue (RFC 7413
     * §4.2.2: the server may deliver the data before the handshake completes); a cookie chosen goes in the SYN-ACK.
     */
    void synReceived(int c, int decision, TcpSegment seg, TcpReceiver receiver) {
        boolean withCookie = decision == COOKIE || decision == ACCEPT_NEW_COOKIE;
        if (decision == ACCEPT || decision == ACCEPT_NEW_COOKIE) {
            if (buffers.fitsLimit(c)) {
                final int listener = tcb.listener(c);
                tcb.setFlag(c, F_FAST_OPEN);
                pending[listener]++;
                counters.fastOpenPassive.incrementRelease();
                buffers.reserve(c);
                // The SYN's window bounds what is taken: the window the SYN-ACK will offer (RFC 7413 §4.2.2).
                tcb.rcvAdv(c, tcb.rcvNxt(c) + Math.min(buffers.receiveSize(c), 65535));
                if (receiver.takeSynData(c, seg) > 0) {
                    tcb.setFlag(c, F_SYN_DATA);
                }
                listeners.enqueue(listener, c);
            } else {
                // As Linux when it cannot make the child: counted, and the plain handshake with the cookie.
                counters.fastOpenPassiveFailures.incrementRelease();
                withCookie = seg.options.fastOpenLength() != TcpOptionFields.ABSENT;
            }
        }
        if (withCookie) {
            output.fastOpenOnNextSyn(FastOpenKeys.COOKIE_LENGTH, cookie, experimental);
        }
    }

    /**
     * A connection leaves SYN-RECEIVED (the handshake completed, or it ended): if Fast Open opened it, its listener's
     * queue has room again (Linux's reqsk_fastopen_remove).
     */
    void left(int c) {
        if (tcb.hasFlag(c, F_FAST_OPEN)) {
            tcb.clearFlag(c, F_FAST_OPEN);
            final int listener = tcb.listener(c);
            if (listener >= 0 && listener < pending.length && pending[listener] > 0) {
                pending[listener]--;
            }
        }
    }

    /** Whether Fast Open opened the connection and its handshake has not completed. */
    boolean pending(int c) {
        return tcb.hasFlag(c, F_FAST_OPEN);
    }
}
