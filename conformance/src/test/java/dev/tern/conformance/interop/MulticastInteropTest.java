package dev.tern.conformance.interop;

import dev.tern.conformance.replay.Capture;
import dev.tern.conformance.replay.CapturedFrame;
import dev.tern.core.checksum.InternetChecksum;
import dev.tern.core.net.Ipv4Address;
import dev.tern.stack.NetStack;
import dev.tern.stack.TernSocketException;
import dev.tern.stack.UdpSocket;
import dev.tern.stack.testing.Frames;
import dev.tern.testkit.netns.BackgroundCommand;
import dev.tern.testkit.netns.NetnsHarness;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * IPv4 multicast between Tern and the Linux kernel (RFC 1112, RFC 3376 IGMPv3): Tern as a member of groups the
 * kernel sends to (any-source, source-specific INCLUDE and EXCLUDE), its membership reports as tcpdump sees them on
 * the kernel's end, its leave, the queries it hears; and the kernel as a member of a group Tern sends to.
 *
 * <p>Each scenario runs with Tern on AF_PACKET and on AF_XDP ({@link VethSetup#offloadsOffAndOnOnBothLinks}). Where
 * the links differ, by design (docs/DESIGN.md, "The AF_XDP link", Limits), the test says so: on AF_XDP a group's
 * frames go to Tern only while it is a member (after the leave the program hands them to the kernel, so Tern's
 * wire never sees them), and general queries to 224.0.0.1 stay the kernel's.
 */
class MulticastInteropTest extends VethRigTest {
    private static final int PORT = 5000;
    private static final String GROUP = "239.1.2.3";
    private static final String SSM_GROUP = "232.1.2.3";
    private static final String KERNEL_GROUP = "239.1.2.4";
    /** A second address of the kernel's, so that one group has two senders (RFC 3376 source filtering). */
    private static final String SECOND_SOURCE = "198.18.0.3";
    /** Longer than the Unsolicited Report Interval (1 s), within which a state-change report is repeated. */
    private static final Duration REPORTS_SENT = Duration.ofMillis(1500);

    private static final String EXCLUDE_GROUP = "239.1.2.5";
    private static final int SECOND_SOURCE_IPV4 = Ipv4Address.parse(SECOND_SOURCE);

    static Stream<VethSetup> setups() {
        return VethSetup.offloadsOffAndOnOnBothLinks();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("setups")
    void kernelsMulticastReachesTernAfterItsReportedJoinAndStopsAfterItsReportedLeave(VethSetup setup, @TempDir Path directory)
        throws Exception {
        rig = VethRig.create(setup);
        final Path pcap = directory.resolve("igmp.pcap");
        final BackgroundCommand tcpdump = rig.kernel().tcpdump(pcap, 100);
        final NetStack stack = rig.startTernHere(builder -> { });
        final int group = Ipv4Address.parse(GROUP);
        try (UdpSocket socket = stack.openUdp(); Arena arena = Arena.ofConfined()) {
            final MemorySegment buffer = arena.allocate(2048);
            socket.reuseAddress(true);
            socket.bind(PORT);
            socket.join(group);
            awaitReports(2);

            final List<String> joined = receiveWhileKernelSends(socket, buffer, NetnsHarness.PEER_ADDRESS, GROUP, "joined");
            assertEquals(List.of("198.18.0.1 joined-0", "198.18.0.1 joined-1", "198.18.0.1 joined-2"), joined);

            socket.leave(group);
            awaitReports(4);
            final long dropsBefore = droppedMulticast();
            assertEquals(List.of(), receiveWhileKernelSends(socket, buffer, NetnsHarness.PEER_ADDRESS, GROUP, "left"),
                "nothing after the leave");
            if (setup.afXdp()) {
                assertEquals(0, droppedMulticast() - dropsBefore,
                    "AF_XDP: the leave took the group out of the program's map, so its frames went to the kernel, not Tern");
            } else {
                assertEquals(3, droppedMulticast() - dropsBefore, "the three datagrams reached Tern's wire and were discarded");
            }
        }
        KernelPeer.stopCapture(tcpdump, pcap, 4 + 6);

        final List<IgmpV3Report> reports = ternsReports(pcap);
        assertTrue(reports.size() >= 2, "a join and a leave report: " + reports);
        reports.forEach(report -> assertTrue(report.wellFormed(), "RFC 3376 §4 envelope: " + report));
        final IgmpV3Report join = reports.getFirst();
        assertEquals(List.of(new IgmpV3Report.Record(IgmpV3Report.CHANGE_TO_EXCLUDE, group, List.of())), join.records(),
            "joining for any source: TO_EX with no sources (RFC 3376 §5.1)");
        final IgmpV3Report leave = reports.getLast();
        assertEquals(List.of(new IgmpV3Report.Record(IgmpV3Report.CHANGE_TO_INCLUDE, group, List.of())), leave.records(),
            "leaving: TO_IN with no sources");
        assertEquals(2, reports.stream().filter(r -> r.records().equals(join.records())).count(),
            "the join is reported twice (Robustness Variable 2)");
        assertEquals(2, reports.stream().filter(r -> r.records().equals(leave.records())).count(), "so is the leave");
        assertEquals(0, rig.counter("stack.internal_errors"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("setups")
    void sourceSpecificJoinIsReportedWithItsSourceAndReceivesOnlyFromIt(VethSetup setup, @TempDir Path directory) throws Exception {
        rig = VethRig.create(setup);
        rig.net().peerExec(Duration.ofSeconds(10), "ip", "address", "add", SECOND_SOURCE + "/24", "dev",
            NetnsHarness.PEER_INTERFACE).orThrow();
        final Path pcap = directory.resolve("igmp-ssm.pcap");
        final BackgroundCommand tcpdump = rig.kernel().tcpdump(pcap, 100);
        final NetStack stack = rig.startTernHere(builder -> { });
        final int group = Ipv4Address.parse(SSM_GROUP);
        try (UdpSocket socket = stack.openUdp(); Arena arena = Arena.ofConfined()) {
            final MemorySegment buffer = arena.allocate(2048);
            socket.reuseAddress(true);
            socket.bind(PORT);
            socket.joinSources(group, NetnsHarness.PEER_IPV4);
            awaitReports(2);

            final List<String> wanted = receiveWhileKernelSends(socket, buffer, NetnsHarness.PEER_ADDRESS, SSM_GROUP, "wanted");
            final List<String> other = receiveWhileKernelSends(socket, buffer, SECOND_SOURCE, SSM_GROUP, "other");

            assertEquals(List.of("198.18.0.1 wanted-0", "198.18.0.1 wanted-1", "198.18.0.1 wanted-2"), wanted);
            assertEquals(List.of(), other, "nothing from a source not in the INCLUDE list");
        }
        KernelPeer.stopCapture(tcpdump, pcap, 2 + 6);

        final List<IgmpV3Report> reports = ternsReports(pcap);
        assertTrue(!reports.isEmpty(), "a report");
        reports.forEach(report -> assertTrue(report.wellFormed(), "RFC 3376 §4 envelope: " + report));
        assertEquals(List.of(new IgmpV3Report.Record(IgmpV3Report.ALLOW_NEW_SOURCES, group, List.of(NetnsHarness.PEER_IPV4))),
            reports.getFirst().records(), "INCLUDE {} to INCLUDE {198.18.0.1}: ALLOW with the source (RFC 3376 §5.1)");
        assertEquals(0, rig.counter("stack.internal_errors"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("setups")
    void excludingJoinIsReportedWithTheExcludedSourceAndReceivesFromEveryOtherSource(VethSetup setup, @TempDir Path directory)
        throws Exception {
        rig = VethRig.create(setup);
        rig.net().peerExec(Duration.ofSeconds(10), "ip", "address", "add", SECOND_SOURCE + "/24", "dev",
            NetnsHarness.PEER_INTERFACE).orThrow();
        final Path pcap = directory.resolve("igmp-exclude.pcap");
        final BackgroundCommand tcpdump = rig.kernel().tcpdump(pcap, 100);
        final NetStack stack = rig.startTernHere(builder -> { });
        final int group = Ipv4Address.parse(EXCLUDE_GROUP);
        try (UdpSocket socket = stack.openUdp(); Arena arena = Arena.ofConfined()) {
            final MemorySegment buffer = arena.allocate(2048);
            socket.reuseAddress(true);
            socket.bind(PORT);
            socket.joinExcluding(group, SECOND_SOURCE_IPV4);
            awaitReports(2);

            final long filteredBefore = droppedMulticast();
            final List<String> wanted = receiveWhileKernelSends(socket, buffer, NetnsHarness.PEER_ADDRESS, EXCLUDE_GROUP, "wanted");
            final List<String> excluded = receiveWhileKernelSends(socket, buffer, SECOND_SOURCE, EXCLUDE_GROUP, "excluded");

            assertEquals(List.of("198.18.0.1 wanted-0", "198.18.0.1 wanted-1", "198.18.0.1 wanted-2"), wanted);
            assertEquals(List.of(), excluded, "nothing from the source in the EXCLUDE list");
            assertEquals(3, droppedMulticast() - filteredBefore,
                "the excluded source's datagrams reached Tern (the group is steered to it) and its filter discarded them");
        }
        KernelPeer.stopCapture(tcpdump, pcap, 2 + 6);

        final List<IgmpV3Report> reports = ternsReports(pcap);
        assertTrue(!reports.isEmpty(), "a report");
        reports.forEach(report -> assertTrue(report.wellFormed(), "RFC 3376 §4 envelope: " + report));
        assertEquals(List.of(new IgmpV3Report.Record(IgmpV3Report.CHANGE_TO_EXCLUDE, group, List.of(SECOND_SOURCE_IPV4))),
            reports.getFirst().records(), "INCLUDE {} to EXCLUDE {198.18.0.3}: TO_EX with the source (RFC 3376 §5.1)");
        assertEquals(0, rig.counter("stack.internal_errors"));
    }

    /**
     * A querier on the kernel's side (a frame source on the peer's end) asks twice: a General Query to 224.0.0.1,
     * then a Group-Specific Query to the group Tern joined (RFC 3376 §4.1.12). On AF_PACKET Tern hears both and
     * answers each with a current-state report. On AF_XDP the general query stays the kernel's (the program passes
     * 224.0.0.1 to it: the kernel's own memberships on a shared interface need it) and Tern neither hears nor
     * answers it; the group-specific query goes to the group's address, whose frames the program steers to Tern, so
     * Tern hears and answers that one.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("setups")
    void generalQueryReachesTernOnAfPacketOnlyAndAGroupQueryOnBothLinks(VethSetup setup) throws Exception {
        rig = VethRig.create(setup);
        final CraftedHost querier = CraftedHost.onPeerEnd(rig.net());
        final NetStack stack = rig.startTernHere(builder -> { });
        final int group = Ipv4Address.parse(GROUP);
        try (UdpSocket socket = stack.openUdp()) {
            socket.bind(PORT);
            socket.join(group);
            awaitReports(2);
            rig.pollFor(REPORTS_SENT);
            final long queriesBefore = rig.counter("igmp.rx.queries");
            final long reportsBefore = rig.counter("igmp.tx.reports_v3");

            querier.sendIpv4(0x0100_5E00_0001L, query(Ipv4Address.ALL_SYSTEMS, 0));
            rig.pollFor(QUERY_ANSWERED);
            final long generalHeard = rig.counter("igmp.rx.queries") - queriesBefore;
            final long generalAnswered = rig.counter("igmp.tx.reports_v3") - reportsBefore;

            querier.sendIpv4(0x0100_5E01_0203L, query(group, group));
            rig.pollFor(QUERY_ANSWERED);
            final long groupHeard = rig.counter("igmp.rx.queries") - queriesBefore - generalHeard;
            final long groupAnswered = rig.counter("igmp.tx.reports_v3") - reportsBefore - generalAnswered;

            if (setup.afXdp()) {
                assertEquals(0, generalHeard, "AF_XDP: the general query went to the kernel");
                assertEquals(0, generalAnswered, "so Tern did not answer it");
            } else {
                assertEquals(1, generalHeard, "AF_PACKET: Tern heard the general query");
                assertEquals(1, generalAnswered, "and answered with a current-state report (RFC 3376 §5.2)");
            }
            assertEquals(1, groupHeard, "the group-specific query reached Tern on either link");
            assertEquals(1, groupAnswered, "and was answered");
        }
        assertEquals(0, rig.counter("stack.internal_errors"));
    }

    /** Longer than the queries' Max Resp Time (1 s), within which Tern answers. */
    private static final Duration QUERY_ANSWERED = Duration.ofMillis(1500);

    /**
     * An IGMPv3 query (RFC 3376 §4.1) for {@code group} (0: general) from 198.18.0.9, sent to {@code destination}
     * with TTL 1 and the Router Alert option (RFC 2113), Max Resp Code 10 (1 s), QRV 2, QQIC 125.
     */
    private static byte[] query(int destination, int group) {
        final byte[] message = new byte[12];
        message[0] = 0x11;
        message[1] = 10;
        message[4] = (byte) (group >>> 24);
        message[5] = (byte) (group >>> 16);
        message[6] = (byte) (group >>> 8);
        message[7] = (byte) group;
        message[8] = 2;
        message[9] = 125;
        final MemorySegment segment = MemorySegment.ofArray(message);
        final int checksum = InternetChecksum.compute(segment, 0, message.length);
        message[2] = (byte) (checksum >>> 8);
        message[3] = (byte) checksum;
        return Frames.withOptions(Frames.ipv4(CraftedHost.FIRST_ADDRESS, destination, 2, 1, 0, 1, message), 148, 4, 0, 0);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("setups")
    void ternsMulticastReachesAKernelMember(VethSetup setup, @TempDir Path directory) throws Exception {
        rig = VethRig.create(setup);
        final BackgroundCommand member = rig.kernel().startPeerPy("udp-recv", Integer.toString(PORT), "3", "10", KERNEL_GROUP);
        final String memberships = rig.net().peerExec(Duration.ofSeconds(10), "ip", "maddress", "show", "dev",
            NetnsHarness.PEER_INTERFACE).orThrow().stdout();
        assertTrue(memberships.contains(KERNEL_GROUP), "the kernel joined: " + memberships);
        final Path pcap = directory.resolve("tern-sends.pcap");
        final BackgroundCommand tcpdump = rig.kernel().tcpdump(pcap, 100);
        final NetStack stack = rig.startTernHere(builder -> { });
        final int group = Ipv4Address.parse(KERNEL_GROUP);
        try (UdpSocket socket = stack.openUdp()) {
            socket.bind(PORT + 1);
            for (int i = 0; i < 3; i++) {
                final byte[] text = ("tern-" + i).getBytes(StandardCharsets.US_ASCII);
                assertTrue(socket.sendTo(group, PORT, MemorySegment.ofArray(text), 0, text.length));
                rig.pollFor(Duration.ofMillis(20));
            }
            rig.pollUntil(() -> !member.isAlive(), Duration.ofSeconds(10));
        }
        KernelPeer.stopCapture(tcpdump, pcap, 3);

        final List<String> received = member.stdout().lines().filter(l -> l.startsWith("from ")).toList();
        assertEquals(List.of(fromTern(PORT + 1, "tern-0"), fromTern(PORT + 1, "tern-1"), fromTern(PORT + 1, "tern-2")), received,
            member.stdout() + member.stderr());
        final List<CapturedFrame> sent = Capture.read(pcap).sentBy(rig.ternMac()).stream()
            .filter(f -> f.ipProtocol() == 17).toList();
        assertEquals(3, sent.size());
        for (CapturedFrame frame : sent) {
            assertEquals(0x0100_5E01_0204L, frame.destination(), "RFC 1112 §6.4: the group's MAC, 01:00:5e + its low 23 bits");
            assertEquals(1, frame.u8(14 + 8), "TTL 1 by default (IP_MULTICAST_TTL)");
        }
    }

    /** Polls until Tern has sent {@code total} IGMPv3 reports (a state change goes out twice, within 1 s). */
    private void awaitReports(long total) {
        assertTrue(rig.pollUntil(() -> rig.counter("igmp.tx.reports_v3") >= total, REPORTS_SENT),
            "Tern sent " + total + " IGMPv3 reports");
    }

    private static String fromTern(int port, String text) {
        return "from " + NetnsHarness.TERN_ADDRESS + " " + port + " " + text.length() + " "
            + HexFormat.of().formatHex(text.getBytes(StandardCharsets.US_ASCII));
    }

    /**
     * Has the kernel send three datagrams "TEXT-N" to {@code group} from {@code source}, 20 ms apart, while Tern
     * polls; returns what Tern's socket received, as "SOURCE TEXT".
     */
    private List<String> receiveWhileKernelSends(UdpSocket socket, MemorySegment buffer, String source, String group,
                                                 String text) {
        final List<String> received = new ArrayList<>();
        final BackgroundCommand sender = rig.kernel().launchPeerPy("udp-send", source, group, Integer.toString(PORT), "3",
            "0.02", text);
        rig.pollUntil(() -> {
            takeWaiting(socket, buffer, received);
            return !sender.isAlive();
        }, Duration.ofSeconds(10));
        rig.pollFor(Duration.ofMillis(50));
        takeWaiting(socket, buffer, received);
        assertEquals("sent 3", KernelPeer.line(sender.stdout(), "sent"), sender.stdout() + sender.stderr());
        return received;
    }

    private static void takeWaiting(UdpSocket socket, MemorySegment buffer, List<String> into) {
        try {
            int length;
            while ((length = socket.receive(buffer, 0, (int) buffer.byteSize())) >= 0) {
                into.add(Ipv4Address.format(socket.lastSourceAddress()) + " "
                    + new String(buffer.asSlice(0, length).toArray(ValueLayout.JAVA_BYTE), StandardCharsets.US_ASCII));
            }
        } catch (TernSocketException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Multicast datagrams Tern discarded because it is not a member: the Ethernet filter or IPv4's "not for us". */
    private long droppedMulticast() {
        return rig.countersContaining(".drop.").entrySet().stream()
            .filter(e -> e.getKey().contains("not_for_us") || e.getKey().contains("multicast"))
            .mapToLong(java.util.Map.Entry::getValue).sum();
    }

    private List<IgmpV3Report> ternsReports(Path pcap) {
        return Capture.read(pcap).sentBy(rig.ternMac()).stream().filter(IgmpV3Report::is).map(IgmpV3Report::parse).toList();
    }
}
