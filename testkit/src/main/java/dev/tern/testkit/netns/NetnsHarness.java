package dev.tern.testkit.netns;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiFunction;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * Two network namespaces joined by a veth pair: a kernel peer on one side, Tern on the other. Nothing else is
 * reachable from either, so tests may send whatever they like.
 *
 * <pre>
 *   namespace tern-PID-N-p                       namespace tern-PID-N-t
 *   +----------------------------+              +------------------------------------+
 *   | peer0  198.18.0.1/24       |    veth      | tern0  no IPv4 address, IPv6 off,  |
 *   | (the Linux kernel answers  |<============>|        forwarding off               |
 *   |  ARP, ping, TCP, UDP)      |              | Tern (its own link): 198.18.0.2/24 |
 *   +----------------------------+              +------------------------------------+
 * </pre>
 * The Tern side has no kernel IPv4 address and IPv6 is disabled there, so the kernel neither answers ARP nor resets
 * TCP for Tern's address (rawqp.md §4.1 item 8); forwarding is off. IPv6 is disabled on the peer side too, which
 * keeps router solicitations and MLD reports off the wire. Addresses come from 198.18.0.0/15 (RFC 2544).
 *
 * <p>With {@link Options#wire} a third namespace, {@code tern-PID-N-w}, sits between the two: the veth pairs run
 * from each end to a bridge there, which has no address; {@link PacketLoss} drops packets on its ports.
 *
 * <p>Names are unique per process and harness ({@code tern-PID-N-t}/{@code -p}), so parallel runs never collide;
 * the interfaces ({@value #TERN_INTERFACE}, {@value #PEER_INTERFACE}) live only inside the namespaces, so they
 * cannot clash with the host's. {@link #close()} stops the background programs the harness started, closes the
 * links it opened and deletes both namespaces (which destroys the veth pair). It runs on every exit path: a failed
 * setup cleans up what it made, and a JVM shutdown hook closes every harness still open.
 *
 * <p>Needs root (CAP_SYS_ADMIN, CAP_NET_ADMIN, CAP_NET_RAW) and iproute2; {@link #unavailableReason()} says what is
 * missing. Offload changes need ethtool.
 *
 * <p>It knows no link type: a test opens its link (AF_PACKET, AF_XDP) through {@link #openTernLink}, so the harness
 * sits below every link module and their tests can use it (docs/DESIGN.md, the module ladder).
 *
 * <p>Thread-safe for the helpers; a link it opens belongs to the thread that uses it.
 */
public final class NetnsHarness implements AutoCloseable {
    public static final String TERN_INTERFACE = "tern0";
    public static final String PEER_INTERFACE = "peer0";
    /** The wire namespace's port towards Tern's end and towards the peer's (see {@link Options#wire}). */
    public static final String WIRE_TERN_PORT = "wt";
    public static final String WIRE_PEER_PORT = "wp";
    public static final String PEER_ADDRESS = "198.18.0.1";
    public static final String TERN_ADDRESS = "198.18.0.2";
    public static final int PEER_IPV4 = 0xC612_0001;
    public static final int TERN_IPV4 = 0xC612_0002;
    public static final int PREFIX_LENGTH = 24;

    private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(20);
    private static final AtomicLong COUNTER = new AtomicLong();
    private static final Set<NetnsHarness> OPEN = ConcurrentHashMap.newKeySet();
    private static final int CAP_NET_ADMIN = 12;
    private static final int CAP_NET_RAW = 13;
    private static final int CAP_SYS_ADMIN = 21;
    private static final HexFormat MAC = HexFormat.ofDelimiter(":");

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(NetnsHarness::closeAllOpen, "tern-netns-cleanup"));
    }

    /**
     * How to build the pair.
     *
     * @param mtu           MTU of both veth ends
     * @param ternOffloads  offloads of the Tern end, or null to keep the kernel's defaults
     * @param peerOffloads  offloads of the peer end, or null to keep the kernel's defaults
     * @param wire          put a third namespace between the two ends, a "wire": a bridge with no address, joined to
     *                      Tern's end and the peer's by a veth pair each (ports {@value #WIRE_TERN_PORT} and
     *                      {@value #WIRE_PEER_PORT}, offloads as the end they face). Frames cross it unchanged; it is
     *                      where {@link PacketLoss} drops packets so that neither end's kernel knows (see there)
     */
    public record Options(int mtu, EthtoolOffloads ternOffloads, EthtoolOffloads peerOffloads, boolean wire) {
        public Options {
            if (mtu < 68 || mtu > 65535) {
                throw new IllegalArgumentException("veth MTU " + mtu + " outside 68..65535");
            }
        }

        /** A direct veth pair between the two ends (no wire namespace). */
        public Options(int mtu, EthtoolOffloads ternOffloads, EthtoolOffloads peerOffloads) {
            this(mtu, ternOffloads, peerOffloads, false);
        }

        public static Options defaults() {
            return new Options(1500, null, null);
        }

        public Options mtu(int value) {
            return new Options(value, ternOffloads, peerOffloads, wire);
        }

        public Options ternOffloads(EthtoolOffloads value) {
            return new Options(mtu, value, peerOffloads, wire);
        }

        public Options peerOffloads(EthtoolOffloads value) {
            return new Options(mtu, ternOffloads, value, wire);
        }

        /** The same offloads on both ends. */
        public Options offloads(EthtoolOffloads value) {
            return new Options(mtu, value, value, wire);
        }

        /** With or without the wire namespace between the ends. */
        public Options wire(boolean value) {
            return new Options(mtu, ternOffloads, peerOffloads, value);
        }
    }

    private final String id;
    private final Options options;
    private final List<BackgroundCommand> background = new CopyOnWriteArrayList<>();
    private final List<AutoCloseable> links = new CopyOnWriteArrayList<>();
    private NetworkNamespace tern;
    private NetworkNamespace peer;
    private NetworkNamespace wire;
    private long ternMac;
    private long peerMac;
    private volatile boolean closed;

    private NetnsHarness(String id, Options options) {
        this.id = id;
        this.options = options;
    }

    /**
     * What this process lacks to build a harness ("needs root ..."), or empty when it can. Tests skip with this
     * reason (or fail under CI, {@code TERN_REQUIRE_NETNS=1}).
     */
    public static Optional<String> unavailableReason() {
        if (!System.getProperty("os.name", "").toLowerCase().contains("linux")) {
            return Optional.of("network namespaces need Linux");
        }
        if (Commands.find("ip").isEmpty()) {
            return Optional.of("ip not found; install the Debian package iproute2");
        }
        final long capabilities = effectiveCapabilities();
        for (int capability : new int[] {CAP_SYS_ADMIN, CAP_NET_ADMIN, CAP_NET_RAW}) {
            if ((capabilities & (1L << capability)) == 0) {
                return Optional.of("creating network namespaces and AF_PACKET sockets needs root "
                    + "(CAP_SYS_ADMIN, CAP_NET_ADMIN, CAP_NET_RAW); this process has CapEff=" + Long.toHexString(capabilities));
            }
        }
        return Optional.empty();
    }

    private static long effectiveCapabilities() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("CapEff:")) {
                    return Long.parseUnsignedLong(line.substring("CapEff:".length()).strip(), 16);
                }
            }
        } catch (IOException | NumberFormatException e) {
            return 0;
        }
        return 0;
    }

    public static NetnsHarness create() {
        return create(Options.defaults());
    }

    /** Builds the namespaces and the veth pair; on any failure removes whatever it made and throws. */
    public static NetnsHarness create(Options options) {
        return create(options, harness -> { });
    }

    /** {@link #create(Options)} with one more setup step, run under the same clean-up-on-failure (for tests). */
    static NetnsHarness create(Options options, Consumer<NetnsHarness> extraStep) {
        final NetnsHarness harness = new NetnsHarness(ProcessHandle.current().pid() + "-" + COUNTER.incrementAndGet(), options);
        OPEN.add(harness);
        try {
            harness.build();
            extraStep.accept(harness);
            return harness;
        } catch (RuntimeException | Error e) {
            try {
                harness.close();
            } catch (RuntimeException cleanup) {
                e.addSuppressed(cleanup);
            }
            throw e;
        }
    }

    private void build() {
        tern = NetworkNamespace.create("tern-" + id + "-t");
        peer = NetworkNamespace.create("tern-" + id + "-p");
        wire = options.wire() ? NetworkNamespace.create("tern-" + id + "-w") : null;
        for (NetworkNamespace namespace : wire == null ? List.of(tern, peer) : List.of(tern, peer, wire)) {
            // Before the veth exists, so its ends inherit "default" and never get an IPv6 link-local address.
            namespace.sysctl("net.ipv6.conf.all.disable_ipv6", "1");
            namespace.sysctl("net.ipv6.conf.default.disable_ipv6", "1");
        }
        tern.sysctl("net.ipv4.ip_forward", "0");
        final String mtu = Integer.toString(options.mtu());
        if (wire == null) {
            tern.ip("link", "add", TERN_INTERFACE, "mtu", mtu, "type", "veth", "peer", "name", PEER_INTERFACE, "mtu", mtu,
                "netns", peer.name());
        } else {
            buildWire(mtu);
        }
        peer.ip("address", "add", PEER_ADDRESS + "/" + PREFIX_LENGTH, "dev", PEER_INTERFACE);
        peer.ip("link", "set", "lo", "up");
        peer.ip("link", "set", PEER_INTERFACE, "up");
        tern.ip("link", "set", TERN_INTERFACE, "up");
        if (options.ternOffloads() != null) {
            ternOffloads(options.ternOffloads());
        }
        if (options.peerOffloads() != null) {
            peerOffloads(options.peerOffloads());
        }
        ternMac = readMac(tern, TERN_INTERFACE);
        peerMac = readMac(peer, PEER_INTERFACE);
    }

    /**
     * tern0 &lt;-veth-&gt; wt [bridge br0] wp &lt;-veth-&gt; peer0: the bridge has no address and the wire namespace no
     * other interface, so it forwards between the two ends and nowhere else. No STP (ports forward at once), no
     * multicast snooping (IGMP and multicast cross as on a plain wire).
     */
    private void buildWire(String mtu) {
        tern.ip("link", "add", TERN_INTERFACE, "mtu", mtu, "type", "veth", "peer", "name", WIRE_TERN_PORT, "mtu", mtu,
            "netns", wire.name());
        peer.ip("link", "add", PEER_INTERFACE, "mtu", mtu, "type", "veth", "peer", "name", WIRE_PEER_PORT, "mtu", mtu,
            "netns", wire.name());
        wire.ip("link", "add", "br0", "type", "bridge", "stp_state", "0", "mcast_snooping", "0");
        for (String port : List.of(WIRE_TERN_PORT, WIRE_PEER_PORT)) {
            wire.ip("link", "set", port, "master", "br0");
            wire.ip("link", "set", port, "up");
        }
        wire.ip("link", "set", "br0", "up");
        if (options.ternOffloads() != null) {
            applyOffloads(wire, WIRE_TERN_PORT, options.ternOffloads());
        }
        if (options.peerOffloads() != null) {
            applyOffloads(wire, WIRE_PEER_PORT, options.peerOffloads());
        }
    }

    private static long readMac(NetworkNamespace namespace, String device) {
        final String[] words = namespace.ip("-o", "link", "show", "dev", device).stdout().split("\\s+");
        for (int i = 0; i + 1 < words.length; i++) {
            if (words[i].equals("link/ether")) {
                return parseMac(words[i + 1]);
            }
        }
        throw new NetnsException("no MAC address for " + device + " in " + namespace.name());
    }

    /**
     * A MAC as {@code ip} prints it ({@code 02:00:5e:10:00:01}) in a long, the form of ethernet's {@code MacAddress}:
     * the kit depends on core alone, so that every link module's tests can use it.
     */
    private static long parseMac(String text) {
        return Long.parseLong(text.replace(":", ""), 16);
    }

    /** The reverse of {@link #parseMac}, for {@code ip neighbour}. */
    private static String formatMac(long mac) {
        final byte[] bytes = new byte[6];
        for (int i = 0; i < bytes.length; i++) {
            bytes[i] = (byte) (mac >>> (8 * (5 - i)));
        }
        return MAC.formatHex(bytes);
    }

    public NetworkNamespace ternNamespace() {
        return tern;
    }

    public NetworkNamespace peerNamespace() {
        return peer;
    }

    /** The wire namespace between the ends ({@link Options#wire}), or null when the ends are joined directly. */
    public NetworkNamespace wireNamespace() {
        return wire;
    }

    public Options options() {
        return options;
    }

    /** MAC of the Tern end of the veth ({@value #TERN_INTERFACE}). */
    public long ternMac() {
        return ternMac;
    }

    /** MAC of the kernel peer's end ({@value #PEER_INTERFACE}). */
    public long peerMac() {
        return peerMac;
    }

    /** Applies offload settings to the Tern end now. */
    public void ternOffloads(EthtoolOffloads offloads) {
        applyOffloads(tern, TERN_INTERFACE, offloads);
    }

    /** Applies offload settings to the peer end now. */
    public void peerOffloads(EthtoolOffloads offloads) {
        applyOffloads(peer, PEER_INTERFACE, offloads);
    }

    private static void applyOffloads(NetworkNamespace namespace, String device, EthtoolOffloads offloads) {
        final List<String> command = new ArrayList<>(List.of(Commands.require("ethtool", "ethtool"), "-K", device));
        command.addAll(offloads.ethtoolArguments());
        namespace.exec(COMMAND_TIMEOUT, command.toArray(String[]::new)).orThrow();
    }

    /** Runs a program in the peer namespace and waits for it. */
    public CommandResult peerExec(Duration timeout, String... command) {
        return peer.exec(timeout, command);
    }

    /** Starts a program in the peer namespace; {@link #close()} stops it if the test did not. */
    public BackgroundCommand startInPeer(String... command) {
        return track(peer.start(command));
    }

    /**
     * Sends {@code frame} (a whole Ethernet frame) {@code count} times from the peer's end, {@code gapMicros} apart,
     * through a packet socket (Python's, as the tests' peer scripts use): for frames no tool here writes, such as IPv6
     * SYNs (hping3 has no IPv6). Waits until all are sent.
     */
    public void peerSendFrames(byte[] frame, int count, int gapMicros) {
        final String script = "import socket, sys, time\n"
            + "s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)\n"
            + "s.bind((sys.argv[1], 0))\n"
            + "frame = bytes.fromhex(sys.argv[2])\n"
            + "gap = int(sys.argv[4]) / 1e6\n"
            + "for _ in range(int(sys.argv[3])):\n"
            + "    s.send(frame)\n"
            + "    time.sleep(gap)\n";
        peer.exec(Duration.ofSeconds(60), "/usr/bin/python3", "-c", script, PEER_INTERFACE,
            java.util.HexFormat.of().formatHex(frame), Integer.toString(count), Integer.toString(gapMicros)).orThrow();
    }

    /** Runs a program in the Tern namespace (e.g. {@code ip maddr}) and waits for it. */
    public CommandResult ternExec(Duration timeout, String... command) {
        return tern.exec(timeout, command);
    }

    /** Starts a program in the Tern namespace; {@link #close()} stops it if the test did not. */
    public BackgroundCommand startInTern(String... command) {
        return track(tern.start(command));
    }

    private BackgroundCommand track(BackgroundCommand command) {
        background.add(command);
        return command;
    }

    /**
     * Sets the kernel's TCP congestion control for every connection across the pair, as the {@code congctl} metric of
     * the subnet's route (RFC 2544's 198.18.0.0/24): in the peer namespace, and in the Tern namespace only where its
     * end has a kernel address (a kernel&lt;-&gt;kernel pair; Tern's own end has no route and gets none). Per namespace,
     * like the {@code net.ipv4.tcp_congestion_control} sysctl, but without its limit: a namespace other than the
     * initial one may set that sysctl only to an algorithm in the host's
     * {@code net.ipv4.tcp_allowed_congestion_control} (here reno and bbr: CUBIC is refused with EPERM), while a
     * route's congctl may name any algorithm the kernel has. Nothing outside the namespaces changes. Returns the
     * namespaces whose route now carries it.
     */
    public List<String> kernelCongestionControl(String algorithm) {
        if (!algorithm.matches("[a-z0-9_]{1,15}")) {
            throw new IllegalArgumentException("not a congestion control name: '" + algorithm + "'");
        }
        final List<String> set = new ArrayList<>();
        for (NetworkNamespace namespace : List.of(peer, tern)) {
            final String device = namespace == peer ? PEER_INTERFACE : TERN_INTERFACE;
            final String subnet = "198.18.0.0/" + PREFIX_LENGTH;
            for (String route : namespace.ip("-o", "-4", "route", "show", "dev", device).stdout().lines().toList()) {
                final List<String> words = new ArrayList<>(List.of(route.strip().split("\\s+")));
                if (!words.getFirst().equals(subnet)) {
                    continue;
                }
                final int old = words.indexOf("congctl");
                if (old >= 0) {
                    words.subList(old, words.get(old + 1).equals("lock") ? old + 3 : old + 2).clear();
                }
                final List<String> replace = new ArrayList<>(List.of("route", "replace", subnet, "dev", device));
                replace.addAll(words.subList(1, words.size()));
                replace.addAll(List.of("congctl", algorithm));
                namespace.ip(replace.toArray(String[]::new));
                set.add(namespace.name());
            }
        }
        return set;
    }

    /** Gives the peer a permanent neighbour entry, so it sends to {@code address} without asking ARP first. */
    public void peerNeighbour(String address, long mac) {
        peer.ip("neighbour", "replace", address, "lladdr", formatMac(mac), "dev", PEER_INTERFACE, "nud", "permanent");
    }

    /** A counter of the peer's interface from {@code /sys/class/net/peer0/statistics} (rx_packets, tx_bytes, ...). */
    public long peerInterfaceCounter(String statistic) {
        return Long.parseLong(peer.exec(COMMAND_TIMEOUT, "cat", "/sys/class/net/" + PEER_INTERFACE + "/statistics/" + statistic)
            .orThrow().stdout().strip());
    }

    /**
     * Opens a link on {@value #TERN_INTERFACE} inside the Tern namespace (setns on this thread; the socket stays in the
     * namespace): {@code open} is given the device name and {@code linkOptions}, as in
     * {@code openTernLink(AfPacketLink::open, AfPacketOptions.defaults())}. {@link #close()} closes it too.
     */
    public <O, L extends AutoCloseable> L openTernLink(BiFunction<String, O, L> open, O linkOptions) {
        return openLink(tern, TERN_INTERFACE, open, linkOptions);
    }

    /**
     * Opens a link on the peer's end, as {@link #openTernLink}. For tests that need a raw frame source or sink on the
     * peer side (load generation, fanout, zero-allocation runs); the peer's kernel stack still sees every frame.
     */
    public <O, L extends AutoCloseable> L openPeerLink(BiFunction<String, O, L> open, O linkOptions) {
        return openLink(peer, PEER_INTERFACE, open, linkOptions);
    }

    private <O, L extends AutoCloseable> L openLink(NetworkNamespace namespace, String device,
                                                    BiFunction<String, O, L> open, O linkOptions) {
        final Supplier<L> inside = () -> open.apply(device, linkOptions);
        final L link = namespace.call(inside);
        links.add(link);
        return link;
    }

    public boolean isClosed() {
        return closed;
    }

    /** Stops background programs, closes links, deletes both namespaces. Idempotent; safe from any thread. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        final List<RuntimeException> failures = new ArrayList<>();
        for (BackgroundCommand command : background) {
            attempt(command::close, failures);
        }
        for (AutoCloseable link : links) {
            attempt(() -> closeLink(link), failures);
        }
        if (peer != null) {
            attempt(peer::close, failures);
        }
        if (wire != null) {
            attempt(wire::close, failures);
        }
        if (tern != null) {
            attempt(tern::close, failures);
        }
        OPEN.remove(this);
        if (!failures.isEmpty()) {
            final NetnsException error = new NetnsException("cleaning up harness " + id + " failed: " + failures.getFirst().getMessage());
            failures.forEach(error::addSuppressed);
            throw error;
        }
    }

    private static void closeLink(AutoCloseable link) {
        try {
            link.close();
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new NetnsException("closing " + link + " failed: " + e.getMessage(), e);
        }
    }

    private static void attempt(Runnable step, List<RuntimeException> failures) {
        try {
            step.run();
        } catch (RuntimeException e) {
            failures.add(e);
        }
    }

    private static void closeAllOpen() {
        for (NetnsHarness harness : OPEN) {
            try {
                harness.close();
            } catch (RuntimeException e) {
                System.err.println("tern: " + e.getMessage());
            }
        }
    }

    @Override
    public String toString() {
        return "netns harness " + id + " (" + (tern == null ? "-" : tern.name()) + " <-> " + (peer == null ? "-" : peer.name()) + ")";
    }
}
