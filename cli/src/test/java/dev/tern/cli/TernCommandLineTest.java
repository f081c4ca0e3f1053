package dev.tern.cli;

import dev.tern.core.counters.CountersFile;
import dev.tern.core.net.Ipv4Address;
import dev.tern.ethernet.memory.MemoryWire;
import dev.tern.stack.NetStack;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class TernCommandLineTest {
    /** What a run printed and returned. */
    record Run(int status, String out, String err) {
    }

    static Run tern(String... args) {
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        final ByteArrayOutputStream err = new ByteArrayOutputStream();
        final int status = Tern.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8));
        return new Run(status, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    @ParameterizedTest(name = "tern {0}")
    @CsvSource(delimiter = '|', value = {
        "frob                                  | unknown command 'frob'",
        "ping                                  | ping: missing operand",
        "ping -c x 198.18.0.1                  | ping: -c wants a whole number, got 'x'",
        "ping -s 70000 198.18.0.1              | ping: -s must be 0..65507, got 70000",
        "ping --link foo 198.18.0.1            | ping: --link wants memory, afpacket:IFACE, afxdp:IFACE[:QUEUE] or rawqp:DEVICE[:PORT], got 'foo'",
        "ping --link afxdp: 198.18.0.1         | ping: --link wants memory, afpacket:IFACE, afxdp:IFACE[:QUEUE] or rawqp:DEVICE[:PORT], got 'afxdp:'",
        "ping --link afxdp:eth0:q 198.18.0.1   | ping: afxdp queue must be 0..4095, got 'q'",
        "ping --ip 198.18.0.300/24 198.18.0.1  | ping: --ip: bad IPv4 address '198.18.0.300': 300 is more than 255",
        "ping --ip 198.18.0.2/40 198.18.0.1    | ping: --ip: bad address '198.18.0.2/40'",
        "ping --mac 02:00:00:00:00 198.18.0.1  | ping: --mac: bad MAC address '02:00:00:00:00'",
        "ping --mac 01:00:5e:00:00:01 198.18.0.1 | ping: --mac must be a unicast address",
        "ping --gw 10.0.0.1 198.18.0.1         | ping: --gw 10.0.0.1 is not on the subnet 198.18.0.2/24",
        "ping --gw 198.18.0.1 --gw 10.0.0.1 --gw 198.18.0.254 198.18.0.1 | ping: --gw 10.0.0.1 is not on the subnet 198.18.0.2/24",
        "ping --gw 198.18.0.1 --gw 198.18.0.x --gw 198.18.0.254 198.18.0.1 | ping: --gw: bad IPv4 address '198.18.0.x'",
        "ping --mtu 100 198.18.0.1             | ping: --mtu must be 576..65535, got 100",
        "ping --frobnicate 198.18.0.1          | ping: unknown option --frobnicate",
        "ping host.example                     | ping: bad IPv4 address 'host.example'",
        "demo --loss 2                         | demo: --loss must be between 0.0 and 0.5, got 2",
        "stat extra                            | stat: too many operands",
        "plot                                  | plot: missing operand",
        "plot t.csv                            | plot: missing -o OUT.svg",
        "plot t.csv -o t.gif                   | plot: -o t.gif: the name must end in .svg or .png",
        "plot t.csv -o                         | plot: -o needs a value",
        "plot t.csv -o t.png --width 9         | plot: unknown option --width",
        "plot a.csv b.csv -o t.png             | plot: too many operands",
        "nc --cc reno 198.18.0.1 7             | nc: unknown congestion control 'reno' (valid: cubic, newreno, none, dctcp, bbr, or a class name)",
        "serve --cc vegas --echo 7             | serve: unknown congestion control 'vegas' (valid: cubic, newreno, none, dctcp, bbr, or a class name)",
        "serve --shards 0 --echo 7             | serve: --shards must be 1..255, got 0",
        "nc --ecn maybe 198.18.0.1 7           | nc: --ecn: unknown ECN mode 'maybe' (valid: off, on, server)",
        "serve --ecn 1 --echo 7                | serve: --ecn: unknown ECN mode '1' (valid: off, on, server)",
        "exec --ecn x -- java -version         | exec: --ecn: unknown ECN mode 'x' (valid: off, on, server)",
        "exec --shards 256 -- java -version     | exec: --shards must be 1..255, got 256",
        "exec --shards 2 --link afxdp:eth0 -- java -version | exec: --shards 2 needs --link afpacket:IFACE, rawqp:DEVICE or memory, without --pcap",
        "exec --shards 2 --pcap x.pcap -- java -version | exec: --shards 2 needs --link afpacket:IFACE, rawqp:DEVICE or memory, without --pcap",
        "exec --release-idle soon -- java -version | exec: --release-idle wants a whole number, got 'soon'",
        "exec --release-idle -1 -- java -version   | exec: --release-idle must be 0..86400000, got -1",
        "exec --buffer-size 3000 -- java -version  | exec: --buffer-size must be a power of two, got 3000",
        "exec --max-connections 0 -- java -version | exec: --max-connections must be 1..1048576, got 0",
        "exec --memory-limit 1k -- java -version   | exec: --memory-limit wants a whole number, got '1k'",
        "serve --echo 7 --memory-limit 1000    | serve: --memory-limit must be 1048576..1099511627776 bytes, got 1000",
        "serve --shards 3 --link rawqp:mlx5_0 --echo 7 | serve: --shards 3 on rawqp must be a power of two",
        "serve --http 80 . --keepalive-timeout x     | serve: --keepalive-timeout wants a whole number, got 'x'",
        "serve --http 80 . --keepalive-timeout 90000 | serve: --keepalive-timeout must be 0..86400, got 90000",
        "serve --http 80 . --keepalive-timeout -1    | serve: --keepalive-timeout must be 0..86400, got -1",
        "serve --keepalive-timeout 5 --echo 7  | serve: --keepalive-timeout is for --http, which is not given",
        "serve --request-timeout 5 --echo 7    | serve: --request-timeout is for --http, which is not given",
        "serve --http 80 . --request-timeout 0 | serve: --request-timeout must be 1..86400, got 0",
        "serve --http 80 . --request-timeout x | serve: --request-timeout wants a whole number, got 'x'",
        "serve --max-per-source 0 --echo 7     | serve: --max-per-source must be 1..1048576, got 0",
        "serve --max-per-source 4 --udp-echo 7 | serve: --max-per-source is for --echo, --discard and --http, none of which is given",
        "serve --echo 7 --max-connections 0    | serve: --max-connections must be 1..1048576, got 0",
        "serve --echo 7 --max-connections lots | serve: --max-connections wants a whole number, got 'lots'",
        "serve --echo 7 --buffer-size 512      | serve: --buffer-size must be 1024..1073741824, got 512",
        "serve --echo 7 --buffer-size 3000     | serve: --buffer-size must be a power of two, got 3000",
        "serve --shards 2 --link afxdp:eth0 --echo 7 | serve: --shards 2 needs --link afpacket:IFACE, rawqp:DEVICE or memory, without --pcap (got --link afxdp:eth0",
        "serve --shards 2 --pcap x.pcap        | serve: --shards 2 needs --link afpacket:IFACE, rawqp:DEVICE or memory, without --pcap (got --link memory with --pcap)",
        "nc -u --cc newreno 198.18.0.1 7       | nc: --cc and --tcp-trace are for TCP, not with -u",
        "nc --tcp-trace                        | nc: --tcp-trace needs a value",
        "nc -u --shutdown-linger 2 198.18.0.1 7 | nc: --shutdown-linger is for TCP, not with -u",
        "serve --echo 7 --shutdown-linger -1   | serve: --shutdown-linger",
        "serve --echo 7 --shutdown-linger 3601 | serve: --shutdown-linger",
    })
    void aBadCommandLineGetsOneClearLineAndStatus2(String line, String message) {
        final Run run = tern(line.trim().split("\\s+"));
        assertEquals(2, run.status(), run.err());
        assertEquals(1, run.err().lines().count(), "one line: " + run.err());
        assertTrue(run.err().startsWith("tern: " + message.trim()), run.err());
    }

    @Test
    void gwGivenTwiceListsTwoDefaultGatewaysInOrder() {
        final NetworkOptions options = NetworkOptions.from(Arguments.parse("ping",
            new String[] {"--gw", "198.18.0.1", "--gw", "198.18.0.254", "198.18.0.9"}, NetworkOptions.VALUE_FLAGS,
            java.util.Set.of()));
        assertArrayEquals(new int[] {Ipv4Address.parse("198.18.0.1"), Ipv4Address.parse("198.18.0.254")},
            options.gateways);
        assertEquals(Ipv4Address.parse("198.18.0.1"), options.gateway(), "the first is the one used first");
    }

    /** {@code --max-connections} and {@code --memory-limit} (serve, exec) size the stack the command opens. */
    @Test
    void theConnectionTableAndMemoryLimitReachTheStack() {
        final java.util.Set<String> valueFlags = new java.util.HashSet<>(NetworkOptions.VALUE_FLAGS);
        valueFlags.add("--memory-limit");
        final Arguments args = Arguments.parse("serve", new String[] {"--memory-limit", "67108864"}, valueFlags,
            java.util.Set.of());
        final NetworkOptions options = NetworkOptions.from(args).maxConnections(300)
            .memoryLimit(NetworkOptions.memoryLimit("serve", args));
        try (Network network = options.open("serve")) {
            final dev.tern.tcp.TcpConfig config = network.stack.tcp().config();
            assertEquals(300, config.maxConnections());
            assertEquals(67_108_864L, config.memoryLimitBytes());
            assertEquals(33_554_432L, config.memoryPressureBytes(), "the pressure mark at half");
        }
    }

    /** {@code --ecn} (nc, serve, exec) sets the policy of the stack the command opens; ECN then works end to end. */
    @Test
    void ecnReachesTheStackAndNegotiatesWithTheMemoryPeer() {
        final java.util.Set<String> valueFlags = new java.util.HashSet<>(NetworkOptions.VALUE_FLAGS);
        valueFlags.add("--ecn");
        final Arguments args = Arguments.parse("nc", new String[] {"--ecn", "ON"}, valueFlags, java.util.Set.of());
        try (Network network = NetworkOptions.from(args).ecn(NetworkOptions.ecn("nc", args)).open("nc")) {
            assertEquals(dev.tern.tcp.EcnMode.ON, network.stack.tcp().config().ecn());
        }
        final byte[] input = new byte[1 << 20];
        new java.util.SplittableRandom(12).nextBytes(input);
        final Run run = nc(input, "--ecn", "on", "198.18.0.1", "7");
        assertEquals(0, run.status(), run.err());
        assertEquals(input.length, run.out().length());
    }

    @Test
    void aLinkThatCannotOpenGetsOneLineNamingWhatWorks() {
        final Run run = tern("nc", "--link", "rawqp:mlx5_0", "198.18.0.1", "7");
        assertEquals(1, run.status());
        assertEquals(1, run.err().lines().count(), run.err());
        assertTrue(run.err().contains("--link memory"), run.err());
        // Shards on rawqp (a queue pair each) fail the same way here, before anything starts.
        final Run sharded = tern("serve", "--shards", "2", "--link", "rawqp:mlx5_0", "--echo", "7");
        assertEquals(1, sharded.status(), sharded.err());
        assertEquals(1, sharded.err().lines().count(), sharded.err());
        assertTrue(sharded.err().contains("rawqp:mlx5_0:1 unavailable") && sharded.err().contains("--link memory"), sharded.err());
    }

    @Test
    void anAfXdpLinkOnAMissingInterfaceGetsOneLine() {
        final Run run = tern("nc", "--link", "afxdp:nosuch0", "198.18.0.1", "7");
        assertEquals(1, run.status());
        assertEquals(1, run.err().lines().count(), run.err());
        assertTrue(run.err().contains("afxdp: no interface named 'nosuch0'"), run.err());
    }

    @Test
    void demoPassesAndSaysSo() {
        final Run run = tern("demo", "--seed", "7", "--tcp-mib", "4");
        assertEquals(0, run.status(), run.out());
        assertTrue(run.out().contains("demo: all steps passed"), run.out());
        assertEquals(0, run.out().lines().filter(l -> l.contains("[FAIL]")).count(), run.out());
        for (String step : new String[] {"ethernet", "arp", "ping 56", "ping 60000", "udp echo", "multicast", "tcp"}) {
            assertTrue(run.out().lines().anyMatch(l -> l.startsWith("  [ ok ] " + step + " ")), step + ": " + run.out());
        }
    }

    @Test
    void demoIsDeterministicForASeed() {
        assertEquals(tern("demo", "--seed", "3", "--tcp-mib", "1").out(), tern("demo", "--seed", "3", "--tcp-mib", "1").out());
    }

    @Test
    void pingOnTheMemoryWirePrintsRepliesAndStatisticsLikePing8() {
        final Run run = tern("ping", "-c", "3", "-i", "0.05", "-s", "3000", "198.18.0.1");
        assertEquals(0, run.status(), run.out() + run.err());
        assertTrue(run.out().startsWith("PING 198.18.0.1 (198.18.0.1) 3000(3028) bytes of data."), run.out());
        assertEquals(3, run.out().lines().filter(l -> l.matches("3008 bytes from 198\\.18\\.0\\.1: icmp_seq=\\d ttl=64 time=[0-9.]+ ms")).count(), run.out());
        assertTrue(run.out().contains("3 packets transmitted, 3 received, 0% packet loss"), run.out());
        assertTrue(run.out().contains("rtt min/avg/max/mdev = "), run.out());
    }

    /** IPv6 on the memory wire: the peer gets 2001:db8::1, and large echoes cross in fragments both ways. */
    @Test
    void pingOverIpv6OnTheMemoryWire() {
        final Run run = tern("ping", "-c", "3", "-i", "0.05", "-s", "3000", "--ip6", "2001:db8::2/64", "2001:db8::1");
        assertEquals(0, run.status(), run.out() + run.err());
        assertTrue(run.out().startsWith("PING 2001:db8::1 (2001:db8::1) 3000 data bytes"), run.out());
        assertEquals(3, run.out().lines().filter(l -> l.matches("3008 bytes from 2001:db8::1: icmp_seq=\\d ttl=64 time=[0-9.]+ ms")).count(), run.out());
        assertTrue(run.out().contains("3 packets transmitted, 3 received, 0% packet loss"), run.out());
    }

    @Test
    void pingOfAnIpv6AddressWithoutIpv6IsOneLineAndExit2() {
        final Run run = tern("ping", "-c", "1", "2001:db8::1");
        assertEquals(2, run.status());
        assertEquals("tern: ping: 2001:db8::1 is an IPv6 address: give this stack IPv6 with --ip6 ADDR/N (or --ip6 auto)",
            run.err().strip());
        final Run nc = tern("nc", "2001:db8::1", "7");
        assertEquals(2, nc.status());
        assertEquals("tern: nc: 2001:db8::1 is an IPv6 address: give this stack IPv6 with --ip6 ADDR/N (or --ip6 auto)",
            nc.err().strip());
        final Run join6 = tern("nc", "-u", "-l", "--join", "ff0e::1:2", "5000");
        assertEquals(2, join6.status());
        assertEquals("tern: nc: ff0e::1:2 is an IPv6 address: give this stack IPv6 with --ip6 ADDR/N (or --ip6 auto)",
            join6.err().strip());
        final Run notGroup = tern("nc", "-u", "-l", "--ip6", "2001:db8::2/64", "--join", "2001:db8::7", "5000");
        assertEquals(2, notGroup.status());
        assertEquals("tern: nc: --join wants a multicast group (ff00::/8), got 2001:db8::7", notGroup.err().strip());
        final Run xdp = tern("ping", "-c", "1", "--link", "afxdp:nosuch0", "--ip6", "auto", "2001:db8::1");
        assertEquals(2, xdp.status());
        assertEquals("tern: ping: --ip6 auto needs router advertisements, which go to all nodes, and on afxdp those"
            + " stay the kernel's (a frame goes to Tern or to the kernel, not both); give --ip6 ADDR/N or use --link"
            + " afpacket:nosuch0", xdp.err().strip());
        final Run bad = tern("ping", "-c", "1", "--ip6", "2001:db8::2/200", "2001:db8::1");
        assertEquals(2, bad.status());
        assertEquals(1, bad.err().strip().lines().count(), bad.err());
        assertTrue(bad.err().contains("--ip6"), bad.err());
    }

    @Test
    void ncOverTcpEchoesStdinThroughTheMemoryPeer() {
        final java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        final byte[] input = new byte[300_000];
        new java.util.SplittableRandom(9).nextBytes(input);
        final int status;
        try {
            status = new NcCommand(new java.io.ByteArrayInputStream(input), new PrintStream(out, true), System.err)
                .run(new String[] {"198.18.0.1", "7"});
        } catch (java.io.IOException e) {
            throw new AssertionError(e);
        }
        assertEquals(0, status);
        org.junit.jupiter.api.Assertions.assertArrayEquals(input, out.toByteArray());
    }

    /** Runs {@code nc ARGS} with {@code input} as its stdin; returns what it printed and its status. */
    static Run nc(byte[] input, String... args) {
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        final ByteArrayOutputStream err = new ByteArrayOutputStream();
        try {
            final int status = new NcCommand(new java.io.ByteArrayInputStream(input), new PrintStream(out, true),
                new PrintStream(err, true, StandardCharsets.UTF_8)).run(args);
            return new Run(status, out.toString(StandardCharsets.ISO_8859_1), err.toString(StandardCharsets.UTF_8));
        } catch (java.io.IOException e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void ncWithCcAndTcpTraceWritesATraceThatPlots(@TempDir Path directory) throws java.io.IOException {
        final byte[] input = new byte[2 << 20];
        new java.util.SplittableRandom(11).nextBytes(input);
        final Path trace = directory.resolve("nc.csv");
        final Run run = nc(input, "--cc", "newreno", "--tcp-trace", trace.toString(), "198.18.0.1", "7");
        assertEquals(0, run.status(), run.err());
        assertEquals(input.length, run.out().length());
        final java.util.List<String> lines = java.nio.file.Files.readAllLines(trace);
        assertEquals(dev.tern.tcp.TcpTrace.CSV_HEADER, lines.getFirst());
        assertTrue(lines.size() > 20, "a record per ACK: " + lines.size());
        assertTrue(lines.stream().skip(1).allMatch(line -> line.split(",").length == 21), "21 columns each");
        final Path png = directory.resolve("nc.png");
        assertEquals(0, tern("plot", trace.toString(), "-o", png.toString()).status());
        assertTrue(java.nio.file.Files.size(png) > 1000);
    }

    @Test
    void ncOverTcpMovesMegabytesThroughTheEchoPeerIntactInBlocks() {
        // More than nc's blocks in flight each way and its 4 MiB send buffer: the pumps wait on each other.
        final byte[] input = new byte[6 << 20];
        new java.util.SplittableRandom(10).nextBytes(input);
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        final int status;
        try {
            status = new NcCommand(new java.io.ByteArrayInputStream(input), new PrintStream(out, true), System.err)
                .run(new String[] {"198.18.0.1", "7"});
        } catch (java.io.IOException e) {
            throw new AssertionError(e);
        }
        assertEquals(0, status);
        org.junit.jupiter.api.Assertions.assertArrayEquals(input, out.toByteArray());
    }

    @Test
    void ncOverUdpSendsEachReadAsADatagramAndPrintsTheEcho() {
        final Run run = nc("hello over udp".getBytes(StandardCharsets.US_ASCII), "-u", "-w", "0.3", "198.18.0.1", "7");
        assertEquals(0, run.status(), run.err());
        assertEquals("hello over udp", run.out());
    }

    @Test
    void ncWithWGivesUpAConnectNobodyAnswersWithOneLineAndStatus1() {
        final long started = System.nanoTime();
        final Run run = nc(new byte[0], "-w", "0.5", "198.18.0.77", "80");
        final double seconds = (System.nanoTime() - started) / 1e9;
        assertEquals(1, run.status(), run.err());
        assertEquals("tern: nc: connect to 198.18.0.77 port 80: timed out after 0.5 s (-w)", run.err().strip());
        assertTrue(seconds < 2.5, "gave up after about 0.5 s, not after ARP's 3 s: " + seconds);
    }

    @Test
    void ncWithWConnectsAndTransfersWhenThePeerAnswers() {
        final Run run = nc("ping".getBytes(StandardCharsets.US_ASCII), "-w", "1", "198.18.0.1", "7");
        assertEquals(0, run.status(), run.err());
        assertEquals("ping", run.out());
    }

    @Test
    void ncInUdpModeOpensAfPacketWithMtuSizedSlotsForDatagrams() {
        final NetworkOptions options = NetworkOptions.from(Arguments.parse("nc", new String[] {"--link", "afpacket:eth9",
            "--ip", "198.18.0.2/24"}, NetworkOptions.VALUE_FLAGS, java.util.Set.of())).forDatagrams();
        assertEquals(dev.tern.afpacket.AfPacketOptions.datagrams(), options.afpacketOptions());
        assertEquals(dev.tern.afpacket.AfPacketOptions.RX_FRAME_SIZE_MTU, options.afpacketOptions().rxFrameSize());
        assertTrue(!options.afpacketOptions().vnetHeader());
        assertEquals(64, options.afpacketOptions().rxBlockCount());
    }

    @Test
    void ncOpensAfPacketAsTheVethBenchmarkDoesWithTheVnetHeader() {
        final NetworkOptions options = NetworkOptions.from(Arguments.parse("nc", new String[] {"--link", "afpacket:eth9",
            "--ip", "198.18.0.2/24"}, NetworkOptions.VALUE_FLAGS, java.util.Set.of()));
        assertEquals(dev.tern.afpacket.AfPacketOptions.throughput(), options.afpacketOptions());
        assertTrue(options.afpacketOptions().vnetHeader());
        assertEquals(256, options.afpacketOptions().rxBlockCount(), "1024 slots of 64 KiB, as AfPacketOptions.throughput()");
        assertEquals(4 << 20, NcCommand.TCP_BUFFERS.sendBufferSize());
        assertEquals(4 << 20, NcCommand.TCP_BUFFERS.receiveBufferSize());
    }

    @Test
    void ncOverUdpToAClosedPortSaysConnectionRefusedFromTheIcmpError() {
        // The memory peer answers UDP on port 7 only: port 81 gets an ICMP port unreachable, which the connected
        // socket reports (its datagrams go to a receive handler, so the command asks the socket for the error).
        final Run run = nc("anyone?".getBytes(StandardCharsets.US_ASCII), "-u", "-w", "2", "198.18.0.1", "81");
        assertEquals(1, run.status(), run.err());
        assertTrue(run.err().contains("connection refused"), run.err());
        assertEquals(1, run.err().lines().count(), run.err());
    }

    @Test
    void ncToAClosedPortSaysConnectionRefused() {
        final Run run = tern("nc", "198.18.0.1", "81");
        assertEquals(1, run.status());
        assertTrue(run.err().contains("connection refused"), run.err());
    }

    @Test
    void pingToAnAbsentHostReportsHostUnreachableAndExits1() {
        final Run run = tern("ping", "-c", "1", "198.18.0.77");
        assertEquals(1, run.status(), run.out());
        assertTrue(run.out().contains("From 198.18.0.2 icmp_seq=1 Destination Host Unreachable"), run.out());
        assertTrue(run.out().contains("1 packets transmitted, 0 received, +1 errors, 100% packet loss"), run.out());
    }

    @Test
    void statShowsTheCountersOfARunningStack(@TempDir Path directory) {
        try (MemoryWire wire = MemoryWire.builder().build();
             NetStack stack = NetStack.builder().name("stat-test").link(wire.attach("x", 0x0200_0000_0009L))
                 .address("198.18.0.9/24").countersDirectory(directory).build()) {
            stack.doWork();
            final Run run = tern("stat", "--dir", directory.toString());
            assertEquals(0, run.status(), run.err());
            assertTrue(run.out().startsWith("stack stat-test (pid " + ProcessHandle.current().pid()), run.out());
            assertTrue(run.out().lines().anyMatch(l -> l.matches("\\s+arp\\.tx\\.requests\\s+1")), run.out());
            assertTrue(run.out().lines().noneMatch(l -> l.matches("\\s+\\S+\\s+0")), "zero counters hidden: " + run.out());
            assertTrue(tern("stat", "--all", "--dir", directory.toString()).out().contains("ipv4.drop.bad_checksum"));
        }
        assertTrue(tern("stat", "--dir", directory.toString()).out().contains("no running stacks"));
    }

    @Test
    void statShowsEachShardAndThenTheirTotals(@TempDir Path directory) {
        try (MemoryWire wire = MemoryWire.builder().build()) {
            final dev.tern.ethernet.memory.MemoryLink[] links = wire.attachShards("s", 0x0200_0000_0009L, 2);
            try (dev.tern.stack.StackShards shards = dev.tern.stack.StackShards.build(2, k -> links[k],
                builder -> builder.name("sharded").address("198.18.0.9/24").countersDirectory(directory))) {
                shards.shard(0).counters().counter("test.things").setRelease(2);
                shards.shard(1).counters().counter("test.things").setRelease(3);
                final Run run = tern("stat", "--dir", directory.toString());
                assertEquals(0, run.status(), run.err());
                final long pid = ProcessHandle.current().pid();
                assertTrue(run.out().contains("stack sharded[0/2] (pid " + pid), run.out());
                assertTrue(run.out().contains("stack sharded[1/2] (pid " + pid), run.out());
                final String totals = run.out().substring(run.out().indexOf("stack sharded (pid " + pid + ", 2 of 2 shards, totals)"));
                assertTrue(totals.lines().anyMatch(l -> l.matches("\\s+test\\.things\\s+5")), run.out());
                assertTrue(totals.lines().anyMatch(l -> l.matches("\\s+arp\\.tx\\.requests\\s+1")),
                    "only shard 0 announces the address: " + run.out());
            }
        }
    }

    @Test
    void countersGoToTheDefaultDirectoryUnlessTold() {
        assertTrue(CountersFile.defaultDirectory().toString().endsWith("counters")
            || CountersFile.defaultDirectory().toString().endsWith("tern"));
    }
}
