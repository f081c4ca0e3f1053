package dev.tern.core.net;

/**
 * IPv4 addresses as {@code int}s in network order (first octet in the high bits), so they are stored, compared and
 * hashed without objects. Parsing and formatting are for the cold path.
 *
 * <p>Lives in core because every layer from ARP up, the socket API and the CLI share this vocabulary.
 */
public final class Ipv4Address {
    public static final int ANY = 0;
    public static final int LIMITED_BROADCAST = 0xFFFF_FFFF;
    /** 224.0.0.1, all systems on this subnet (RFC 1112). */
    public static final int ALL_SYSTEMS = 0xE000_0001;
    /** 224.0.0.2, all routers (IGMPv2 leave messages go here). */
    public static final int ALL_ROUTERS = 0xE000_0002;
    /** 224.0.0.22, IGMPv3-capable routers (RFC 3376 §4.2.14). */
    public static final int ALL_IGMPV3_ROUTERS = 0xE000_0016;

    private Ipv4Address() {
    }

    /** Parses dotted-quad text; throws {@link IllegalArgumentException} quoting the bad input. */
    public static int parse(String text) {
        if (text == null) {
            throw new IllegalArgumentException("IPv4 address missing");
        }
        final String[] parts = text.trim().split("\\.", -1);
        if (parts.length != 4) {
            throw new IllegalArgumentException("bad IPv4 address '" + text + "': expected four numbers like 198.18.0.2");
        }
        int address = 0;
        for (String part : parts) {
            if (part.isEmpty() || part.length() > 3 || !part.chars().allMatch(Character::isDigit)) {
                throw new IllegalArgumentException("bad IPv4 address '" + text + "': '" + part + "' is not a number 0-255");
            }
            final int octet = Integer.parseInt(part);
            if (octet > 255) {
                throw new IllegalArgumentException("bad IPv4 address '" + text + "': " + octet + " is more than 255");
            }
            address = (address << 8) | octet;
        }
        return address;
    }

    public static String format(int address) {
        return (address >>> 24) + "." + ((address >>> 16) & 0xFF) + "." + ((address >>> 8) & 0xFF) + "." + (address & 0xFF);
    }

    /** 224.0.0.0/4 (RFC 5771). */
    public static boolean isMulticast(int address) {
        return (address >>> 28) == 0xE;
    }

    /** 224.0.0.0/24: link-local multicast, never reported by IGMP (RFC 3376 §6). */
    public static boolean isLinkLocalMulticast(int address) {
        return (address >>> 8) == 0xE0_0000;
    }

    /** 127.0.0.0/8. */
    public static boolean isLoopback(int address) {
        return (address >>> 24) == 127;
    }

    /** 240.0.0.0/4 other than the limited broadcast address. */
    public static boolean isReserved(int address) {
        return (address >>> 28) == 0xF && address != LIMITED_BROADCAST;
    }

    /** The mask of a prefix length 0..32 ({@code /24} -> 255.255.255.0). */
    public static int mask(int prefixLength) {
        return prefixLength == 0 ? 0 : -1 << (32 - prefixLength);
    }

    /** True when {@code address} is in {@code network/prefixLength}. */
    public static boolean inPrefix(int address, int network, int prefixLength) {
        final int mask = mask(prefixLength);
        return (address & mask) == (network & mask);
    }
}
