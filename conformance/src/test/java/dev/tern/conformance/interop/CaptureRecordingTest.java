package dev.tern.conformance.interop;

import dev.tern.conformance.replay.Capture;
import dev.tern.conformance.replay.CapturedFrame;
import dev.tern.conformance.replay.ReplayScript;
import dev.tern.core.net.Ipv4Address;
import dev.tern.stack.testing.Frames;
import dev.tern.testkit.netns.BackgroundCommand;
import dev.tern.testkit.netns.NetnsHarness;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static dev.tern.testkit.netns.NetnsHarness.PEER_IPV4;
import static dev.tern.testkit.netns.NetnsHarness.TERN_IPV4;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Records the captures in {@code pcaps/}: each runs one exchange between the kernel and Tern in fresh namespaces,
 * with tcpdump on the kernel's end of the pair, and writes {@code NAME.pcap} plus {@code NAME.actions} (what Tern's
 * application did, for {@code CaptureReplayTest}). On demand only, never in CI:
 * <pre>
 * TERN_RECORD_PCAPS=1 mvn -pl conformance -am verify -Dsurefire.failIfNoSpecifiedTests=false \
 *     -Dtest='dev.tern.conformance.interop.CaptureRecordingTest'
 * </pre>
 * Each capture starts before Tern's stack does, so it holds Tern's whole life (both RFC 5227 announcements, 2 s
 * apart) and a replay can start where the recorded stack did. Offloads are off on both ends, so every checksum on
 * the wire is final. Each recording checks that it caught the exchange before it replaces a file.
 */
@EnabledIfEnvironmentVariable(named = "TERN_RECORD_PCAPS", matches = "1", disabledReason = "records pcaps/ on demand: TERN_RECORD_PCAPS=1")
class CaptureRecordingTest {
    /** Long enough for both announcements (at 0 s and 2 s) and the exchanges, which end by 1.8 s. */
    private static final long LIFETIME_NS = 2_600_000_000L;
    private static final int MAX_FRAMES = 200;

    private static Path pcapsDirectory() {
        final String configured = System.getProperty("tern.pcaps.dir");
        assertNotNull(configured, "tern.pcaps.dir (set by conformance/pom.xml)");
        return Path.of(configured);
    }

    @Test
    void recordKernelPingingTern() throws Exception {
        record("arp-icmp-kernel-pings-tern", VethSetup.DEFAULT, rig -> {
            assertEquals(3, rig.kernel().ping(3, 56, 0.2).received());
            assertEquals(2, rig.kernel().ping(2, 8000, 0.2).received());
        }, capture -> 2 + 2 + 3 * 2 + 2 * 12);
    }

    @Test
    void recordTernPingingTheKernel() throws Exception {
        record("arp-icmp-tern-pings-kernel", VethSetup.DEFAULT, rig -> {
            int sequence = 1;
            for (int size : new int[] {56, 56, 56, 8000, 8000}) {
                final long next = System.nanoTime() + 200_000_000L;
                assertNotNull(rig.pingKernelAndWait(sequence++, size));
                sleepUntil(next);
            }
        }, capture -> 2 + 2 + 3 * 2 + 2 * 12);
    }

    @Test
    void recordJumboEchoBothWays() throws Exception {
        record("icmp-echo-mtu9000", new VethSetup(9000, false), rig -> {
            assertEquals(2, rig.kernel().ping(2, 8000, 0.2).received());
            for (int sequence = 1; sequence <= 2; sequence++) {
                final long next = System.nanoTime() + 200_000_000L;
                assertNotNull(rig.pingKernelAndWait(sequence, 8000));
                sleepUntil(next);
            }
        }, capture -> 2 + 2 + 2 * 2 + 2 * 2);
    }

    @Test
    void recordProtocolUnreachable() throws Exception {
        record("icmp-protocol-unreachable", VethSetup.DEFAULT, rig -> {
            final List<byte[]> errors = rig.kernel().sendRawAndCollectIcmp(3, 2, IcmpErrorInteropTest.unusedProtocolDatagrams());
            assertEquals(2, errors.size());
        }, capture -> 2 + 2 + 2 * 2);
    }

    /**
     * Fragment 0 of one datagram and fragment 1 of another, never completed: after the 30-second reassembly timeout
     * Tern reports time exceeded (code 1) for the first only (RFC 792; RFC 1122 §3.3.2: only when fragment 0 came).
     * Takes 31 s to record; replays in milliseconds.
     */
    @Test
    void recordReassemblyTimeout() throws Exception {
        record("ipv4-reassembly-timeout", VethSetup.DEFAULT, rig -> {
            final List<byte[]> errors = rig.kernel().sendRawAndCollectIcmp(33, 1, incompleteFragments());
            assertEquals(1, errors.size());
            assertEquals(11, errors.getFirst()[20], "time exceeded");
            assertEquals(1, errors.getFirst()[21], "fragment reassembly time exceeded");
        }, capture -> 2 + 2 + 2 + 1);
    }

    /** Fragment 0 (MF, 64 bytes) of datagram 0x7E01 and fragment 1 (offset 64, MF) of datagram 0x7E02, both ICMP echo. */
    static byte[][] incompleteFragments() {
        final byte[] echo = Frames.echoRequest(0x7E57, 1, Frames.pattern(200, 5));
        final byte[] first = Frames.ipv4(PEER_IPV4, TERN_IPV4, 1, 0x7E01, 0x2000, 64, java.util.Arrays.copyOf(echo, 64));
        final byte[] middle = Frames.ipv4(PEER_IPV4, TERN_IPV4, 1, 0x7E02, 0x2000 | (64 / 8), 64,
            java.util.Arrays.copyOfRange(echo, 64, 128));
        return new byte[][] {first, middle};
    }

    /** Tern's application sends UDP to the kernel's echo server (100 bytes, then 3000 in 3 fragments) and to a closed port. */
    @Test
    void recordUdpEchoTernClient() throws Exception {
        recordWithApplication("udp-echo-tern-client", (rig, app) -> {
            rig.kernel().startPeerPyPolling(rig, "udp-echo", "7", "20");
            app.udpOpen(1);
            app.udpConnect(1, PEER_IPV4, 7);
            app.udpSend(1, 0, 0, 100, 1);
            assertEquals(100, app.udpReceive(1));
            app.udpSend(1, 0, 0, 3000, 2);
            assertEquals(3000, app.udpReceive(1));
            app.udpOpen(2);
            app.udpConnect(2, PEER_IPV4, 9);
            app.udpSend(2, 0, 0, 50, 3);
            assertTrue(rig.pollUntil(() -> rig.counter("udp.rx.icmp_errors") == 1, Duration.ofSeconds(2)), "port unreachable");
            app.udpClose(1);
            app.udpClose(2);
        }, capture -> {
            assertEquals(1 + 3 + 1, udpFrom(capture, TERN_IPV4).size(), "100 bytes, 3000 in 3 fragments, 50 to port 9");
            assertEquals(1 + 3, udpFrom(capture, PEER_IPV4).size(), "the echoes");
            assertEquals(1, capture.frames().stream().filter(f -> f.icmpType() == 3).count(), "the kernel's port unreachable");
        });
    }

    /** The kernel's UDP client sends to Tern's echo socket (100 bytes, then 3000 in 3 fragments), then to a closed port. */
    @Test
    void recordUdpEchoKernelClient() throws Exception {
        recordWithApplication("udp-echo-kernel-client", (rig, app) -> {
            app.udpOpen(1);
            app.udpBind(1, 7);
            final BackgroundCommand client = rig.kernel().launchPeerPy("udp-client", NetnsHarness.TERN_ADDRESS, "7", "3", "100", "3000");
            assertEquals(100, app.udpEcho(1));
            assertEquals(3000, app.udpEcho(1));
            rig.pollUntil(() -> !client.isAlive(), Duration.ofSeconds(5));
            assertEquals(List.of("100 ok", "3000 ok"), client.stdout().lines().toList());
            final BackgroundCommand refused = rig.kernel().launchPeerPy("udp-client", NetnsHarness.TERN_ADDRESS, "9", "2", "50");
            rig.pollUntil(() -> !refused.isAlive(), Duration.ofSeconds(5));
            assertEquals(List.of("50 refused"), refused.stdout().lines().toList());
            app.udpClose(1);
        }, capture -> {
            assertEquals(1 + 3 + 1, udpFrom(capture, PEER_IPV4).size(), "100 bytes, 3000 in 3 fragments, 50 to port 9");
            assertEquals(1 + 3, udpFrom(capture, TERN_IPV4).size(), "the echoes");
            assertEquals(1, capture.frames().stream().filter(f -> f.icmpType() == 3).count(), "Tern's port unreachable");
        });
    }

    /**
     * IGMPv3: Tern joins 239.1.2.3 for any source and 232.1.2.3 for 198.18.0.1 only, receives the kernel's datagrams to
     * each, leaves 239.1.2.3 (a later datagram to it is not received) and closes the socket (which leaves 232.1.2.3);
     * each state change is reported twice.
     */
    @Test
    void recordIgmpJoinAndLeave() throws Exception {
        recordWithApplication("igmp-join-leave", (rig, app) -> {
            final int anySource = Ipv4Address.parse("239.1.2.3");
            final int sourceSpecific = Ipv4Address.parse("232.1.2.3");
            app.udpOpen(1);
            app.udpBind(1, 5000);
            app.udpJoin(1, anySource);
            awaitReports(rig, 2);
            kernelSends(rig, "239.1.2.3", 2, "any");
            assertEquals("any-0".length(), app.udpReceive(1));
            assertEquals("any-1".length(), app.udpReceive(1));
            app.udpJoin(1, sourceSpecific, PEER_IPV4);
            awaitReports(rig, 4);
            kernelSends(rig, "232.1.2.3", 1, "ssm");
            assertEquals("ssm-0".length(), app.udpReceive(1));
            app.udpLeave(1, anySource);
            awaitReports(rig, 6);
            kernelSends(rig, "239.1.2.3", 1, "late");
            rig.pollFor(Duration.ofMillis(100));
            app.udpClose(1);
            awaitReports(rig, 8);
        }, capture -> {
            final List<IgmpV3Report> reports = capture.frames().stream().filter(IgmpV3Report::is).map(IgmpV3Report::parse).toList();
            assertEquals(8, reports.size(), "four state changes, each reported twice: " + reports);
            assertEquals(4, udpFrom(capture, PEER_IPV4).size(), "the kernel's datagrams");
        });
    }

    /** TCP, Tern connects: handshake, 4000 bytes to the kernel, Tern's FIN, 3000 bytes back, the kernel's FIN. */
    @Test
    void recordTcpTernClient() throws Exception {
        recordWithApplication("tcp-tern-client", (rig, app) -> {
            final BackgroundCommand sink = rig.kernel().startPeerPyPolling(rig, "tcp-sink", "5001", "20", "3000");
            app.tcpConnect(1, PEER_IPV4, 5001, 40000);
            app.tcpWrite(1, 4000, 1);
            rig.pollFor(Duration.ofMillis(100));
            app.tcpShutdown(1);
            assertEquals(3000, app.tcpReadToEnd(1));
            rig.pollUntil(() -> !sink.isAlive(), Duration.ofSeconds(5));
            app.tcpClose(1);
            assertTrue(KernelPeer.line(sink.stdout(), "received").startsWith("received 4000 "), sink.stdout());
        }, capture -> assertTcpExchange(capture, 4000, 3000));
    }

    /** TCP, the kernel connects: handshake, 4000 bytes to Tern, the kernel's FIN, 3000 bytes back, Tern's FIN. */
    @Test
    void recordTcpKernelClient() throws Exception {
        recordWithApplication("tcp-kernel-client", (rig, app) -> {
            app.tcpListen(1, 5001);
            final BackgroundCommand source = rig.kernel().launchPeerPy("tcp-source", NetnsHarness.TERN_ADDRESS, "5001", "4000", "20");
            app.tcpAccept(1, 1);
            assertEquals(4000, app.tcpReadToEnd(1));
            app.tcpWrite(1, 3000, 2);
            app.tcpShutdown(1);
            rig.pollUntil(() -> !source.isAlive() && app.connection(1).isEnded(), Duration.ofSeconds(5));
            app.tcpClose(1);
            app.tcpCloseListener(1);
            assertTrue(KernelPeer.line(source.stdout(), "received").startsWith("received 3000 "), source.stdout());
        }, capture -> assertTcpExchange(capture, 3000, 4000));
    }

    private static void kernelSends(VethRig rig, String group, int count, String text) {
        final BackgroundCommand sender = rig.kernel().launchPeerPy("udp-send", NetnsHarness.PEER_ADDRESS, group, "5000",
            Integer.toString(count), "0.02", text);
        rig.pollUntil(() -> !sender.isAlive(), Duration.ofSeconds(5));
        assertEquals("sent " + count, sender.stdout().strip(), sender.stderr());
    }

    private static void awaitReports(VethRig rig, int total) {
        assertTrue(rig.pollUntil(() -> rig.counter("igmp.tx.reports_v3") >= total, Duration.ofSeconds(2)), total + " reports");
    }

    private static List<CapturedFrame> udpFrom(Capture capture, int source) {
        return capture.frames().stream().filter(f -> f.ipProtocol() == 17 && f.i32(14 + 12) == source).toList();
    }

    /** One connection: a SYN each way, a FIN each way, no reset, {@code ternData} and {@code kernelData} bytes. */
    private static void assertTcpExchange(Capture capture, int ternData, int kernelData) {
        final List<TcpFrame> segments = capture.frames().stream().filter(TcpFrame::is).map(TcpFrame::parse).toList();
        final List<TcpFrame> tern = segments.stream().filter(s -> s.source() == TERN_IPV4).toList();
        final List<TcpFrame> kernel = segments.stream().filter(s -> s.source() == PEER_IPV4).toList();
        assertEquals(1, tern.stream().filter(s -> s.has(TcpFrame.SYN)).count());
        assertEquals(1, kernel.stream().filter(s -> s.has(TcpFrame.SYN)).count());
        assertEquals(1, tern.stream().filter(s -> s.has(TcpFrame.FIN)).count());
        assertEquals(1, kernel.stream().filter(s -> s.has(TcpFrame.FIN)).count());
        assertEquals(0, segments.stream().filter(s -> s.has(TcpFrame.RST)).count());
        assertEquals(ternData, tern.stream().mapToInt(TcpFrame::dataLength).sum(), "no retransmission: " + segments);
        assertEquals(kernelData, kernel.stream().mapToInt(TcpFrame::dataLength).sum());
    }

    interface Exchange {
        void run(VethRig rig) throws Exception;
    }

    interface ApplicationExchange {
        void run(VethRig rig, RecordedApplication application) throws Exception;
    }

    interface ExpectedFrames {
        int count(Capture capture);
    }

    interface CaptureCheck {
        void check(Capture capture);
    }

    private static void record(String name, VethSetup setup, Exchange exchange, ExpectedFrames expected) throws Exception {
        recordExchange(name, setup, rig -> {
            rig.startTern();
            exchange.run(rig);
        }, capture -> assertEquals(expected.count(capture), capture.frames().size(), "frames caught for " + name + ": "
            + capture.frames()));
    }

    /**
     * Records an exchange made by Tern's application ({@link RecordedApplication}), on a stack the recording thread
     * owns and polls, on the capture's clock, with TCP's ISN and key fixed ({@link VethRig#startTernHereForReplay}).
     */
    private static void recordWithApplication(String name, ApplicationExchange exchange, CaptureCheck check) throws Exception {
        recordExchange(name, VethSetup.DEFAULT, rig -> {
            rig.startTernHereForReplay();
            rig.pollFor(Duration.ofMillis(10)); // the first announcement leaves now, not when the exchange first polls
            try (RecordedApplication application = new RecordedApplication(rig)) {
                exchange.run(rig, application);
            }
        }, check);
    }

    /**
     * Runs {@code exchange} (which starts Tern) with tcpdump on the kernel's end, lets Tern live at least
     * {@link #LIFETIME_NS}, checks the capture and replaces {@code NAME.pcap} and {@code NAME.actions}.
     */
    private static void recordExchange(String name, VethSetup setup, Exchange exchange, CaptureCheck check) throws Exception {
        final Path directory = pcapsDirectory();
        Files.createDirectories(directory);
        final Path temporary = Files.createTempFile("tern-capture", ".pcap");
        final List<String> actions = new ArrayList<>();
        try (VethRig rig = VethRig.create(setup)) {
            final BackgroundCommand tcpdump = rig.kernel().tcpdump(temporary, MAX_FRAMES);
            final long started = System.nanoTime();
            exchange.run(rig);
            if (rig.ownedByThisThread()) {
                rig.pollUntil(() -> System.nanoTime() - (started + LIFETIME_NS) >= 0, Duration.ofNanos(LIFETIME_NS));
            } else {
                sleepUntil(started + LIFETIME_NS);
            }
            KernelPeer.stopCapture(tcpdump, temporary, MAX_FRAMES);
            actions.addAll(rig.actions());
            final Capture capture = Capture.read(temporary);
            final List<CapturedFrame> frames = capture.frames();
            check.check(capture);
            assertTrue(frames.getFirst().source() == rig.ternMac() && frames.getFirst().isArp(),
                "the capture starts with Tern's first announcement");
            assertTrue(Files.size(temporary) < 100_000, name + " is small");
        }
        Files.move(temporary, directory.resolve(name + ".pcap"), StandardCopyOption.REPLACE_EXISTING);
        Files.setPosixFilePermissions(directory.resolve(name + ".pcap"), PosixFilePermissions.fromString("rw-r--r--"));
        final List<String> script = new ArrayList<>();
        script.add("# What Tern's application did while " + name + ".pcap was recorded (see pcaps/README.md).");
        script.add("# Recorded by dev.tern.conformance.interop.CaptureRecordingTest; replayed by CaptureReplayTest.");
        script.add("# kernel peer " + NetnsHarness.PEER_ADDRESS + ", veth MTU " + setup.mtu() + ", offloads off on both ends");
        script.addAll(actions);
        Files.write(directory.resolve(name + ".actions"), script);
        ReplayScript.read(directory.resolve(name + ".actions"));
    }

    private static void sleepUntil(long nanoTime) throws InterruptedException {
        final long left = nanoTime - System.nanoTime();
        if (left > 0) {
            Thread.sleep(left / 1_000_000, (int) (left % 1_000_000));
        }
    }
}
