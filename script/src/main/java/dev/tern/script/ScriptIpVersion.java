package dev.tern.script;

import dev.tern.core.net.Ipv6Address;

/**
 * The IP version a script runs over, as packetdrill's {@code --ip_version} names it: {@code ipv4}, {@code ipv6}, or
 * {@code ipv4-mapped-ipv6} (IPv6 sockets whose peer is an IPv4 address: the wire carries IPv4). Packetdrill runs the
 * same script under each; its {@code AF_INET} sockets become {@code AF_INET6} in the other two.
 *
 * <p>Over IPv6 Tern is {@link #TERN_IPV6} and the remote {@link #REMOTE_IPV6} (documentation addresses, RFC 3849);
 * no packet leaves the JVM.
 */
public enum ScriptIpVersion {
    IPV4("ipv4"), IPV6("ipv6"), IPV4_MAPPED_IPV6("ipv4-mapped-ipv6");

    /** Tern's IPv6 address on the run's wire, on a /64 with the remote's. */
    static final Ipv6Address TERN_IPV6 = Ipv6Address.parse("2001:db8::2");
    /** The remote's IPv6 address. */
    static final Ipv6Address REMOTE_IPV6 = Ipv6Address.parse("2001:db8::1");

    private final String option;

    ScriptIpVersion(String option) {
        this.option = option;
    }

    /** The value of {@code --ip_version} that names it. */
    public String option() {
        return option;
    }

    /** The version {@code value} names, or null. */
    public static ScriptIpVersion named(String value) {
        for (ScriptIpVersion version : values()) {
            if (version.option.equals(value)) {
                return version;
            }
        }
        return null;
    }
}
