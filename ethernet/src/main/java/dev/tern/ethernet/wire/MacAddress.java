package dev.tern.ethernet.wire;

/**
 * MAC addresses packed in the low 48 bits of a {@code long} (first octet in bits 47..40), so they are compared,
 * hashed and stored without objects. Parsing and formatting are for the cold path.
 */
public final class MacAddress {
    public static final long BROADCAST = 0xFFFF_FFFF_FFFFL;
    public static final long ZERO = 0;
    /** 01:00:5e:00:00:00, the base of IPv4 multicast MACs (RFC 1112 §6.4). */
    private static final long IPV4_MULTICAST_BASE = 0x0100_5E00_0000L;
    private static final long MASK = 0xFFFF_FFFF_FFFFL;

    private MacAddress() {
    }

    /**
     * Parses {@code aa:bb:cc:dd:ee:ff} (or with {@code -}); throws {@link IllegalArgumentException} with a message
     * that quotes the bad input.
     */
    public static long parse(String text) {
        if (text == null) {
            throw new IllegalArgumentException("MAC address missing");
        }
        final String[] octets = text.trim().split("[:-]", -1);
        if (octets.length != 6) {
            throw new IllegalArgumentException("bad MAC address '" + text + "': expected six hex octets like 02:00:00:00:00:01");
        }
        long mac = 0;
        for (String octet : octets) {
            if (octet.isEmpty() || octet.length() > 2) {
                throw new IllegalArgumentException("bad MAC address '" + text + "': octet '" + octet + "' is not 1-2 hex digits");
            }
            final int value;
            try {
                value = Integer.parseInt(octet, 16);
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("bad MAC address '" + text + "': octet '" + octet + "' is not hex", e);
            }
            mac = (mac << 8) | value;
        }
        return mac;
    }

    public static String format(long mac) {
        final StringBuilder text = new StringBuilder(17);
        for (int shift = 40; shift >= 0; shift -= 8) {
            final int octet = (int) (mac >>> shift) & 0xFF;
            text.append(Character.forDigit(octet >>> 4, 16)).append(Character.forDigit(octet & 0xF, 16));
            if (shift > 0) {
                text.append(':');
            }
        }
        return text.toString();
    }

    /** Group bit (I/G, the least significant bit of the first octet): multicast or broadcast. */
    public static boolean isMulticast(long mac) {
        return (mac & 0x0100_0000_0000L) != 0;
    }

    public static boolean isBroadcast(long mac) {
        return (mac & MASK) == BROADCAST;
    }

    /** A unicast address: the group bit clear and not all zeros. */
    public static boolean isUnicast(long mac) {
        return !isMulticast(mac) && (mac & MASK) != 0;
    }

    /** The locally administered bit (U/L): set for addresses we make up ourselves. */
    public static boolean isLocallyAdministered(long mac) {
        return (mac & 0x0200_0000_0000L) != 0;
    }

    /** The Ethernet address an IPv4 multicast group maps to: 01:00:5e plus the low 23 bits of the group (RFC 1112 §6.4). */
    public static long ofIpv4Multicast(int group) {
        return IPV4_MULTICAST_BASE | (group & 0x7F_FFFF);
    }
}
