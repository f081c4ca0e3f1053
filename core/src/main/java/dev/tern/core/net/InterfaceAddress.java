package dev.tern.core.net;

/**
 * An address assigned to an interface, with its prefix: {@code 198.18.0.2/24}.
 *
 * @param address      the address
 * @param prefixLength 0..32
 */
public record InterfaceAddress(int address, int prefixLength) {
    public InterfaceAddress {
        if (prefixLength < 0 || prefixLength > 32) {
            throw new IllegalArgumentException("prefix length must be 0..32, got " + prefixLength);
        }
    }

    /** Parses {@code A.B.C.D/N} (or a bare address, taken as /32); throws {@link IllegalArgumentException} quoting the input. */
    public static InterfaceAddress parse(String text) {
        if (text == null) {
            throw new IllegalArgumentException("address missing");
        }
        final int slash = text.indexOf('/');
        if (slash < 0) {
            return new InterfaceAddress(Ipv4Address.parse(text), 32);
        }
        final String length = text.substring(slash + 1);
        if (length.isEmpty() || length.length() > 2 || !length.chars().allMatch(Character::isDigit)
            || Integer.parseInt(length) > 32) {
            throw new IllegalArgumentException("bad address '" + text + "': prefix length must be 0..32, like 198.18.0.2/24");
        }
        return new InterfaceAddress(Ipv4Address.parse(text.substring(0, slash)), Integer.parseInt(length));
    }

    public int mask() {
        return Ipv4Address.mask(prefixLength);
    }

    public int network() {
        return address & mask();
    }

    /** The directed broadcast address of the subnet; for /31 and /32 there is none (RFC 3021), so -1 (255.255.255.255). */
    public int broadcast() {
        return prefixLength >= 31 ? Ipv4Address.LIMITED_BROADCAST : network() | ~mask();
    }

    public boolean contains(int other) {
        return Ipv4Address.inPrefix(other, address, prefixLength);
    }

    @Override
    public String toString() {
        return Ipv4Address.format(address) + "/" + prefixLength;
    }
}
