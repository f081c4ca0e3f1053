package dev.tern.nio;

import dev.tern.afpacket.AfPacketLink;
import dev.tern.afpacket.AfPacketOptions;
import dev.tern.afxdp.AfXdpLink;
import dev.tern.afxdp.AfXdpOptions;
import dev.tern.afpacket.LinkOpenException;
import dev.tern.core.net.InterfaceAddress;
import dev.tern.core.net.Ipv4Address;
import dev.tern.ethernet.link.Link;
import dev.tern.core.time.SystemClock;
import dev.tern.ethernet.memory.MemoryPipe;
import dev.tern.ethernet.memory.MemoryWire;
import dev.tern.ethernet.pcap.PcapTap;
import dev.tern.ethernet.pcap.PcapWriter;
import dev.tern.ethernet.wire.MacAddress;
import dev.tern.rawqp.LinkUnavailableException;
import dev.tern.rawqp.RawQpLinks;
import dev.tern.rawqp.RawQpOptions;
import dev.tern.stack.NetStack;
import dev.tern.stack.StackRunner;
import dev.tern.stack.StackShards;
import dev.tern.tcp.EcnMode;
import dev.tern.tcp.TcpConfig;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.BusySpinIdleStrategy;
import org.agrona.concurrent.IdleStrategy;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Properties;

/**
 * The stack behind a system-wide {@link TernSelectorProvider}, described by system properties and opened on the
 * first channel that the rules give to Tern (a program that only talks to the kernel never opens a link).
 *
 * <pre>
 *   tern.link   memory | afpacket:IFACE | afxdp:IFACE[:QUEUE] | rawqp:DEVICE[:PORT]   (default memory)
 *   tern.ip     A.B.C.D/N                                        (default 198.18.0.2/24)
 *   tern.gw     A.B.C.D         tern.mac  02:..       tern.mtu  N
 *   tern.name   the stack's name in `tern stat`                  (default: the program's main class or jar)
 *   tern.idle   backoff | spin  how the stack's runner thread idles (default backoff)
 *   tern.pcap   a file that records the stack's interface, both directions
 *   tern.shards N  stacks sharing the address, a thread each (default 1; above 1 on memory, afpacket and rawqp only)
 *   tern.rules  a rules file (see {@link Rules});  tern.rules.add  more rules, separated by ';' (checked first)
 * </pre>
 * {@code memory} joins the stack by an in-process pipe to a peer stack at the subnet's first other address, which
 * answers ARP, ping, UDP and TCP echo on port 7 and TCP discard on port 9 ({@link MemoryPeer}); it needs no device
 * and no privilege.
 *
 * <p>With {@code tern.shards} above 1 the stack is {@link StackShards}: on AF_PACKET a fanout group steers each TCP
 * and UDP flow to one shard, on {@code memory} the memory wire does, with the peer on the same wire.
 *
 * <p>Thread-safe: the first caller of {@link #stack()} opens it; a failure is kept and reported to every caller.
 */
final class TernNetwork implements AutoCloseable {
    static final String DEFAULT_ADDRESS = "198.18.0.2/24";

    private final String link;
    private final InterfaceAddress address;
    private final int gateway;
    private final long mac;
    private final int mtu;
    private final String name;
    private final boolean spin;
    private final Path pcap;
    private final int shardCount;
    /** Control blocks per stack (each shard's), {@code tern.maxConnections}; 0: the stack's default. */
    private final int maxConnections;
    /** Send and receive buffer of every connection, {@code tern.bufferSize}; 0: the stack's defaults. */
    private final int bufferSize;
    /** The socket buffer budget of each stack (shard), pressure at half, {@code tern.memoryLimit}; 0: the default. */
    private final long memoryLimit;
    /** ECN's policy on every stack (shard), {@code tern.ecn}: off, on or server; null: the default. */
    private final EcnMode ecn;
    /** IPv6 addresses of the stack (shard 0), {@code tern.ip6} (comma-separated ADDR/N); empty: no IPv6. */
    private final java.util.List<dev.tern.core.net.Ipv6InterfaceAddress> ipv6Addresses;
    private final boolean slaac;
    /**
     * How long the program's end waits for its connections to end after a FIN, {@code tern.shutdownLinger} seconds;
     * 0: every connection is reset at once.
     */
    private final long shutdownLingerNs;
    /** How long the end waits, whatever the linger, for connections the program closed to finish. */
    static final long CLOSED_GRACE_NS = 1_000_000_000L;
    private PcapWriter pcapWriter;
    /** The stack, or shard 0 of a sharded one; null until opened. */
    private NetStack stack;
    /** The shards when {@code tern.shards} is above 1; null otherwise. */
    private StackShards sharded;
    private MemoryWire wire;
    private StackRunner runner;
    private MemoryPeer peer;
    private MemoryPipe pipe;
    private IOException failure;
    private boolean closed;

    private TernNetwork(String link, InterfaceAddress address, int gateway, long mac, int mtu, String name, boolean spin,
                        Path pcap, int shardCount, int maxConnections, int bufferSize, long memoryLimit,
                        long shutdownLingerNs, EcnMode ecn,
                        java.util.List<dev.tern.core.net.Ipv6InterfaceAddress> ipv6Addresses, boolean slaac) {
        this.ipv6Addresses = java.util.List.copyOf(ipv6Addresses);
        this.slaac = slaac;
        this.shardCount = shardCount;
        this.ecn = ecn;
        this.shutdownLingerNs = shutdownLingerNs;
        this.memoryLimit = memoryLimit;
        this.maxConnections = maxConnections;
        this.bufferSize = bufferSize;
        this.link = link;
        this.address = address;
        this.gateway = gateway;
        this.mac = mac;
        this.mtu = mtu;
        this.name = name;
        this.spin = spin;
        this.pcap = pcap;
    }

    /** The configuration in {@code properties} ({@code tern.*}); a malformed value is an IllegalArgumentException. */
    static TernNetwork fromProperties(Properties properties) {
        final String link = properties.getProperty("tern.link", "memory");
        if (!link.equals("memory") && !link.matches("afpacket:[^:]+") && !link.matches("afxdp:[^:]+(:\\d+)?")
            && !link.matches("rawqp:[^:]+(:\\d+)?")) {
            throw new IllegalArgumentException("tern.link wants memory, afpacket:IFACE, afxdp:IFACE[:QUEUE] or rawqp:DEVICE[:PORT], got '"
                + link + "'");
        }
        final InterfaceAddress address = InterfaceAddress.parse(properties.getProperty("tern.ip", DEFAULT_ADDRESS));
        final String gw = properties.getProperty("tern.gw");
        final int gateway = gw == null ? 0 : Ipv4Address.parse(gw);
        final String macText = properties.getProperty("tern.mac");
        final long mac = macText == null ? -1 : MacAddress.parse(macText);
        final int mtu = Integer.parseInt(properties.getProperty("tern.mtu", link.startsWith("afpacket") ? "65535" : "1500"));
        final String name = properties.getProperty("tern.name", programName(properties));
        final String idle = properties.getProperty("tern.idle", "backoff").toLowerCase(Locale.ROOT);
        if (!idle.equals("backoff") && !idle.equals("spin")) {
            throw new IllegalArgumentException("tern.idle wants backoff or spin, got '" + idle + "'");
        }
        final String pcap = properties.getProperty("tern.pcap");
        final int shards = shards(properties.getProperty("tern.shards", "1"));
        if (shards > 1 && !link.equals("memory") && !link.startsWith("afpacket:") && !link.startsWith("rawqp:")) {
            throw new IllegalArgumentException("tern.shards " + shards + " needs tern.link memory, afpacket:IFACE or rawqp:DEVICE, not "
                + link);
        }
        if (shards > 1 && link.startsWith("rawqp:") && Integer.bitCount(shards) != 1) {
            throw new IllegalArgumentException("tern.shards " + shards + " on rawqp must be a power of two (its flow rules steer by "
                + "port bits)");
        }
        if (shards > 1 && pcap != null) {
            throw new IllegalArgumentException("tern.shards " + shards + " cannot be recorded with tern.pcap: use one shard");
        }
        final int maxConnections = (int) whole(properties, "tern.maxConnections", 1, TcpConfig.MAX_CONNECTIONS, "");
        final int bufferSize = (int) whole(properties, "tern.bufferSize", TcpConfig.MIN_BUFFER, TcpConfig.MAX_BUFFER, "");
        if (Integer.bitCount(bufferSize) > 1) {
            throw new IllegalArgumentException("tern.bufferSize must be a power of two, got " + bufferSize);
        }
        final long memoryLimit = whole(properties, "tern.memoryLimit", TcpConfig.MIN_MEMORY_LIMIT,
            TcpConfig.MAX_MEMORY_LIMIT, " bytes");
        final long linger = whole(properties, "tern.shutdownLinger", 0, TernSelectorProvider.MAX_SHUTDOWN_LINGER_SECONDS, " seconds");
        final String ecnText = properties.getProperty("tern.ecn");
        final EcnMode ecn;
        try {
            ecn = ecnText == null ? null : EcnMode.named(ecnText.strip());
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("tern.ecn: " + e.getMessage(), e);
        }
        final String ip6 = properties.getProperty("tern.ip6", "");
        return new TernNetwork(link, address, gateway, mac, mtu, name, idle.equals("spin"), pcap == null ? null : Path.of(pcap),
            shards, maxConnections, bufferSize, memoryLimit, linger * 1_000_000_000L, ecn,
            ipv6Addresses(ip6), java.util.Arrays.stream(ip6.split(",")).anyMatch(one -> one.strip().equals("auto")));
    }

    /**
     * {@code tern.ip6}: IPv6 addresses with their prefixes, comma-separated (a bare address is a /64); {@code auto}
     * among them forms more from routers' advertisements (SLAAC).
     */
    private static java.util.List<dev.tern.core.net.Ipv6InterfaceAddress> ipv6Addresses(String text) {
        final java.util.List<dev.tern.core.net.Ipv6InterfaceAddress> addresses = new java.util.ArrayList<>();
        for (String one : text.split(",")) {
            if (!one.isBlank() && !one.strip().equals("auto")) {
                try {
                    addresses.add(dev.tern.core.net.Ipv6InterfaceAddress.parse(one.strip()));
                } catch (IllegalArgumentException e) {
                    throw new IllegalArgumentException("tern.ip6: " + e.getMessage(), e);
                }
            }
        }
        return addresses;
    }

    /** The stack's configured IPv6 addresses (empty without IPv6, or with SLAAC's only). */
    java.util.List<dev.tern.core.net.Ipv6InterfaceAddress> ipv6Addresses() {
        return ipv6Addresses;
    }

    /** Whether the stack has IPv6: configured addresses, or SLAAC ({@code tern.ip6=auto}). */
    boolean ipv6() {
        return !ipv6Addresses.isEmpty() || slaac;
    }

    /** Whether the stack forms addresses from routers' advertisements ({@code auto} in {@code tern.ip6}). */
    boolean slaac() {
        return slaac;
    }

    /** A whole number setting within {@code min..max} (of {@code unit}, as " bytes", or ""); 0 when unset. */
    private static long whole(Properties properties, String key, long min, long max, String unit) {
        final String text = properties.getProperty(key);
        if (text == null) {
            return 0;
        }
        final long value;
        try {
            value = Long.parseLong(text.strip());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(key + " wants a whole number" + (unit.isEmpty() ? "" : " of" + unit)
                + ", got '" + text + "'");
        }
        if (value < min || value > max) {
            throw new IllegalArgumentException(key + " must be " + min + ".." + max + unit + ", got " + value);
        }
        return value;
    }

    /** What every stack (or shard) of this network is: name, address, MTU, gateway and the TCP settings. */
    private void describe(NetStack.Builder builder) {
        builder.name(name).address(address).mtu(mtu);
        if (ipv6()) {
            builder.ipv6(dev.tern.ipv6.Ipv6Config.withAddresses(ipv6Addresses).withSlaac(slaac));
        }
        if (gateway != 0) {
            builder.gateway(Ipv4Address.format(gateway));
        }
        if (maxConnections > 0 || bufferSize > 0 || memoryLimit > 0 || ecn != null) {
            final TcpConfig.Builder tcp = TcpConfig.builder();
            if (ecn != null) {
                tcp.ecn(ecn);
            }
            if (memoryLimit > 0) {
                tcp.memoryLimits(memoryLimit / 2, memoryLimit);
            }
            if (maxConnections > 0) {
                tcp.maxConnections(maxConnections);
            }
            if (bufferSize > 0) {
                tcp.sendBufferSize(bufferSize).receiveBufferSize(bufferSize);
            }
            builder.tcp(tcp.build());
        }
    }

    private static int shards(String text) {
        final int shards;
        try {
            shards = Integer.parseInt(text.strip());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("tern.shards wants a number of shards, got '" + text + "'");
        }
        if (shards < 1 || shards > 255) {
            throw new IllegalArgumentException("tern.shards wants 1..255, got " + shards);
        }
        return shards;
    }

    /** The program's name for `tern stat`: its main class's simple name, or its jar's name without ".jar". */
    static String programName(Properties properties) {
        final String command = properties.getProperty("sun.java.command", "").strip();
        if (command.isEmpty()) {
            return "java";
        }
        String main = command.split("\\s+")[0];
        if (main.endsWith(".jar")) {
            main = Path.of(main).getFileName().toString();
            return main.substring(0, main.length() - 4);
        }
        final int dot = main.lastIndexOf('.');
        return dot >= 0 ? main.substring(dot + 1) : main;
    }

    InterfaceAddress address() {
        return address;
    }

    String link() {
        return link;
    }

    String name() {
        return name;
    }

    /**
     * The stack (shard 0 of a sharded one), opened on first use; throws the same IOException (cause and fix) on every
     * call if it cannot open.
     */
    synchronized NetStack stack() throws IOException {
        if (closed) {
            throw new IOException("tern: the provider's stack is closed (the JVM is shutting down)");
        }
        if (stack != null) {
            return stack;
        }
        if (failure != null) {
            throw new IOException(failure.getMessage(), failure);
        }
        try {
            if (shardCount == 1) {
                final NetStack opened = open();
                runner = StackRunner.start(opened, spin ? new BusySpinIdleStrategy() : idle(), TernSelectorProvider::reportStackFailure,
                    TernSelectorProvider.DAEMON_THREADS);
                stack = opened;
            } else {
                sharded = openShards();
                sharded.start(k -> spin ? new BusySpinIdleStrategy() : idle(), TernSelectorProvider.DAEMON_THREADS);
                stack = sharded.shard(0);
            }
            return stack;
        } catch (LinkOpenException | LinkUnavailableException | IllegalArgumentException | IllegalStateException e) {
            failure = new IOException("tern: cannot open --link " + link + ": " + e.getMessage(), e);
            throw failure;
        }
    }

    /** The shards, opened on first use as {@link #stack()} is; null when {@code tern.shards} is 1. */
    synchronized StackShards sharded() throws IOException {
        stack();
        return sharded;
    }

    private static IdleStrategy idle() {
        // Spin a little, then yield, then park 1-100 us: a thread blocked on a socket polls the stack itself anyway.
        return new BackoffIdleStrategy(100, 10, 1_000, 100_000);
    }

    /** Whether {@link #stack()} has already failed (the rules may then send channels to the kernel). */
    synchronized boolean failed() {
        return failure != null;
    }

    private NetStack open() {
        Link opened;
        if (link.equals("memory")) {
            pipe = MemoryPipe.create(mac == -1 ? 0x0200_0000_0002L : mac, 0x0200_0000_0001L, mtu, 1 << 22, false);
            opened = pipe.first();
            peer = MemoryPeer.start(name + "-peer", pipe.second(), new InterfaceAddress(memoryPeerAddress(), address.prefixLength()),
                ipv6Addresses.isEmpty() ? null : ipv6Addresses.getFirst().firstOtherHost());
        } else if (link.startsWith("afpacket:")) {
            opened = openAfPacket(1)[0];
        } else if (link.startsWith("afxdp:")) {
            final String[] parts = link.split(":");
            final AfXdpOptions options = AfXdpOptions.forAddress(address.address()).queue(parts.length == 3 ? Integer.parseInt(parts[2]) : 0);
            opened = AfXdpLink.open(parts[1], mac == -1 ? options : options.mac(mac));
        } else {
            final String[] parts = link.split(":");
            opened = RawQpLinks.open(parts[1], parts.length == 3 ? Integer.parseInt(parts[2]) : 1,
                mac == -1 ? 0x0200_0000_0002L : mac, mtu, RawQpOptions.defaults());
        }
        if (pcap != null) {
            pcapWriter = PcapWriter.create(pcap);
            opened = new PcapTap(opened, pcapWriter, SystemClock.INSTANCE);
        }
        try {
            final NetStack.Builder builder = NetStack.builder().link(opened);
            describe(builder);
            return builder.build();
        } catch (RuntimeException e) {
            opened.close();
            throw e;
        }
    }

    /**
     * Shards on the memory wire (the peer on it too), on an AF_PACKET fanout group, or on a rawqp queue pair each; see
     * {@link StackShards}.
     */
    private StackShards openShards() {
        final Link[] links;
        if (link.equals("memory")) {
            wire = MemoryWire.builder().mtu(mtu).concurrent(true).build();
            links = wire.attachShards(name, mac == -1 ? 0x0200_0000_0002L : mac, shardCount);
            peer = MemoryPeer.start(name + "-peer", wire.attach("peer", 0x0200_0000_0001L),
                new InterfaceAddress(memoryPeerAddress(), address.prefixLength()),
                ipv6Addresses.isEmpty() ? null : ipv6Addresses.getFirst().firstOtherHost());
        } else if (link.startsWith("afpacket:")) {
            links = openAfPacket(shardCount);
        } else {
            final String[] parts = link.split(":");
            links = RawQpLinks.openShards(parts[1], parts.length == 3 ? Integer.parseInt(parts[2]) : 1,
                mac == -1 ? 0x0200_0000_0002L : mac, mtu, RawQpOptions.builder().ipv4Address(address.address()).build(),
                shardCount);
        }
        try {
            return StackShards.build(shardCount, k -> links[k], this::describe);
        } catch (RuntimeException e) {
            for (Link opened : links) {
                opened.close();
            }
            throw e;
        }
    }

    /**
     * AF_PACKET as the {@code tern} command opens it ({@link AfPacketOptions#throughput()}: 1024 receive slots for
     * super-frames, and the vnet header, so the kernel cuts and checksums TCP's 64 KiB segments), again without the
     * header where the kernel refuses it; one link, or a fanout group of {@code shards}. Before, a program's stack had
     * the default ring of 64 such slots and no header: a burst of 200 connections' SYNs from the kernel's clients
     * filled half of it, and the stack's load shedding took them for a flood.
     */
    private Link[] openAfPacket(int shards) {
        final String iface = link.substring("afpacket:".length());
        final AfPacketOptions options = mac == -1 ? AfPacketOptions.throughput() : AfPacketOptions.throughput().mac(mac);
        try {
            return shards == 1 ? new Link[] {AfPacketLink.open(iface, options)}
                : AfPacketLink.openFanoutGroup(iface, options, shards);
        } catch (LinkOpenException withVnet) {
            try {
                return shards == 1 ? new Link[] {AfPacketLink.open(iface, options.vnetHeader(false))}
                    : AfPacketLink.openFanoutGroup(iface, options.vnetHeader(false), shards);
            } catch (LinkOpenException e) {
                throw withVnet;
            }
        }
    }

    /** The memory peer's address: the subnet's first other than ours. */
    private int memoryPeerAddress() {
        final int first = address.network() + 1;
        return first == address.address() ? first + 1 : first;
    }

    /**
     * The program's end. Connections the program closed itself, or shut the output of, finish as a kernel's outlive
     * their process: the end
     * waits up to {@link #CLOSED_GRACE_NS} for their data and FIN to be delivered and the peer's FIN to come. With
     * {@code tern.shutdownLinger}, as a kernel closes an exiting process's sockets, every listener stops and every
     * connection still open gets a FIN after the data written too, and the end waits up to the linger (or the grace,
     * if longer) for all of them. The stacks' close then resets what is left. The calls run on the stacks' own
     * threads, which still run.
     */
    private void finishConnections() {
        final List<NetStack> stacks = sharded != null ? sharded.shards() : stack != null ? List.of(stack) : List.of();
        if (shutdownLingerNs > 0) {
            for (NetStack s : stacks) {
                s.call(s::shutdown);
            }
        }
        final long deadlineNs = System.nanoTime() + Math.max(shutdownLingerNs, CLOSED_GRACE_NS);
        while (!stacks.stream().allMatch(s -> s.call(shutdownLingerNs > 0 ? s::connectionsEnded : s::closedConnectionsEnded))
            && System.nanoTime() - deadlineNs < 0) {
            try {
                Thread.sleep(1);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;   // stop waiting: the close resets what is left
            }
        }
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        finishConnections();
        if (runner != null) {
            runner.close();
        }
        if (sharded != null) {
            sharded.close();
        }
        if (peer != null) {
            peer.close();
        }
        if (pipe != null) {
            pipe.close();
        }
        if (wire != null) {
            wire.close();
        }
        if (pcapWriter != null) {
            pcapWriter.close();
        }
    }

    @Override
    public String toString() {
        return name + " on " + link + " at " + address + (shardCount > 1 ? " (" + shardCount + " shards)" : "");
    }
}
