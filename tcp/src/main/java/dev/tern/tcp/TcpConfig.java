package dev.tern.tcp;

import java.security.SecureRandom;
import java.util.Objects;

/**
 * Configuration of a {@link TcpLayer}, fixed when the layer is made. {@link #defaults()} gives Linux-like values
 * with a fresh random ISN key; {@link #builder()} changes some.
 *
 * @param maxConnections      control blocks in the table (connections in every state, TIME-WAIT included); at most 2^20
 * @param sendBufferSize      default send buffer (bytes, a power of two, at least 1024); per connection in {@link TcpOptions}
 * @param receiveBufferSize   default receive buffer (bytes, a power of two, at least 1024); also bounds the window
 * @param mslNs               maximum segment lifetime; TIME-WAIT lasts 2 MSL (Linux: 60 s in all, so MSL 30 s)
 * @param delayedAckNs        how long an ACK may wait for a second segment or data to ride on (RFC 9293 §3.8.6.3: at
 *                            most 500 ms; RFC 5681: 200 ms SHOULD). Default 40 ms, Linux's minimum delayed-ACK time.
 * @param rtoInitialNs        RTO before the first RTT sample (RFC 6298 §2.1: 1 s)
 * @param rtoMinNs            lower bound of the RTO (RFC 6298 §2.4 says 1 s; Linux uses 200 ms, and so do we)
 * @param rtoMaxNs            upper bound of the backed-off RTO (Linux: 120 s)
 * @param maxRetries          retransmissions of one segment before the connection times out (Linux tcp_retries2: 15)
 * @param retries1            RFC 1122 §4.2.3.5's R1: at this many retransmissions of one segment (data, or an active
 *                            open's SYN) TCP gives IP negative advice, so the next hop's neighbour entry is probed,
 *                            and sets the connection's soft error (RFC 9293 MUST-20, SHLD-9); at least 1, default 3
 *                            (SHLD-10; Linux tcp_retries1: 3)
 * @param synRetries          SYN retransmissions before connect times out (Linux tcp_syn_retries: 6)
 * @param synAckRetries       SYN-ACK retransmissions before a half-open connection is dropped (Linux: 5)
 * @param synQueueSize        half-open (SYN-RECEIVED) connections per listener before SYN cookies are used
 * @param maxBacklog          upper bound on a listener's accept queue (Linux somaxconn: 4096)
 * @param synCookies          answer SYNs with cookies when the SYN queue is full (else drop them)
 * @param keepaliveIdleNs     default idle time before the first keepalive probe (Linux: 2 h)
 * @param keepaliveIntervalNs default time between unanswered probes (Linux: 75 s)
 * @param keepaliveProbes     default unanswered probes before the connection times out (Linux: 9)
 * @param finWait2TimeoutNs   how long a connection closed by its owner waits in FIN-WAIT-2 (Linux tcp_fin_timeout: 60 s)
 * @param congestionControl   default congestion control by name ("cubic", "newreno", "none", "bbr")
 * @param isnKey0             first half of the secret key for ISNs (RFC 6528), ephemeral ports (RFC 6056) and cookies
 * @param isnKey1             second half of the key
 * @param timestamps          offer timestamps (RFC 7323)
 * @param sack                offer SACK (RFC 2018)
 * @param windowScaling       offer window scaling (RFC 7323)
 * @param initialCwndSegments initial congestion window in segments (RFC 6928; Linux: 10)
 * @param ephemeralFirst      first port of the ephemeral range (IANA: 49152)
 * @param ephemeralLast       last port of the ephemeral range (65535)
 * @param outOfOrderRanges    disjoint out-of-order ranges one connection may hold (more are dropped)
 * @param outOfOrderBlocks    connections that may hold out-of-order data at once (the global bound)
 * @param challengeAckLimit   challenge ACKs per second, for the whole layer (RFC 5961 §7)
 * @param fixedIsn            for tests only: when not -1, every ISN is this value instead of RFC 6528's
 * @param lossDetection       default loss detection by name ("rack": RFC 8985 RACK-TLP; "dupack": RFC 6675 IsLost);
 *                            without SACK a connection always counts duplicate ACKs
 * @param recovery            default loss recovery by name ("prr": RFC 6675 with RFC 9937 PRR; "rfc6675"; "newreno",
 *                            RFC 6582, which a connection without SACK always uses)
 * @param memoryPressureBytes socket buffer memory (rings and records of sent segments, attached to connections) above
 *                            which new connections get a quarter of their buffers, at least 4 KiB (Linux tcp_mem's
 *                            pressure; default 512 MiB)
 * @param memoryLimitBytes    socket buffer memory a new connection may not take beyond: its SYN is dropped or its
 *                            connect fails with NO_BUFFER, counted (Linux tcp_mem's limit; default 1 GiB)
 * @param maxTimeWait         connections kept in TIME-WAIT at once (Linux tcp_max_tw_buckets); one more closes at
 *                            once after its last ACK, counted in {@code tcp.conn.time_wait_overflows} (Linux
 *                            TCPTimeWaitOverflow). Default 262,144, Linux's for a machine of 4 GiB or more
 * @param slowStartAfterIdle  restart from the initial window when data is sent after an idle period longer than the
 *                            RTO (RFC 5681 §4.1, a SHOULD; Linux tcp_slow_start_after_idle, on by default)
 * @param windowScaleBufferSize when above 0, the window scale offered is the smallest that covers this many bytes
 *                            rather than the connection's receive buffer (FreeBSD picks its scale from
 *                            kern.ipc.maxsockbuf, the largest buffer a socket may grow to); the window offered is
 *                            then at most 65535 shifted by that scale. 0, the default, covers the receive buffer
 * @param notsentLowat        a connection is writable only while fewer bytes than this wait unsent (Linux
 *                            tcp_notsent_lowat; a connection's own TCP_NOTSENT_LOWAT wins); 0, the default: no mark
 * @param fastOpen            TCP Fast Open (RFC 7413) as Linux's {@code net.ipv4.tcp_fastopen} bits ({@link FastOpen}):
 *                            0x1 client, 0x2 server, 0x4 client without cookie, 0x200 server without cookie, 0x400
 *                            server on every listener; default 0x1, Linux's
 * @param fastOpenKeys        the server's Fast Open cookie key (and backup key); default a random key
 * @param segmentChecks       how resets, SYNs and SYN+FIN segments are checked ({@link SegmentChecks}); default
 *                            {@link SegmentChecks#RFC_5961}, Linux's
 * @param receivePolicy       how the receiver offers its window and when it acknowledges in-order data
 *                            ({@link ReceivePolicy}): Linux's by default ({@link ReceivePolicy#LINUX}: the right edge in
 *                            steps, every second full segment, 16 quick ACKs); {@link ReceivePolicy#FREEBSD} offers the
 *                            free space, acknowledges every second segment and has no quick ACKs
 * @param fastOpenPathDisableNs when above 0, a Fast Open connect whose SYN-ACK neither acknowledged the SYN's data nor
 *                            gave a valid cookie turns Fast Open off towards that server for this long: its connects
 *                            send plain SYNs, no option, until it has passed, then ask for a cookie again (FreeBSD's
 *                            {@code net.inet.tcp.fastopen.path_disable_time}, 900 s there). 0, the default: the
 *                            cookie is dropped and the next connect asks again, as Linux's client does
 * @param synSentText         what a connection in SYN-SENT does with text on the SYN-ACK it receives
 *                            ({@link SynSentText}); default {@link SynSentText#FAST_OPEN_ONLY}, Linux's
 * @param pushRule            which new-data segments carry PSH ({@link PushRule}); default
 *                            {@link PushRule#LAST_BUFFERED}, RFC 1122 §4.2.2.2's
 * @param ecn                 when connections use ECN (RFC 3168, {@link EcnMode}); default {@link EcnMode#SERVER},
 *                            Linux's: accept a peer's request, never ask
 * @param ecnSynRetries       retransmissions of an active open's SYN that still ask for ECN (Linux: 0, the first
 *                            retransmission goes plain; FreeBSD's ecn.maxretries: 1)
 * @param pacing              whether a congestion control that does not pace itself (CUBIC, NewReno) is paced at
 *                            Linux's rate ({@link Pacer}): cwnd per smoothed RTT, twice that in slow start's first
 *                            half, 1.2 times it after, as Linux with the fq qdisc; off by default, Linux's without fq
 * @param connectTimeoutNs    an active open's default limit from its first SYN to the handshake's end, whatever SYN
 *                            retries remain (FreeBSD's {@code net.inet.tcp.keepinit}, 75 s there); 0: none, the SYN
 *                            retries alone end it, as on Linux (the default). {@link TcpOptions#connectTimeoutMs}
 *                            sets one connection's
 */
public record TcpConfig(int maxConnections, int sendBufferSize, int receiveBufferSize, long mslNs, long delayedAckNs,
                        long rtoInitialNs, long rtoMinNs, long rtoMaxNs, int maxRetries, int retries1,
                        int synRetries, int synAckRetries, int synQueueSize, int maxBacklog, boolean synCookies,
                        long keepaliveIdleNs, long keepaliveIntervalNs, int keepaliveProbes, long finWait2TimeoutNs,
                        String congestionControl, long isnKey0, long isnKey1, boolean timestamps, boolean sack,
                        boolean windowScaling, int initialCwndSegments, int ephemeralFirst, int ephemeralLast,
                        int outOfOrderRanges, int outOfOrderBlocks, int challengeAckLimit, long fixedIsn,
                        String lossDetection, String recovery, long memoryPressureBytes, long memoryLimitBytes,
                        int maxTimeWait, boolean slowStartAfterIdle, int windowScaleBufferSize, int notsentLowat,
                        int fastOpen, FastOpenKeys fastOpenKeys,
                        SegmentChecks segmentChecks, ReceivePolicy receivePolicy, long fastOpenPathDisableNs,
                        SynSentText synSentText, PushRule pushRule, EcnMode ecn, int ecnSynRetries,
                        boolean pacing, long connectTimeoutNs) {
    public static final int MIN_BUFFER = 1024;
    public static final int MAX_BUFFER = 1 << 30;
    public static final int MAX_CONNECTIONS = 1 << 20;
    /**
     * The socket buffer budget ({@link #memoryLimitBytes}) the settings of the {@code tern} command and the NIO
     * provider take: 1 MiB (a few connections' default buffers) to 1 TiB.
     */
    public static final long MIN_MEMORY_LIMIT = 1L << 20;
    public static final long MAX_MEMORY_LIMIT = 1L << 40;

    /**
     * Text on the SYN-ACK that a connection in SYN-SENT receives. RFC 9293 §3.10.7.3 processes it, from the sixth step,
     * once the SYN-ACK has made the connection ESTABLISHED; Linux queues it only for a Fast Open connect (RFC 7413
     * lets the server send data before the handshake completes) and drops it otherwise, the server sending it again.
     */
    public enum SynSentText {
        /** Linux's: a Fast Open connect takes the text (and a FIN), any other acknowledges the SYN only. */
        FAST_OPEN_ONLY,
        /** RFC 9293's and FreeBSD's: every connection takes the text (and a FIN). */
        ALWAYS
    }

    public TcpConfig {
        if (maxConnections < 1 || maxConnections > MAX_CONNECTIONS) {
            throw new IllegalArgumentException("maxConnections must be 1.." + MAX_CONNECTIONS + ", got " + maxConnections);
        }
        checkBuffer(sendBufferSize, "send");
        checkBuffer(receiveBufferSize, "receive");
        if (rtoMinNs <= 0 || rtoMaxNs < rtoMinNs || rtoInitialNs < rtoMinNs || rtoInitialNs > rtoMaxNs) {
            throw new IllegalArgumentException("need 0 < rtoMin <= rtoInitial <= rtoMax");
        }
        if (maxRetries < 1 || retries1 < 1 || synRetries < 0 || synAckRetries < 0 || synQueueSize < 1
            || maxBacklog < 1) {
            throw new IllegalArgumentException("retries, SYN queue and backlog must be positive");
        }
        if (mslNs < 0 || delayedAckNs < 0 || finWait2TimeoutNs < 0 || keepaliveIdleNs <= 0 || keepaliveIntervalNs <= 0
            || keepaliveProbes < 1) {
            throw new IllegalArgumentException("times must not be negative, keepalive values positive");
        }
        Objects.requireNonNull(congestionControl, "congestionControl");
        Objects.requireNonNull(lossDetection, "lossDetection");
        Objects.requireNonNull(recovery, "recovery");
        Objects.requireNonNull(fastOpenKeys, "fastOpenKeys");
        Objects.requireNonNull(segmentChecks, "segmentChecks");
        Objects.requireNonNull(receivePolicy, "receivePolicy");
        if (fastOpenPathDisableNs < 0) {
            throw new IllegalArgumentException("fastOpenPathDisableNs must not be negative");
        }
        Objects.requireNonNull(synSentText, "synSentText");
        Objects.requireNonNull(pushRule, "pushRule");
        Objects.requireNonNull(ecn, "ecn");
        if (ecnSynRetries < 0) {
            throw new IllegalArgumentException("ecnSynRetries must not be negative");
        }
        if (ephemeralFirst < 1 || ephemeralLast > 65535 || ephemeralLast < ephemeralFirst) {
            throw new IllegalArgumentException("bad ephemeral port range " + ephemeralFirst + ".." + ephemeralLast);
        }
        if (memoryPressureBytes <= 0 || memoryLimitBytes < memoryPressureBytes) {
            throw new IllegalArgumentException("need 0 < memory pressure <= memory limit, got " + memoryPressureBytes
                + " and " + memoryLimitBytes);
        }
        if (windowScaleBufferSize < 0) {
            throw new IllegalArgumentException("windowScaleBufferSize must not be negative, got " + windowScaleBufferSize);
        }
        if (maxTimeWait < 0) {
            throw new IllegalArgumentException("maxTimeWait must not be negative, got " + maxTimeWait);
        }
        if (initialCwndSegments < 1 || outOfOrderRanges < 1 || outOfOrderBlocks < 1 || challengeAckLimit < 1) {
            throw new IllegalArgumentException("initial cwnd, out-of-order bounds and challenge ACK limit must be positive");
        }
    }

    static void checkBuffer(int size, String what) {
        if (size < MIN_BUFFER || size > MAX_BUFFER || Integer.bitCount(size) != 1) {
            throw new IllegalArgumentException(what + " buffer must be a power of two, " + MIN_BUFFER + ".."
                + MAX_BUFFER + ", got " + size);
        }
    }

    /** Linux-like defaults with a random ISN key. */
    public static TcpConfig defaults() {
        return builder().build();
    }

    public static Builder builder() {
        return new Builder();
    }

    /** A builder starting from this configuration. */
    public Builder toBuilder() {
        final Builder b = new Builder();
        b.maxConnections = maxConnections;
        b.sendBufferSize = sendBufferSize;
        b.receiveBufferSize = receiveBufferSize;
        b.mslNs = mslNs;
        b.delayedAckNs = delayedAckNs;
        b.rtoInitialNs = rtoInitialNs;
        b.rtoMinNs = rtoMinNs;
        b.rtoMaxNs = rtoMaxNs;
        b.maxRetries = maxRetries;
        b.retries1 = retries1;
        b.synRetries = synRetries;
        b.synAckRetries = synAckRetries;
        b.synQueueSize = synQueueSize;
        b.maxBacklog = maxBacklog;
        b.synCookies = synCookies;
        b.keepaliveIdleNs = keepaliveIdleNs;
        b.keepaliveIntervalNs = keepaliveIntervalNs;
        b.keepaliveProbes = keepaliveProbes;
        b.finWait2TimeoutNs = finWait2TimeoutNs;
        b.congestionControl = congestionControl;
        b.isnKey0 = isnKey0;
        b.isnKey1 = isnKey1;
        b.timestamps = timestamps;
        b.sack = sack;
        b.windowScaling = windowScaling;
        b.initialCwndSegments = initialCwndSegments;
        b.ephemeralFirst = ephemeralFirst;
        b.ephemeralLast = ephemeralLast;
        b.outOfOrderRanges = outOfOrderRanges;
        b.outOfOrderBlocks = outOfOrderBlocks;
        b.challengeAckLimit = challengeAckLimit;
        b.fixedIsn = fixedIsn;
        b.lossDetection = lossDetection;
        b.recovery = recovery;
        b.memoryPressureBytes = memoryPressureBytes;
        b.memoryLimitBytes = memoryLimitBytes;
        b.maxTimeWait = maxTimeWait;
        b.windowScaleBufferSize = windowScaleBufferSize;
        b.slowStartAfterIdle = slowStartAfterIdle;
        b.notsentLowat = notsentLowat;
        b.fastOpen = fastOpen;
        b.fastOpenKeys = fastOpenKeys;
        b.segmentChecks = segmentChecks;
        b.receivePolicy = receivePolicy;
        b.fastOpenPathDisableNs = fastOpenPathDisableNs;
        b.synSentText = synSentText;
        b.pushRule = pushRule;
        b.ecn = ecn;
        b.ecnSynRetries = ecnSynRetries;
        b.pacing = pacing;
        b.connectTimeoutNs = connectTimeoutNs;
        return b;
    }

    /** Builds a {@link TcpConfig}; every setter has the default documented on the record. */
    public static final class Builder {
        private static final long MS = 1_000_000L;
        private static final long S = 1_000_000_000L;

        private int maxConnections = 16_384;
        private int sendBufferSize = 128 * 1024;
        private int receiveBufferSize = 128 * 1024;
        private long mslNs = 30 * S;
        private long delayedAckNs = 40 * MS;
        private long rtoInitialNs = S;
        private long rtoMinNs = 200 * MS;
        private long rtoMaxNs = 120 * S;
        private int maxRetries = 15;
        private int retries1 = 3;
        private int synRetries = 6;
        private int synAckRetries = 5;
        private int synQueueSize = 256;
        private int maxBacklog = 4096;
        private boolean synCookies = true;
        private long keepaliveIdleNs = 7200 * S;
        private long keepaliveIntervalNs = 75 * S;
        private int keepaliveProbes = 9;
        private long finWait2TimeoutNs = 60 * S;
        private String congestionControl = CubicCongestionControl.NAME;
        private String lossDetection = RackLossDetection.NAME;
        private String recovery = PrrRecovery.NAME;
        private long isnKey0;
        private long isnKey1;
        private boolean timestamps = true;
        private boolean sack = true;
        private boolean windowScaling = true;
        private int initialCwndSegments = 10;
        private int ephemeralFirst = 49152;
        private int ephemeralLast = 65535;
        private int outOfOrderRanges = 64;
        private int outOfOrderBlocks = 4096;
        private int challengeAckLimit = 1000;
        private long fixedIsn = -1;
        private long memoryPressureBytes = 512L << 20;
        private long memoryLimitBytes = 1L << 30;
        private int windowScaleBufferSize;
        private int maxTimeWait = 262_144;
        private boolean slowStartAfterIdle = true;
        private int notsentLowat;
        private int fastOpen = FastOpen.CLIENT;
        private FastOpenKeys fastOpenKeys;
        private SegmentChecks segmentChecks = SegmentChecks.RFC_5961;
        private ReceivePolicy receivePolicy = ReceivePolicy.LINUX;
        private long fastOpenPathDisableNs;
        private SynSentText synSentText = SynSentText.FAST_OPEN_ONLY;
        private PushRule pushRule = PushRule.LAST_BUFFERED;
        private EcnMode ecn = EcnMode.SERVER;
        private int ecnSynRetries;
        private boolean pacing;
        private long connectTimeoutNs;

        private Builder() {
            final SecureRandom random = new SecureRandom();
            isnKey0 = random.nextLong();
            isnKey1 = random.nextLong();
            fastOpenKeys = FastOpenKeys.of(random.nextLong(), random.nextLong());
        }

        public Builder maxConnections(int value) {
            maxConnections = value;
            return this;
        }

        public Builder sendBufferSize(int value) {
            sendBufferSize = value;
            return this;
        }

        public Builder receiveBufferSize(int value) {
            receiveBufferSize = value;
            return this;
        }

        /** Both buffers at once. */
        public Builder bufferSizes(int send, int receive) {
            sendBufferSize = send;
            receiveBufferSize = receive;
            return this;
        }

        public Builder mslNs(long value) {
            mslNs = value;
            return this;
        }

        public Builder delayedAckNs(long value) {
            delayedAckNs = value;
            return this;
        }

        public Builder rto(long initialNs, long minNs, long maxNs) {
            rtoInitialNs = initialNs;
            rtoMinNs = minNs;
            rtoMaxNs = maxNs;
            return this;
        }

        public Builder maxRetries(int value) {
            maxRetries = value;
            return this;
        }

        /** R1 (RFC 1122 §4.2.3.5): retransmissions of one segment before TCP advises IP and sets the soft error. */
        public Builder retries1(int value) {
            retries1 = value;
            return this;
        }

        public Builder synRetries(int value) {
            synRetries = value;
            return this;
        }

        public Builder synAckRetries(int value) {
            synAckRetries = value;
            return this;
        }

        public Builder synQueueSize(int value) {
            synQueueSize = value;
            return this;
        }

        public Builder maxBacklog(int value) {
            maxBacklog = value;
            return this;
        }

        public Builder synCookies(boolean value) {
            synCookies = value;
            return this;
        }

        public Builder keepalive(long idleNs, long intervalNs, int probes) {
            keepaliveIdleNs = idleNs;
            keepaliveIntervalNs = intervalNs;
            keepaliveProbes = probes;
            return this;
        }

        public Builder finWait2TimeoutNs(long value) {
            finWait2TimeoutNs = value;
            return this;
        }

        public Builder congestionControl(String name) {
            congestionControl = name;
            return this;
        }

        public Builder lossDetection(String name) {
            lossDetection = name;
            return this;
        }

        public Builder recovery(String name) {
            recovery = name;
            return this;
        }

        /** The secret key (RFC 6528); fixing it makes ISNs, ephemeral ports and cookies repeatable. */
        public Builder isnKey(long key0, long key1) {
            isnKey0 = key0;
            isnKey1 = key1;
            return this;
        }

        public Builder timestamps(boolean value) {
            timestamps = value;
            return this;
        }

        public Builder sack(boolean value) {
            sack = value;
            return this;
        }

        public Builder windowScaling(boolean value) {
            windowScaling = value;
            return this;
        }

        public Builder initialCwndSegments(int value) {
            initialCwndSegments = value;
            return this;
        }

        public Builder ephemeralPorts(int first, int last) {
            ephemeralFirst = first;
            ephemeralLast = last;
            return this;
        }

        public Builder outOfOrder(int rangesPerConnection, int connections) {
            outOfOrderRanges = rangesPerConnection;
            outOfOrderBlocks = connections;
            return this;
        }

        public Builder challengeAckLimit(int perSecond) {
            challengeAckLimit = perSecond;
            return this;
        }

        /** Socket buffer memory above which new connections get smaller buffers, and beyond which none opens. */
        public Builder memoryLimits(long pressureBytes, long limitBytes) {
            memoryPressureBytes = pressureBytes;
            memoryLimitBytes = limitBytes;
            return this;
        }

        /** Connections kept in TIME-WAIT at once (Linux tcp_max_tw_buckets); more close after their last ACK. */
        public Builder maxTimeWait(int value) {
            maxTimeWait = value;
            return this;
        }

        /** Off keeps the congestion window over idle periods (Linux tcp_slow_start_after_idle=0). */
        public Builder slowStartAfterIdle(boolean value) {
            slowStartAfterIdle = value;
            return this;
        }

        /**
         * The window scale offered is the smallest that covers {@code bytes} instead of the connection's receive
         * buffer (0: the buffer), as FreeBSD scales for the largest buffer a socket may grow to.
         */
        public Builder windowScaleBufferSize(int bytes) {
            windowScaleBufferSize = bytes;
            return this;
        }

        /** The unsent bytes below which connections are writable (Linux tcp_notsent_lowat); 0: no mark. */
        public Builder notsentLowat(int bytes) {
            if (bytes < 0) {
                throw new IllegalArgumentException("notsentLowat must not be negative");
            }
            notsentLowat = bytes;
            return this;
        }

        /** TCP Fast Open as Linux's {@code net.ipv4.tcp_fastopen} bits ({@link FastOpen#CLIENT} and the others). */
        public Builder fastOpen(int linuxBits) {
            fastOpen = linuxBits;
            return this;
        }

        /** The server's Fast Open key (Linux's {@code net.ipv4.tcp_fastopen_key}). */
        public Builder fastOpenKeys(FastOpenKeys keys) {
            fastOpenKeys = keys;
            return this;
        }

        /** How resets, SYNs and SYN+FIN segments are checked (RFC 5961's rules or RFC 793's). */
        public Builder segmentChecks(SegmentChecks checks) {
            segmentChecks = checks;
            return this;
        }

        /** How the receiver offers its window and acknowledges data ({@link ReceivePolicy#LINUX} by default). */
        public Builder receivePolicy(ReceivePolicy policy) {
            receivePolicy = policy;
            return this;
        }

        /** How long a failed Fast Open turns it off towards that server; 0 (the default) never. */
        public Builder fastOpenPathDisableNs(long ns) {
            fastOpenPathDisableNs = ns;
            return this;
        }

        /** What a connection in SYN-SENT does with a SYN-ACK's text (default {@link SynSentText#FAST_OPEN_ONLY}). */
        public Builder synSentText(SynSentText policy) {
            synSentText = policy;
            return this;
        }

        /** Which new-data segments carry PSH (default {@link PushRule#LAST_BUFFERED}). */
        public Builder pushRule(PushRule rule) {
            pushRule = rule;
            return this;
        }

        /** When connections use ECN (default {@link EcnMode#SERVER}: accept a peer's request, never ask). */
        public Builder ecn(EcnMode mode) {
            ecn = mode;
            return this;
        }

        /** Retransmissions of an active open's SYN that still ask for ECN (default 0, Linux's). */
        public Builder ecnSynRetries(int retries) {
            ecnSynRetries = retries;
            return this;
        }

        public Builder pacing(boolean value) {
            pacing = value;
            return this;
        }

        /** {@link TcpConfig#connectTimeoutNs}: 0 for none, else at least a millisecond. */
        public Builder connectTimeoutNs(long value) {
            if (value < 0 || value > 0 && value < MS) {
                throw new IllegalArgumentException("a connect timeout is 0 (none) or at least 1 ms, got " + value + " ns");
            }
            connectTimeoutNs = value;
            return this;
        }

        /** For tests only: every ISN this layer picks is {@code isn} (unsigned 32 bits). */
        public Builder fixedIsn(long isn) {
            fixedIsn = isn;
            return this;
        }

        public TcpConfig build() {
            return new TcpConfig(maxConnections, sendBufferSize, receiveBufferSize, mslNs, delayedAckNs, rtoInitialNs,
                rtoMinNs, rtoMaxNs, maxRetries, retries1, synRetries, synAckRetries, synQueueSize, maxBacklog,
                synCookies, keepaliveIdleNs, keepaliveIntervalNs, keepaliveProbes, finWait2TimeoutNs, congestionControl,
                isnKey0, isnKey1, timestamps, sack, windowScaling, initialCwndSegments, ephemeralFirst, ephemeralLast,
                outOfOrderRanges, outOfOrderBlocks, challengeAckLimit, fixedIsn, lossDetection, recovery,
                memoryPressureBytes, memoryLimitBytes, maxTimeWait, slowStartAfterIdle, windowScaleBufferSize,
                notsentLowat, fastOpen, fastOpenKeys, segmentChecks, receivePolicy, fastOpenPathDisableNs, synSentText,
                pushRule, ecn, ecnSynRetries, pacing, connectTimeoutNs);
        }
    }
}
