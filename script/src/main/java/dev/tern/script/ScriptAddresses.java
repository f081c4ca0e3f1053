package dev.tern.script;

import dev.tern.core.net.InterfaceAddress;
import dev.tern.core.net.Ipv4Address;

import java.util.List;

/**
 * The addresses of a run's in-memory wire: Tern's, with its prefix, the remote's and, when the remote is not on Tern's
 * subnet, the gateway Tern sends to (the remote answers ARP for it). A script's packetdrill option lines {@code
 * --local_ip}, {@code --remote_ip}, {@code --gateway_ip} and {@code --netmask_ip} set them; without them Tern is
 * 198.18.0.2/24 and the remote 198.18.0.1 (RFC 2544 test addresses). No packet leaves the JVM, whatever they are.
 *
 * <p>They matter beyond the headers: a Fast Open server's cookie is made of the two addresses (RFC 7413 §4.1.2), so a
 * script that writes Linux's cookie for its own addresses needs them.
 *
 * @param tern    Tern's address
 * @param remote  the remote's address
 * @param prefix  the length of Tern's subnet prefix
 * @param gateway the next hop towards an off-subnet remote; 0 when the remote is on the subnet
 */
record ScriptAddresses(int tern, int remote, int prefix, int gateway) {
    /** {@code --local_ip=A.B.C.D}: Tern's address (packetdrill's local side is the stack under test). */
    static final String LOCAL_OPTION = "--local_ip";
    /** {@code --remote_ip=A.B.C.D}: the remote's address. */
    static final String REMOTE_OPTION = "--remote_ip";
    /** {@code --gateway_ip=A.B.C.D}: the next hop when the remote is off Tern's subnet. */
    static final String GATEWAY_OPTION = "--gateway_ip";
    /** {@code --netmask_ip=A.B.C.D}: Tern's subnet mask. */
    static final String NETMASK_OPTION = "--netmask_ip";
    static final List<String> OPTIONS = List.of(LOCAL_OPTION, REMOTE_OPTION, GATEWAY_OPTION, NETMASK_OPTION);

    /** The runner's own addresses, when a script names none. */
    static final ScriptAddresses DEFAULT = new ScriptAddresses(Ipv4Address.parse("198.18.0.2"),
        Ipv4Address.parse("198.18.0.1"), 24, 0);

    /** Tern's address with its prefix, as the stack is given it. */
    String ternCidr() {
        return new InterfaceAddress(tern, prefix).toString();
    }

    /**
     * The addresses the script's option lines give ({@link #DEFAULT}'s where it gives none); a combination the wire
     * cannot carry is a {@link ScriptException} at the line that made it so.
     */
    static ScriptAddresses of(String file, List<ScriptLine> lines) {
        int tern = DEFAULT.tern;
        int remote = DEFAULT.remote;
        int prefix = DEFAULT.prefix;
        int gateway = 0;
        int lastLine = 0;
        int gatewayLine = 0;
        for (ScriptLine line : lines) {
            if (!(line instanceof ScriptLine.Sysctl s) || !OPTIONS.contains(s.name())) {
                continue;
            }
            final int value = (int) s.value();
            lastLine = s.line();
            switch (s.name()) {
                case LOCAL_OPTION -> tern = value;
                case REMOTE_OPTION -> remote = value;
                case NETMASK_OPTION -> prefix = Integer.bitCount(value);
                default -> {
                    gateway = value;
                    gatewayLine = s.line();
                }
            }
        }
        if (lastLine == 0) {
            return DEFAULT;
        }
        if (tern == remote) {
            throw new ScriptException(file, lastLine, "Tern and the remote have the same address "
                + Ipv4Address.format(tern) + " (--local_ip, --remote_ip)");
        }
        if (unusable(tern)) {
            throw new ScriptException(file, lastLine, "--local_ip " + Ipv4Address.format(tern)
                + " cannot be a host's address (0.0.0.0/8, loopback, multicast or broadcast)");
        }
        if (unusable(remote)) {
            throw new ScriptException(file, lastLine, "--remote_ip " + Ipv4Address.format(remote)
                + " cannot be a host's address (0.0.0.0/8, loopback, multicast or broadcast)");
        }
        final InterfaceAddress subnet = new InterfaceAddress(tern, prefix);
        if (subnet.contains(remote)) {
            // On-link: Tern asks ARP for the remote itself, and a gateway is not used (RFC 1122 §3.3.1.1).
            return new ScriptAddresses(tern, remote, prefix, 0);
        }
        if (gatewayLine == 0) {
            // Packetdrill's own default gateway is the address after the local one's network's first; any address
            // on the subnet but Tern's will do, as the remote answers ARP for it.
            gateway = subnet.network() + 1 == tern ? subnet.network() + 2 : subnet.network() + 1;
            if (!subnet.contains(gateway) || gateway == subnet.broadcast()) {
                throw new ScriptException(file, lastLine, "the remote " + Ipv4Address.format(remote)
                    + " is not on Tern's subnet " + subnet + ", which has no room for a gateway: give --netmask_ip");
            }
        } else if (!subnet.contains(gateway) || gateway == tern) {
            throw new ScriptException(file, gatewayLine, "--gateway_ip " + Ipv4Address.format(gateway)
                + " must be on Tern's subnet " + subnet + " and not Tern's own address");
        }
        return new ScriptAddresses(tern, remote, prefix, gateway);
    }

    private static boolean unusable(int address) {
        final int first = address >>> 24;
        return first == 0 || first == 127 || first >= 224;
    }
}
