package dev.tern.tcp;

/**
 * When a connection uses Explicit Congestion Notification (RFC 3168), as Linux's {@code net.ipv4.tcp_ecn} chooses.
 */
public enum EcnMode {
    /** Never: no ECN-setup SYN, and a peer's request is answered with a plain SYN-ACK ({@code tcp_ecn = 0}). */
    OFF,
    /** Ask on every active open, and accept a peer's request ({@code tcp_ecn = 1}). */
    ON,
    /** Accept a peer's request but never ask ({@code tcp_ecn = 2}, Linux's default and Tern's). */
    SERVER;

    /** The mode named {@code off}, {@code on} or {@code server} (any case), as {@code --ecn} takes it. */
    public static EcnMode named(String name) {
        for (EcnMode mode : values()) {
            if (mode.name().equalsIgnoreCase(name)) {
                return mode;
            }
        }
        throw new IllegalArgumentException("unknown ECN mode '" + name + "' (valid: off, on, server)");
    }

    /** The mode a Linux {@code tcp_ecn} value names (0, 1 or 2); null for any other. */
    public static EcnMode ofLinux(long value) {
        return value == 0 ? OFF : value == 1 ? ON : value == 2 ? SERVER : null;
    }
}
