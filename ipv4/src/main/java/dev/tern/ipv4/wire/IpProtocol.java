package dev.tern.ipv4.wire;

/** IP protocol numbers (IANA) Tern handles, plus {@link #name(int)} for printing. */
public final class IpProtocol {
    public static final int ICMP = 1;
    public static final int IGMP = 2;
    public static final int TCP = 6;
    public static final int UDP = 17;

    private IpProtocol() {
    }

    public static String name(int protocol) {
        return switch (protocol) {
            case ICMP -> "ICMP";
            case IGMP -> "IGMP";
            case TCP -> "TCP";
            case UDP -> "UDP";
            default -> "protocol " + protocol;
        };
    }
}
