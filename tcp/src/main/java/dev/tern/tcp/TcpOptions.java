package dev.tern.tcp;

/**
 * Per-connection settings given to {@link TcpLayer#connect} or {@link TcpLayer#listen} (children inherit their
 * listener's). Zero (or null) means "the layer's {@link TcpConfig} default". Cold path: build once, reuse.
 *
 * @param sendBufferSize      send buffer in bytes (a power of two), or 0
 * @param receiveBufferSize   receive buffer in bytes (a power of two), or 0; bounds the advertised window
 * @param noDelay             disable Nagle's algorithm (TCP_NODELAY)
 * @param keepalive           send keepalive probes on an idle connection (SO_KEEPALIVE)
 * @param keepaliveIdleNs     idle time before the first probe, or 0
 * @param keepaliveIntervalNs time between probes, or 0
 * @param keepaliveProbes     unanswered probes before timing out, or 0
 * @param congestionControl   congestion control by name, or null
 * @param lossDetection       loss detection by name ("rack", "dupack"), or null
 * @param recovery            loss recovery by name ("prr", "rfc6675", "newreno"), or null
 * @param maxSegment          TCP_MAXSEG: the largest segment (bytes before options) offered in the SYN and used,
 *                            {@link #MIN_MAX_SEGMENT} to {@link #MAX_MAX_SEGMENT} as Linux takes it, or 0
 * @param fastOpen            for {@link TcpLayer#connect}: a TCP Fast Open attempt (RFC 7413, Linux's {@code
 *                            TCP_FASTOPEN_CONNECT}, docs/TCP.md): with a cookie cached for the destination the SYN
 *                            waits for the first {@link TcpLayer#sendable} and carries that data; without one it goes
 *                            at once and asks for a cookie
 * @param noOptions           for {@link TcpLayer#connect}: a SYN without any option (FreeBSD's {@code TCP_NOOPT}): no
 *                            MSS, window scale, SACK-permitted or timestamps offered, so none is used either
 * @param connectTimeoutMs    for {@link TcpLayer#connect}: the attempt ends with a timeout this long after it began if
 *                            the handshake has not completed (FreeBSD's {@code TCP_KEEPINIT}), whatever retries
 *                            remain; 0: only the SYN retries end it
 */
public record TcpOptions(int sendBufferSize, int receiveBufferSize, boolean noDelay, boolean keepalive,
                         long keepaliveIdleNs, long keepaliveIntervalNs, int keepaliveProbes, String congestionControl,
                         String lossDetection, String recovery, int maxSegment, boolean fastOpen, boolean noOptions,
                         int connectTimeoutMs) {
    public static final TcpOptions DEFAULT = new TcpOptions(0, 0, false, false, 0, 0, 0, null, null, null, 0, false,
        false, 0);
    /** Linux's bounds for TCP_MAXSEG (TCP_MIN_MSS and MAX_TCP_WINDOW, include/net/tcp.h). */
    public static final int MIN_MAX_SEGMENT = 88;
    public static final int MAX_MAX_SEGMENT = 32767;

    public TcpOptions {
        if (sendBufferSize != 0) {
            TcpConfig.checkBuffer(sendBufferSize, "send");
        }
        if (receiveBufferSize != 0) {
            TcpConfig.checkBuffer(receiveBufferSize, "receive");
        }
        if (keepaliveIdleNs < 0 || keepaliveIntervalNs < 0 || keepaliveProbes < 0) {
            throw new IllegalArgumentException("keepalive values must not be negative");
        }
        if (connectTimeoutMs < 0) {
            throw new IllegalArgumentException("a connect timeout must not be negative, got " + connectTimeoutMs);
        }
        if (maxSegment != 0 && (maxSegment < MIN_MAX_SEGMENT || maxSegment > MAX_MAX_SEGMENT)) {
            throw new IllegalArgumentException("a maximum segment of " + maxSegment + " bytes is outside "
                + MIN_MAX_SEGMENT + " .. " + MAX_MAX_SEGMENT);
        }
    }

    public TcpOptions withBuffers(int send, int receive) {
        return new TcpOptions(send, receive, noDelay, keepalive, keepaliveIdleNs, keepaliveIntervalNs, keepaliveProbes,
            congestionControl, lossDetection, recovery, maxSegment, fastOpen, noOptions, connectTimeoutMs);
    }

    public TcpOptions withNoDelay(boolean value) {
        return new TcpOptions(sendBufferSize, receiveBufferSize, value, keepalive, keepaliveIdleNs, keepaliveIntervalNs,
            keepaliveProbes, congestionControl, lossDetection, recovery, maxSegment, fastOpen, noOptions, connectTimeoutMs);
    }

    public TcpOptions withKeepalive(long idleNs, long intervalNs, int probes) {
        return new TcpOptions(sendBufferSize, receiveBufferSize, noDelay, true, idleNs, intervalNs, probes,
            congestionControl, lossDetection, recovery, maxSegment, fastOpen, noOptions, connectTimeoutMs);
    }

    public TcpOptions withCongestionControl(String name) {
        return new TcpOptions(sendBufferSize, receiveBufferSize, noDelay, keepalive, keepaliveIdleNs,
            keepaliveIntervalNs, keepaliveProbes, name, lossDetection, recovery, maxSegment, fastOpen, noOptions, connectTimeoutMs);
    }

    public TcpOptions withLossDetection(String name) {
        return new TcpOptions(sendBufferSize, receiveBufferSize, noDelay, keepalive, keepaliveIdleNs,
            keepaliveIntervalNs, keepaliveProbes, congestionControl, name, recovery, maxSegment, fastOpen, noOptions, connectTimeoutMs);
    }

    public TcpOptions withRecovery(String name) {
        return new TcpOptions(sendBufferSize, receiveBufferSize, noDelay, keepalive, keepaliveIdleNs,
            keepaliveIntervalNs, keepaliveProbes, congestionControl, lossDetection, name, maxSegment, fastOpen, noOptions, connectTimeoutMs);
    }

    public TcpOptions withMaxSegment(int bytes) {
        return new TcpOptions(sendBufferSize, receiveBufferSize, noDelay, keepalive, keepaliveIdleNs,
            keepaliveIntervalNs, keepaliveProbes, congestionControl, lossDetection, recovery, bytes, fastOpen, noOptions, connectTimeoutMs);
    }

    /** A TCP Fast Open connect ({@link #fastOpen}). */
    public TcpOptions withFastOpen(boolean value) {
        return new TcpOptions(sendBufferSize, receiveBufferSize, noDelay, keepalive, keepaliveIdleNs,
            keepaliveIntervalNs, keepaliveProbes, congestionControl, lossDetection, recovery, maxSegment, value, noOptions, connectTimeoutMs);
    }

    /** A connect whose SYN carries no option ({@link #noOptions}). */
    public TcpOptions withNoOptions(boolean value) {
        return new TcpOptions(sendBufferSize, receiveBufferSize, noDelay, keepalive, keepaliveIdleNs,
            keepaliveIntervalNs, keepaliveProbes, congestionControl, lossDetection, recovery, maxSegment, fastOpen,
            value, connectTimeoutMs);
    }

    /** A connect that times out {@code milliseconds} after it began ({@link #connectTimeoutMs}; 0: none). */
    public TcpOptions withConnectTimeout(int milliseconds) {
        return new TcpOptions(sendBufferSize, receiveBufferSize, noDelay, keepalive, keepaliveIdleNs,
            keepaliveIntervalNs, keepaliveProbes, congestionControl, lossDetection, recovery, maxSegment, fastOpen,
            noOptions, milliseconds);
    }
}
