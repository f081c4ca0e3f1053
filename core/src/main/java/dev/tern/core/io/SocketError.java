package dev.tern.core.io;

/**
 * Error codes the transports report on the stack thread, as ints (no objects on the hot path). The socket API
 * turns them into typed exceptions. Names follow the POSIX errno a Linux program would see.
 */
public final class SocketError {
    public static final int NONE = 0;
    /** ECONNREFUSED: RST in answer to a SYN, or ICMP port unreachable. */
    public static final int CONNECTION_REFUSED = 1;
    /** ECONNRESET: the peer reset an established connection. */
    public static final int CONNECTION_RESET = 2;
    /** ETIMEDOUT: retransmissions or keepalive probes ran out. */
    public static final int TIMED_OUT = 3;
    /** EHOSTUNREACH: ARP got no answer, or ICMP host unreachable. */
    public static final int HOST_UNREACHABLE = 4;
    /** ENETUNREACH: no route, or ICMP net unreachable. */
    public static final int NET_UNREACHABLE = 5;
    /** EMSGSIZE: a datagram too large to send. */
    public static final int MESSAGE_TOO_LONG = 6;
    /** EADDRINUSE: the local port is taken. */
    public static final int ADDRESS_IN_USE = 7;
    /** ENOBUFS / EAGAIN: no room now; try again. */
    public static final int NO_BUFFER = 8;
    /** EINVAL: the operation does not fit the socket's state. */
    public static final int INVALID = 9;
    /** EMFILE: no socket slot left. */
    public static final int TOO_MANY_SOCKETS = 10;
    /** EADDRNOTAVAIL: an address this stack does not have, or no ephemeral port left. */
    public static final int ADDRESS_NOT_AVAILABLE = 11;
    /** EACCES: sending to a broadcast address without the broadcast option. */
    public static final int BROADCAST_NOT_ENABLED = 12;
    /** EPROTO: a protocol error (ICMP parameter problem, for instance). */
    public static final int PROTOCOL_ERROR = 13;
    /** ECONNABORTED: the connection was aborted locally. */
    public static final int ABORTED = 14;
    /** ENOTCONN / EPIPE: the connection is not (or no longer) able to carry data this way. */
    public static final int NOT_CONNECTED = 15;

    private static final String[] NAMES = {"none", "connection refused", "connection reset", "timed out",
        "host unreachable", "network unreachable", "message too long", "address in use", "no buffer space",
        "invalid argument", "too many sockets", "address not available", "permission denied (broadcast)",
        "protocol error", "connection aborted", "not connected"};

    private SocketError() {
    }

    public static String describe(int error) {
        return error >= 0 && error < NAMES.length ? NAMES[error] : "error " + error;
    }
}
