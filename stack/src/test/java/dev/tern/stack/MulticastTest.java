package dev.tern.stack;

import dev.tern.core.checksum.InternetChecksum;
import dev.tern.core.net.Ipv4Address;
import dev.tern.core.testing.ExternalTools;
import dev.tern.ethernet.wire.EtherType;
import dev.tern.ethernet.wire.EthernetHeader;
import dev.tern.ethernet.wire.MacAddress;
import dev.tern.igmp.wire.IgmpMessage;
import dev.tern.ipv4.wire.IpProtocol;
import dev.tern.ipv4.wire.Ipv4Header;
import dev.tern.stack.sim.Simulation;
import dev.tern.stack.testing.Frames;
import dev.tern.stack.testing.PeerPort;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Multicast UDP and IGMP between three stacks, with a peer that watches the wire and plays the querier. */
class MulticastTest {
    private static final long SECOND = 1_000_000_000L;
    private static final int GROUP = Ipv4Address.parse("239.1.1.1");
    private static final int OTHER_GROUP = Ipv4Address.parse("239.2.2.2");
    private static final int PORT = 5000;
    private static final int QUERIER = Ipv4Address.parse("198.18.0.254");

    private Simulation sim;
    private NetStack sender;
    private NetStack b;
    private NetStack c;
    private NetStack d;
    private PeerPort peer;
    private final MemorySegment buffer = Arena.ofAuto().allocate(2000);

    /** An IGMP message seen on the wire: its IP header facts and the message bytes. */
    record Seen(long atNs, int destination, int ttl, boolean routerAlert, int tos, byte[] igmp) {
        int type() {
            return igmp[0] & 0xFF;
        }

        IgmpMessage message() {
            return new IgmpMessage().wrap(MemorySegment.ofArray(igmp), 0, igmp.length);
        }

        /** The records of a v3 report as "TYPE group [sources]" strings. */
        List<String> records() {
            final IgmpMessage m = message();
            final List<String> records = new ArrayList<>();
            int at = IgmpMessage.FIRST_RECORD_OFFSET;
            for (int i = 0; i < m.recordCount(); i++) {
                final StringBuilder text = new StringBuilder(RECORD_NAMES[m.recordType(at)]).append(' ')
                    .append(Ipv4Address.format(m.recordGroup(at))).append(" [");
                for (int s = 0; s < m.recordSourceCount(at); s++) {
                    text.append(s == 0 ? "" : ",").append(Ipv4Address.format(m.recordSource(at, s)));
                }
                records.add(text.append(']').toString());
                at = m.nextRecord(at);
            }
            return records;
        }
    }

    private static final String[] RECORD_NAMES = {"?", "IS_IN", "IS_EX", "TO_IN", "TO_EX", "ALLOW", "BLOCK"};

    @BeforeEach
    void setUp() {
        sim = new Simulation();
        peer = new PeerPort(sim, "watcher", MacAddress.parse("0a:00:00:00:00:fe"));
        sender = sim.addStack("sender", "198.18.0.1/24");
        b = sim.addStack("b", "198.18.0.2/24");
        c = sim.addStack("c", "198.18.0.3/24");
        d = sim.addStack("d", "198.18.0.4/24");
        sim.runFor(5 * SECOND);
        peer.clear();
    }

    @AfterEach
    void tearDown() {
        sim.close();
    }

    private List<Seen> igmpSeen() {
        final List<Seen> seen = new ArrayList<>();
        for (PeerPort.Received frame : peer.drain(f -> f.ipProtocol() == IpProtocol.IGMP)) {
            final MemorySegment bytes = frame.segment();
            final Ipv4Header ip = new Ipv4Header().wrap(bytes, EthernetHeader.LENGTH, frame.bytes().length - 14);
            final int headerLength = ip.headerLength();
            final boolean routerAlert = headerLength == 24
                && dev.tern.core.memory.BigEndian.i32(bytes, 14 + 20) == 0x9404_0000;
            final byte[] igmp = java.util.Arrays.copyOfRange(frame.bytes(), 14 + headerLength, 14 + ip.totalLength());
            seen.add(new Seen(frame.atNs(), ip.destination(), ip.ttl(), routerAlert, ip.tos(), igmp));
        }
        return seen;
    }

    private UdpSocket member(NetStack stack) throws TernSocketException {
        final UdpSocket socket = stack.openUdp();
        socket.reuseAddress(true);
        socket.bind(PORT);
        return socket;
    }

    private void send(NetStack from, int group, byte tag) throws TernSocketException {
        final UdpSocket socket = from.openUdp();
        socket.sendTo(group, PORT, MemorySegment.ofArray(new byte[] {tag}), 0, 1);
        sim.runFor(SECOND / 100);
        socket.close();
    }

    private List<Byte> received(UdpSocket socket) throws TernSocketException {
        final List<Byte> tags = new ArrayList<>();
        while (socket.receive(buffer, 0, 100) > 0) {
            tags.add(buffer.get(java.lang.foreign.ValueLayout.JAVA_BYTE, 0));
        }
        return tags;
    }

    private void query(byte[] igmp, int destination) {
        final byte[] ip = Frames.ipv4(QUERIER, destination, IpProtocol.IGMP, 1, 0, 1, igmp);
        peer.send(Frames.ethernet(MacAddress.ofIpv4Multicast(destination), peer.mac(), EtherType.IPV4, ip));
    }

    /** A v3 query: 12 bytes plus sources, Max Resp Code in tenths (below 128: exact). */
    private static byte[] v3Query(int group, int maxRespTenths, int... sources) {
        final byte[] message = new byte[12 + 4 * sources.length];
        message[0] = 0x11;
        message[1] = (byte) maxRespTenths;
        putInt(message, 4, group);
        message[8] = 2;
        message[9] = 125;
        message[10] = (byte) (sources.length >>> 8);
        message[11] = (byte) sources.length;
        for (int i = 0; i < sources.length; i++) {
            putInt(message, 12 + 4 * i, sources[i]);
        }
        return withChecksum(message);
    }

    private static byte[] v2Message(int type, int maxRespTenths, int group) {
        final byte[] message = new byte[8];
        message[0] = (byte) type;
        message[1] = (byte) maxRespTenths;
        putInt(message, 4, group);
        return withChecksum(message);
    }

    private static byte[] withChecksum(byte[] message) {
        final int checksum = InternetChecksum.compute(MemorySegment.ofArray(message), 0, message.length);
        message[2] = (byte) (checksum >>> 8);
        message[3] = (byte) checksum;
        return message;
    }

    private static void putInt(byte[] bytes, int at, int value) {
        dev.tern.core.memory.BigEndian.i32(MemorySegment.ofArray(bytes), at, value);
    }

    @Nested
    class Delivery {
        @Test
        void membersReceiveUntilTheyLeave() throws Exception {
            final UdpSocket onB = member(b);
            final UdpSocket onC = member(c);
            onB.join(GROUP);
            onC.join(GROUP);
            sim.runFor(SECOND);
            send(sender, GROUP, (byte) 1);
            assertEquals(List.of((byte) 1), received(onB));
            assertEquals(List.of((byte) 1), received(onC));
            onC.leave(GROUP);
            sim.runFor(SECOND);
            send(sender, GROUP, (byte) 2);
            assertEquals(List.of((byte) 2), received(onB));
            assertEquals(List.of(), received(onC), "the member that left receives nothing");
            assertEquals("none", c.igmp().describe(GROUP));
        }

        @Test
        void nonMembersNeverSeeTheFramesAtAll() throws Exception {
            final UdpSocket onB = member(b);
            onB.join(GROUP);
            final UdpSocket onC = member(c); // bound to the port but not joined
            send(sender, GROUP, (byte) 1);
            assertEquals(List.of(), received(onC));
            assertEquals(0, c.counters().value("ipv4.rx.packets") - c.counters().value("ipv4.rx.packets"));
            assertEquals(0, c.counters().value("ethernet.drop.not_for_us"), "the link filter kept the frame out");
        }

        @Test
        void sourceSpecificMembersGetOnlyTheirSources() throws Exception {
            final UdpSocket onB = member(b);
            onB.joinSources(GROUP, sender.address().address());
            final UdpSocket onC = member(c);
            onC.joinExcluding(GROUP, sender.address().address());
            sim.runFor(SECOND);
            send(sender, GROUP, (byte) 1);
            send(d, GROUP, (byte) 2);
            assertEquals(List.of((byte) 1), received(onB));
            assertEquals(List.of((byte) 2), received(onC));
            assertEquals("INCLUDE(198.18.0.1)", b.igmp().describe(GROUP));
            assertEquals("EXCLUDE(198.18.0.1)", c.igmp().describe(GROUP));
        }

        @Test
        void twoSocketsOnOneStackMergeTheirFiltersPerRfc3376() throws Exception {
            final UdpSocket first = member(b);
            final UdpSocket second = member(b);
            first.joinExcluding(GROUP, sender.address().address(), d.address().address());
            second.joinExcluding(GROUP, d.address().address());
            assertEquals("EXCLUDE(198.18.0.4)", b.igmp().describe(GROUP), "EXCLUDE: intersection of the lists");
            second.leave(GROUP);
            second.joinSources(GROUP, sender.address().address());
            assertEquals("EXCLUDE(198.18.0.4)", b.igmp().describe(GROUP), "minus the INCLUDE sources");
            send(sender, GROUP, (byte) 1);
            assertEquals(List.of(), received(first), "first excludes the sender");
            assertEquals(List.of((byte) 1), received(second));
        }

        @Test
        void ourOwnMulticastComesBackToLocalMembersUnlessLoopIsOff() throws Exception {
            final UdpSocket local = member(b);
            local.join(GROUP);
            final UdpSocket out = b.openUdp();
            out.sendTo(GROUP, PORT, MemorySegment.ofArray(new byte[] {5}), 0, 1);
            sim.runFor(SECOND / 10);
            assertEquals(List.of((byte) 5), received(local));
            out.multicastLoop(false);
            out.sendTo(GROUP, PORT, MemorySegment.ofArray(new byte[] {6}), 0, 1);
            sim.runFor(SECOND / 10);
            assertEquals(List.of(), received(local));
        }

        @Test
        void multicastIsSentWithTtlOneByDefault() throws Exception {
            final UdpSocket out = b.openUdp();
            out.sendTo(GROUP, PORT, MemorySegment.ofArray(new byte[1]), 0, 1);
            out.multicastTtl(7);
            out.sendTo(GROUP, PORT, MemorySegment.ofArray(new byte[1]), 0, 1);
            sim.runFor(SECOND / 10);
            final List<Integer> ttls = peer.drain(f -> f.ipProtocol() == IpProtocol.UDP).stream()
                .map(f -> f.bytes()[EthernetHeader.LENGTH + 8] & 0xFF).toList();
            assertEquals(List.of(1, 7), ttls);
        }
    }

    @Nested
    class Reports {
        @Test
        void aJoinIsReportedAtOnceAndOnceMoreWithinASecond() throws Exception {
            final long joined = sim.nowNs();
            member(b).join(GROUP);
            sim.runFor(3 * SECOND);
            final List<Seen> reports = igmpSeen();
            assertEquals(2, reports.size(), "robustness 2");
            assertEquals(joined, reports.get(0).atNs());
            assertTrue(reports.get(1).atNs() - joined <= SECOND);
            for (Seen report : reports) {
                assertEquals(IgmpMessage.V3_REPORT, report.type());
                assertEquals(Ipv4Address.ALL_IGMPV3_ROUTERS, report.destination());
                assertEquals(1, report.ttl());
                assertTrue(report.routerAlert(), "RFC 3376 §4: Router Alert");
                assertEquals(0xC0, report.tos(), "internetwork control precedence");
                assertEquals(List.of("TO_EX 239.1.1.1 []"), report.records());
                assertEquals(IgmpMessage.OK, report.message().check());
            }
        }

        @Test
        void aLeaveIsReportedAsChangeToIncludeNothing() throws Exception {
            final UdpSocket socket = member(b);
            socket.join(GROUP);
            sim.runFor(3 * SECOND);
            peer.clear();
            socket.leave(GROUP);
            sim.runFor(3 * SECOND);
            final List<Seen> reports = igmpSeen();
            assertEquals(2, reports.size());
            assertEquals(List.of("TO_IN 239.1.1.1 []"), reports.get(0).records());
        }

        @Test
        void sourceChangesAreReportedAsAllowAndBlock() throws Exception {
            final UdpSocket socket = member(b);
            socket.joinSources(GROUP, sender.address().address());
            sim.runFor(3 * SECOND);
            assertEquals(List.of("ALLOW 239.1.1.1 [198.18.0.1]"), igmpSeen().getFirst().records());
            peer.clear();
            socket.joinSources(GROUP, d.address().address());
            sim.runFor(3 * SECOND);
            assertEquals(List.of("ALLOW 239.1.1.1 [198.18.0.4]", "BLOCK 239.1.1.1 [198.18.0.1]"),
                igmpSeen().getFirst().records());
        }

        @Test
        void aGeneralQueryIsAnsweredWithEveryGroupWithinMaxRespTime() throws Exception {
            member(b).join(GROUP);
            member(b).joinSources(OTHER_GROUP, sender.address().address());
            sim.runFor(3 * SECOND);
            peer.clear();
            final long asked = sim.nowNs();
            query(v3Query(0, 50), Ipv4Address.ALL_SYSTEMS);
            sim.runFor(6 * SECOND);
            final List<Seen> answers = igmpSeen();
            assertEquals(1, answers.size(), "only b is a member of anything; one report carries all its groups");
            assertTrue(answers.getFirst().atNs() - asked <= 5 * SECOND, "within Max Resp Time (5 s)");
            assertEquals(List.of("IS_EX 239.1.1.1 []", "IS_IN 239.2.2.2 [198.18.0.1]").stream().sorted().toList(),
                answers.getFirst().records().stream().sorted().toList());
        }

        @Test
        void aGroupAndSourceSpecificQueryGetsTheAskedSourcesWeWant() throws Exception {
            member(b).joinSources(GROUP, sender.address().address(), d.address().address());
            sim.runFor(3 * SECOND);
            peer.clear();
            query(v3Query(GROUP, 20, d.address().address(), QUERIER), GROUP);
            sim.runFor(3 * SECOND);
            final List<Seen> answers = igmpSeen();
            assertEquals(1, answers.size());
            assertEquals(List.of("IS_IN 239.1.1.1 [198.18.0.4]"), answers.getFirst().records());
        }
    }

    @Nested
    class Version2Compatibility {
        @Test
        void afterAV2QueryTheHostSpeaksV2ThenReturnsToV3() throws Exception {
            final UdpSocket socket = member(b);
            socket.join(GROUP);
            sim.runFor(3 * SECOND);
            peer.clear();
            query(v2Message(IgmpMessage.QUERY, 100, 0), Ipv4Address.ALL_SYSTEMS);
            sim.runFor(11 * SECOND);
            List<Seen> seen = igmpSeen();
            assertEquals(1, seen.size());
            assertEquals(IgmpMessage.V2_REPORT, seen.getFirst().type());
            assertEquals(GROUP, seen.getFirst().destination(), "a v2 report goes to the group itself");
            assertEquals(2, b.igmp().version(sim.nowNs()));
            peer.clear();
            socket.leave(GROUP);
            sim.runFor(SECOND);
            seen = igmpSeen();
            assertEquals(1, seen.size());
            assertEquals(IgmpMessage.V2_LEAVE, seen.getFirst().type());
            assertEquals(Ipv4Address.ALL_ROUTERS, seen.getFirst().destination());
            sim.runFor(260 * SECOND);
            assertEquals(3, b.igmp().version(sim.nowNs()), "Older Version Querier Present timeout: 2 x 125 s + 10 s");
            peer.clear();
            socket.join(GROUP);
            sim.runFor(SECOND / 10);
            assertEquals(IgmpMessage.V3_REPORT, igmpSeen().getFirst().type());
        }

        @Test
        void anotherHostsV2ReportSuppressesOurs() throws Exception {
            member(b).join(GROUP);
            sim.runFor(3 * SECOND);
            query(v2Message(IgmpMessage.QUERY, 100, 0), Ipv4Address.ALL_SYSTEMS);
            sim.runFor(SECOND / 1000);
            final byte[] report = Frames.ipv4(QUERIER, GROUP, IpProtocol.IGMP, 2, 0, 1, v2Message(IgmpMessage.V2_REPORT, 0, GROUP));
            peer.send(Frames.ethernet(MacAddress.ofIpv4Multicast(GROUP), peer.mac(), EtherType.IPV4, report));
            sim.runFor(11 * SECOND);
            assertEquals(1, b.counters().value("igmp.tx.reports_suppressed"));
        }
    }

    @Test
    void malformedIgmpIsCountedAndDropped() {
        final byte[] good = v2Message(IgmpMessage.QUERY, 100, 0);
        final byte[] badChecksum = good.clone();
        badChecksum[3] ^= 1;
        query(badChecksum, Ipv4Address.ALL_SYSTEMS);
        query(java.util.Arrays.copyOf(good, 6), Ipv4Address.ALL_SYSTEMS);
        sim.runFor(SECOND);
        assertEquals(1, b.counters().value("igmp.drop.bad_checksum"));
        assertEquals(1, b.counters().value("igmp.drop.too_short"));
    }

    @Test
    void tsharkSeesValidIgmpV3AndV2Frames(@TempDir Path directory) throws Exception {
        final Path tshark = ExternalTools.require("tshark", "tshark");
        final Path pcap = directory.resolve("igmp.pcap");
        try (Simulation captured = new Simulation().capture(pcap)) {
            final NetStack host = captured.addStack("host", "198.18.0.2/24");
            final PeerPort querier = new PeerPort(captured, "querier", MacAddress.parse("0a:00:00:00:00:fe"));
            final UdpSocket socket = host.openUdp();
            socket.bind(PORT);
            socket.join(GROUP);
            socket.joinSources(OTHER_GROUP, QUERIER);
            captured.runFor(3 * SECOND);
            querier.send(Frames.ethernet(MacAddress.ofIpv4Multicast(Ipv4Address.ALL_SYSTEMS), querier.mac(), EtherType.IPV4,
                Frames.ipv4(QUERIER, Ipv4Address.ALL_SYSTEMS, IpProtocol.IGMP, 1, 0, 1, v2Message(IgmpMessage.QUERY, 100, 0))));
            captured.runFor(11 * SECOND);
            socket.leave(GROUP);
            captured.runFor(SECOND);
        }
        final List<String> lines = ExternalTools.run(Duration.ofSeconds(60), tshark.toString(), "-r", pcap.toString(),
            "-Y", "igmp && ip.src == 198.18.0.2", "-T", "fields", "-E", "separator=|", "-e", "igmp.version", "-e", "igmp.type",
            "-e", "igmp.checksum.status", "-e", "ip.opt.type", "-e", "_ws.expert.severity").orFail("tshark").stdout().lines().toList();
        assertTrue(lines.stream().anyMatch(l -> l.startsWith("3|0x22|1|")), "v3 reports: " + lines);
        assertTrue(lines.stream().anyMatch(l -> l.startsWith("2|0x16|1|")), "v2 report: " + lines);
        assertTrue(lines.stream().anyMatch(l -> l.startsWith("2|0x17|1|")), "v2 leave: " + lines);
        assertTrue(lines.stream().allMatch(l -> l.split("\\|", -1)[3].contains("148") || l.split("\\|", -1)[3].contains("20")),
            "Router Alert on every message: " + lines);
        assertTrue(lines.stream().noneMatch(l -> l.endsWith("|4194304") || l.endsWith("|8388608")), "no warnings: " + lines);
    }
}
