package dev.tern.conformance.interop;

import dev.tern.afpacket.AfPacketLink;
import dev.tern.core.counters.CountersSnapshot;
import dev.tern.nio.TernSelectorProvider;
import dev.tern.nio.examples.NettyEchoServer;
import dev.tern.stack.NetStack;
import dev.tern.testkit.netns.BackgroundCommand;
import dev.tern.testkit.netns.CommandResult;
import dev.tern.testkit.netns.NetnsHarness;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.SocketAddress;
import java.net.StandardProtocolFamily;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.nio.channels.MembershipKey;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Tern's NIO provider against the Linux kernel over veth, in namespaces the rig makes: Netty's NIO transport on
 * Tern serving a kernel client; unmodified NIO and Netty programs under {@code tern exec} serving kernel clients; a
 * multicast {@code DatagramChannel} on Tern receiving a kernel sender; and an unmodified program under
 * {@code tern exec} whose one selector holds a connection the rules give to Tern (the kernel peer, reachable only
 * through Tern: the Tern namespace's kernel has no address on tern0) and one they give to the kernel (a server on
 * the Tern namespace's loopback, which Tern never serves). Loads are bounded (a few MiB, 30-60 s).
 */
class NioInteropTest extends VethRigTest {
    private static final String JAVA = ProcessHandle.current().info().command().orElse("java");

    /** A Tern stack on the rig's tern0, behind a provider; the rig's harness closes the link, the caller the provider. */
    private TernSelectorProvider ternProvider() {
        final NetStack stack = NetStack.builder().name("nio-interop").link(rig.net().openTernLink(AfPacketLink::open, VethSetup.DEFAULT.linkOptions()))
            .address(VethRig.TERN_CIDR).countersInMemory().build();
        return TernSelectorProvider.open(stack);
    }

    /** A counter summed over the live stacks whose counters are in {@code counters} (a program's shards). */
    private static long liveCounter(Path counters, String label) throws IOException {
        long sum = 0;
        for (CountersSnapshot shard : CountersSnapshot.readAll(counters)) {
            if (shard.alive()) {
                sum += shard.counters().getOrDefault(label, 0L);
            }
        }
        return sum;
    }

    private static void assertEchoedIntact(CommandResult client, int bytes) {
        final String sent = KernelPeer.line(client.stdout(), "sent");
        assertTrue(sent.startsWith("sent " + bytes + " "), client.stdout() + client.stderr());
        assertEquals(sent.replace("sent", "received"), KernelPeer.line(client.stdout(), "received"), "echoed intact");
    }

    @Test
    void aNettyEchoServerOnTernReturnsAKernelClientsBytesIntact() throws Exception {
        rig = VethRig.create(VethSetup.DEFAULT);
        try (TernSelectorProvider provider = ternProvider();
             NettyEchoServer server = NettyEchoServer.start(provider, new InetSocketAddress(7007))) {
            final CommandResult client = rig.kernel().runPeerPy(Duration.ofSeconds(60), "tcp-source",
                NetnsHarness.TERN_ADDRESS, "7007", Integer.toString(8 << 20), "45");
            assertEchoedIntact(client, 8 << 20);
        }
    }

    @Test
    void aMulticastDatagramChannelOnTernReceivesAKernelSenderAndItsSourceSpecificJoinToo() throws Exception {
        rig = VethRig.create(VethSetup.DEFAULT);
        try (TernSelectorProvider provider = ternProvider();
             DatagramChannel member = provider.openDatagramChannel(StandardProtocolFamily.INET)) {
            member.setOption(StandardSocketOptions.SO_REUSEADDR, true);
            member.bind(new InetSocketAddress(5000));
            final NetworkInterface anyInterface = NetworkInterface.getByInetAddress(InetAddress.getLoopbackAddress());
            final InetAddress group = InetAddress.getByName("239.1.2.3");
            final MembershipKey key = member.join(group, anyInterface);
            assertEquals("kernel", firstDatagram(member, "kernel"));
            key.drop();
            member.join(group, anyInterface, InetAddress.getByName(NetnsHarness.PEER_ADDRESS));
            assertEquals("ssm", firstDatagram(member, "ssm"));
        }
    }

    /**
     * The kernel sends TEXT-0, TEXT-1, ... to the group every 50 ms (a join takes a moment to reach the wire); returns
     * TEXT once Tern's member got one of them from the kernel's address, "nothing" after 10 s.
     */
    private String firstDatagram(DatagramChannel member, String text) throws Exception {
        final BackgroundCommand sender = rig.net().startInPeer(peerPy("udp-send", NetnsHarness.PEER_ADDRESS, "239.1.2.3",
            "5000", "60", "0.05", text));
        try {
            final ByteBuffer buffer = ByteBuffer.allocate(64);
            final long deadline = System.nanoTime() + 10_000_000_000L;
            member.configureBlocking(false);
            while (System.nanoTime() - deadline < 0) {
                buffer.clear();
                final SocketAddress source = member.receive(buffer);
                if (source != null) {
                    final String got = new String(buffer.array(), 0, buffer.position(), StandardCharsets.US_ASCII);
                    if (got.startsWith(text + "-")) {
                        assertEquals(InetAddress.getByName(NetnsHarness.PEER_ADDRESS),
                            ((InetSocketAddress) source).getAddress());
                        return text;
                    }
                }
                Thread.sleep(5);
            }
            return "nothing";
        } finally {
            sender.stop();
        }
    }

    private static String[] peerPy(String... arguments) {
        final List<String> command = new ArrayList<>(List.of("python3", resource("peer.py")));
        command.addAll(List.of(arguments));
        return command.toArray(String[]::new);
    }

    private static String resource(String name) {
        try {
            return Path.of(KernelPeer.class.getResource(name).toURI()).toString();
        } catch (java.net.URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void theReadmeQuickStartOnAfPacketTalksToTheKernelsEchoServices() throws Exception {
        rig = VethRig.create(VethSetup.DEFAULT);
        final String socat = dev.tern.core.testing.ExternalTools.require("socat", "socat").toString();
        rig.net().startInPeer(socat, "-T", "20", "UDP4-RECVFROM:7", "EXEC:cat");
        rig.net().startInPeer(socat, "-T", "20", "TCP4-LISTEN:7,reuseaddr", "EXEC:cat");
        Thread.sleep(300); // socat has no "ready" line; both listen well within this
        final java.io.ByteArrayOutputStream printed = new java.io.ByteArrayOutputStream();
        final java.io.PrintStream out = System.out;
        try (TernSelectorProvider provider = ternProvider()) {
            System.setOut(new java.io.PrintStream(printed, true, StandardCharsets.UTF_8));
            dev.tern.nio.examples.QuickStart.exchangeWith(provider,
                new InetSocketAddress(InetAddress.getByName(NetnsHarness.PEER_ADDRESS), 7));
        } finally {
            System.setOut(out);
        }
        assertEquals(List.of("udp: 'hello over UDP' echoed by /198.18.0.1:7", "tcp: 'hello over TCP' echoed by /198.18.0.1:7"),
            printed.toString(StandardCharsets.UTF_8).lines().toList());
    }

    // ------------------------------------------------------------------------------------------ tern exec

    /** {@code java ... dev.tern.cli.Tern exec --link afpacket:tern0 --ip 198.18.0.2/24 -- java -cp CP MAIN ARGS}. */
    private static List<String> ternExec(Path counters, String classpath, String main, String... arguments) {
        final List<String> command = ternExecJava(counters, "-cp", classpath, main);
        command.addAll(List.of(arguments));
        return command;
    }

    /** {@code ... Tern exec --link afpacket:tern0 --ip 198.18.0.2/24 -- java -XX:TieredStopAtLevel=1 JAVA_ARGUMENTS}. */
    private static List<String> ternExecJava(Path counters, String... javaArguments) {
        return ternExecJava(counters, List.of(), javaArguments);
    }

    /** {@link #ternExecJava(Path, String...)} with more of tern exec's options ({@code ternOptions}) before the --. */
    private static List<String> ternExecJava(Path counters, List<String> ternOptions, String... javaArguments) {
        final List<String> command = new ArrayList<>(List.of("env", "TERN_COUNTERS_DIR=" + counters, JAVA,
            "-Djava.io.tmpdir=" + counters, // where tern exec writes the program's configuration file
            "--enable-native-access=ALL-UNNAMED", "--add-exports", "java.base/jdk.internal.misc=ALL-UNNAMED",
            "--sun-misc-unsafe-memory-access=allow", "-XX:TieredStopAtLevel=1", "-cp", System.getProperty("java.class.path"),
            "dev.tern.cli.Tern", "exec", "--link", "afpacket:" + NetnsHarness.TERN_INTERFACE, "--ip", VethRig.TERN_CIDR));
        command.addAll(ternOptions);
        command.addAll(List.of("--", JAVA, "-XX:TieredStopAtLevel=1"));
        command.addAll(List.of(javaArguments));
        return command;
    }

    /**
     * The JDK's dual-stack server, unmodified: {@code new ServerSocket(PORT)} (the classic socket on the wildcard) and
     * Netty with no family set, under {@code tern exec --ip6}, serve a Linux client over IPv4 and another over IPv6,
     * both through Tern, each echoed intact.
     */
    @org.junit.jupiter.params.ParameterizedTest(name = "{0}")
    @org.junit.jupiter.params.provider.ValueSource(strings = {"classic", "netty"})
    void aDualStackServerUnderTernExecServesAnIpv4AndAnIpv6KernelClient(String server, @TempDir Path counters)
        throws Exception {
        final BackgroundCommand running = server.equals("classic")
            ? startDualStack(counters, "listening on 7011", "-cp", classpathOf("conformance/target/test-classes"),
                "dev.tern.conformance.interop.programs.ClassicEchoServer", "7011")
            : startDualStack(counters, "via TernSelectorProvider", "-cp",
                classpathOf("tern-nio", "nio/target/test-classes", "netty-"), "dev.tern.nio.examples.NettyEchoServer",
                "7011");
        final CommandResult four = rig.kernel().runPeerPy(Duration.ofSeconds(60), "tcp-source",
            NetnsHarness.TERN_ADDRESS, "7011", Integer.toString(1 << 20), "45");
        assertEchoedIntact(four, 1 << 20);
        CommandResult six = rig.kernel().runPeerPy(Duration.ofSeconds(60), "tcp-source", Ipv6InteropTest.TERN, "7011",
            Integer.toString(1 << 20), "45");
        assertEchoedIntact(six, 1 << 20);
        final long ipv6Packets = liveCounter(counters, "ipv6.rx.packets");
        assertEquals(2, liveCounter(counters, "tcp.conn.passive_opens"), "both clients were Tern's connections, none the kernel's");
        assertTrue(ipv6Packets > (1 << 20) / 1440, "the IPv6 client's megabyte came through Tern: " + ipv6Packets);
        running.stop();
    }

    /**
     * A rig whose kernel end has IPv6 too, and a program started under {@code tern exec --ip6} with the rig's IPv6
     * address, once it printed {@code awaited}.
     */
    private BackgroundCommand startDualStack(Path counters, String awaited, String... javaArguments) {
        rig = VethRig.create(VethSetup.DEFAULT);
        Ipv6InteropTest.enablePeerIpv6(rig);
        final List<String> program = ternExecJava(counters, List.of("--ip6", Ipv6InteropTest.TERN + "/64"),
            javaArguments);
        return rig.net().startInTern(program.toArray(String[]::new)).awaitOutput(awaited, Duration.ofSeconds(60));
    }

    /**
     * The JDK's dual-stack datagram server, unmodified: {@code DatagramChannel.open()} bound to the wildcard and the
     * classic {@code new DatagramSocket(PORT)}, under {@code tern exec --ip6}, echo a Linux client over IPv4 and another
     * over IPv6 on one port, both through Tern (none of the program's channels went to the kernel), each datagram
     * intact, up to one that IPv4 and IPv6 both carry in fragments; the program sees the IPv4 peer as an IPv4 address.
     */
    @org.junit.jupiter.params.ParameterizedTest(name = "{0}")
    @org.junit.jupiter.params.provider.ValueSource(strings = {"channel", "classic"})
    void aDualStackDatagramServerUnderTernExecEchoesAnIpv4AndAnIpv6KernelClient(String api, @TempDir Path counters)
        throws Exception {
        final BackgroundCommand running = startDualStack(counters, "listening on 7012", "-cp",
            classpathOf("conformance/target/test-classes"), "dev.tern.conformance.interop.programs.UdpEchoServer", api,
            "7012");
        boolean answers = false;
        for (int attempt = 0; attempt < 20 && !answers; attempt++) { // duplicate address detection first
            answers = rig.net().peerExec(Duration.ofSeconds(10), "ping", "-6", "-n", "-c", "1", "-W", "1",
                Ipv6InteropTest.TERN).exitCode() == 0;
        }
        assertTrue(answers, "Tern answers at " + Ipv6InteropTest.TERN + ": " + running.stderr());
        final List<String> sizes = List.of("64", "1400", "8000");
        for (String server : List.of(NetnsHarness.TERN_ADDRESS, Ipv6InteropTest.TERN)) {
            final List<String> arguments = new ArrayList<>(List.of("udp-client", server, "7012", "3"));
            arguments.addAll(sizes);
            final CommandResult client = rig.kernel().runPeerPy(Duration.ofSeconds(30), arguments.toArray(String[]::new));
            assertEquals(sizes.stream().map(size -> size + " ok").toList(), client.stdout().lines().toList(),
                "echoed intact from " + server + ": " + client.stderr() + running.stderr());
        }
        assertTrue(running.stdout().lines().toList().containsAll(List.of("from " + NetnsHarness.PEER_ADDRESS,
            "from " + InetAddress.getByName(Ipv6InteropTest.PEER).getHostAddress())),
            "the IPv4 peer as the JDK reports it, not as ::ffff:198.18.0.1: " + running.stdout());
        assertEquals(3, liveCounter(counters, "udp.rx.ipv6_datagrams"), "the IPv6 client's datagrams came through Tern");
        assertEquals(6, liveCounter(counters, "udp.tx.datagrams"), "every answer went out through Tern");
        assertEquals(0, liveCounter(counters, "nio.kernel.channels"), "no channel went to the kernel");
        running.stop();
    }

    /**
     * {@code tern exec --ip6 auto}: the JDK's dual-stack {@code new ServerSocket(PORT)}, unmodified, on a stack whose
     * only global IPv6 address is the one SLAAC forms once a router (frames on the kernel's end) advertises
     * 2001:db8:1::/64; the kernel's client reaches it there, and over IPv4, both through Tern, each echoed intact.
     */
    @Test
    void underTernExecWithSlaacADualStackServerServesAKernelClientAtTheFormedAddress(@TempDir Path counters)
        throws Exception {
        rig = VethRig.create(VethSetup.DEFAULT);
        Ipv6InteropTest.enablePeerIpv6(rig);
        rig.net().peerExec(Duration.ofSeconds(20), "ip", "-6", "address", "add", "2001:db8:1::1/64", "dev",
            NetnsHarness.PEER_INTERFACE, "nodad").orThrow();
        final List<String> program = ternExecJava(counters, List.of("--ip6", "auto"), "-cp",
            classpathOf("conformance/target/test-classes"), "dev.tern.conformance.interop.programs.ClassicEchoServer",
            "7011");
        final BackgroundCommand running = rig.net().startInTern(program.toArray(String[]::new))
            .awaitOutput("listening on 7011", Duration.ofSeconds(60));
        final dev.tern.core.net.Ipv6Address prefix = dev.tern.core.net.Ipv6Address.parse("2001:db8:1::");
        final String formed = new dev.tern.core.net.Ipv6Address(prefix.high(),
            dev.tern.core.net.Ipv6Address.interfaceIdentifier(rig.net().ternMac())).toString();
        boolean answers = false;
        for (int attempt = 0; attempt < 40 && !answers; attempt++) {
            Ipv6InteropTest.advertisePrefix(rig, prefix); // again until heard: the program may still be starting
            answers = rig.net().peerExec(Duration.ofSeconds(10), "ping", "-6", "-n", "-c", "1", "-W", "1", formed)
                .exitCode() == 0;
        }
        assertTrue(answers, "Tern formed " + formed + " and answers there: " + running.stderr());
        final CommandResult six = rig.kernel().runPeerPy(Duration.ofSeconds(60), "tcp-source", formed, "7011",
            Integer.toString(1 << 20), "45");
        assertEchoedIntact(six, 1 << 20);
        final CommandResult four = rig.kernel().runPeerPy(Duration.ofSeconds(60), "tcp-source",
            NetnsHarness.TERN_ADDRESS, "7011", Integer.toString(1 << 20), "45");
        assertEchoedIntact(four, 1 << 20);
        assertEquals(2, liveCounter(counters, "tcp.conn.passive_opens"), "both clients were Tern's connections, none the kernel's");
        // Every shard has IPv6: shard 0 forms the address from the advertisement, the others from its copy of it.
        for (CountersSnapshot shard : CountersSnapshot.readAll(counters)) {
            if (shard.alive()) {
                assertEquals(1L, shard.counters().getOrDefault("nd.slaac.addresses", 0L),
                    "one address formed from the prefix on " + shard.name());
            }
        }
        running.stop();
    }

    /**
     * The JDK's own {@code jwebserver} ({@code java -m jdk.httpserver}), unmodified under {@code tern exec}, serves
     * curl in the kernel: a 300 KB file whole, on connections curl closes first and on ones the server closes after
     * its response ({@code Connection: close}). Every connection ends with FINs both ways and Tern sends no reset: a
     * JDK {@code close()} with nothing unread reaches the wire as a FIN, as the kernel's does (a capture in the peer
     * namespace counts Tern's segments by flag).
     */
    @Test
    void theJdksJwebserverUnderTernExecServesCurlAndEndsEveryConnectionWithAFin(@TempDir Path counters, @TempDir Path site)
        throws IOException {
        rig = VethRig.create(VethSetup.DEFAULT);
        final byte[] page = new byte[300_000];
        new java.util.Random(7).nextBytes(page);
        Files.write(site.resolve("page.bin"), page);
        final BackgroundCommand server = rig.net().startInTern(ternExecJava(counters, "-m", "jdk.httpserver", "-b",
            "0.0.0.0", "-p", "8000", "-d", site.toString()).toArray(String[]::new))
            .awaitOutput("port 8000", Duration.ofSeconds(60));
        final Path capture = counters.resolve("jwebserver.pcap");
        final BackgroundCommand tcpdump = rig.kernel().tcpdump(capture, 100_000);
        final String url = "http://" + NetnsHarness.TERN_ADDRESS + ":8000/page.bin";
        final List<String> results = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            final List<String> curl = new ArrayList<>(List.of("curl", "-s", "-o", "/dev/null", "-w",
                "%{http_code} %{size_download}", "--max-time", "20"));
            if (i % 2 == 1) {
                curl.addAll(List.of("-H", "Connection: close"));
            }
            curl.add(url);
            results.add(rig.net().peerExec(Duration.ofSeconds(30), curl.toArray(String[]::new)).stdout().strip());
        }
        try {
            Thread.sleep(500);                                               // the last FINs and ACKs
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        KernelPeer.stopCapture(tcpdump, capture, Integer.MAX_VALUE);
        server.stop();
        assertEquals(java.util.Collections.nCopies(6, "200 300000"), results, "every request served whole");
        final int ternAddress = dev.tern.core.net.Ipv4Address.parse(NetnsHarness.TERN_ADDRESS);
        int fins = 0;
        int resets = 0;
        for (dev.tern.conformance.replay.CapturedFrame frame : dev.tern.conformance.replay.Capture.read(capture).frames()) {
            if (frame.isIpv4() && frame.ipProtocol() == 6 && frame.i32(14 + 12) == ternAddress) {
                final int flags = frame.u8(14 + 4 * (frame.u8(14) & 0x0F) + 13);
                fins += (flags & 0x01) != 0 ? 1 : 0;
                resets += (flags & 0x04) != 0 ? 1 : 0;
            }
        }
        System.out.printf("jwebserver under tern exec: %s; Tern sent %d FINs, %d resets%n", results, fins, resets);
        assertEquals(0, resets, "Tern sent no reset");
        assertEquals(6, fins, "a FIN from Tern on each connection");
    }

    /** Class path entries whose file name contains one of {@code parts}: a program's own class path, nothing of Tern's. */
    private static String classpathOf(String... parts) {
        final List<String> entries = new ArrayList<>();
        for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
            for (String part : parts) {
                if (entry.contains(part)) {
                    entries.add(entry);
                    break;
                }
            }
        }
        return String.join(File.pathSeparator, entries);
    }

    @Test
    void anUnmodifiedNioEchoServerUnderTernExecServesAKernelClient(@TempDir Path counters) throws IOException {
        rig = VethRig.create(VethSetup.DEFAULT);
        final BackgroundCommand server = rig.net().startInTern(ternExec(counters, classpathOf("tern-nio", "nio/target/test-classes"),
            "dev.tern.nio.examples.NioEchoServer", "7007").toArray(String[]::new))
            .awaitOutput("via dev.tern.nio.TernSelectorProvider", Duration.ofSeconds(60));
        final CommandResult client = rig.kernel().runPeerPy(Duration.ofSeconds(60), "tcp-source", NetnsHarness.TERN_ADDRESS,
            "7007", Integer.toString(4 << 20), "45");
        assertEchoedIntact(client, 4 << 20);
        assertTrue(hasConfigurationFile(counters), "tern exec's configuration file for the program");
        server.stop();
        assertFalse(hasConfigurationFile(counters), "tern exec stopped by SIGTERM left its configuration file");
    }

    private static boolean hasConfigurationFile(Path directory) throws IOException {
        try (var files = Files.list(directory)) {
            return files.anyMatch(f -> f.getFileName().toString().matches("tern-exec.*\\.properties"));
        }
    }

    @Test
    void anUnmodifiedNioEchoServerUnderTernExecWithTwoShardsServesKernelClientsFromBoth(@TempDir Path counters)
        throws IOException {
        rig = VethRig.create(VethSetup.DEFAULT);
        final List<String> command = ternExec(counters, classpathOf("tern-nio", "nio/target/test-classes"),
            "dev.tern.nio.examples.NioEchoServer", "7010");
        command.addAll(command.indexOf("--"), List.of("--shards", "2"));
        final BackgroundCommand server = rig.net().startInTern(command.toArray(String[]::new))
            .awaitOutput("via dev.tern.nio.TernSelectorProvider", Duration.ofSeconds(60));
        final int connections = 32;
        final CommandResult clients = rig.kernel().runPeerPy(Duration.ofSeconds(90), "tcp-echo-clients",
            NetnsHarness.TERN_ADDRESS, "7010", Integer.toString(connections), Integer.toString(256 << 10), "60");
        assertEquals("clients " + connections + " ok " + connections, KernelPeer.line(clients.stdout(), "clients"),
            "every connection echoed intact: " + clients.stdout() + clients.stderr() + server.stderr());
        final List<CountersSnapshot> shards = CountersSnapshot.readAll(counters).stream()
            .filter(snapshot -> snapshot.alive() && snapshot.name().startsWith("NioEchoServer[")).toList();
        assertEquals(2, shards.size(), "a counters file per shard: " + shards);
        long accepted = 0;
        for (CountersSnapshot shard : shards) {
            final long passiveOpens = shard.counters().getOrDefault("tcp.conn.passive_opens", 0L);
            assertTrue(passiveOpens > 0, shard.name() + " accepted some of the kernel's connections");
            assertEquals(0L, shard.counters().getOrDefault("shard.rx.wrong_shard", 0L), shard.name());
            accepted += passiveOpens;
        }
        assertEquals(connections, accepted);
        server.stop();
    }

    @Test
    void anUnmodifiedNettyEchoServerUnderTernExecServesAKernelClient(@TempDir Path counters) throws IOException {
        rig = VethRig.create(VethSetup.DEFAULT);
        final BackgroundCommand server = rig.net().startInTern(ternExec(counters,
            classpathOf("tern-nio", "nio/target/test-classes", "netty-"), "dev.tern.nio.examples.NettyEchoServer", "7008")
            .toArray(String[]::new)).awaitOutput("via TernSelectorProvider", Duration.ofSeconds(60));
        final CommandResult client = rig.kernel().runPeerPy(Duration.ofSeconds(60), "tcp-source", NetnsHarness.TERN_ADDRESS,
            "7008", Integer.toString(4 << 20), "45");
        assertEchoedIntact(client, 4 << 20);
        // The program's link is AF_PACKET as the tern command opens it (AfPacketOptions.throughput()): with the vnet
        // header, so TCP hands the kernel segments of up to 64 KiB to cut, where without it every segment is one MSS.
        // The same options give the 1024-slot ring; a program's stack had the link's defaults before (no header, 64
        // slots, which a burst of 200 clients' SYNs half filled, so the load shedding dropped them).
        long segments = 0;
        long bytes = 0;
        for (CountersSnapshot shard : CountersSnapshot.readAll(counters)) { // a file per shard, NAME[K/N]
            if (shard.alive() && shard.name().startsWith("NettyEchoServer")) {
                segments += shard.counters().getOrDefault("tcp.tx.segments", 0L);
                bytes += shard.counters().getOrDefault("tcp.tx.bytes", 0L);
            }
        }
        assertTrue(segments > 0 && bytes / segments > 4_000, "segments of " + (segments == 0 ? 0 : bytes / segments)
            + " bytes on average: segmentation offload (the vnet header) is off");
        server.stop();
    }

    /**
     * Netty under {@code tern exec} with a socket buffer budget of 16 MiB and the default 128 KiB buffers: about 150
     * connections' reservations. 600 kernel clients open persistent connections at 100 a second and keep them; the
     * provider lets each go idle 200 ms after its echo, which gives its reservation back, so every one is let in and
     * held, and once they all idle nothing is attached or counted in the budget. Before, a connection's reservation
     * stayed while it idled, and the clients beyond the budget were refused.
     */
    @Test
    void nettyUnderTernExecHoldsMoreIdleConnectionsThanItsBudgetHasRoomForInUse(@TempDir Path counters)
        throws Exception {
        rig = VethRig.create(VethSetup.DEFAULT);
        final List<String> command = ternExec(counters, classpathOf("tern-nio", "nio/target/test-classes", "netty-"),
            "dev.tern.nio.examples.NettyEchoServer", "7011");
        command.addAll(command.indexOf("--"), List.of("--shards", "1", "--memory-limit", Integer.toString(16 << 20),
            "--release-idle", "200"));
        final BackgroundCommand server = rig.net().startInTern(command.toArray(String[]::new))
            .awaitOutput("via TernSelectorProvider", Duration.ofSeconds(60));
        final int connections = 600;
        final BackgroundCommand clients = rig.kernel().launchPeerPy("tcp-hold-clients", NetnsHarness.TERN_ADDRESS,
            "7011", Integer.toString(connections), "100", "30", "60");
        try {
            clients.awaitOutput("held ", Duration.ofSeconds(60));
            assertEquals("held " + connections + " of " + connections, KernelPeer.line(clients.stdout(), "held"),
                clients.stdout() + server.stderr());
            final long deadline = System.nanoTime() + 10_000_000_000L;
            Map<String, Long> stat = nettyCounters(counters);
            while ((stat.getOrDefault("tcp.memory.attached_bytes", -1L) != 0
                || stat.getOrDefault("tcp.memory.in_use_bytes", -1L) != 0) && System.nanoTime() < deadline) {
                Thread.sleep(100);
                stat = nettyCounters(counters);
            }
            assertEquals(0L, stat.get("tcp.memory.attached_bytes"), "idle connections hold no rings: " + stat);
            assertEquals(0L, stat.get("tcp.memory.in_use_bytes"), "nor any of the budget: " + stat);
            assertTrue(stat.getOrDefault("tcp.memory.rings_released_idle", 0L) >= connections, stat.toString());
            assertEquals(0L, stat.getOrDefault("tcp.drop.memory_limit", 0L), "no SYN refused for memory: " + stat);
            assertTrue(stat.getOrDefault("nio.idle.sweeps", 0L) > 0, stat.toString());
        } finally {
            clients.stop();
            server.stop();
        }
    }

    /** The Netty server's counters (its one shard's file). */
    private static Map<String, Long> nettyCounters(Path counters) throws IOException {
        for (CountersSnapshot snapshot : CountersSnapshot.readAll(counters)) {
            if (snapshot.alive() && snapshot.name().startsWith("NettyEchoServer")) {
                return snapshot.counters();
            }
        }
        return Map.of();
    }

    @Test
    void anUnmodifiedClassicServerSocketUnderTernExecServesAKernelClient(@TempDir Path counters) {
        rig = VethRig.create(VethSetup.DEFAULT);
        final BackgroundCommand server = rig.net().startInTern(ternExec(counters,
            classpathOf("conformance/target/test-classes"), "dev.tern.conformance.interop.programs.ClassicEchoServer", "7009")
            .toArray(String[]::new)).awaitOutput("listening on 7009", Duration.ofSeconds(60));
        final CommandResult client = rig.kernel().runPeerPy(Duration.ofSeconds(60), "tcp-source", NetnsHarness.TERN_ADDRESS,
            "7009", Integer.toString(2 << 20), "45");
        assertEchoedIntact(client, 2 << 20);
        server.stop();
    }

    @Test
    void anUnmodifiedClassicMulticastSocketUnderTernExecReceivesAKernelSender(@TempDir Path counters) throws Exception {
        rig = VethRig.create(VethSetup.DEFAULT);
        final BackgroundCommand receiver = rig.net().startInTern(ternExec(counters,
            classpathOf("conformance/target/test-classes"), "dev.tern.conformance.interop.programs.ClassicMulticastReceiver",
            "239.1.2.4", "5004").toArray(String[]::new)).awaitOutput("joined", Duration.ofSeconds(60));
        final BackgroundCommand sender = rig.net().startInPeer(peerPy("udp-send", NetnsHarness.PEER_ADDRESS, "239.1.2.4",
            "5004", "200", "0.05", "classic"));
        try {
            assertEquals(0, receiver.awaitExit(Duration.ofSeconds(30)), receiver.stdout() + receiver.stderr());
            assertTrue(receiver.stdout().lines().anyMatch(line -> line.startsWith("got classic-")
                && line.endsWith(" from " + NetnsHarness.PEER_ADDRESS)), receiver.stdout());
        } finally {
            sender.stop();
        }
    }

    @Test
    void underTernExecOneSelectorHoldsATernConnectionToThePeerAndAKernelOneToLoopback(@TempDir Path counters) {
        rig = VethRig.create(VethSetup.DEFAULT);
        rig.net().ternExec(Duration.ofSeconds(10), "ip", "link", "set", "lo", "up").orThrow();
        final BackgroundCommand peerSink = rig.kernel().startPeerPy("tcp-sink", "5001", "30", "0");
        final BackgroundCommand loopbackSink = rig.net().startInTern(peerPy("tcp-sink", "5002", "30", "0"))
            .awaitOutput("ready", Duration.ofSeconds(10));
        final int bytes = 1 << 20;

        final CommandResult program = rig.net().ternExec(Duration.ofSeconds(90), ternExec(counters,
            classpathOf("conformance/target/test-classes"), "dev.tern.conformance.interop.programs.MixedSelectorClient",
            NetnsHarness.PEER_ADDRESS, "5001", "127.0.0.1", "5002", Integer.toString(bytes)).toArray(String[]::new));

        assertEquals(0, program.exitCode(), program.stdout() + program.stderr());
        assertTrue(program.stdout().contains("done"), program.stdout() + program.stderr() + "\npeer sink: "
            + peerSink.stdout() + peerSink.stderr() + "\nloopback sink: " + loopbackSink.stdout() + loopbackSink.stderr());
        assertEquals(0, peerSink.awaitExit(Duration.ofSeconds(20)), peerSink.stdout() + peerSink.stderr());
        assertEquals(0, loopbackSink.awaitExit(Duration.ofSeconds(20)), loopbackSink.stdout() + loopbackSink.stderr());
        assertTrue(KernelPeer.line(peerSink.stdout(), "received").startsWith("received " + bytes + " "),
            "through Tern (the namespace's kernel has no route to the peer): " + peerSink.stdout());
        assertTrue(KernelPeer.line(loopbackSink.stdout(), "received").startsWith("received " + bytes + " "),
            "through the kernel (Tern never serves loopback): " + loopbackSink.stdout());
        assertNotNull(program);
    }
}
