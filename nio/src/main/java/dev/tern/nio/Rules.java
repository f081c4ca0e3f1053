package dev.tern.nio;

import dev.tern.core.net.InterfaceAddress;
import dev.tern.core.net.Ipv4Address;
import dev.tern.core.net.Ipv6Address;
import dev.tern.core.net.Ipv6InterfaceAddress;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Which side serves a channel: Tern's stack or the kernel (through the JDK's own provider). Decided once per channel,
 * when it is first bound, connected, sent from or joined to a group, by the first rule that matches; VMA's
 * {@code libvma.conf} plays the same part for LD_PRELOAD.
 *
 * <p>A rule is one line: {@code SIDE OPERATION ADDRESS[/PREFIX][:PORT[-PORT]] [tcp|udp]}.
 * <pre>
 *   # comments and blank lines are ignored
 *   tern   connect 198.18.0.0/15          connections and datagrams to this prefix go through Tern
 *   kernel connect 198.18.0.9:5432 tcp    ... except this database, through the kernel
 *   tern   listen  *:8080                 a server (TCP listener, bound UDP socket) on port 8080: Tern
 *   kernel listen  *:9000-9100 udp
 *   tern   join    239.0.0.0/8            multicast groups joined by a channel not yet bound
 *   link-failure   kernel                 when Tern's link cannot open, use the kernel (default: fail)
 * </pre>
 * {@code SIDE} is {@code tern} or {@code kernel}; {@code OPERATION} is {@code connect} (the destination of a
 * connect or of a datagram's first send), {@code listen} (the local address of a bind: a listener, or a datagram
 * channel bound before it sends), or {@code join}; {@code *} is any address.
 *
 * <p>An IPv6 address is written as {@code 2001:db8::/32}, or in brackets before a port: {@code [2001:db8::9]:5432}.
 *
 * <p>What never goes to Tern, whatever the rules: loopback (127/8 and ::1 are the host kernel's, not Tern's), IPv6
 * when Tern's stack has none ({@code tern.ip6}), UNIX-domain sockets, pipes, and binds to a specific address that is
 * not Tern's. After the rules, the defaults: a destination on Tern's subnet or one of its IPv6 prefixes goes to Tern,
 * any other to the kernel; a bind to the wildcard address or to one of Tern's addresses goes to Tern; a group join
 * goes to Tern (an IPv6 group when Tern's stack has IPv6).
 *
 * <p>Immutable; thread-safe.
 */
public final class Rules {
    /** Which side serves a channel. */
    public enum Side { TERN, KERNEL }

    /** What a channel is doing when its side is decided. */
    public enum Operation { CONNECT, LISTEN, JOIN }

    /** A transport a rule may be limited to. */
    public enum Transport { TCP, UDP }

    /** One parsed rule; {@code transport} null for both. */
    record Rule(Side side, Operation operation, int address, int prefixLength, int firstPort, int lastPort,
                Transport transport, Ipv6Address ipv6) {
        /** An IPv4 rule (or {@code *}, which matches both families) for an IPv4 destination. */
        boolean matches(Operation what, Transport how, int destination, int port) {
            if (ipv6 != null || !applies(what, how, port)) {
                return false;
            }
            final int mask = prefixLength == 0 ? 0 : -1 << (32 - prefixLength);
            return (destination & mask) == (address & mask);
        }

        /** An IPv6 rule (or {@code *}) for an IPv6 destination. */
        boolean matches6(Operation what, Transport how, Ipv6Address destination, int port) {
            if (!applies(what, how, port)) {
                return false;
            }
            return ipv6 == null ? prefixLength == 0 : ipv6.samePrefix(destination.high(), destination.low(), prefixLength);
        }

        private boolean applies(Operation what, Transport how, int port) {
            return what == operation && (transport == null || transport == how) && port >= firstPort && port <= lastPort;
        }
    }

    private final List<Rule> rules;
    private final boolean kernelOnLinkFailure;
    private final InterfaceAddress ternAddress;
    /**
     * Tern's IPv6 addresses and prefixes as of the call (SLAAC adds some while the program runs); empty when its
     * stack has no IPv6 (then IPv6 is the kernel's). Asked on connect and bind only.
     */
    private final java.util.function.Supplier<List<Ipv6InterfaceAddress>> ternIpv6;

    private Rules(List<Rule> rules, boolean kernelOnLinkFailure, InterfaceAddress ternAddress,
                  java.util.function.Supplier<List<Ipv6InterfaceAddress>> ternIpv6) {
        this.rules = List.copyOf(rules);
        this.kernelOnLinkFailure = kernelOnLinkFailure;
        this.ternAddress = ternAddress;
        this.ternIpv6 = ternIpv6;
    }

    private Rules(List<Rule> rules, boolean kernelOnLinkFailure, InterfaceAddress ternAddress) {
        this(rules, kernelOnLinkFailure, ternAddress, List::of);
    }

    /** These rules for a stack that also has the IPv6 addresses {@code addresses} (with their on-link prefixes). */
    public Rules withIpv6(List<Ipv6InterfaceAddress> addresses) {
        final List<Ipv6InterfaceAddress> fixed = List.copyOf(addresses);
        return new Rules(rules, kernelOnLinkFailure, ternAddress, () -> fixed);
    }

    /** These rules for a stack whose IPv6 addresses change while it runs: {@code addresses} says what they are now. */
    public Rules withIpv6(java.util.function.Supplier<List<Ipv6InterfaceAddress>> addresses) {
        return new Rules(rules, kernelOnLinkFailure, ternAddress, addresses);
    }

    /** Only the built-in rules and the defaults, for a stack at {@code ternAddress}. */
    public static Rules defaults(InterfaceAddress ternAddress) {
        return new Rules(List.of(), false, ternAddress);
    }

    /**
     * Rules from {@code text} (lines as above), for a stack at {@code ternAddress}; {@code source} names it in errors
     * ("FILE:LINE: reason").
     */
    public static Rules parse(String text, String source, InterfaceAddress ternAddress) {
        final List<Rule> parsed = new ArrayList<>();
        boolean kernelOnFailure = false;
        final String[] lines = text.split("\n", -1);
        for (int i = 0; i < lines.length; i++) {
            String line = lines[i];
            final int hash = line.indexOf('#');
            if (hash >= 0) {
                line = line.substring(0, hash);
            }
            line = line.strip();
            if (line.isEmpty()) {
                continue;
            }
            final String where = source + ":" + (i + 1) + ": ";
            final String[] words = line.split("\\s+");
            if (words[0].equals("link-failure")) {
                if (words.length != 2 || !(words[1].equals("kernel") || words[1].equals("fail"))) {
                    throw new RulesException(where + "link-failure wants 'kernel' or 'fail', got '" + line + "'");
                }
                kernelOnFailure = words[1].equals("kernel");
                continue;
            }
            parsed.add(parseRule(words, where));
        }
        return new Rules(parsed, kernelOnFailure, ternAddress);
    }

    /** Rules from a file; a missing or unreadable file is a {@link RulesException} naming it. */
    public static Rules load(Path file, InterfaceAddress ternAddress) {
        final String text;
        try {
            text = Files.readString(file);
        } catch (IOException e) {
            throw new RulesException(file + ": cannot read the rules file: " + reason(e));
        } catch (UncheckedIOException e) {
            throw new RulesException(file + ": cannot read the rules file: " + reason(e.getCause()));
        }
        return parse(text, file.toString(), ternAddress);
    }

    /** Why reading failed, in words: for these exceptions the message is only the file's name. */
    private static String reason(IOException e) {
        return switch (e) {
            case java.nio.file.NoSuchFileException n -> "no such file or directory";
            case java.nio.file.AccessDeniedException d -> "permission denied";
            case java.nio.file.FileSystemException f when f.getReason() != null -> f.getReason();
            case java.nio.charset.CharacterCodingException c -> "not text in UTF-8";
            default -> e.getMessage();
        };
    }

    /** These rules followed by {@code more} (the first match still wins). */
    public Rules then(Rules more) {
        final List<Rule> all = new ArrayList<>(rules);
        all.addAll(more.rules);
        return new Rules(all, kernelOnLinkFailure || more.kernelOnLinkFailure, ternAddress, ternIpv6);
    }

    private static Rule parseRule(String[] words, String where) {
        if (words.length < 3 || words.length > 4) {
            throw new RulesException(where + "want SIDE OPERATION ADDRESS[/PREFIX][:PORT[-PORT]] [tcp|udp], got '"
                + String.join(" ", words) + "'");
        }
        final Side side = switch (words[0].toLowerCase(Locale.ROOT)) {
            case "tern" -> Side.TERN;
            case "kernel" -> Side.KERNEL;
            default -> throw new RulesException(where + "unknown side '" + words[0] + "' (want tern or kernel)");
        };
        final Operation operation = switch (words[1].toLowerCase(Locale.ROOT)) {
            case "connect" -> Operation.CONNECT;
            case "listen" -> Operation.LISTEN;
            case "join" -> Operation.JOIN;
            default -> throw new RulesException(where + "unknown operation '" + words[1] + "' (want connect, listen or join)");
        };
        Transport transport = null;
        if (words.length == 4) {
            transport = switch (words[3].toLowerCase(Locale.ROOT)) {
                case "tcp" -> Transport.TCP;
                case "udp" -> Transport.UDP;
                default -> throw new RulesException(where + "unknown transport '" + words[3] + "' (want tcp or udp)");
            };
        }
        String target = words[2];
        int firstPort = 0;
        int lastPort = 65535;
        final boolean bracketed = target.startsWith("[");
        final int close = target.indexOf(']');
        if (bracketed && close < 0) {
            throw new RulesException(where + "no ']' in '" + target + "'");
        }
        final int colon = bracketed ? (close + 1 < target.length() && target.charAt(close + 1) == ':' ? close + 1 : -1)
            : target.indexOf(':') == target.lastIndexOf(':') ? target.indexOf(':') : -1;
        if (bracketed && colon < 0 && close + 1 != target.length()) {
            throw new RulesException(where + "want ':PORT' after ']' in '" + target + "'");
        }
        if (colon >= 0) {
            final String ports = target.substring(colon + 1);
            target = target.substring(bracketed ? 1 : 0, bracketed ? close : colon);
            final int dash = ports.indexOf('-');
            firstPort = port(dash < 0 ? ports : ports.substring(0, dash), where);
            lastPort = dash < 0 ? firstPort : port(ports.substring(dash + 1), where);
            if (lastPort < firstPort) {
                throw new RulesException(where + "port range " + ports + " is empty");
            }
        }
        if (bracketed && colon < 0) {
            target = target.substring(1, close);
        }
        if (target.contains(":")) {
            return parseIpv6Rule(side, operation, target, firstPort, lastPort, transport, where);
        }
        int address = 0;
        int prefix = 0;
        if (!target.equals("*")) {
            final int slash = target.indexOf('/');
            try {
                address = Ipv4Address.parse(slash < 0 ? target : target.substring(0, slash));
            } catch (IllegalArgumentException e) {
                throw new RulesException(where + "bad address '" + target + "' (want A.B.C.D[/PREFIX] or *)");
            }
            prefix = 32;
            if (slash >= 0) {
                try {
                    prefix = Integer.parseInt(target.substring(slash + 1));
                } catch (NumberFormatException e) {
                    prefix = -1;
                }
                if (prefix < 0 || prefix > 32) {
                    throw new RulesException(where + "bad prefix length in '" + target + "' (want 0..32)");
                }
            }
        }
        return new Rule(side, operation, address, prefix, firstPort, lastPort, transport, null);
    }

    private static Rule parseIpv6Rule(Side side, Operation operation, String target, int firstPort, int lastPort,
                                      Transport transport, String where) {
        final int slash = target.indexOf('/');
        final Ipv6Address address;
        try {
            address = Ipv6Address.parse(slash < 0 ? target : target.substring(0, slash));
        } catch (IllegalArgumentException e) {
            throw new RulesException(where + "bad IPv6 address '" + target + "' (" + e.getMessage() + ")");
        }
        int prefix = 128;
        if (slash >= 0) {
            try {
                prefix = Integer.parseInt(target.substring(slash + 1));
            } catch (NumberFormatException e) {
                prefix = -1;
            }
            if (prefix < 0 || prefix > 128) {
                throw new RulesException(where + "bad prefix length in '" + target + "' (want 0..128)");
            }
        }
        return new Rule(side, operation, 0, prefix, firstPort, lastPort, transport, address);
    }

    private static int port(String text, String where) {
        try {
            final int port = Integer.parseInt(text);
            if (port >= 0 && port <= 65535) {
                return port;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new RulesException(where + "bad port '" + text + "' (want 0..65535)");
    }

    /** Whether channels go to the kernel when Tern's link cannot open (else the first Tern channel fails). */
    public boolean kernelOnLinkFailure() {
        return kernelOnLinkFailure;
    }

    /** The address of the stack these rules are for. */
    public InterfaceAddress ternAddress() {
        return ternAddress;
    }

    /** The side for a channel connecting (or first sending) to {@code remote}. */
    public Side connect(Transport transport, SocketAddress remote) {
        if (ipv6Address(remote) instanceof Inet6Address six) {
            return connect6(transport, six, ((InetSocketAddress) remote).getPort());
        }
        final int address = ipv4(remote);
        if (address == NOT_IPV4 || isLoopback(address)) {
            return Side.KERNEL;
        }
        final int port = ((InetSocketAddress) remote).getPort();
        for (Rule rule : rules) {
            if (rule.matches(Operation.CONNECT, transport, address, port)) {
                return rule.side();
            }
        }
        return ternAddress.contains(address) ? Side.TERN : Side.KERNEL;
    }

    /**
     * IPv6 destinations: the rules, then Tern for a destination on one of Tern's IPv6 prefixes. Loopback, and
     * everything when Tern's stack has no IPv6, is the kernel's.
     */
    private Side connect6(Transport transport, Inet6Address remote, int port) {
        final List<Ipv6InterfaceAddress> ternIpv6 = this.ternIpv6.get();
        if (ternIpv6.isEmpty() || remote.isLoopbackAddress()) {
            return Side.KERNEL;
        }
        final Ipv6Address destination = Ipv6Address.of(remote.getAddress());
        for (Rule rule : rules) {
            if (rule.matches6(Operation.CONNECT, transport, destination, port)) {
                return rule.side();
            }
        }
        for (Ipv6InterfaceAddress ours : ternIpv6) {
            if (ours.onLink(destination.high(), destination.low())) {
                return Side.TERN;
            }
        }
        return Side.KERNEL;
    }

    /** The side for a channel bound to {@code local} (null: the wildcard address and an ephemeral port). */
    public Side listen(Transport transport, SocketAddress local) {
        if (local != null && ipv6Address(local) instanceof Inet6Address six) {
            return listen6(transport, six, ((InetSocketAddress) local).getPort());
        }
        final int address = local == null ? 0 : ipv4(local);
        if (address == NOT_IPV4 || isLoopback(address)) {
            return Side.KERNEL;
        }
        if (address != 0 && address != ternAddress.address() && !Ipv4Address.isMulticast(address)
            && address != ternAddress.broadcast()) {
            return Side.KERNEL; // a specific address of the host's: only the kernel can bind it
        }
        final int port = local == null ? 0 : ((InetSocketAddress) local).getPort();
        for (Rule rule : rules) {
            if (rule.matches(Operation.LISTEN, transport, address == 0 ? ternAddress.address() : address, port)) {
                return rule.side();
            }
        }
        return Side.TERN;
    }

    /** A bind to one of Tern's IPv6 addresses: the rules, then Tern; any other IPv6 address is the kernel's. */
    private Side listen6(Transport transport, Inet6Address local, int port) {
        final Ipv6Address address = Ipv6Address.of(local.getAddress());
        if (ternIpv6.get().stream().noneMatch(ours -> ours.address().equals(address))) {
            return Side.KERNEL;
        }
        for (Rule rule : rules) {
            if (rule.matches6(Operation.LISTEN, transport, address, port)) {
                return rule.side();
            }
        }
        return Side.TERN;
    }

    /** The IPv6 address (not the wildcard) of a resolved socket address, or null. */
    private static InetAddress ipv6Address(SocketAddress socketAddress) {
        if (socketAddress instanceof InetSocketAddress inet && inet.getAddress() instanceof Inet6Address six
            && !six.isAnyLocalAddress()) {
            return six;
        }
        return null;
    }

    /** The side for a datagram channel, not yet bound, that joins {@code group}. */
    public Side join(InetAddress group) {
        if (group instanceof Inet6Address six) {
            return join6(six);
        }
        if (!(group instanceof Inet4Address)) {
            return Side.KERNEL;
        }
        final int address = Addresses.ipv4(group);
        for (Rule rule : rules) {
            if (rule.matches(Operation.JOIN, Transport.UDP, address, 0)) {
                return rule.side();
            }
        }
        return Side.TERN;
    }

    /** An IPv6 group: the rules, then Tern when its stack has IPv6. */
    private Side join6(Inet6Address group) {
        if (ternIpv6.get().isEmpty()) {
            return Side.KERNEL;
        }
        final Ipv6Address address = Ipv6Address.of(group.getAddress());
        for (Rule rule : rules) {
            if (rule.matches6(Operation.JOIN, Transport.UDP, address, 0)) {
                return rule.side();
            }
        }
        return Side.TERN;
    }

    private static final int NOT_IPV4 = 0x7F00_0001; // reported as loopback: the kernel's either way

    private static int ipv4(SocketAddress socketAddress) {
        if (!(socketAddress instanceof InetSocketAddress inet)) {
            return NOT_IPV4;
        }
        final InetAddress address = inet.getAddress();
        if (address == null) {
            return NOT_IPV4; // unresolved: the kernel's provider reports it as the JDK does
        }
        if (address instanceof Inet4Address) {
            return Addresses.ipv4(address);
        }
        if (address.isAnyLocalAddress()) {
            return 0; // "::" binds every address, Tern's included
        }
        return NOT_IPV4;
    }

    private static boolean isLoopback(int address) {
        return (address >>> 24) == 127;
    }

    @Override
    public String toString() {
        return rules.size() + " rule(s) for " + ternAddress + (kernelOnLinkFailure ? ", kernel on link failure" : "");
    }

    /** A rules file or property that cannot be parsed; the message is one line: "SOURCE:LINE: reason". */
    public static final class RulesException extends IllegalArgumentException {
        public RulesException(String message) {
            super(message);
        }
    }
}
