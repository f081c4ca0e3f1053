package dev.tern.ipv6.wire;

/** IPv6 Next Header values (IANA "Assigned Internet Protocol Numbers"; RFC 8200 §4 for the extension headers). */
public final class NextHeader {
    public static final int HOP_BY_HOP = 0;
    public static final int TCP = 6;
    public static final int UDP = 17;
    public static final int ROUTING = 43;
    public static final int FRAGMENT = 44;
    public static final int ESP = 50;
    public static final int AUTHENTICATION = 51;
    public static final int ICMPV6 = 58;
    public static final int NO_NEXT_HEADER = 59;
    public static final int DESTINATION_OPTIONS = 60;

    private NextHeader() {
    }
}
