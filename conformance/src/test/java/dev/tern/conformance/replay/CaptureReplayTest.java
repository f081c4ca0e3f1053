package dev.tern.conformance.replay;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Replays every capture in {@code pcaps/} through a fresh stack on the capture's own time and demands the same
 * answers: the frames the stack sends must equal, in order, the frames the capture recorded Tern sending, except
 * for the IPv4 identification and the TCP timestamp value ({@link FrameComparison} says why), and the stack's
 * counters must tell the same story. UDP, IGMP and TCP captures replay the application's calls too
 * ({@link ReplayScript}); TCP replays with the recording's ISN and key.
 * A change in Tern's behaviour on the wire fails here first; if the change is intended, record the captures again
 * (pcaps/README.md).
 */
class CaptureReplayTest {
    static List<Path> captures() {
        return Pcaps.all();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("captures")
    void replayedStackSendsWhatTheRecordedStackSent(Path pcap) {
        assertTrue(Files.exists(ReplayScript.besides(pcap)), "every capture comes with its .actions");
        try (Replay replay = Replay.of(Capture.read(pcap)).run()) {
            final FrameComparison comparison = replay.compare();
            assertTrue(comparison.matches(), pcap.getFileName() + ":\n" + comparison.report());
            assertFalse(replay.transmitted().isEmpty());
            assertTrue(replay.link().exhausted(), "every recorded frame was offered");
            assertEquals(0, replay.link().buffersInUse(), "every transmit buffer the stack claimed went back");
            assertEquals(0, replay.stack().counters().value("stack.internal_errors"));
        }
    }

    @Test
    void kernelPingingTernReplaysWithFiveEchoesTwoReassembled() {
        try (Replay replay = Replay.of(Pcaps.read("arp-icmp-kernel-pings-tern.pcap")).run()) {
            assertEquals(Map.of(), counters(replay, ".drop."));
            assertCounters(replay, Map.of("arp.rx.requests", 1L, "arp.tx.replies", 1L, "arp.tx.requests", 2L,
                "icmp.rx.echo_requests", 5L, "icmp.tx.echo_replies", 5L, "ipv4.reasm.fragments", 12L, "ipv4.reasm.ok", 2L,
                "ipv4.tx.fragmented_datagrams", 2L, "ipv4.tx.fragments", 12L));
        }
    }

    @Test
    void ternPingingTheKernelReplaysWithOneResolutionAndFiveReplies() {
        try (Replay replay = Replay.of(Pcaps.read("arp-icmp-tern-pings-kernel.pcap")).run()) {
            assertEquals(Map.of(), counters(replay, ".drop."));
            assertCounters(replay, Map.of("arp.tx.requests", 3L, "arp.rx.replies", 1L, "arp.pending.sent", 1L,
                "icmp.tx.echo_requests", 5L, "icmp.rx.echo_replies", 5L, "ipv4.reasm.ok", 2L,
                "ipv4.tx.fragmented_datagrams", 2L));
            assertEquals("reachable", replay.stack().neighbours().stateOf(0xC612_0001));
        }
    }

    @Test
    void jumboEchoReplaysWithoutFragmentation() {
        try (Replay replay = Replay.of(Pcaps.read("icmp-echo-mtu9000.pcap")).run()) {
            assertEquals(9000, replay.stack().ethernet().mtu());
            assertCounters(replay, Map.of("icmp.rx.echo_requests", 2L, "icmp.tx.echo_replies", 2L,
                "icmp.tx.echo_requests", 2L, "icmp.rx.echo_replies", 2L, "ipv4.reasm.ok", 0L, "ipv4.tx.fragments", 0L));
        }
    }

    @Test
    void unusedProtocolReplaysWithTwoProtocolUnreachables() {
        try (Replay replay = Replay.of(Pcaps.read("icmp-protocol-unreachable.pcap")).run()) {
            assertEquals(2, replay.stack().counters().value("icmp.tx.errors"));
            assertEquals(Map.of("ipv4.drop.unknown_protocol", 2L), counters(replay, ".drop."),
                "the two datagrams of protocol 253, and nothing else");
        }
    }

    @Test
    void reassemblyTimeoutReplaysThirtySecondsInAnInstant() {
        final Capture capture = Pcaps.read("ipv4-reassembly-timeout.pcap");
        final long started = System.nanoTime();
        try (Replay replay = Replay.of(capture).run()) {
            assertTrue(System.nanoTime() - started < 5_000_000_000L, "virtual time");
            assertTrue(capture.endNs() - capture.startNs() > 30_000_000_000L, "the capture spans the 30 s timeout");
            assertCounters(replay, Map.of("ipv4.reasm.fragments", 2L, "ipv4.reasm.timeouts", 2L, "icmp.tx.errors", 1L,
                "ipv4.reasm.ok", 0L));
        }
    }

    @Test
    void udpEchoFromTernReplaysWithFragmentsBothWaysAndThePortUnreachableReported() {
        try (Replay replay = Replay.of(Pcaps.read("udp-echo-tern-client.pcap")).run()) {
            assertEquals(Map.of(), counters(replay, ".drop."));
            assertCounters(replay, Map.of("udp.tx.datagrams", 3L, "udp.rx.datagrams", 2L, "udp.rx.icmp_errors", 1L,
                "ipv4.reasm.ok", 1L, "ipv4.tx.fragmented_datagrams", 1L, "ipv4.tx.fragments", 3L));
        }
    }

    @Test
    void udpEchoToTernReplaysWithTwoEchoesAndOnePortUnreachable() {
        try (Replay replay = Replay.of(Pcaps.read("udp-echo-kernel-client.pcap")).run()) {
            assertEquals(Map.of("udp.drop.no_socket", 1L), counters(replay, ".drop."));
            assertCounters(replay, Map.of("udp.rx.datagrams", 3L, "udp.tx.datagrams", 2L, "icmp.tx.errors", 1L,
                "ipv4.reasm.ok", 1L, "ipv4.tx.fragmented_datagrams", 1L));
        }
    }

    @Test
    void igmpJoinsAndLeavesReplayWithEightReportsAndNothingAfterTheLeave() {
        try (Replay replay = Replay.of(Pcaps.read("igmp-join-leave.pcap")).run()) {
            assertCounters(replay, Map.of("igmp.tx.reports_v3", 8L, "udp.rx.datagrams", 3L));
            // 239.1.2.3 and 232.1.2.3 share the MAC 01:00:5e:01:02:03 (RFC 1112 §6.4 maps the low 23 bits), so the
            // datagram to 239.1.2.3 after its leave passes the Ethernet filter and IPv4 discards it.
            assertEquals(Map.of("ipv4.drop.not_for_us", 1L), counters(replay, ".drop."));
        }
    }

    @Test
    void tcpFromTernReplaysToTimeWaitWithoutRetransmission() {
        try (Replay replay = Replay.of(Pcaps.read("tcp-tern-client.pcap")).run()) {
            assertEquals(Map.of(), counters(replay, ".drop."));
            assertCounters(replay, Map.of("tcp.conn.active_opens", 1L, "tcp.conn.established", 1L, "tcp.tx.bytes", 4000L,
                "tcp.rx.bytes", 3000L, "tcp.tx.retransmits", 0L, "tcp.tx.resets", 0L));
        }
    }

    @Test
    void tcpToTernReplaysToClosedWithoutRetransmission() {
        try (Replay replay = Replay.of(Pcaps.read("tcp-kernel-client.pcap")).run()) {
            assertEquals(Map.of(), counters(replay, ".drop."));
            assertCounters(replay, Map.of("tcp.conn.passive_opens", 1L, "tcp.conn.accepted", 1L, "tcp.tx.bytes", 3000L,
                "tcp.rx.bytes", 4000L, "tcp.tx.retransmits", 0L, "tcp.tx.resets", 0L));
        }
    }

    private static void assertCounters(Replay replay, Map<String, Long> expected) {
        final Map<String, Long> actual = new TreeMap<>();
        expected.keySet().forEach(label -> actual.put(label, replay.stack().counters().value(label)));
        assertEquals(new TreeMap<>(expected), actual);
    }

    static Map<String, Long> counters(Replay replay, String part) {
        final Map<String, Long> found = new TreeMap<>();
        replay.stack().counters().reader().forEach((value, id, label) -> {
            if (label.contains(part) && value != 0) {
                found.put(label, value);
            }
        });
        return found;
    }
}
