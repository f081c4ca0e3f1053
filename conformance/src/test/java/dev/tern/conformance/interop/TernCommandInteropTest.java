package dev.tern.conformance.interop;

import dev.tern.core.counters.CountersSnapshot;
import dev.tern.core.testing.ExternalTools;
import dev.tern.testkit.netns.BackgroundCommand;
import dev.tern.testkit.netns.CommandResult;
import dev.tern.testkit.netns.NetnsHarness;
import dev.tern.testkit.netns.PacketLoss;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.SplittableRandom;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.IntStream;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The {@code tern} command as a user runs it, in its own JVM inside the Tern namespace, against the kernel: the
 * same checks as the hand-run smoke tests ({@code ip netns exec NS ./tern ping -s 8000 --link afpacket:IFACE ...},
 * the kernel's {@code ping -s 8000} of {@code tern serve}), and the kernel's ordinary clients of Tern's services:
 * curl and wget fetching a file from {@code tern serve --http} (byte-identical, by SHA-256), a UDP client of
 * {@code --udp-echo}, a TCP client of {@code --echo}; {@code tern nc} sending a file to a kernel TCP server,
 * {@code tern nc -l} receiving one from socat, {@code tern nc -w} giving up on a silent peer, and
 * {@code tern nc -u -l --join} receiving a kernel's multicast after its IGMP report.
 */
class TernCommandInteropTest extends VethRigTest {
    private static final Pattern REPLY = Pattern.compile("^8008 bytes from 198\\.18\\.0\\.1: icmp_seq=(\\d+) ttl=64 time=", Pattern.MULTILINE);

    /** {@code java ... dev.tern.cli.Tern ARGS}, with this JVM's class path and the flags the launcher passes. */
    static List<String> tern(Path countersDirectory, String... arguments) {
        final List<String> command = new ArrayList<>(List.of("env", "TERN_COUNTERS_DIR=" + countersDirectory,
            ProcessHandle.current().info().command().orElse("java"), "--enable-native-access=ALL-UNNAMED",
            "--add-exports", "java.base/jdk.internal.misc=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow",
            "-XX:TieredStopAtLevel=1", "-cp", System.getProperty("java.class.path"), "dev.tern.cli.Tern"));
        command.addAll(List.of(arguments));
        return command;
    }

    @Test
    void ternPingOverAfPacketGetsTheKernelsRepliesToFragmentedEchoes(@TempDir Path counters) {
        rig = VethRig.create(VethSetup.DEFAULT);

        final CommandResult ping = rig.net().ternExec(Duration.ofSeconds(60), tern(counters, "ping", "-c", "3", "-s", "8000",
            "-i", "0.05", "-W", "3", "--link", "afpacket:" + NetnsHarness.TERN_INTERFACE, "--ip", VethRig.TERN_CIDR,
            NetnsHarness.PEER_ADDRESS).toArray(String[]::new));

        final String output = ping.stdout() + ping.stderr();
        assertEquals(0, ping.exitCode(), output);
        assertTrue(output.contains("3 packets transmitted, 3 received, 0% packet loss"), output);
        final Matcher replies = REPLY.matcher(ping.stdout());
        final List<Integer> sequences = new ArrayList<>();
        while (replies.find()) {
            sequences.add(Integer.parseInt(replies.group(1)));
        }
        assertEquals(List.of(1, 2, 3), sequences, output);
        assertTrue(!output.contains("wrong data") && !output.contains("DUP"), output);
    }

    /** Starts {@code tern serve ARGS --link afpacket:tern0 --ip 198.18.0.2/24} and returns once it serves. */
    private BackgroundCommand serve(Path counters, String... arguments) {
        final List<String> command = new ArrayList<>(List.of("serve"));
        command.addAll(List.of(arguments));
        command.addAll(List.of("--link", "afpacket:" + NetnsHarness.TERN_INTERFACE, "--ip", VethRig.TERN_CIDR));
        return rig.net().startInTern(tern(counters, command.toArray(String[]::new)).toArray(String[]::new))
            .awaitOutput("answering ARP and ping", Duration.ofSeconds(30));
    }

    private static void assertStoppedCleanly(BackgroundCommand command) {
        final int status = command.stop();
        assertTrue(status == 0 || status == 128 + 15, "ends on SIGTERM (by its shutdown hook): " + status + command.stderr());
        assertTrue(!command.stderr().contains("Exception"), command.stderr());
    }

    static Stream<VethSetup> setups() {
        return VethSetup.offloadsOffAndOn();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("setups")
    void curlFetchesAFileFromTernServeHttpByteIdentical(VethSetup setup, @TempDir Path counters, @TempDir Path files)
        throws Exception {
        rig = VethRig.create(setup);
        final byte[] content = new byte[5_000_000];
        new SplittableRandom(5).nextBytes(content);
        Files.write(files.resolve("five-megabytes.bin"), content);
        final BackgroundCommand serve = serve(counters, "--http", "8080", files.toString());
        final Path fetched = files.resolve("fetched-by-curl");

        final CommandResult curl = rig.net().peerExec(Duration.ofSeconds(40), ExternalTools.require("curl", "curl").toString(),
            "-sS", "--max-time", "30", "-o", fetched.toString(), "-w", "%{http_code} %{size_download}",
            "http://" + NetnsHarness.TERN_ADDRESS + ":8080/five-megabytes.bin");

        assertEquals(0, curl.exitCode(), curl.stdout() + curl.stderr());
        assertEquals("200 5000000", curl.stdout().strip());
        assertEquals(sha256(content), sha256(Files.readAllBytes(fetched)), "byte-identical");
        final CommandResult missing = rig.net().peerExec(Duration.ofSeconds(20), "curl", "-sS", "--max-time", "10", "-o",
            "/dev/null", "-w", "%{http_code}", "http://" + NetnsHarness.TERN_ADDRESS + ":8080/no-such-file");
        assertEquals("404", missing.stdout().strip(), missing.stderr());
        assertStoppedCleanly(serve);
    }

    @Test
    void wgetFetchesAFileFromTernServeHttpByteIdentical(@TempDir Path counters, @TempDir Path files) throws Exception {
        rig = VethRig.create(VethSetup.DEFAULT);
        final byte[] content = new byte[3_000_000];
        new SplittableRandom(6).nextBytes(content);
        Files.write(files.resolve("three-megabytes.bin"), content);
        final BackgroundCommand serve = serve(counters, "--http", "8080", files.toString());
        final Path fetched = files.resolve("fetched-by-wget");

        final CommandResult wget = rig.net().peerExec(Duration.ofSeconds(40), ExternalTools.require("wget", "wget").toString(),
            "-q", "-T", "30", "-t", "1", "-O", fetched.toString(), "http://" + NetnsHarness.TERN_ADDRESS + ":8080/three-megabytes.bin");

        assertEquals(0, wget.exitCode(), wget.stdout() + wget.stderr());
        assertEquals(sha256(content), sha256(Files.readAllBytes(fetched)), "byte-identical");
        assertStoppedCleanly(serve);
    }

    @Test
    void kernelsUdpClientGetsItsDatagramsBackFromTernServeUdpEcho(@TempDir Path counters) {
        rig = VethRig.create(VethSetup.DEFAULT);
        final BackgroundCommand serve = serve(counters, "--udp-echo", "7");
        final List<String> arguments = new ArrayList<>(List.of("udp-client", NetnsHarness.TERN_ADDRESS, "7", "3"));
        IntStream.of(UdpInteropTest.SIZES).forEach(size -> arguments.add(Integer.toString(size)));

        final CommandResult client = rig.kernel().runPeerPy(Duration.ofSeconds(30), arguments.toArray(String[]::new));

        assertEquals(IntStream.of(UdpInteropTest.SIZES).mapToObj(size -> size + " ok").toList(), client.stdout().lines().toList(),
            client.stderr());
        assertStoppedCleanly(serve);
    }

    @Test
    void kernelsTcpClientGetsItsBytesBackFromTernServeEcho(@TempDir Path counters) {
        rig = VethRig.create(VethSetup.DEFAULT);
        final BackgroundCommand serve = serve(counters, "--echo", "7007");

        final CommandResult client = rig.kernel().runPeerPy(Duration.ofSeconds(40), "tcp-source", NetnsHarness.TERN_ADDRESS,
            "7007", Integer.toString(20 << 20), "30");

        final String sent = KernelPeer.line(client.stdout(), "sent");
        assertTrue(sent.startsWith("sent " + (20 << 20) + " "), client.stdout() + client.stderr());
        assertEquals(sent.replace("sent", "received"), KernelPeer.line(client.stdout(), "received"), "20 MiB echoed intact");
        assertStoppedCleanly(serve);
    }

    @Test
    void ternNcSendsAFileToAKernelTcpServerAndExitsWhenTheServerCloses(@TempDir Path counters, @TempDir Path files)
        throws Exception {
        rig = VethRig.create(VethSetup.DEFAULT);
        final byte[] content = new byte[2_000_000];
        new SplittableRandom(7).nextBytes(content);
        final Path input = Files.write(files.resolve("input.bin"), content);
        final BackgroundCommand sink = rig.kernel().startPeerPy("tcp-sink", "5001", "30", "0");

        final List<String> nc = tern(counters, "nc", "-w", "1", "--link", "afpacket:" + NetnsHarness.TERN_INTERFACE, "--ip",
            VethRig.TERN_CIDR, NetnsHarness.PEER_ADDRESS, "5001");
        final CommandResult result = rig.net().ternExec(Duration.ofSeconds(60), "sh", "-c",
            "exec " + String.join(" ", nc.stream().map(TernCommandInteropTest::quoted).toList()) + " < " + quoted(input.toString()));

        assertEquals(0, result.exitCode(), result.stdout() + result.stderr());
        assertEquals(0, sink.awaitExit(Duration.ofSeconds(10)));
        assertEquals("received " + content.length + " " + sha256(content), KernelPeer.line(sink.stdout(), "received"),
            sink.stdout() + sink.stderr());
    }

    /**
     * {@code tern nc -l} writes what the kernel sends to its stdout (through its output pump, on the real file
     * descriptor) byte for byte, and exits when the kernel closes. socat retries its connect until the command's
     * stack listens, and gives each attempt longer than the kernel's SYN retransmissions (a listener takes one
     * connection only).
     */
    @Test
    void ternNcListenerWritesWhatTheKernelSendsToStdoutIntactAndExitsWhenItCloses(@TempDir Path counters, @TempDir Path files)
        throws Exception {
        rig = VethRig.create(VethSetup.DEFAULT);
        final byte[] content = new byte[20 << 20];
        new SplittableRandom(8).nextBytes(content);
        final Path input = Files.write(files.resolve("input.bin"), content);
        final Path output = files.resolve("output.bin");
        final List<String> nc = tern(counters, "nc", "-l", "--link", "afpacket:" + NetnsHarness.TERN_INTERFACE, "--ip",
            VethRig.TERN_CIDR, "5001");
        final BackgroundCommand listener = rig.net().startInTern("sh", "-c", "exec " + String.join(" ",
            nc.stream().map(TernCommandInteropTest::quoted).toList()) + " < /dev/null > " + quoted(output.toString()));

        final CommandResult socat = rig.net().peerExec(Duration.ofSeconds(60), ExternalTools.require("socat", "socat").toString(),
            "-u", "OPEN:" + input, "TCP4:" + NetnsHarness.TERN_ADDRESS + ":5001,retry=300,interval=0.1,connect-timeout=20");

        assertEquals(0, socat.exitCode(), socat.stderr());
        assertEquals(0, listener.awaitExit(Duration.ofSeconds(30)), listener.stderr());
        assertEquals(sha256(content), sha256(Files.readAllBytes(output)), "byte-identical");
    }

    /** {@code -w} bounds a TCP connect: a peer that answers nothing (the kernel's end drops every packet) gets one line. */
    @Test
    void ternNcWithWGivesUpOnASilentPeerWithOneLineAndStatus1(@TempDir Path counters) {
        ExternalTools.require("nft", "nftables");
        rig = VethRig.create(VethSetup.DEFAULT);
        try (PacketLoss silence = PacketLoss.install(rig.net(), 100)) {
            final CommandResult nc = rig.net().ternExec(Duration.ofSeconds(60), "sh", "-c", "exec " + String.join(" ",
                tern(counters, "nc", "-w", "2", "--link", "afpacket:" + NetnsHarness.TERN_INTERFACE, "--ip", VethRig.TERN_CIDR,
                    NetnsHarness.PEER_ADDRESS, "5001").stream().map(TernCommandInteropTest::quoted).toList()) + " < /dev/null");

            assertEquals(1, nc.exitCode(), nc.stdout() + nc.stderr());
            assertEquals("tern: nc: connect to 198.18.0.1 port 5001: timed out after 2 s (-w)", nc.stderr().strip());
            assertTrue(silence.counts().toPeerDropped() > 0, "what Tern sent (ARP requests) went nowhere");
        }
    }

    @Test
    void ternNcJoinedToAGroupPrintsTheKernelsMulticastAfterItsReportIsSeen(@TempDir Path counters) throws Exception {
        rig = VethRig.create(VethSetup.DEFAULT);
        final BackgroundCommand report = rig.net().startInPeer(ExternalTools.require("tcpdump", "tcpdump").toString(), "-i",
            NetnsHarness.PEER_INTERFACE, "-n", "-c", "1", "-v", "igmp").awaitOutput("listening on", Duration.ofSeconds(10));
        final BackgroundCommand nc = rig.net().startInTern(tern(counters, "nc", "-u", "-l", "--join", "239.1.2.3", "--link",
            "afpacket:" + NetnsHarness.TERN_INTERFACE, "--ip", VethRig.TERN_CIDR, "5000").toArray(String[]::new));

        assertEquals(0, report.awaitExit(Duration.ofSeconds(30)), "tcpdump caught Tern's report: " + report.stderr());
        assertTrue(report.stdout().contains("igmp v3 report") && report.stdout().contains("239.1.2.3"), report.stdout());
        final CommandResult send = rig.kernel().runPeerPy(Duration.ofSeconds(20), "udp-send", NetnsHarness.PEER_ADDRESS,
            "239.1.2.3", "5000", "3", "0.05", "line");
        assertEquals("sent 3", send.stdout().strip(), send.stderr());
        final long deadline = System.nanoTime() + 5_000_000_000L;
        while (!nc.stdout().contains("line-2") && System.nanoTime() - deadline < 0) {
            Thread.sleep(20);
        }

        assertEquals("line-0line-1line-2", nc.stdout());
        // Zero-copy receive: each datagram went from the link's frame straight into nc's stdout block.
        final java.util.Map<String, Long> ncCounters = CountersSnapshot.readAll(counters).stream()
            .filter(snapshot -> snapshot.alive() && snapshot.name().equals("nc")).findFirst().orElseThrow().counters();
        assertTrue(ncCounters.getOrDefault("udp.rx.zero_copy_datagrams", 0L) >= 3, ncCounters.toString());
        assertEquals(0L, ncCounters.getOrDefault("udp.rx.copied_datagrams", 0L), "none copied into the socket's ring");
        assertStoppedCleanly(nc);
    }

    static String quoted(String word) {
        return "'" + word.replace("'", "'\\''") + "'";
    }

    static String sha256(byte[] bytes) {
        return HexFormat.of().formatHex(TcpStreams.sha256().digest(bytes));
    }

    @Test
    void kernelsFragmentedPingsOfTernServeComeBack(@TempDir Path counters) {
        rig = VethRig.create(VethSetup.DEFAULT);
        final BackgroundCommand serve = rig.net().startInTern(tern(counters, "serve", "--link",
            "afpacket:" + NetnsHarness.TERN_INTERFACE, "--ip", VethRig.TERN_CIDR).toArray(String[]::new));
        serve.awaitOutput("answering ARP and ping", Duration.ofSeconds(30));

        final KernelPeer.PingOutcome ping = rig.kernel().ping(3, 8000, 0.05);

        assertEquals(3, ping.received(), ping.output());
        assertTrue(ping.clean(), ping.output());
        assertEquals(List.of(1, 2, 3), ping.replySequences());
        final int status = serve.stop();
        assertTrue(status == 0 || status == 128 + 15, "serve ends on SIGTERM (by its shutdown hook): " + status);
        assertTrue(!serve.stderr().contains("Exception"), serve.stderr());
    }

    /** Kernel connections in the peer namespace established to Tern's echo port, from {@code ss}. */
    private int establishedToTernEcho() {
        final CommandResult ss = rig.net().peerExec(Duration.ofSeconds(10), "ss", "-Htn", "state", "established",
            "dst", NetnsHarness.TERN_ADDRESS + ":7");
        return (int) ss.stdout().lines().filter(line -> !line.isBlank()).count();
    }

    /**
     * SIGTERM ends tern serve, and every kernel client it had is told within a second: reset, not left ESTABLISHED
     * writing to a host that is gone (the process used to exit without a word to its peers). One line on stderr
     * says how many were reset.
     */
    @Test
    void sigtermToTernServeResetsEveryKernelClientWithinASecond(@TempDir Path counters) throws InterruptedException {
        rig = VethRig.create(VethSetup.DEFAULT);
        final BackgroundCommand serve = rig.net().startInTern(tern(counters, "serve", "--echo", "7", "--link",
            "afpacket:" + NetnsHarness.TERN_INTERFACE, "--ip", VethRig.TERN_CIDR).toArray(String[]::new));
        serve.awaitOutput("answering ARP and ping", Duration.ofSeconds(30));
        final String socat = ExternalTools.require("socat", "socat").toString();
        final int clients = 50;
        final List<BackgroundCommand> kernel = new ArrayList<>();
        for (int i = 0; i < clients; i++) {
            // stdin a pipe held open by sleep (socat itself is the process): the client keeps its connection
            // until Tern ends it.
            kernel.add(rig.net().startInPeer("bash", "-c", "exec " + socat + " - TCP:" + NetnsHarness.TERN_ADDRESS
                + ":7 < <(sleep 60)"));
        }
        final long connectedBy = System.nanoTime() + 20_000_000_000L;
        while (establishedToTernEcho() < clients && System.nanoTime() - connectedBy < 0) {
            Thread.sleep(50);
        }
        assertEquals(clients, establishedToTernEcho(), "every kernel client connected");

        final long resetsBefore = kernelEstabResets();
        final long stoppedAt = System.nanoTime();
        final int status = serve.stop();
        final long stopNs = System.nanoTime() - stoppedAt;
        System.out.printf("tern serve stopped %d ms after SIGTERM; %s%n", stopNs / 1_000_000, serve.stderr().strip());
        assertTrue(status == 128 + 15, "serve ends on SIGTERM: " + status + "; " + serve.stderr());
        assertEquals(0, establishedToTernEcho(), "no kernel client left ESTABLISHED");
        assertTrue(stopNs < 1_000_000_000L, "stopped in " + stopNs / 1_000_000 + " ms");
        assertTrue(serve.stderr().contains("tern: serve: stopping: " + clients + " connection(s) reset"), serve.stderr());
        // The kernel counts each as a connection reset in ESTABLISHED (RFC 4022's tcpEstabResets).
        assertEquals(resetsBefore + clients, kernelEstabResets(), "each kernel connection ended by a reset");
        for (BackgroundCommand client : kernel) {
            client.awaitExit(Duration.ofSeconds(5));
        }
    }

    /**
     * Kernel clients that each send {@code argv[4]} bytes to the echo port over {@code argv[3]} connections with a
     * small receive buffer, so that most of the echo waits in Tern's send buffer; print "sent", wait {@code argv[5]}
     * seconds (the test stops Tern meanwhile), then read each connection to its end and print "whole N": how many
     * brought back every byte and then a clean end of stream, and a line for each that did not.
     */
    private static final String SLOW_ECHO_READERS = String.join("\n",
        "import socket, sys, time",
        "host, port, n, size, wait = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])",
        "payload = bytes(range(256)) * (size // 256)",
        "socks = []",
        "for i in range(n):",
        "    s = socket.socket()",
        "    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)",
        "    s.settimeout(10)",
        "    s.connect((host, port))",
        "    socks.append(s)",
        "for s in socks:",
        "    s.sendall(payload)",
        "print('sent', flush=True)",
        "time.sleep(wait)",
        "whole = 0",
        "for s in socks:",
        "    got = bytearray()",
        "    try:",
        "        while True:",
        "            b = s.recv(65536)",
        "            if not b:",
        "                break",
        "            got += b",
        "        if bytes(got) == payload:",
        "            whole += 1",
        "        else:",
        "            print('short %d' % len(got), flush=True)",
        "    except OSError as e:",
        "        print('error %s after %d' % (e, len(got)), flush=True)",
        "    s.close()",
        "print('whole %d' % whole, flush=True)");

    /**
     * With {@code --shutdown-linger 2}, SIGTERM lets the data tern serve has already written reach its kernel clients
     * before its FIN: 20 clients, each with 64 KiB of echo waiting in Tern's send buffer behind a small receive
     * window, read nothing until after the signal, and each still gets every byte and a clean end of stream, not a
     * reset; the process exits once they have all closed, within the linger.
     */
    @Test
    void sigtermWithALingerDeliversTheWrittenDataToKernelClientsBeforeTheFin(@TempDir Path counters) throws Exception {
        rig = VethRig.create(VethSetup.DEFAULT);
        final BackgroundCommand serve = rig.net().startInTern(tern(counters, "serve", "--echo", "7", "--shutdown-linger", "2",
            "--link", "afpacket:" + NetnsHarness.TERN_INTERFACE, "--ip", VethRig.TERN_CIDR).toArray(String[]::new));
        serve.awaitOutput("answering ARP and ping", Duration.ofSeconds(30));
        final int clients = 20;
        final BackgroundCommand readers = rig.net().startInPeer("timeout", "30", "python3", "-c", SLOW_ECHO_READERS,
            NetnsHarness.TERN_ADDRESS, "7", Integer.toString(clients), Integer.toString(64 << 10), "1.5");
        readers.awaitOutput("sent", Duration.ofSeconds(20));
        Thread.sleep(300);                                                   // the last bytes reach Tern's echo
        final long resetsBefore = kernelEstabResets();
        final long stoppedAt = System.nanoTime();
        final int status = serve.stop();
        final long stopNs = System.nanoTime() - stoppedAt;
        readers.awaitExit(Duration.ofSeconds(20));
        System.out.printf("tern serve --shutdown-linger 2 stopped %d ms after SIGTERM; %s; the clients: %s%n",
            stopNs / 1_000_000, serve.stderr().strip(), readers.stdout().strip().replace('\n', ' '));
        assertTrue(status == 128 + 15, "serve ends on SIGTERM: " + status + "; " + serve.stderr());
        assertTrue(readers.stdout().contains("whole " + clients), "every client got all its data and then the end: "
            + readers.stdout() + readers.stderr());
        assertTrue(serve.stderr().contains("tern: serve: stopping: " + clients + " connection(s) closed with a FIN, 0 "
            + "connection(s) reset"), serve.stderr());
        assertEquals(resetsBefore, kernelEstabResets(), "no kernel connection ended by a reset");
        assertTrue(stopNs < 2_500_000_000L, "stopped within the linger: " + stopNs / 1_000_000 + " ms");
    }

    /** Tcp EstabResets of the peer namespace's kernel, from /proc/net/snmp. */
    private long kernelEstabResets() {
        final List<String> lines = rig.net().peerExec(Duration.ofSeconds(10), "cat", "/proc/net/snmp").stdout().lines()
            .filter(line -> line.startsWith("Tcp:")).toList();
        final List<String> names = List.of(lines.get(0).split("\\s+"));
        return Long.parseLong(lines.get(1).split("\\s+")[names.indexOf("EstabResets")]);
    }
}
