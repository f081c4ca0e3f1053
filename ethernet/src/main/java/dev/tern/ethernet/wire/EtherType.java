package dev.tern.ethernet.wire;

/** EtherType values Tern handles (IEEE registry), as int constants plus {@link #name(int)} for printing. */
public final class EtherType {
    public static final int IPV4 = 0x0800;
    public static final int ARP = 0x0806;
    public static final int VLAN = 0x8100;
    public static final int IPV6 = 0x86DD;
    /** Values below this are IEEE 802.3 lengths, not types. */
    public static final int MIN_TYPE = 0x0600;

    private EtherType() {
    }

    public static String name(int etherType) {
        return switch (etherType) {
            case IPV4 -> "IPv4";
            case ARP -> "ARP";
            case VLAN -> "802.1Q";
            case IPV6 -> "IPv6";
            default -> String.format("0x%04x", etherType);
        };
    }
}
