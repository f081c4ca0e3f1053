package dev.tern.conformance.interop;

import dev.tern.core.net.Ipv6Address;
import dev.tern.core.net.Ipv6InterfaceAddress;
import dev.tern.ethernet.wire.MacAddress;
import dev.tern.ipv6.Ipv6Config;
import dev.tern.testkit.netns.CommandResult;
import dev.tern.testkit.netns.NetnsHarness;
import dev.tern.testkit.netns.NetworkNamespace;
import dev.tern.testkit.netns.BackgroundCommand;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.concurrent.locks.LockSupport;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * IPv6 between Tern and the Linux kernel over veth: the kernel resolves Tern's addresses by neighbour discovery
 * (RFC 4861) and pings them (RFC 4443 echo), global and link-local; Tern resolves the kernel in turn to send its
 * replies. Only the kernel's end of the pair has IPv6 enabled: the kernel in Tern's namespace never answers for it.
 */
class Ipv6InteropTest extends VethRigTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(20);
    static final String TERN = "2001:db8::2";
    static final String PEER = "2001:db8::1";
    private static final Pattern SUMMARY = Pattern.compile("(\\d+) packets transmitted, (\\d+) received");

    /** The veth pair with IPv6 on the kernel's end only, 2001:db8::1/64 (no DAD: the test owns the link). */
    private void createRig() {
        createRig(VethSetup.DEFAULT);
    }

    private void createRig(VethSetup setup) {
        rig = VethRig.create(setup);
        enablePeerIpv6(rig);
    }

    /** IPv6 on the kernel's end of {@code rig}'s pair only: {@link #PEER}/64, without DAD (the test owns the link). */
    static void enablePeerIpv6(VethRig rig) {
        final NetnsHarness net = rig.net();
        net.peerExec(TIMEOUT, "sysctl", "-qw", "net.ipv6.conf." + NetnsHarness.PEER_INTERFACE + ".disable_ipv6=0")
            .orThrow();
        net.peerExec(TIMEOUT, "ip", "-6", "address", "add", PEER + "/64", "dev", NetnsHarness.PEER_INTERFACE, "nodad")
            .orThrow();
    }

    private void startTern() {
        createRig();
        rig.startTernRunner(b -> b.ipv6(Ipv6Config.withAddresses(List.of(Ipv6InterfaceAddress.parse(TERN + "/64")))));
        final long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        while (rig.counter("nd.dad.completed") < 2 && System.nanoTime() - deadline < 0) {
            Thread.onSpinWait();
        }
        assertEquals(2, rig.counter("nd.dad.completed"), "both of Tern's addresses passed DAD");
        assertEquals(0, rig.counter("nd.dad.duplicates"));
    }

    private CommandResult ping6(String address, int count) {
        return ping6(address, count, 100);
    }

    private CommandResult ping6(String address, int count, int size) {
        return rig.net().peerExec(TIMEOUT, "ping", "-6", "-n", "-c", Integer.toString(count), "-i", "0.05", "-W", "2",
            "-s", Integer.toString(size), address);
    }

    private static int[] sentAndReceived(CommandResult ping) {
        final Matcher m = SUMMARY.matcher(ping.stdout());
        assertTrue(m.find(), ping.stdout() + ping.stderr());
        return new int[]{Integer.parseInt(m.group(1)), Integer.parseInt(m.group(2))};
    }

    /** The kernel's IPv6 MIB counters ({@code /proc/net/snmp6}: one "name value" per line), read in its namespace. */
    private Map<String, Long> snmp6() {
        final String text = rig.net().peerNamespace().call(() -> {
            try {
                return Files.readString(Path.of("/proc/thread-self/net/snmp6"));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
        final Map<String, Long> values = new HashMap<>();
        text.lines().map(l -> l.trim().split("\\s+")).filter(w -> w.length == 2)
            .forEach(w -> values.put(w[0], Long.parseLong(w[1])));
        return values;
    }

    @Test
    void kernelResolvesAndPingsTernsGlobalAddress() {
        startTern();
        final Map<String, Long> before = snmp6();
        final CommandResult ping = ping6(TERN, 5);
        final int[] counts = sentAndReceived(ping);
        assertEquals(5, counts[0], ping.stdout());
        assertEquals(5, counts[1], "every echo answered: " + ping.stdout());
        assertTrue(!ping.stdout().contains("DUP!") && !ping.stdout().contains("wrong data"), ping.stdout());
        final String neighbour = rig.net().peerExec(TIMEOUT, "ip", "-6", "neigh", "show", TERN, "dev",
            NetnsHarness.PEER_INTERFACE).orThrow().stdout();
        assertTrue(neighbour.contains("lladdr " + MacAddress.format(rig.ternMac())), neighbour);
        final Map<String, Long> after = snmp6();
        assertEquals(5, after.get("Icmp6InEchoReplies") - before.get("Icmp6InEchoReplies"));
        assertEquals(0, after.get("Icmp6InErrors") - before.get("Icmp6InErrors"), "Tern's ICMPv6 checksums are right");
        assertEquals(0, after.get("Ip6InHdrErrors") - before.get("Ip6InHdrErrors"));
        assertTrue(after.get("Icmp6InNeighborAdvertisements") - before.get("Icmp6InNeighborAdvertisements") >= 1);
        assertEquals(5, rig.counter("icmp6.rx.echo_requests"));
        assertEquals(5, rig.counter("icmp6.tx.echo_replies"));
        assertTrue(rig.counter("nd.tx.advertisements") >= 1);
        assertEquals(0, rig.counter("icmp6.drop.bad_checksum"), "the kernel's checksums are right too");
        assertEquals(0, rig.counter("nd.drop.invalid"));
        assertEquals(0, rig.counter("stack.internal_errors"));
    }

    /**
     * A switch that snoops MLD learns Tern's solicited-node groups from its MLDv2 reports (RFC 3810, RFC 4541): the
     * kernel's bridge between the two ends, snooping on, lists them on Tern's port, so solicitations for Tern's
     * addresses will be forwarded to it.
     */
    @Test
    void aSnoopingBridgeLearnsTernsGroupsFromItsMldReports() {
        rig = VethRig.create(VethSetup.DEFAULT, true);
        final NetworkNamespace wire = rig.net().wireNamespace();
        wire.ip("link", "set", "br0", "type", "bridge", "mcast_snooping", "1").orThrow();
        rig.startTernRunner(b -> b.ipv6(Ipv6Config.withAddresses(List.of(Ipv6InterfaceAddress.parse(TERN + "/64")))));
        final long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        String mdb = "";
        while (System.nanoTime() - deadline < 0 && !mdb.contains("grp ff02::1:ff00:2")) {
            mdb = wire.exec(TIMEOUT, "bridge", "mdb", "show", "dev", "br0").orThrow().stdout();
            LockSupport.parkNanos(50_000_000L);
        }
        assertTrue(mdb.contains("port " + NetnsHarness.WIRE_TERN_PORT + " grp ff02::1:ff00:2"), mdb);
        assertTrue(rig.counter("mld.tx.reports") >= 1);
    }

    static java.util.stream.Stream<VethSetup> multicastLinks() {
        return java.util.stream.Stream.of(VethSetup.DEFAULT, VethSetup.afXdp(1500, false));
    }

    /** Sends {@code count} datagrams "n" to [group]:port from the peer's kernel, out of its interface, hop limit 1. */
    private static final String MULTICAST_SENDER = String.join("\n",
        "import socket, sys",
        "s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)",
        "s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_MULTICAST_IF, socket.if_nametoindex(sys.argv[3]))",
        "s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_MULTICAST_HOPS, 1)",
        "for i in range(int(sys.argv[4])):",
        "    s.sendto(b'datagram %d' % i, (sys.argv[1], int(sys.argv[2])))");

    /** The bridge's multicast database on its port to Tern's end, polled until it does or does not list the group. */
    private boolean bridgeListsGroup(NetworkNamespace wire, String group, boolean listed) {
        final long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        while (System.nanoTime() - deadline < 0) {
            final String mdb = wire.exec(TIMEOUT, "bridge", "mdb", "show", "dev", "br0").orThrow().stdout();
            if (mdb.contains("port " + NetnsHarness.WIRE_TERN_PORT + " grp " + group) == listed) {
                return true;
            }
            LockSupport.parkNanos(50_000_000L);
        }
        return false;
    }

    /**
     * An application's group over MLDv2 as the kernel sees it: a Tern UDP socket joins ff0e::1:2 (IPV6_JOIN_GROUP)
     * and the kernel's snooping bridge lists the group on Tern's port; the peer's kernel sends datagrams to the group,
     * and the socket receives each; on leave the bridge (fast leave on that port) removes the group. On AF_PACKET and
     * on AF_XDP, whose program hands Tern the group's frames from its group map.
     */
    @org.junit.jupiter.params.ParameterizedTest(name = "{0}")
    @org.junit.jupiter.params.provider.MethodSource("multicastLinks")
    void aGroupTernJoinsAndLeavesIsSeenByTheKernelsSnoopingBridgeAndItsDatagramsArrive(VethSetup setup)
        throws Exception {
        rig = VethRig.create(setup, true);
        enablePeerIpv6(rig);
        final NetworkNamespace wire = rig.net().wireNamespace();
        wire.ip("link", "set", "br0", "type", "bridge", "mcast_snooping", "1").orThrow();
        wire.exec(TIMEOUT, "bridge", "link", "set", "dev", NetnsHarness.WIRE_TERN_PORT, "fastleave", "on").orThrow();
        final dev.tern.stack.NetStack stack = startTernRunnerOnRig();
        final String group = "ff0e::1:2";
        final dev.tern.stack.UdpSocket socket = stack.openUdp6();
        socket.bind(Ipv6Address.UNSPECIFIED, 5000);
        socket.join(Ipv6Address.parse(group));
        assertTrue(bridgeListsGroup(wire, group, true), "the bridge learnt Tern's join from its MLDv2 report");

        rig.net().peerExec(TIMEOUT, "python3", "-c", MULTICAST_SENDER, group, "5000", NetnsHarness.PEER_INTERFACE, "5")
            .orThrow();
        final java.lang.foreign.MemorySegment buffer = java.lang.foreign.Arena.ofAuto().allocate(64);
        for (int i = 0; i < 5; i++) {
            final int length = socket.receive(buffer, 0, 64, 2 * SECOND_NS);
            assertEquals("datagram " + i, new String(buffer.asSlice(0, Math.max(length, 0))
                .toArray(java.lang.foreign.ValueLayout.JAVA_BYTE), java.nio.charset.StandardCharsets.US_ASCII));
        }
        assertEquals(5, rig.counter("udp.rx.ipv6_multicast_datagrams"));

        socket.leave(Ipv6Address.parse(group));
        assertTrue(bridgeListsGroup(wire, group, false), "the bridge dropped the group on Tern's leave");
        socket.close();
        assertEquals(0, rig.counter("stack.internal_errors"));
    }

    /**
     * A router that exists only as frames on the kernel's end of {@code rig} advertises {@code prefix}/64 to all
     * nodes: on-link and autonomous, valid a day; router lifetime 0 (a prefix, not a default router).
     */
    static void advertisePrefix(VethRig rig, Ipv6Address prefix) {
        final Ipv6Address routerAddress = Ipv6Address.linkLocal(CraftedHost.MAC);
        final java.nio.ByteBuffer options = java.nio.ByteBuffer.allocate(8 + 32 + 8);
        options.putInt(0).putInt(0); // reachable time and retransmission timer: unspecified
        options.put((byte) 3).put((byte) 4).put((byte) 64).put((byte) 0xC0).putInt(86_400).putInt(14_400).putInt(0)
            .putLong(prefix.high()).putLong(prefix.low()); // prefix information: on-link, autonomous
        options.put((byte) 1).put((byte) 1).putShort((short) (CraftedHost.MAC >>> 32)).putInt((int) CraftedHost.MAC);
        final CraftedHost router = CraftedHost.onPeerEnd(rig.net());
        // Hop limit 64 for its own packets, no flags, router lifetime 0.
        router.sendIpv6(Ipv6Address.multicastMac(Ipv6Address.ALL_NODES.low()), dev.tern.stack.testing.Ipv6Frames
            .icmpPacket(routerAddress, Ipv6Address.ALL_NODES, 255, 134, 0, 64 << 24, options.array()));
    }

    /**
     * SLAAC from a router advertisement on the wire (RFC 4862 §5.5.3): a router that exists only as frames on the
     * kernel's end advertises 2001:db8:1::/64 (autonomous, on-link); Tern forms the address from the prefix and its
     * modified EUI-64, checks it by DAD, and the kernel, on the same prefix, reaches it by neighbour discovery and ping.
     */
    @Test
    void slaacFormsAnAddressFromAWireRoutersAdvertisementThatTheKernelThenPings() {
        createRig();
        rig.net().peerExec(TIMEOUT, "ip", "-6", "address", "add", "2001:db8:1::1/64", "dev",
            NetnsHarness.PEER_INTERFACE, "nodad").orThrow();
        final dev.tern.stack.NetStack stack = rig.startTernRunner(b -> b.ipv6(Ipv6Config.withAddresses(
            List.of(Ipv6InterfaceAddress.parse(TERN + "/64"))).withSlaac(true)));
        final long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        while (rig.counter("nd.dad.completed") < 2 && System.nanoTime() - deadline < 0) {
            LockSupport.parkNanos(10_000_000L);
        }
        final Ipv6Address prefix = Ipv6Address.parse("2001:db8:1::");
        advertisePrefix(rig, prefix);
        final Ipv6Address formed = new Ipv6Address(prefix.high(), Ipv6Address.linkLocal(stack.macAddress()).low());
        final long formedBy = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (rig.counter("nd.dad.completed") < 3 && System.nanoTime() - formedBy < 0) {
            LockSupport.parkNanos(10_000_000L);
        }
        assertEquals(1, rig.counter("nd.slaac.addresses"), "one address formed from the prefix");
        assertEquals(3, rig.counter("nd.dad.completed"), "and checked by DAD");
        final CommandResult ping = ping6(formed.toString(), 3);
        assertEquals(3, sentAndReceived(ping)[1], formed + ": " + ping.stdout() + ping.stderr());
    }

    /** Large echoes cross in fragments both ways: the kernel's reassembled by Tern, Tern's by the kernel. */
    @Test
    void largePingsCrossInFragmentsBothWays() {
        startTern();
        final Map<String, Long> before = snmp6();
        for (int size : new int[]{1453, 3000, 20000, 65000}) {
            final CommandResult ping = ping6(TERN, 3, size);
            final int[] counts = sentAndReceived(ping);
            assertEquals(3, counts[1], size + " bytes: " + ping.stdout());
            assertTrue(!ping.stdout().contains("DUP!") && !ping.stdout().contains("wrong data"), ping.stdout());
        }
        final Map<String, Long> after = snmp6();
        assertEquals(12, after.get("Ip6ReasmOKs") - before.get("Ip6ReasmOKs"), "the kernel reassembled every reply");
        assertEquals(0, after.get("Ip6ReasmFails") - before.get("Ip6ReasmFails"));
        assertEquals(12, rig.counter("ipv6.reasm.ok"), "Tern reassembled every request");
        assertEquals(12, rig.counter("ipv6.tx.fragmented_packets"));
        assertEquals(0, rig.counter("ipv6.reasm.bad_fragments"));
    }

    @Test
    void kernelPingsTernsLinkLocalAddress() {
        startTern();
        final String linkLocal = Ipv6Address.linkLocal(rig.ternMac()) + "%" + NetnsHarness.PEER_INTERFACE;
        final CommandResult ping = ping6(linkLocal, 3);
        final int[] counts = sentAndReceived(ping);
        assertEquals(3, counts[1], "every echo answered: " + ping.stdout());
        assertEquals(3, rig.counter("icmp6.tx.echo_replies"));
    }

    /** The kernel's own IPv6 address on Tern's interface, in the AF_XDP case. */
    private static final String KERNEL_ON_TERNS_INTERFACE = "2001:db8::3";

    /**
     * AF_XDP on an interface whose kernel keeps IPv6 of its own (the same MAC, its EUI-64 link-local address and
     * 2001:db8::3): the steering program hands Tern its own addresses and the ND about them, and the kernel the rest.
     * The peer resolves and pings all four addresses, each answered by its owner once; Tern's link-local address is
     * opaque (RFC 7217), not the kernel's; and 32 MiB go from the peer's kernel to Tern over TCP, intact.
     */
    @Test
    void overAfXdpTernAndTheKernelEachKeepTheirOwnIpv6AddressesOnOneInterface() throws Exception {
        createRig(VethSetup.afXdp(1500, false));
        final NetnsHarness net = rig.net();
        final String device = NetnsHarness.TERN_INTERFACE;
        net.ternExec(TIMEOUT, "sysctl", "-qw", "net.ipv6.conf." + device + ".accept_dad=0").orThrow();
        net.ternExec(TIMEOUT, "sysctl", "-qw", "net.ipv6.conf." + device + ".disable_ipv6=0").orThrow();
        net.ternExec(TIMEOUT, "ip", "-6", "address", "add", KERNEL_ON_TERNS_INTERFACE + "/64", "dev", device,
            "nodad").orThrow();
        final dev.tern.stack.NetStack stack = startTernRunnerOnRig();
        assertEquals(0, rig.counter("nd.dad.duplicates"));

        // Row 0 is written when the stack is built, before its thread starts, and never changes.
        final Ipv6Address ternLinkLocal = stack.ipv6().addresses().address(0).address();
        final Ipv6Address kernelLinkLocal = Ipv6Address.linkLocal(rig.ternMac());
        final String kernelAddresses = net.ternExec(TIMEOUT, "ip", "-6", "-o", "address", "show", "dev", device)
            .orThrow().stdout();
        assertTrue(kernelAddresses.contains(kernelLinkLocal + "/64"), "the kernel's EUI-64 link-local: "
            + kernelAddresses);
        assertTrue(!ternLinkLocal.equals(kernelLinkLocal) && Ipv6Address.isLinkLocal(ternLinkLocal.high()),
            "Tern's link-local address is its own: " + ternLinkLocal);

        final String scope = "%" + NetnsHarness.PEER_INTERFACE;
        for (String address : List.of(TERN, ternLinkLocal + scope, KERNEL_ON_TERNS_INTERFACE,
            kernelLinkLocal + scope)) {
            final CommandResult ping = ping6(address, 3);
            assertEquals(3, sentAndReceived(ping)[1], address + ": " + ping.stdout() + ping.stderr());
            assertTrue(!ping.stdout().contains("DUP!"), "answered once: " + ping.stdout());
        }
        assertEquals(6, rig.counter("icmp6.tx.echo_replies"), "Tern answered its own two addresses only");
        final String neighbours = net.peerExec(TIMEOUT, "ip", "-6", "neigh", "show", "dev",
            NetnsHarness.PEER_INTERFACE).orThrow().stdout();
        assertTrue(neighbours.contains(TERN + " lladdr") && neighbours.contains(KERNEL_ON_TERNS_INTERFACE + " lladdr"),
            "the peer resolved both: " + neighbours);

        kernelSendsToTern(stack, 32L << 20);
        assertEquals(0, rig.counter("stack.internal_errors"));
    }

    @Test
    void ternDoesNotAnswerForAnAddressItDoesNotHold() {
        startTern();
        final CommandResult ping = ping6("2001:db8::9", 2);
        assertEquals(0, sentAndReceived(ping)[1], ping.stdout());
        assertEquals(0, rig.counter("nd.tx.advertisements"));
        assertEquals(0, rig.counter("icmp6.tx.echo_replies"));
    }

    /** The command a user runs: {@code tern serve --ip6} answers the kernel's ping over IPv6 and counts it. */
    @Test
    void ternServeWithIp6AnswersTheKernelsPing(@TempDir Path counters) {
        createRig();
        final BackgroundCommand serve = rig.net().startInTern(TernCommandInteropTest.tern(counters, "serve", "--link",
            "afpacket:" + NetnsHarness.TERN_INTERFACE, "--ip", VethRig.TERN_CIDR, "--ip6", TERN + "/64")
            .toArray(String[]::new));
        serve.awaitOutput("answering ARP and ping", Duration.ofSeconds(30));
        CommandResult ping = ping6(TERN, 3);
        for (int attempt = 0; attempt < 10 && sentAndReceived(ping)[1] == 0; attempt++) {
            ping = ping6(TERN, 3); // DAD holds the address back for a second after the command starts
        }
        assertTrue(sentAndReceived(ping)[1] >= 2, ping.stdout());
        final CommandResult stat = rig.net().ternExec(Duration.ofSeconds(60), TernCommandInteropTest.tern(counters,
            "stat").toArray(String[]::new));
        assertTrue(stat.stdout().contains("icmp6.tx.echo_replies"), stat.stdout() + stat.stderr());
        assertTrue(stat.stdout().contains("nd.dad.completed"), stat.stdout());
        final int status = serve.stop();
        assertTrue(status == 0 || status == 128 + 15, "serve ends on SIGTERM: " + status + serve.stderr());
        assertTrue(!serve.stderr().contains("Exception"), serve.stderr());
    }

    // ------------------------------------------------------------------------------------------------------ UDP

    /** Datagram sizes: one frame, the largest in one frame at MTU 1500 (1500 - 40 - 8), fragments, the maximum. */
    private static final int[] UDP_SIZES = {1, 1452, 1453, 3000, 20000, 65527};
    private static final int FRAGMENTED = 4;
    private static final long SECOND_NS = 1_000_000_000L;

    /**
     * {@code tern serve --ip6 --echo 7 --discard 9} as a user runs it: the kernel's IPv6 client and its IPv4 client both
     * get their bytes back from the one listener (a dual-stack server), and the discard service takes 16 MiB.
     */
    @Test
    void ternServeEchoesTheKernelsTcpClientsOverIpv6AndIpv4(@TempDir Path counters) {
        createRig();
        final BackgroundCommand serve = rig.net().startInTern(TernCommandInteropTest.tern(counters, "serve", "--link",
            "afpacket:" + NetnsHarness.TERN_INTERFACE, "--ip", VethRig.TERN_CIDR, "--ip6", TERN + "/64",
            "--echo", "7", "--discard", "9").toArray(String[]::new));
        serve.awaitOutput("TCP discard on port 9", Duration.ofSeconds(30));
        CommandResult ping = ping6(TERN, 1);
        for (int attempt = 0; attempt < 10 && sentAndReceived(ping)[1] == 0; attempt++) {
            ping = ping6(TERN, 1); // DAD holds the address back for a second after the command starts
        }
        for (String host : List.of(TERN, NetnsHarness.TERN_ADDRESS)) {
            final CommandResult client = rig.kernel().runPeerPy(Duration.ofSeconds(60), "tcp-source", host, "7",
                Integer.toString(4 << 20), "45");
            final String sent = KernelPeer.line(client.stdout(), "sent");
            assertTrue(sent.startsWith("sent " + (4 << 20) + " "), host + ": " + client.stdout() + client.stderr());
            assertEquals(sent.replace("sent", "received"), KernelPeer.line(client.stdout(), "received"),
                host + ": echoed intact");
        }
        final CommandResult discard = rig.kernel().runPeerPy(Duration.ofSeconds(60), "tcp-source", TERN, "9",
            Integer.toString(16 << 20), "45");
        assertTrue(KernelPeer.line(discard.stdout(), "sent").startsWith("sent " + (16 << 20) + " "),
            discard.stdout() + discard.stderr());
        final int status = serve.stop();
        assertTrue(status == 0 || status == 128 + 15, "serve ends on SIGTERM: " + status + serve.stderr());
        assertTrue(!serve.stderr().contains("Exception"), serve.stderr());
    }

    /**
     * {@code tern nc --ip6 HOST PORT} to the kernel over IPv6 as a user runs it: a 2 MB file to its TCP sink (sha-256
     * on the kernel's side), then, with {@code -u}, a line to its UDP echo, which comes back on stdout.
     */
    @Test
    void ternNcSendsAFileOverTcpAndALineOverUdpToTheKernelOverIpv6(@TempDir Path counters, @TempDir Path files)
        throws Exception {
        createRig();
        final byte[] content = new byte[2_000_000];
        new java.util.SplittableRandom(9).nextBytes(content);
        final Path input = Files.write(files.resolve("input.bin"), content);
        final BackgroundCommand sink = rig.kernel().startPeerPy("tcp-sink", "5001", "30", "0", "::");
        final List<String> nc = TernCommandInteropTest.tern(counters, "nc", "-w", "2", "--link",
            "afpacket:" + NetnsHarness.TERN_INTERFACE, "--ip", VethRig.TERN_CIDR, "--ip6", TERN + "/64", PEER, "5001");
        final CommandResult result = rig.net().ternExec(Duration.ofSeconds(60), "sh", "-c", "exec "
            + String.join(" ", nc.stream().map(TernCommandInteropTest::quoted).toList()) + " < "
            + TernCommandInteropTest.quoted(input.toString()));
        assertEquals(0, result.exitCode(), result.stdout() + result.stderr());
        assertEquals(0, sink.awaitExit(Duration.ofSeconds(10)));
        assertEquals("received " + content.length + " " + TernCommandInteropTest.sha256(content),
            KernelPeer.line(sink.stdout(), "received"), sink.stdout() + sink.stderr());

        final BackgroundCommand echo = rig.kernel().startPeerPy("udp-echo", "7", "30", "::");
        final List<String> udp = TernCommandInteropTest.tern(counters, "nc", "-u", "-w", "2", "--link",
            "afpacket:" + NetnsHarness.TERN_INTERFACE, "--ip", VethRig.TERN_CIDR, "--ip6", TERN + "/64", PEER, "7");
        final CommandResult line = rig.net().ternExec(Duration.ofSeconds(60), "sh", "-c", "printf 'over six\\n' | exec "
            + String.join(" ", udp.stream().map(TernCommandInteropTest::quoted).toList()));
        assertEquals(0, line.exitCode(), line.stdout() + line.stderr());
        assertEquals("over six", line.stdout().strip(), line.stderr());
        echo.stop();
        assertTrue(echo.stdout().contains("echoed 1"), echo.stdout() + echo.stderr());
    }

    /**
     * The peer's three datagrams to a UDP listener: IPv4 to Tern's address, IPv6 to the group Tern joined, IPv6 to
     * Tern's address from a socket that then waits for the answer; prints the answer.
     */
    private static final String THREE_SENDERS = String.join("\n",
        "import socket, sys, time",
        "v4 = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)",
        "v4.sendto(b'four\\n', (sys.argv[1], 5000))",
        "g = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)",
        "g.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_MULTICAST_IF, socket.if_nametoindex(sys.argv[4]))",
        "g.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_MULTICAST_HOPS, 1)",
        "g.sendto(b'group\\n', (sys.argv[3], 5000))",
        "time.sleep(0.2)",
        "s6 = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)",
        "s6.settimeout(20)",
        "s6.sendto(b'six\\n', (sys.argv[2], 5000))",
        "print(s6.recvfrom(100)[0].decode().strip(), flush=True)");

    /**
     * {@code tern nc -u -l} with {@code --ip6} and an IPv6 {@code --join}: one listener takes the kernel's IPv4
     * datagram, its datagram to the group and its IPv6 datagram, prints each, and answers the last sender, over IPv6,
     * with its standard input.
     */
    @Test
    void ternNcUdpListenerTakesBothFamiliesAndAGroupAndAnswersTheLastSenderOverIpv6(@TempDir Path counters)
        throws Exception {
        createRig();
        final String group = "ff0e::1:2";
        final List<String> nc = TernCommandInteropTest.tern(counters, "nc", "-u", "-l", "--link",
            "afpacket:" + NetnsHarness.TERN_INTERFACE, "--ip", VethRig.TERN_CIDR, "--ip6", TERN + "/64", "--join", group,
            "5000");
        final BackgroundCommand listener = rig.net().startInTern("sh", "-c", "(sleep 10; printf 'back\\n'; sleep 20) | exec "
            + String.join(" ", nc.stream().map(TernCommandInteropTest::quoted).toList()));
        CommandResult ping = ping6(TERN, 1);
        for (int attempt = 0; attempt < 40 && sentAndReceived(ping)[1] == 0; attempt++) {
            ping = ping6(TERN, 1); // the command starts, and DAD holds the address back for a second
        }
        assertEquals(1, sentAndReceived(ping)[1], "Tern's address answers: " + listener.stderr());
        final CommandResult peer = rig.net().peerExec(Duration.ofSeconds(30), "python3", "-c", THREE_SENDERS,
            NetnsHarness.TERN_ADDRESS, TERN, group, NetnsHarness.PEER_INTERFACE);
        assertEquals(0, peer.exitCode(), peer.stdout() + peer.stderr() + listener.stderr());
        assertEquals("back", peer.stdout().strip(), "the listener answered the last sender over IPv6");
        listener.stop();
        // The IPv4 datagram waits for the peer's ARP, so it may come after the group's.
        assertEquals(List.of("four", "group", "six"), listener.stdout().lines().sorted().toList(), listener.stderr());
    }

    /** {@code tern serve --ip6 --udp-echo}: the kernel's IPv6 client gets every datagram back, whole and checked. */
    @Test
    void ternServeEchoesTheKernelsIpv6DatagramsWholeWithChecksumsItAccepts(@TempDir Path counters) {
        createRig();
        final BackgroundCommand serve = rig.net().startInTern(TernCommandInteropTest.tern(counters, "serve", "--link",
            "afpacket:" + NetnsHarness.TERN_INTERFACE, "--ip", VethRig.TERN_CIDR, "--ip6", TERN + "/64",
            "--udp-echo", "7").toArray(String[]::new));
        serve.awaitOutput("UDP echo on port 7 (IPv4 and IPv6)", Duration.ofSeconds(30));
        CommandResult ping = ping6(TERN, 1);
        for (int attempt = 0; attempt < 10 && sentAndReceived(ping)[1] == 0; attempt++) {
            ping = ping6(TERN, 1); // DAD holds the address back for a second after the command starts
        }
        final Map<String, Long> before = snmp6();
        final List<String> arguments = new java.util.ArrayList<>(List.of("udp-client", TERN, "7", "3"));
        java.util.stream.IntStream.of(UDP_SIZES).forEach(size -> arguments.add(Integer.toString(size)));
        final CommandResult client = rig.kernel().runPeerPy(Duration.ofSeconds(40), arguments.toArray(String[]::new));
        final Map<String, Long> after = snmp6();
        assertEquals(java.util.stream.IntStream.of(UDP_SIZES).mapToObj(size -> size + " ok").toList(),
            client.stdout().lines().toList(), client.stderr());
        assertEquals(UDP_SIZES.length, after.get("Udp6InDatagrams") - before.get("Udp6InDatagrams"));
        assertEquals(0, after.get("Udp6InCsumErrors") - before.get("Udp6InCsumErrors"), "Tern's checksums are right");
        assertEquals(FRAGMENTED, after.get("Ip6ReasmOKs") - before.get("Ip6ReasmOKs"), "the kernel reassembled Tern's");
        final CommandResult stat = rig.net().ternExec(Duration.ofSeconds(60), TernCommandInteropTest.tern(counters,
            "stat").toArray(String[]::new));
        assertTrue(Pattern.compile("udp\\.rx\\.ipv6_datagrams\\s+" + UDP_SIZES.length + "\\b").matcher(stat.stdout()).find(),
            stat.stdout() + stat.stderr());
        assertTrue(Pattern.compile("ipv6\\.reasm\\.ok\\s+" + FRAGMENTED + "\\b").matcher(stat.stdout()).find(),
            stat.stdout());
        final int status = serve.stop();
        assertTrue(status == 0 || status == 128 + 15, "serve ends on SIGTERM: " + status + serve.stderr());
    }

    /** Tern's IPv6 socket against the kernel's echo server, then against a closed port of the kernel's and back. */
    @Test
    void ternsIpv6DatagramsComeBackFromTheKernelAndClosedPortsAreRefusedBothWays() throws Exception {
        createRig();
        final dev.tern.stack.NetStack stack = rig.startTernHere(b -> b.ipv6(
            Ipv6Config.withAddresses(List.of(Ipv6InterfaceAddress.parse(TERN + "/64")))));
        assertTrue(rig.pollUntil(() -> rig.counter("nd.dad.completed") >= 2, Duration.ofSeconds(5)), "DAD done");
        final BackgroundCommand echo = rig.kernel().startPeerPyPolling(rig, "udp-echo", "7", "30", "::");
        final Map<String, Long> before = snmp6();
        try (dev.tern.stack.UdpSocket socket = stack.openUdp6();
             java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofConfined()) {
            socket.connect(Ipv6Address.parse(PEER), 7);
            final java.lang.foreign.MemorySegment buffer = arena.allocate(65536);
            for (int i = 0; i < UDP_SIZES.length; i++) {
                final byte[] payload = new byte[UDP_SIZES[i]];
                for (int k = 0; k < payload.length; k++) {
                    payload[k] = (byte) (k * 7 + i);
                }
                assertTrue(socket.send(java.lang.foreign.MemorySegment.ofArray(payload), 0, payload.length));
                final int length = socket.receive(buffer, 0, 65536, 3 * SECOND_NS);
                assertEquals(UDP_SIZES[i], length, "the echo of the " + UDP_SIZES[i] + "-byte datagram came back whole");
                assertEquals(-1L, buffer.asSlice(0, length).mismatch(java.lang.foreign.MemorySegment.ofArray(payload)));
                assertEquals(Ipv6Address.parse(PEER), socket.lastSource6());
            }
        }
        echo.stop();
        final Map<String, Long> after = snmp6();
        assertEquals(0, after.get("Udp6InCsumErrors") - before.get("Udp6InCsumErrors"));
        assertEquals(FRAGMENTED, after.get("Ip6ReasmOKs") - before.get("Ip6ReasmOKs"));
        assertEquals(FRAGMENTED, rig.counter("ipv6.reasm.ok"), "Tern reassembled the kernel's echoes");

        try (dev.tern.stack.UdpSocket socket = stack.openUdp6();
             java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofConfined()) {
            socket.connect(Ipv6Address.parse(PEER), 9);
            assertTrue(socket.send(java.lang.foreign.MemorySegment.ofArray(new byte[100]), 0, 100));
            final java.lang.foreign.MemorySegment buffer = arena.allocate(2048);
            org.junit.jupiter.api.Assertions.assertThrows(dev.tern.stack.TernSocketException.ConnectionRefusedException.class,
                () -> socket.receive(buffer, 0, 2048, 3 * SECOND_NS), "the kernel's port unreachable, as ECONNREFUSED");
        }
        final BackgroundCommand refused = rig.kernel().launchPeerPy("udp-client", TERN, "9", "2", "100");
        assertTrue(rig.pollUntil(() -> !refused.isAlive(), Duration.ofSeconds(20)), "the kernel's client finished");
        assertEquals(List.of("100 refused"), refused.stdout().lines().toList(), refused.stderr());
        assertEquals(1, rig.counter("udp.drop.no_socket"));
        assertEquals(1, rig.counter("udp.rx.icmp_errors"));
        final Map<String, Long> last = snmp6();
        assertEquals(1, last.get("Icmp6InDestUnreachs") - after.get("Icmp6InDestUnreachs"), "one port unreachable");
        assertEquals(0, last.get("Icmp6InErrors") - after.get("Icmp6InErrors"), "and a well-formed one");
        assertEquals(0, rig.counter("udp.drop.bad_checksum") + rig.counter("udp.drop.zero_checksum_ipv6"));
    }

    // ------------------------------------------------------------------------------------------------------ TCP

    private static final long BULK = 256L << 20;
    private static final dev.tern.tcp.TcpOptions LARGE_BUFFERS =
        dev.tern.tcp.TcpOptions.DEFAULT.withBuffers(4 << 20, 4 << 20);

    /** MTU 1500 and 9000, offloads off and on. */
    static java.util.stream.Stream<VethSetup> tcpSetups() {
        return VethSetup.all();
    }

    /** Tern's stack on a runner, its addresses past DAD. */
    private dev.tern.stack.NetStack startTernRunner(VethSetup setup) {
        createRig(setup);
        return startTernRunnerOnRig();
    }

    /** Tern's stack on a runner on the rig made already, {@link #TERN}/64, its addresses past DAD. */
    private dev.tern.stack.NetStack startTernRunnerOnRig() {
        final dev.tern.stack.NetStack stack = rig.startTernRunner(b -> b.ipv6(
            Ipv6Config.withAddresses(List.of(Ipv6InterfaceAddress.parse(TERN + "/64")))));
        final long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        while (rig.counter("nd.dad.completed") < 2 && System.nanoTime() - deadline < 0) {
            LockSupport.parkNanos(1_000_000);
        }
        assertEquals(2, rig.counter("nd.dad.completed"), "both of Tern's addresses passed DAD");
        return stack;
    }

    /** 256 MiB from Tern to the kernel's sink over IPv6, sha-256 on both ends; MSS from the link less 60. */
    @org.junit.jupiter.params.ParameterizedTest(name = "{0}")
    @org.junit.jupiter.params.provider.MethodSource("tcpSetups")
    void ternSends256MiBToTheKernelOverIpv6Intact(VethSetup setup) throws Exception {
        final dev.tern.stack.NetStack stack = startTernRunner(setup);
        final BackgroundCommand sink = rig.kernel().startPeerPy("tcp-sink", "5001", "60", "0", "::");
        final long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        final dev.tern.stack.TcpConnection connection = stack.connect(Ipv6Address.parse(PEER), 5001, 0,
            LARGE_BUFFERS);
        connection.awaitConnected(5 * SECOND_NS);
        assertTrue(connection.ipv6());
        assertEquals(setup.mtu() - 60, connection.info().sndMss(), "the kernel's MSS: its MTU less 60");
        final TcpStreams.Result sent = TcpStreams.send(connection, BULK, deadline);
        connection.shutdownOutput();
        final TcpStreams.Result back = TcpStreams.receive(connection, 0, deadline);
        connection.close();
        final long end = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (sink.isAlive() && System.nanoTime() - end < 0) {
            LockSupport.parkNanos(5_000_000);
        }
        System.out.printf("IPv6 %s: Tern -> kernel %d bytes in %.2f s, %.2f Gbit/s, %d retransmits%n", setup,
            sent.bytes(), sent.nanos() / 1e9, sent.gbitPerSecond(), rig.counter("tcp.tx.retransmits"));
        assertEquals(0, back.bytes());
        assertEquals("received " + BULK + " " + sent.sha256(), KernelPeer.line(sink.stdout(), "received"),
            "the kernel received every byte, in order: " + sink.stdout() + sink.stderr());
        if (setup.vnetHeader()) {
            assertTrue(rig.counter("tcp.tx.tso_segments") > 0, "TSO frames (GSO_TCPV6) through the vnet header");
        }
        assertEquals(0, rig.counter("stack.internal_errors"));
    }

    /** 256 MiB from the kernel to a Tern listener over IPv6, with offloads on in GRO frames. */
    @org.junit.jupiter.params.ParameterizedTest(name = "{0}")
    @org.junit.jupiter.params.provider.MethodSource("tcpSetups")
    void kernelSends256MiBToTernOverIpv6Intact(VethSetup setup) throws Exception {
        final TcpStreams.Result received = kernelSendsToTern(startTernRunner(setup), BULK);
        System.out.printf("IPv6 %s: kernel -> Tern %d bytes in %.2f s, %.2f Gbit/s, %d segments%n", setup,
            received.bytes(), received.nanos() / 1e9, received.gbitPerSecond(), rig.counter("tcp.rx.segments"));
        assertEquals(0, rig.counter("tcp.drop.bad_checksum"));
        assertEquals(0, rig.counter("stack.internal_errors"));
    }

    /**
     * {@code bytes} from the kernel's tcp-source to a Tern listener on port 5001 over IPv6, checked: the kernel
     * connected from its address, and its sha-256 of what it sent is Tern's of what it received.
     */
    private TcpStreams.Result kernelSendsToTern(dev.tern.stack.NetStack stack, long bytes) throws Exception {
        final dev.tern.stack.TcpListener listener = stack.listen(5001, 4, LARGE_BUFFERS);
        final long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        final BackgroundCommand source = rig.kernel().launchPeerPy("tcp-source", TERN, "5001", Long.toString(bytes),
            "60");
        final dev.tern.stack.TcpConnection connection = listener.accept(10 * SECOND_NS);
        assertTrue(connection != null, "the kernel connected: " + source.stdout() + source.stderr());
        assertEquals(Ipv6Address.parse(PEER), connection.remoteAddress6());
        final TcpStreams.Result received = TcpStreams.receive(connection, bytes, deadline);
        connection.shutdownOutput();
        final long end = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (source.isAlive() && System.nanoTime() - end < 0) {
            LockSupport.parkNanos(5_000_000);
        }
        connection.close();
        listener.close();
        assertEquals("sent " + bytes + " " + received.sha256(), KernelPeer.line(source.stdout(), "sent"),
            "Tern received every byte the kernel sent, in order: " + source.stdout() + source.stderr());
        return received;
    }

    /**
     * Path MTU from a packet too big (RFC 8201): mid-transfer to the kernel, a router made of frames on the kernel's end
     * quotes one of Tern's full-sized segments and says 1280 fit. Tern lowers the path MTU and the connection's MSS:
     * its segments then fill 1280 bytes exactly, none leaves in fragments, and the kernel receives every byte, in order.
     */
    @Test
    void aPacketTooBigMidTransferLowersTernsSegmentsAndTheKernelGetsEveryByte() throws Exception {
        final dev.tern.stack.NetStack stack = startTernRunner(VethSetup.DEFAULT);
        final CraftedHost router = CraftedHost.onPeerEnd(rig.net());
        final BackgroundCommand sink = rig.kernel().startPeerPy("tcp-sink", "5001", "60", "0", "::");
        final dev.tern.stack.TcpConnection connection = stack.connect(Ipv6Address.parse(PEER), 5001, 0,
            LARGE_BUFFERS);
        connection.awaitConnected(5 * SECOND_NS);
        final long total = 32L << 20;
        final java.util.concurrent.CompletableFuture<TcpStreams.Result> sending =
            java.util.concurrent.CompletableFuture.supplyAsync(() -> {
                try {
                    final TcpStreams.Result sent = TcpStreams.send(connection, total,
                        System.nanoTime() + Duration.ofSeconds(60).toNanos());
                    connection.shutdownOutput();
                    return sent;
                } catch (dev.tern.stack.TernSocketException e) {
                    throw new java.util.concurrent.CompletionException(e);
                }
            });
        final java.util.function.Predicate<dev.tern.conformance.replay.CapturedFrame> ternsFullSegment = frame ->
            frame.etherType() == 0x86DD && frame.bytes().length > 14 + 1280 && (frame.bytes()[14 + 6] & 0xff) == 6;
        final byte[] big = router.receiveThrough(ternsFullSegment, Duration.ofSeconds(10), "a full-sized segment of Tern's")
            .getLast().bytes();
        final byte[] quoted = java.util.Arrays.copyOfRange(big, 14, 14 + 1280 - 48);
        router.sendIpv6(stack.macAddress(), dev.tern.stack.testing.Ipv6Frames.icmpPacket(
            Ipv6Address.linkLocal(CraftedHost.MAC), Ipv6Address.parse(TERN), 64, 2, 0, 1280, quoted));
        // Tern's segments now fill the smaller path: 1280 bytes of IPv6, 1220 of them data (a frame of 1294).
        router.receiveThrough(frame -> frame.etherType() == 0x86DD && (frame.bytes()[14 + 6] & 0xff) == 6
            && frame.bytes().length == 14 + 1280, Duration.ofSeconds(10), "a segment of Tern's sized for 1280 bytes");
        final TcpStreams.Result sent = sending.get(60, java.util.concurrent.TimeUnit.SECONDS);
        final long end = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (sink.isAlive() && System.nanoTime() - end < 0) {
            LockSupport.parkNanos(5_000_000);
        }
        connection.close();
        assertEquals("received " + total + " " + sent.sha256(), KernelPeer.line(sink.stdout(), "received"),
            "the kernel received every byte, in order: " + sink.stdout() + sink.stderr());
        assertEquals(1, rig.counter("icmp6.rx.path_mtu_updates"));
        assertTrue(rig.counter("tcp.pmtu_updates") >= 1, "the connection's MSS followed");
        assertEquals(0, rig.counter("ipv6.tx.fragmented_packets"), "no segment left in fragments");
    }

    /** The kernel's connect to a closed Tern port is refused by Tern's reset over IPv6, and Tern's by the kernel's. */
    @Test
    void closedPortsRefuseTcpOverIpv6BothWays() throws Exception {
        final dev.tern.stack.NetStack stack = startTernRunner(VethSetup.DEFAULT);
        final CommandResult refused = rig.kernel().runPeerPy(Duration.ofSeconds(10), "tcp-connect", TERN, "9", "3");
        assertTrue(refused.stdout().contains("error ECONNREFUSED"), refused.stdout() + refused.stderr());
        assertEquals(1, rig.counter("tcp.drop.no_socket"));
        final dev.tern.stack.TcpConnection connection = stack.connect(Ipv6Address.parse(PEER), 9);
        final dev.tern.stack.TernSocketException e = org.junit.jupiter.api.Assertions.assertThrows(
            dev.tern.stack.TernSocketException.class, () -> connection.awaitConnected(5 * SECOND_NS));
        assertEquals(dev.tern.core.io.SocketError.CONNECTION_REFUSED, e.error(), e.getMessage());
        connection.close();
    }
}
