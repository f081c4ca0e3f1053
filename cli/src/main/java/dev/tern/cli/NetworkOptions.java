package dev.tern.cli;

import dev.tern.afpacket.AfPacketLink;
import dev.tern.afpacket.AfPacketOptions;
import dev.tern.afpacket.LinkOpenException;
import dev.tern.afxdp.AfXdpLink;
import dev.tern.afxdp.AfXdpOpenException;
import dev.tern.afxdp.AfXdpOptions;
import dev.tern.core.net.InterfaceAddress;
import dev.tern.core.net.Ipv4Address;
import dev.tern.core.net.Ipv6InterfaceAddress;
import dev.tern.ethernet.link.Link;
import dev.tern.ethernet.memory.MemoryWire;
import dev.tern.ethernet.pcap.PcapTap;
import dev.tern.ethernet.pcap.PcapWriter;
import dev.tern.ethernet.wire.MacAddress;
import dev.tern.ipv6.Ipv6Config;
import dev.tern.rawqp.LinkUnavailableException;
import dev.tern.rawqp.RawQpLinks;
import dev.tern.rawqp.RawQpOptions;
import dev.tern.stack.NetStack;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * The link flags every network command takes (DESIGN.md, "The tern command"):
 * {@code --link memory|afpacket:IFACE|afxdp:IFACE[:QUEUE]|rawqp:DEVICE[:PORT] --ip A.B.C.D/N [--gw A.B.C.D]... [--mac M] [--mtu N] [--pcap FILE]}.
 *
 * <p>{@code --link memory} (the default) needs no device and no privilege: the command's stack is joined by an
 * in-process memory wire to a second Tern stack, the peer, at the first other address of the subnet
 * (198.18.0.1 for the default 198.18.0.2/24), which answers ARP and ping and runs the same services as
 * {@code tern serve}.
 */
final class NetworkOptions {
    static final Set<String> VALUE_FLAGS = Set.of("--link", "--ip", "--ip6", "--gw", "--mac", "--mtu", "--pcap");
    static final String USAGE = "--link memory|afpacket:IFACE|afxdp:IFACE[:QUEUE]|rawqp:DEVICE[:PORT] --ip A.B.C.D/N [--ip6 ADDR/N|auto]... "
        + "[--gw A.B.C.D]... [--mac M] [--mtu N] [--pcap FILE]";
    /** The link flags in every network command's help. */
    static final java.util.List<CommandHelp.Option> HELP = java.util.List.of(
        CommandHelp.option("--link KIND", "memory: an in-process peer stack at the subnet's first other address "
            + "answers ARP, ping, echo (port 7, UDP and TCP) and discard (port 9, TCP), no device or privilege needed; "
            + "afpacket:IFACE: a Linux interface (root); afxdp:IFACE[:QUEUE]: one queue of a Linux interface through AF_XDP, "
            + "shared with the kernel: an XDP program hands Tern only frames for its MAC and address (root); rawqp:DEVICE[:PORT]: an RDMA NIC's raw-packet queue pair (built and checked against "
            + "rdma-core's headers, never yet run on RDMA hardware)",
            "memory"),
        CommandHelp.option("--ip A.B.C.D/N", "this stack's address and prefix length", "198.18.0.2/24"),
        CommandHelp.option("--ip6 ADDR/N|auto", "turn IPv6 on with this address and on-link prefix (e.g. "
            + "2001:db8::2/64), besides the link-local one from the MAC; give it again for more; auto: also form "
            + "addresses from routers' advertised prefixes (SLAAC). Neighbour discovery, ping, TCP and UDP, and "
            + "dual-stack channels under exec (what is not done: docs/STATUS.md)", "none: IPv4 only"),
        CommandHelp.option("--gw A.B.C.D", "default gateway, on the subnet; give it again for more, in preference "
            + "order: when the one in use stops answering ARP, the next is used", "none: the subnet only"),
        CommandHelp.option("--mac M", "this stack's unicast MAC address",
            "the interface's on afpacket and afxdp, else 02:00:00:00:00:02"),
        CommandHelp.option("--mtu N", "the largest IP packet, 576..65535 (afpacket: up to 64 KiB segments that the "
            + "kernel cuts)", "1500; 65535 on afpacket"),
        CommandHelp.option("--pcap FILE", "capture this stack's interface, both directions, to FILE", "none"));

    final String linkKind;
    final String linkTarget;
    final int linkPort;
    final InterfaceAddress address;
    /** The static IPv6 addresses; IPv6 is on when there is one, or with SLAAC. */
    final java.util.List<Ipv6InterfaceAddress> ipv6Addresses;
    /** {@code --ip6 auto}: addresses from router advertisements too. */
    final boolean slaac;
    /** Every default gateway, in preference order. */
    final int[] gateways;
    final long mac;
    final int mtu;
    final Path pcap;

    private NetworkOptions(Arguments args) {
        final String link = args.value("--link", "memory");
        final String[] parts = link.split(":", -1);
        linkKind = parts[0];
        switch (linkKind) {
            case "memory" -> {
                if (parts.length != 1) {
                    throw badLink(args, link);
                }
                linkTarget = null;
                linkPort = 0;
            }
            case "afpacket" -> {
                if (parts.length != 2 || parts[1].isEmpty()) {
                    throw badLink(args, link);
                }
                linkTarget = parts[1];
                linkPort = 0;
            }
            case "afxdp" -> {
                if (parts.length < 2 || parts.length > 3 || parts[1].isEmpty()) {
                    throw badLink(args, link);
                }
                linkTarget = parts[1];
                linkPort = parts.length == 3 ? parseQueue(args, parts[2]) : 0;
            }
            case "rawqp" -> {
                if (parts.length < 2 || parts.length > 3 || parts[1].isEmpty()) {
                    throw badLink(args, link);
                }
                linkTarget = parts[1];
                linkPort = parts.length == 3 ? parsePort(args, parts[2]) : 1;
            }
            default -> throw badLink(args, link);
        }
        address = parse(args, "--ip", () -> InterfaceAddress.parse(args.value("--ip", "198.18.0.2/24")));
        final java.util.List<Ipv6InterfaceAddress> v6 = new java.util.ArrayList<>();
        boolean auto = false;
        for (String value : args.values("--ip6")) {
            if (value.equals("auto")) {
                auto = true;
            } else {
                v6.add(parse(args, "--ip6", () -> Ipv6InterfaceAddress.parse(value)));
            }
        }
        slaac = auto;
        if (auto && linkKind.equals("afxdp")) {
            // The stack refuses it too (Ipv6Layer); said here before any device is opened.
            throw new UsageException(args.command() + ": --ip6 auto needs router advertisements, which go to all nodes,"
                + " and on afxdp those stay the kernel's (a frame goes to Tern or to the kernel, not both); give"
                + " --ip6 ADDR/N or use --link afpacket:" + linkTarget);
        }
        if (v6.size() > Ipv6Config.MAX_ADDRESSES) {
            throw new UsageException(args.command() + ": at most " + Ipv6Config.MAX_ADDRESSES + " --ip6 addresses");
        }
        ipv6Addresses = java.util.List.copyOf(v6);
        // RFC 1122 §3.3.1.2, §3.3.1.5: --gw may be given more than once, the gateways in preference order.
        final java.util.List<String> gwValues = args.values("--gw");
        gateways = new int[gwValues.size()];
        for (int i = 0; i < gateways.length; i++) {
            final String value = gwValues.get(i);
            gateways[i] = parse(args, "--gw", () -> Ipv4Address.parse(value));
            if (!address.contains(gateways[i])) {
                throw new UsageException(args.command() + ": --gw " + Ipv4Address.format(gateways[i])
                    + " is not on the subnet " + address);
            }
        }
        mac = args.has("--mac") ? parse(args, "--mac", () -> MacAddress.parse(args.value("--mac", null))) : -1;
        if (mac != -1 && !MacAddress.isUnicast(mac)) {
            throw new UsageException(args.command() + ": --mac must be a unicast address, got " + MacAddress.format(mac));
        }
        mtu = args.intValue("--mtu", linkKind.equals("afpacket") ? 65535 : 1500, 576, 65535);
        pcap = args.has("--pcap") ? Path.of(args.value("--pcap", null)) : null;
    }

    /** Whether the stack has IPv6: --ip6 addresses, or auto. */
    boolean ipv6() {
        return !ipv6Addresses.isEmpty() || slaac;
    }

    /** IPv6 on, with the --ip6 addresses, when any was given (on every shard; shard 0 speaks for them). */
    private void applyIpv6(NetStack.Builder builder) {
        if (ipv6()) {
            builder.ipv6(Ipv6Config.withAddresses(ipv6Addresses).withSlaac(slaac));
        }
    }

    static NetworkOptions from(Arguments args) {
        return new NetworkOptions(args);
    }

    private static UsageException badLink(Arguments args, String link) {
        return new UsageException(args.command() + ": --link wants memory, afpacket:IFACE, afxdp:IFACE[:QUEUE] or rawqp:DEVICE[:PORT], got '"
            + link + "'");
    }

    private static int parsePort(Arguments args, String text) {
        try {
            final int port = Integer.parseInt(text);
            if (port >= 1 && port <= 255) {
                return port;
            }
        } catch (NumberFormatException e) {
            // fall through to the usage error
        }
        throw new UsageException(args.command() + ": rawqp port must be 1..255, got '" + text + "'");
    }

    private static int parseQueue(Arguments args, String text) {
        try {
            final int queue = Integer.parseInt(text);
            if (queue >= 0 && queue <= 4095) {
                return queue;
            }
        } catch (NumberFormatException e) {
            // fall through to the usage error
        }
        throw new UsageException(args.command() + ": afxdp queue must be 0..4095, got '" + text + "'");
    }

    private interface Parser<T> {
        T parse();
    }

    private static <T> T parse(Arguments args, String flag, Parser<T> parser) {
        try {
            return parser.parse();
        } catch (IllegalArgumentException e) {
            throw new UsageException(args.command() + ": " + flag + ": " + e.getMessage());
        }
    }

    /** {@code --buffer-size B}: a power of two within TCP's buffer bounds; 0 when not given. */
    static int bufferSize(String command, Arguments args) {
        final int size = args.intValue("--buffer-size", 0, dev.tern.tcp.TcpConfig.MIN_BUFFER, dev.tern.tcp.TcpConfig.MAX_BUFFER);
        if (Integer.bitCount(size) > 1) {
            throw new UsageException(command + ": --buffer-size must be a power of two, got " + size);
        }
        return size;
    }

    /** {@code --max-connections N}, as {@code serve} and {@code exec} take it; 0 when not given. */
    static int maxConnections(Arguments args) {
        return args.intValue("--max-connections", 0, 1, dev.tern.tcp.TcpConfig.MAX_CONNECTIONS);
    }

    /** The help of {@code --max-connections} (serve, exec). */
    static final CommandHelp.Option MAX_CONNECTIONS_HELP = CommandHelp.option("--max-connections N", "connections each "
        + "shard holds, in every state (TIME-WAIT included), 1.." + dev.tern.tcp.TcpConfig.MAX_CONNECTIONS, "16384");

    /** The help of {@code --ecn} (nc, serve, exec). */
    static final CommandHelp.Option ECN_HELP = CommandHelp.option("--ecn off|on|server", "Explicit Congestion "
        + "Notification (RFC 3168), as Linux's tcp_ecn: off; on: ask on every connect and accept; server: accept a "
        + "peer's request, never ask", "server");

    /** {@code --ecn off|on|server}; null when not given (the stack's default, server). */
    static dev.tern.tcp.EcnMode ecn(String command, Arguments args) {
        final String mode = args.value("--ecn", null);
        if (mode == null) {
            return null;
        }
        try {
            return dev.tern.tcp.EcnMode.named(mode);
        } catch (IllegalArgumentException e) {
            throw new UsageException(command + ": --ecn: " + e.getMessage());
        }
    }

    /** The help of {@code --memory-limit} (serve, exec). */
    static final CommandHelp.Option MEMORY_LIMIT_HELP = CommandHelp.option("--memory-limit BYTES", "socket buffers "
        + "each shard lets connections reserve (pressure at half: new ones get a quarter); no new connection beyond it",
        "1073741824");

    /**
     * {@code --memory-limit BYTES}: the socket buffer budget of each stack (each shard), beyond which no connection is
     * let in, with the pressure mark at half of it (the defaults are 1 GiB and 512 MiB); 0 when not given.
     */
    static long memoryLimit(String command, Arguments args) {
        final long limit = args.longValue("--memory-limit", 0);
        if (args.has("--memory-limit")
            && (limit < dev.tern.tcp.TcpConfig.MIN_MEMORY_LIMIT || limit > dev.tern.tcp.TcpConfig.MAX_MEMORY_LIMIT)) {
            throw new UsageException(command + ": --memory-limit must be " + dev.tern.tcp.TcpConfig.MIN_MEMORY_LIMIT + ".."
                + dev.tern.tcp.TcpConfig.MAX_MEMORY_LIMIT + " bytes, got " + limit);
        }
        return limit;
    }

    /** Control blocks per stack (each shard's), {@code --max-connections}; 0: the stack's default. */
    private int maxConnections;
    /** The socket buffer budget per stack (each shard's), {@code --memory-limit}; 0: the stack's default. */
    private long memoryLimit;

    /** ECN's policy on every stack (each shard), {@code --ecn}; null: the stack's default. */
    private dev.tern.tcp.EcnMode ecn;

    /** Sets ECN's policy on every stack (each shard); null keeps the default; before {@link #open}. */
    NetworkOptions ecn(dev.tern.tcp.EcnMode mode) {
        this.ecn = mode;
        return this;
    }

    /** Sets each stack's (each shard's) socket buffer budget, the pressure mark at half; before {@link #open}. */
    NetworkOptions memoryLimit(long bytes) {
        this.memoryLimit = bytes;
        return this;
    }

    /** Sets how many connections each stack (each shard) holds, in every state; before {@link #open}. */
    NetworkOptions maxConnections(int connections) {
        this.maxConnections = connections;
        return this;
    }

    private void applyTcp(NetStack.Builder builder) {
        if (maxConnections > 0 || memoryLimit > 0 || ecn != null) {
            final dev.tern.tcp.TcpConfig.Builder tcp = dev.tern.tcp.TcpConfig.builder();
            if (ecn != null) {
                tcp.ecn(ecn);
            }
            if (maxConnections > 0) {
                tcp.maxConnections(maxConnections);
            }
            if (memoryLimit > 0) {
                tcp.memoryLimits(memoryLimit / 2, memoryLimit);
            }
            builder.tcp(tcp.build());
        }
    }

    /** The peer's address on the memory wire: the first host of our subnet that is not us. */
    int memoryPeerAddress() {
        final int first = address.network() + 1;
        return first == address.address() ? first + 1 : first;
    }

    /**
     * The memory-wire peer's IPv6 address: on the prefix of our first --ip6 address, its first host that is not us
     * (::1, else ::2); none but the link-local one with --ip6 auto alone.
     */
    java.util.List<Ipv6InterfaceAddress> memoryPeerIpv6() {
        return ipv6Addresses.isEmpty() ? java.util.List.of() : java.util.List.of(ipv6Addresses.getFirst().firstOtherHost());
    }

    /** Opens the link and builds the command's stack (and, on the memory wire, its peer). */
    Network open(String name) {
        final List<AutoCloseable> resources = new ArrayList<>();
        try {
            final PcapWriter writer = pcap == null ? null : PcapWriter.create(pcap);
            if (writer != null) {
                resources.add(writer);
            }
            NetStack peer = null;
            MemoryWire wire = null;
            final Link link;
            switch (linkKind) {
                case "memory" -> {
                    wire = MemoryWire.builder().mtu(mtu).build();
                    resources.add(wire);
                    link = wire.attach(name, mac == -1 ? 0x0200_0000_0002L : mac);
                    final InterfaceAddress peerAddress = new InterfaceAddress(memoryPeerAddress(), address.prefixLength());
                    final NetStack.Builder peerBuilder = NetStack.builder().name(name + "-peer")
                        .link(wire.attach("peer", 0x0200_0000_0001L)).address(peerAddress);
                    if (!ipv6Addresses.isEmpty() || slaac) {
                        peerBuilder.ipv6(Ipv6Config.withAddresses(memoryPeerIpv6()));
                    }
                    peer = peerBuilder.build();
                }
                case "afpacket" -> {
                    link = openAfPacket();
                    resources.add(link);
                }
                case "afxdp" -> {
                    link = openAfXdp();
                    resources.add(link);
                }
                default -> {
                    link = openRawQp();
                    resources.add(link);
                }
            }
            final Link tapped = writer == null ? link : new PcapTap(link, writer, dev.tern.core.time.SystemClock.INSTANCE);
            final NetStack.Builder builder = NetStack.builder().name(name).link(tapped).address(address).mtu(mtu);
            applyTcp(builder);
            applyIpv6(builder);
            for (int gw : gateways) {
                builder.gateway(Ipv4Address.format(gw));
            }
            final NetStack stack = builder.build();
            return new Network(stack, peer, wire, writer);
        } catch (RuntimeException e) {
            for (AutoCloseable resource : resources.reversed()) {
                try {
                    resource.close();
                } catch (Exception ignored) {
                    // best effort while failing
                }
            }
            throw e;
        }
    }

    /**
     * Opens a stack of {@code shards} shards sharing the address (docs/DESIGN.md, "Shards"); one shard is
     * {@link #open(String)}. On AF_PACKET each shard's link joins one fanout group running Tern's steering program
     * (opened in shard order, which is the group's order); on the memory wire the shards' ports are steered by the
     * same function, and the wire is made safe for a thread per shard. Other links and {@code --pcap} take one
     * shard only (the caller checks).
     */
    Network open(String name, int shards) {
        if (shards == 1) {
            return open(name);
        }
        final List<AutoCloseable> resources = new ArrayList<>();
        try {
            final Link[] links;
            MemoryWire wire = null;
            NetStack peer = null;
            switch (linkKind) {
                case "memory" -> {
                    wire = MemoryWire.builder().mtu(mtu).concurrent(true).build();
                    resources.add(wire);
                    links = wire.attachShards(name, mac == -1 ? 0x0200_0000_0002L : mac, shards);
                    final InterfaceAddress peerAddress = new InterfaceAddress(memoryPeerAddress(), address.prefixLength());
                    peer = NetStack.builder().name(name + "-peer").link(wire.attach("peer", 0x0200_0000_0001L))
                        .address(peerAddress).build();
                    resources.add(peer);
                }
                case "afpacket" -> {
                    AfPacketLink[] opened;
                    try {
                        opened = AfPacketLink.openFanoutGroup(linkTarget, afpacketOptions(), shards);
                    } catch (LinkOpenException withVnet) {
                        if (!afpacketOptions().vnetHeader()) {
                            throw new CommandFailure(withVnet.getMessage(), withVnet);
                        }
                        try {
                            opened = AfPacketLink.openFanoutGroup(linkTarget, afpacketOptions().vnetHeader(false), shards);
                        } catch (LinkOpenException e) {
                            throw new CommandFailure(withVnet.getMessage(), withVnet);
                        }
                    }
                    links = opened;
                    resources.addAll(List.of(opened));
                }
                case "rawqp" -> {
                    try {
                        links = RawQpLinks.openShards(linkTarget, linkPort, mac == -1 ? 0x0200_0000_0002L : mac, mtu,
                            RawQpOptions.builder().ipv4Address(address.address()).build(), shards);
                    } catch (LinkUnavailableException e) {
                        throw new CommandFailure(e.getMessage(), e);
                    }
                    resources.addAll(List.of(links));
                }
                default -> throw new IllegalStateException("shards need afpacket, rawqp or memory, not " + linkKind);
            }
            final dev.tern.stack.StackShards built = dev.tern.stack.StackShards.build(shards, k -> links[k], builder -> {
                builder.name(name).address(address).mtu(mtu);
                applyTcp(builder);
                applyIpv6(builder);
                for (int gw : gateways) {
                    builder.gateway(Ipv4Address.format(gw));
                }
            });
            return new Network(null, built, peer, wire, null);
        } catch (RuntimeException e) {
            for (AutoCloseable resource : resources.reversed()) {
                try {
                    resource.close();
                } catch (Exception ignored) {
                    // best effort while failing
                }
            }
            throw e;
        }
    }

    /**
     * The number of shards {@code command} runs: {@code --shards N} (1..255) or {@link #defaultShards()}; a number
     * above 1 on a link that cannot be sharded is a usage error naming the link.
     */
    int shards(String command, Arguments args) {
        final int shards = args.has("--shards") ? args.intValue("--shards", 1, 1, 255) : defaultShards();
        if (shards > 1 && !canShard()) {
            throw new UsageException(command + ": --shards " + shards + " needs --link afpacket:IFACE, rawqp:DEVICE or "
                + "memory, without --pcap (got --link " + linkSpec() + (pcap != null ? " with --pcap" : "") + ")");
        }
        if (shards > 1 && linkKind.equals("rawqp") && Integer.bitCount(shards) != 1) {
            throw new UsageException(command + ": --shards " + shards + " on rawqp must be a power of two (its flow rules "
                + "steer by port bits)");
        }
        return shards;
    }

    /**
     * Whether {@code --shards N} with N above 1 can work on this link: AF_PACKET, the memory wire and rawqp (a power
     * of two there: its flow rules steer by port bits; never run on hardware), without --pcap.
     */
    boolean canShard() {
        return (linkKind.equals("afpacket") || linkKind.equals("memory") || linkKind.equals("rawqp")) && pcap == null;
    }

    /**
     * The number of shards when {@code --shards} is not given: one per core on AF_PACKET (one host's cores all serving one address), else one. The
     * memory wire keeps one: its peer and the command's stack share the process's cores already, and sharding it is
     * for tests and for trying {@code --shards} without a device.
     */
    int defaultShards() {
        return linkKind.equals("afpacket") && pcap == null ? Runtime.getRuntime().availableProcessors() : 1;
    }

    /**
     * The AF_PACKET link as the veth benchmark opens it ({@link AfPacketOptions#throughput()}: the vnet header with
     * checksum offload and TSO/GSO, a frame ring of 64 KiB slots that hands each frame up at once), so a command gets
     * what the benchmark measures. Should the kernel refuse the vnet header, the link opens without it (Tern then
     * segments and checksums in Java); any other failure is the command's.
     */
    private Link openAfPacket() {
        final AfPacketOptions best = afpacketOptions();
        try {
            return AfPacketLink.open(linkTarget, best);
        } catch (LinkOpenException withVnet) {
            try {
                return AfPacketLink.open(linkTarget, best.vnetHeader(false));
            } catch (LinkOpenException e) {
                throw new CommandFailure(withVnet.getMessage(), withVnet);
            }
        }
    }

    /**
     * The AF_XDP link on {@code IFACE} queue {@code QUEUE}, steering frames for {@code --ip} (and {@code --mac}, else
     * the interface's MAC) to Tern; says on standard error whether it is zero-copy or copy mode, native or generic XDP.
     */
    private Link openAfXdp() {
        final AfXdpLink opened = openAfXdpQuietly();
        System.err.println("tern: " + opened.name() + ": " + afxdpMode);
        return opened;
    }

    private AfXdpLink openAfXdpQuietly() {
        final AfXdpOptions options = AfXdpOptions.forAddress(address.address()).queue(linkPort);
        try {
            final AfXdpLink opened = AfXdpLink.open(linkTarget, mac == -1 ? options : options.mac(mac));
            afxdpMode = opened.mode();
            return opened;
        } catch (AfXdpOpenException e) {
            throw new CommandFailure(e.getMessage(), e);
        }
    }

    private Link openRawQp() {
        try {
            return RawQpLinks.open(linkTarget, linkPort, mac == -1 ? 0x0200_0000_0002L : mac, mtu, RawQpOptions.defaults());
        } catch (LinkUnavailableException e) {
            throw new CommandFailure(e.getMessage(), e);
        }
    }

    /**
     * Opens the link and closes it again, building no stack: {@code tern exec} asks before it starts the program, so
     * a missing interface, device or privilege is one line from Tern (exit 1) instead of an exception at the
     * program's first socket. The memory wire always opens.
     */
    void checkLinkOpens() {
        final Link link = switch (linkKind) {
            case "memory" -> null;
            case "afpacket" -> openAfPacket();
            case "afxdp" -> openAfXdpQuietly();
            default -> openRawQp();
        };
        if (link != null) {
            link.close();
        }
    }

    /** What {@link #openAfXdp} reported ("copy mode, native XDP"), or null before it ran. */
    private String afxdpMode;

    /** The first default gateway, the one used until it stops answering; 0 for none. */
    int gateway() {
        return gateways.length == 0 ? 0 : gateways[0];
    }

    /**
     * A command that moves only datagrams ({@code nc -u}, {@code ping}) asks for {@link AfPacketOptions#datagrams()}:
     * MTU-sized receive slots, 8192 of them in 16 MiB, for bursts of small frames (a ring of 256 slots lost 10 % of 64-byte datagrams at 50,000/s), where the TCP
     * configuration spends 64 MiB of the kernel's memory on 1024 slots sized for super-frames.
     */
    NetworkOptions forDatagrams() {
        datagrams = true;
        return this;
    }

    private boolean datagrams;

    /** The options {@link #open} tries first for {@code --link afpacket:IFACE}. */
    AfPacketOptions afpacketOptions() {
        final AfPacketOptions options = datagrams ? AfPacketOptions.datagrams() : AfPacketOptions.throughput();
        return mac == -1 ? options : options.mac(mac);
    }

    /** The link as the flag gave it: memory, afpacket:IFACE, rawqp:DEVICE:PORT. */
    String linkSpec() {
        return switch (linkKind) {
            case "memory" -> "memory";
            case "afpacket" -> "afpacket:" + linkTarget;
            case "afxdp" -> "afxdp:" + linkTarget + ":" + linkPort;
            default -> "rawqp:" + linkTarget + ":" + linkPort;
        };
    }

    String describeLink() {
        return switch (linkKind) {
            case "memory" -> "memory wire (peer " + Ipv4Address.format(memoryPeerAddress()) + " in this process)";
            case "afpacket" -> "afpacket:" + linkTarget;
            case "afxdp" -> "afxdp:" + linkTarget + ":" + linkPort + (afxdpMode == null ? "" : " (" + afxdpMode + ")");
            default -> "rawqp:" + linkTarget + ":" + linkPort;
        };
    }
}
