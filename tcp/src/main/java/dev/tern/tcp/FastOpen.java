package dev.tern.tcp;

import dev.tern.tcp.wire.TcpOptionFields;

import java.util.Arrays;
import java.util.Objects;

import static dev.tern.tcp.TcpControlBlocks.F_FAST_OPEN;
import static dev.tern.tcp.TcpControlBlocks.F_FAST_OPEN_ACTIVE;
import static dev.tern.tcp.TcpControlBlocks.F_RETRANSMITTED;
import static dev.tern.tcp.TcpControlBlocks.F_RINGS;
import static dev.tern.tcp.TcpControlBlocks.F_SYN_DATA;
import static dev.tern.tcp.TcpControlBlocks.F_SYN_DEFERRED;

/**
 * TCP Fast Open (RFC 7413): the server's side (which SYN gets a cookie in its SYN-ACK, which SYN's data is taken
 * before the handshake completes, the listeners' Fast Open queues) and the client's (the cookie cache, what a SYN
 * carries, what its SYN-ACK says). The policy is Linux's ({@code tcp_try_fastopen}, {@code tcp_send_syn_data}, {@code
 * tcp_rcv_fastopen_synack}), so that the suites written against Linux see the same segments. The server:
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
 * The client, for a connect with {@link TcpOptions#fastOpen} under {@link #CLIENT}:
 *
 * <ul>
 *   <li>without a cookie cached for the destination, the SYN goes at once with an empty option, a cookie request
 *       (§4.1.3); the cookie of its SYN-ACK is cached (with the server's MSS, which a later SYN-ACK without a
 *       cookie updates too, as Linux's), per destination address;
 *   <li>with one, the SYN waits for the owner's first data and carries the cookie and as much of the data as fits the
 *       cached MSS less 40 bytes of option space (Linux's bound); with {@link #CLIENT_NO_COOKIE}, the data without
 *       any option;
 *   <li>a SYN-ACK that acknowledges the data completes it (the ring lets it go); one that acknowledges less falls back
 *       (§4.2.1): what it did not acknowledge goes again after the handshake, and when it brought no cookie either,
 *       the cached cookie is dropped (the server no longer takes Fast Open), so the next connect asks again;
 *   <li>a retransmitted SYN carries neither the option nor data, as Linux's;
 *   <li>with {@link TcpConfig#fastOpenPathDisableNs} above 0, a SYN-ACK that neither acknowledges the SYN's data nor
 *       brings a valid cookie (a request unanswered, or the data refused without a new cookie) turns Fast Open off
 *       towards that server for that long, as FreeBSD's path disabling: its connects send plain SYNs, then, once the
 *       time has passed, ask for a cookie again.
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
    private final ConnectionSettings settings;
    /** Bytes of option space a SYN's data leaves free (Linux's MAX_TCP_OPTION_SPACE). */
    private static final int SYN_OPTION_SPACE = 40;
    /** Destinations whose cookie the client remembers; one per slot, a later one replaces an earlier. */
    private static final int CACHE_SLOTS = 1024;
    private FastOpenKeys keys;
    /** Per listener handle: the Fast Open queue length (0: off), pending connections, a key of its own or null. */
    private int[] queueLength = new int[8];
    private int[] pending = new int[8];
    private FastOpenKeys[] listenerKeys = new FastOpenKeys[8];
    /** The cookie {@link #onSyn} chose for the SYN-ACK. */
    private long cookie;
    private boolean experimental;
    /** The client's cookie cache by destination address: cookie bytes (0: none), the bytes, the kind, the MSS. */
    private final int[] cachedAddress = new int[CACHE_SLOTS];
    private final int[] cachedLength = new int[CACHE_SLOTS];
    private final long[] cachedHigh = new long[CACHE_SLOTS];
    private final long[] cachedLow = new long[CACHE_SLOTS];
    private final boolean[] cachedExperimental = new boolean[CACHE_SLOTS];
    private final int[] cachedMss = new int[CACHE_SLOTS];
    /** Whether a failure turned Fast Open off towards the slot's address, and when. */
    private final boolean[] disabled = new boolean[CACHE_SLOTS];
    private final long[] disabledAtNs = new long[CACHE_SLOTS];
    private final SendCompletions completions;

    FastOpen(TcpControlBlocks tcb, TcpListeners listeners, ConnectionBuffers buffers, TcpOutput output,
             TcpCounters counters, ConnectionSettings settings, SendCompletions completions) {
        this.tcb = tcb;
        this.completions = completions;
        this.listeners = listeners;
        this.buffers = buffers;
        this.output = output;
        this.counters = counters;
        this.settings = settings;
        this.keys = settings.current().fastOpenKeys();
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
        this.queueLength[listener] = Math.min(queueLength, settings.current().maxBacklog());
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
        final int bits = settings.current().fastOpen();
        queueLength[listener] = (bits & SERVER) != 0 && (bits & SERVER_ALL_LISTENERS) != 0
            ? Math.min(Math.max(backlog, 1), settings.current().maxBacklog()) : 0;
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
        final int bits = settings.current().fastOpen();
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
                // What is taken is bounded by the window the SYN-ACK will offer (RFC 9293 §3.10.7.4 trims the rest).
                tcb.rcvAdv(c, tcb.rcvNxt(c) + receiver.synWindow(c));
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
            output.fastOpenOnNextSyn(FastOpenKeys.COOKIE_LENGTH, cookie, 0, experimental);
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

    // ------------------------------------------------------------------------------------------ the client

    /**
     * How many bytes the SYN of a Fast Open connect that holds it back would carry now (what {@code sendto} with
     * {@code MSG_FASTOPEN} may take before the handshake), or -1 when the connection holds no SYN back. Cold path.
     */
    public int synDataRoom(int connection) {
        final int c = tcb.ownedSlot(connection);
        return c < 0 || !tcb.hasFlag(c, F_SYN_DEFERRED) ? -1 : room(c);
    }

    /** The client's cached cookie for {@code remoteAddress}: its length, 0 for none. */
    public int cachedCookieLength(int remoteAddress) {
        final int i = slot(remoteAddress);
        return cachedAddress[i] == remoteAddress ? cachedLength[i] : 0;
    }

    /** Forgets every cached cookie (Linux's {@code ip tcp_metrics flush}). Cold path. */
    public void flushCookies() {
        Arrays.fill(cachedLength, 0);
        Arrays.fill(cachedAddress, 0);
        Arrays.fill(disabled, false);
    }

    /** Whether a failed attempt turned Fast Open off towards {@code remoteAddress} (fastOpenPathDisableNs). */
    public boolean pathDisabled(int remoteAddress) {
        final int i = slot(remoteAddress);
        return cachedAddress[i] == remoteAddress && disabled[i];
    }

    private static int slot(int address) {
        return (address * 0x9E3779B1 >>> 16) & (CACHE_SLOTS - 1);
    }

    /**
     * A connect with {@link TcpOptions#fastOpen}: the connection is a Fast Open one unless a failure turned Fast Open
     * off towards its server, and that time has not passed. Returns whether its SYN waits for the owner's data.
     */
    boolean connect(int c, long nowNs) {
        final int remote = tcb.remoteAddress(c);
        if (pathDisabled(remote)) {
            final int i = slot(remote);
            if (nowNs - disabledAtNs[i] <= settings.current().fastOpenPathDisableNs()) {
                counters.fastOpenActiveDisabled.incrementRelease();
                return false;
            }
            // As FreeBSD: the path is tried again with a cookie request; the old MSS may no longer hold.
            disabled[i] = false;
            cachedLength[i] = 0;
            cachedMss[i] = 0;
        }
        tcb.setFlag(c, F_FAST_OPEN_ACTIVE);
        return defersSyn(c);
    }

    /** A Fast Open connect's SYN waits for the owner's data when it can carry data: a cookie, or none needed. */
    private boolean defersSyn(int c) {
        final int bits = settings.current().fastOpen();
        return tcb.hasFlag(c, F_FAST_OPEN_ACTIVE) && (bits & CLIENT) != 0
            && ((bits & CLIENT_NO_COOKIE) != 0 || cachedCookieLength(tcb.remoteAddress(c)) > 0);
    }

    /** The SYN's data: what waits in the ring, up to the cached MSS (or ours) less the option space. */
    private int room(int c) {
        final int i = slot(tcb.remoteAddress(c));
        final int mss = cachedAddress[i] == tcb.remoteAddress(c) && cachedMss[i] > 0
            ? Math.min(cachedMss[i], tcb.advMss(c)) : tcb.advMss(c);
        return Math.max(0, mss - SYN_OPTION_SPACE);
    }

    /** Before a Fast Open connect's first SYN: its option (a request, or the cached cookie) and its data. */
    void beforeSyn(int c) {
        final int bits = settings.current().fastOpen();
        if (!tcb.hasFlag(c, F_FAST_OPEN_ACTIVE) || (bits & CLIENT) == 0 || tcb.state(c) != TcpState.SYN_SENT
            || tcb.retries(c) != 0 || tcb.hasFlag(c, F_RETRANSMITTED)) {
            return;
        }
        final int remote = tcb.remoteAddress(c);
        final int i = slot(remote);
        final boolean cached = cachedCookieLength(remote) > 0;
        if ((bits & CLIENT_NO_COOKIE) == 0) {
            if (cached) {
                output.fastOpenOnNextSyn(cachedLength[i], cachedHigh[i], cachedLow[i], cachedExperimental[i]);
            } else {
                output.fastOpenOnNextSyn(0, 0, 0, false);
                return;
            }
        }
        if (tcb.hasFlag(c, F_RINGS)) {
            output.synDataOnNextSyn(Math.min(buffers.sendRing(c).available(), room(c)));
        }
    }

    /**
     * A Fast Open connect's SYN-ACK (acceptable, before SND.UNA moves to its ACK): its cookie into the cache, and the
     * SYN's data acknowledged (the ring lets it go) or not (SND.NXT goes back, the rest is sent after the handshake).
     */
    void onSynAck(int c, TcpSegment seg, long nowNs) {
        if (!tcb.hasFlag(c, F_FAST_OPEN_ACTIVE)) {
            return;
        }
        final TcpOptionFields options = seg.options;
        final int remote = tcb.remoteAddress(c);
        final int first = tcb.iss(c) + 1;
        final int sent = tcb.sndMax(c) - first;
        final int acked = Math.max(0, seg.ack - first);
        if (options.fastOpenLength() > 0) {
            final int i = slot(remote);
            cachedAddress[i] = remote;
            cachedLength[i] = options.fastOpenLength();
            cachedHigh[i] = options.fastOpenHigh();
            cachedLow[i] = options.fastOpenLow();
            cachedExperimental[i] = options.fastOpenExperimental();
            cachedMss[i] = options.mss() > 0 ? options.mss() : 0;
            disabled[i] = false;
        } else if (acked == 0 && settings.current().fastOpenPathDisableNs() > 0 && (settings.current().fastOpen() & CLIENT) != 0) {
            disablePath(remote, nowNs);
        } else {
            final int i = slot(remote);
            if (sent > 0 && acked == 0 && cachedCookieLength(remote) > 0) {
                // Neither the data nor a cookie: the server takes Fast Open no longer; the next connect asks again.
                cachedLength[i] = 0;
            }
            if (cachedAddress[i] == remote && options.mss() > 0) {
                // As Linux's tcp_fastopen_cache_set: the server's MSS is kept from any SYN-ACK, cookie or not.
                cachedMss[i] = options.mss();
            }
        }
        if (sent == 0) {
            return;
        }
        final boolean writePending = buffers.sendRing(c).available() > sent;
        if (acked > 0) {
            buffers.sendRing(c).consume(acked);
            tcb.bytesAcked(c, tcb.bytesAcked(c) + acked);
            // A MSG_ZEROCOPY send that went in the SYN completes with the SYN-ACK that acknowledges it.
            completions.acknowledged(c);
        }
        if (acked == sent) {
            tcb.setFlag(c, F_SYN_DATA);
            counters.fastOpenActive.incrementRelease();
        } else {
            // Part of the data, or none, was taken: as Linux's, Fast Open failed (no TCPI_OPT_SYN_DATA).
            counters.fastOpenActiveFailures.incrementRelease();
        }
        if (writePending) {
            // More was written than the SYN could carry: the writer waits for the handshake, and the ACK goes with
            // its data (Linux's SYN-ACK with a write pending, which starts the delayed ACK engine).
            tcb.setSenderFlag(c, SenderState.S_ACK_TIMED);
        }
        if (acked < sent) {
            resendSynData(c, Math.max(first, seg.ack), first + sent, nowNs);
        } else if (SeqNum.lt(tcb.sndNxt(c), seg.ack)) {
            // The data went in the first SYN and a retransmitted SYN without it was answered: the peer has it all.
            tcb.sndNxt(c, seg.ack);
        }
    }

    /**
     * The SYN's data from {@code from} to {@code end} was not acknowledged: it stays in flight, recorded in segments of
     * the MSS just learnt and marked lost, so the sender sends it again at once as retransmissions (counted as such,
     * and in TCP_INFO's retransmitting segments), before new data, as Linux's tcp_rcv_fastopen_synack marks the SYN's
     * data lost and retransmits it. SND.NXT and SND.MAX stay at its end.
     */
    private void resendSynData(int c, int from, int end, long nowNs) {
        final SentSegments record = buffers.sent(c);
        final int mss = Math.max(1, tcb.sndMss(c) - output.prepareOptions(c));
        tcb.sndNxt(c, end);
        tcb.sndMax(c, end);
        for (int at = from; at != end; ) {
            final int next = end - at > mss ? at + mss : end;
            record.append(at, next, false, next == end, nowNs, tcb.delivered(c));
            record.markLost(record.count() - 1);
            at = next;
        }
    }

    /**
     * Neither the SYN's data nor a cookie request was answered: Fast Open goes off towards {@code remote}, its cookie
     * and MSS forgotten; a path already off keeps the time it went off, as FreeBSD's tcp_fastopen_disable_path.
     */
    private void disablePath(int remote, long nowNs) {
        if (pathDisabled(remote)) {
            return;
        }
        final int i = slot(remote);
        cachedAddress[i] = remote;
        cachedLength[i] = 0;
        cachedMss[i] = 0;
        disabled[i] = true;
        disabledAtNs[i] = nowNs;
        counters.fastOpenPathsDisabled.incrementRelease();
    }

    /** The owner's first data for a connect that held its SYN back: the SYN may go. Returns whether it was held. */
    boolean releaseSyn(int c) {
        if (!tcb.hasFlag(c, F_SYN_DEFERRED)) {
            return false;
        }
        tcb.clearFlag(c, F_SYN_DEFERRED);
        return true;
    }
}
