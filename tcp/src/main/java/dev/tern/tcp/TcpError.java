package dev.tern.tcp;

/**
 * Why a connection ended or an operation failed, as ints (no objects on the stack thread). The codes are TCP's own:
 * each comment names the POSIX errno a Linux program would see, and a socket layer above maps each code to its own
 * error by name, never by number. A failed call returns the negated code ({@code -ADDRESS_IN_USE});
 * {@link TcpLayer#error(int)} returns it positive.
 */
public final class TcpError {
    public static final int NONE = 0;
    /** ECONNREFUSED: RST in answer to our SYN, or ICMP port/protocol unreachable while connecting. */
    public static final int REFUSED = 1;
    /** ECONNRESET: the peer reset a synchronized connection. */
    public static final int RESET = 2;
    /** ETIMEDOUT: retransmissions, SYN retries or keepalive probes ran out. */
    public static final int TIMED_OUT = 3;
    /** EHOSTUNREACH: ARP got no answer, or ICMP host unreachable while connecting. */
    public static final int HOST_UNREACHABLE = 4;
    /** ENETUNREACH: no route, or ICMP net unreachable while connecting. */
    public static final int NET_UNREACHABLE = 5;
    /** EADDRINUSE: the local port (or the 4-tuple) is taken. */
    public static final int ADDRESS_IN_USE = 7;
    /** ENOBUFS: no buffer memory or out-of-order room left. */
    public static final int NO_BUFFER = 8;
    /** EINVAL: the operation does not fit the handle or its state. */
    public static final int INVALID = 9;
    /** EMFILE: every control block is in use. */
    public static final int TOO_MANY_CONNECTIONS = 10;
    /** EADDRNOTAVAIL: no ephemeral port left for this destination. */
    public static final int ADDRESS_NOT_AVAILABLE = 11;
    /** ECONNABORTED: the connection was aborted locally (abort, or dropped from a closed listener's queue). */
    public static final int ABORTED = 14;

    private TcpError() {
    }

    public static String describe(int error) {
        return switch (Math.abs(error)) {
            case NONE -> "none";
            case REFUSED -> "connection refused";
            case RESET -> "connection reset";
            case TIMED_OUT -> "timed out";
            case HOST_UNREACHABLE -> "host unreachable";
            case NET_UNREACHABLE -> "network unreachable";
            case ADDRESS_IN_USE -> "address in use";
            case NO_BUFFER -> "no buffer space";
            case INVALID -> "invalid argument";
            case TOO_MANY_CONNECTIONS -> "too many connections";
            case ADDRESS_NOT_AVAILABLE -> "address not available";
            case ABORTED -> "connection aborted";
            default -> "error " + error;
        };
    }
}
