package dev.tern.core.net;

/**
 * An IPv6 address assigned to an interface, with its on-link prefix: {@code 2001:db8::2/64}.
 *
 * @param address      the address, unicast
 * @param prefixLength 1..128
 */
public record Ipv6InterfaceAddress(Ipv6Address address, int prefixLength) {
    public Ipv6InterfaceAddress {
        if (prefixLength < 1 || prefixLength > 128) {
            throw new IllegalArgumentException("IPv6 prefix length must be 1..128, got " + prefixLength);
        }
        if (address.isMulticast() || address.isUnspecified()) {
            throw new IllegalArgumentException("bad IPv6 interface address " + address
                + ": it must be a unicast address like 2001:db8::2/64");
        }
    }

    /** Reads {@code ADDRESS/PREFIX} (a bare address is taken as /64, the prefix of every LAN); throws quoting the input. */
    public static Ipv6InterfaceAddress parse(String text) {
        if (text == null || text.isBlank()) {
            throw new IllegalArgumentException("IPv6 address missing");
        }
        final int slash = text.indexOf('/');
        if (slash < 0) {
            return new Ipv6InterfaceAddress(Ipv6Address.parse(text), 64);
        }
        final String length = text.substring(slash + 1);
        if (length.isEmpty() || length.length() > 3 || !length.chars().allMatch(Character::isDigit)
            || Integer.parseInt(length) < 1 || Integer.parseInt(length) > 128) {
            throw new IllegalArgumentException("bad IPv6 address '" + text
                + "': prefix length must be 1..128, like 2001:db8::2/64");
        }
        return new Ipv6InterfaceAddress(Ipv6Address.parse(text.substring(0, slash)), Integer.parseInt(length));
    }

    /** True when ({@code high}, {@code low}) is on this address's prefix (on link, RFC 4861 §2.1). */
    public boolean onLink(long high, long low) {
        return address.samePrefix(high, low, prefixLength);
    }

    /**
     * The first host of the prefix that is not this address (::1, else ::2), with the same prefix: the peer a test
     * wire gives this interface.
     */
    public Ipv6InterfaceAddress firstOtherHost() {
        final long high = address.high();
        final long low = prefixLength >= 64
            ? address.low() & (prefixLength == 128 ? -1L : ~(-1L >>> (prefixLength - 64))) : 0;
        final long networkHigh = prefixLength < 64 ? high & ~(-1L >>> prefixLength) : high;
        final long first = networkHigh == high && low + 1 == address.low() ? low + 2 : low + 1;
        return new Ipv6InterfaceAddress(new Ipv6Address(networkHigh, first), prefixLength);
    }

    @Override
    public String toString() {
        return address + "/" + prefixLength;
    }
}
