package dev.tern.stack;

import dev.tern.arp.ArpConfig;
import dev.tern.arp.wire.ArpPacket;
import dev.tern.arp.wire.ArpRepr;
import dev.tern.core.net.Ipv4Address;
import dev.tern.ethernet.wire.EtherType;
import dev.tern.ethernet.wire.EthernetHeader;
import dev.tern.ethernet.wire.MacAddress;
import dev.tern.ipv4.wire.IcmpHeader;
import dev.tern.stack.sim.Simulation;
import dev.tern.stack.testing.Frames;
import dev.tern.stack.testing.PeerPort;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** ARP as seen on the wire by a peer played by the test (RFC 826, RFC 5227 announcements, Linux-like NUD). */
class ArpTest {
    private static final long SECOND = 1_000_000_000L;
    private static final int US = Ipv4Address.parse("198.18.0.2");
    private static final int PEER = Ipv4Address.parse("198.18.0.1");
    private static final int NOBODY = Ipv4Address.parse("198.18.0.9");
    private static final long PEER_MAC = MacAddress.parse("0a:00:00:00:00:01");

    private Simulation sim;
    private NetStack stack;
    private PeerPort peer;
    private final List<String> pingErrors = new ArrayList<>();

    @BeforeEach
    void setUp() {
        sim = new Simulation();
        peer = new PeerPort(sim, "peer", PEER_MAC);
        stack = sim.addStack("us", "198.18.0.2/24");
        stack.pinger().listener(new Pinger.Listener() {
            @Override
            public void onReply(int source, int sequence, int dataLength, int ttl, long roundTripNs, boolean intact) {
            }

            @Override
            public void onError(int reporter, int type, int code, int sequence) {
                pingErrors.add(type + "/" + code + " seq " + sequence + " at " + sim.nowNs() / SECOND + "s");
            }
        });
        sim.runFor(5 * SECOND); // past the announcements
        peer.clear();
    }

    @AfterEach
    void tearDown() {
        sim.close();
    }

    private List<ArpRepr> arpSeen() {
        return peer.drain(f -> f.etherType() == EtherType.ARP).stream()
            .map(f -> ArpRepr.parse(new ArpPacket().wrap(f.segment(), EthernetHeader.LENGTH, ArpPacket.LENGTH)))
            .toList();
    }

    private long counter(String label) {
        return stack.counters().value(label);
    }

    @Test
    void announcesItsAddressTwiceTwoSecondsApartWhenItComesUp() {
        try (Simulation fresh = new Simulation()) {
            final PeerPort watcher = new PeerPort(fresh, "watcher", PEER_MAC);
            final NetStack late = fresh.addStack("late", "198.18.0.5/24");
            fresh.runFor(10 * SECOND);
            final List<PeerPort.Received> frames = watcher.drain();
            assertEquals(2, frames.size());
            assertEquals(List.of(0L, 2 * SECOND), frames.stream().map(PeerPort.Received::atNs).toList());
            final int five = Ipv4Address.parse("198.18.0.5");
            for (PeerPort.Received frame : frames) {
                assertEquals(MacAddress.BROADCAST, new EthernetHeader().wrap(frame.segment(), 0, 60).destination());
                assertEquals(new ArpRepr(ArpPacket.OPERATION_REQUEST, late.macAddress(), five, 0, five),
                    ArpRepr.parse(new ArpPacket().wrap(frame.segment(), EthernetHeader.LENGTH, ArpPacket.LENGTH)));
            }
        }
    }

    @Test
    void answersARequestForItsAddressWithAnExactReply() {
        peer.send(Frames.ethernet(MacAddress.BROADCAST, PEER_MAC, EtherType.ARP,
            Frames.arp(ArpPacket.OPERATION_REQUEST, PEER_MAC, PEER, 0, US)));
        sim.runFor(SECOND);
        final List<PeerPort.Received> frames = peer.drain();
        assertEquals(1, frames.size());
        final byte[] expected = Frames.ethernet(PEER_MAC, stack.macAddress(), EtherType.ARP,
            Frames.arp(ArpPacket.OPERATION_REPLY, stack.macAddress(), US, PEER_MAC, PEER));
        assertArrayEquals(expected, frames.getFirst().bytes(), "reply, zero-padded to 60 bytes");
        assertEquals(1, counter("arp.rx.requests"));
        assertEquals(1, counter("arp.tx.replies"));
    }

    @Test
    void ignoresRequestsForOtherAddressesButRepliesToProbes() {
        peer.send(Frames.ethernet(MacAddress.BROADCAST, PEER_MAC, EtherType.ARP,
            Frames.arp(ArpPacket.OPERATION_REQUEST, PEER_MAC, PEER, 0, NOBODY)));
        sim.runFor(SECOND);
        assertTrue(peer.drain().isEmpty());
        assertEquals("none", stack.neighbours().stateOf(PEER), "not addressed to us: nothing learned");
        // RFC 5227 probe: sender address 0.0.0.0; we answer (defending our address) but learn nothing.
        peer.send(Frames.ethernet(MacAddress.BROADCAST, PEER_MAC, EtherType.ARP,
            Frames.arp(ArpPacket.OPERATION_REQUEST, PEER_MAC, 0, 0, US)));
        sim.runFor(SECOND);
        assertEquals(List.of(new ArpRepr(ArpPacket.OPERATION_REPLY, stack.macAddress(), US, PEER_MAC, 0)), arpSeen());
        assertEquals("none", stack.neighbours().stateOf(0));
    }

    @Test
    void learnsTheRequesterAndUsesItWithoutAsking() {
        peer.send(Frames.ethernet(MacAddress.BROADCAST, PEER_MAC, EtherType.ARP,
            Frames.arp(ArpPacket.OPERATION_REQUEST, PEER_MAC, PEER, 0, US)));
        sim.runFor(SECOND);
        peer.clear();
        assertEquals("stale", stack.neighbours().stateOf(PEER));
        stack.pinger().send(PEER, 1, 8, sim.nowNs());
        sim.runFor(SECOND);
        final List<PeerPort.Received> frames = peer.drain();
        assertEquals(1, frames.size(), "the echo request only, no ARP");
        assertEquals(IcmpHeader.ECHO_REQUEST, frames.getFirst().icmpType());
        assertEquals("delay", stack.neighbours().stateOf(PEER));
    }

    @Nested
    class Resolution {
        @Test
        void retriesThreeTimesOneSecondApartThenReportsHostUnreachable() {
            final long start = sim.nowNs();
            stack.pinger().send(NOBODY, 1, 56, sim.nowNs());
            sim.runFor(10 * SECOND);
            final List<PeerPort.Received> requests = peer.drain(f -> f.etherType() == EtherType.ARP);
            assertEquals(List.of(start, start + SECOND, start + 2 * SECOND),
                requests.stream().map(PeerPort.Received::atNs).toList());
            for (ArpRepr request : arpSeen()) {
                assertEquals(new ArpRepr(ArpPacket.OPERATION_REQUEST, stack.macAddress(), US, 0, NOBODY), request);
            }
            assertEquals(List.of("3/1 seq 1 at 8s"), pingErrors, "host unreachable when the third request times out");
            assertEquals(1, counter("arp.resolve_failed"));
            assertEquals(0, stack.neighbours().pendingPackets());
            assertEquals("none", stack.neighbours().stateOf(NOBODY));
        }

        @Test
        void queuedPacketsLeaveInOrderOnceTheReplyArrives() {
            for (int seq = 1; seq <= 3; seq++) {
                stack.pinger().send(PEER, seq, 8, sim.nowNs());
            }
            sim.runFor(SECOND / 10);
            assertEquals(1, arpSeen().size());
            peer.clear();
            peer.send(Frames.ethernet(stack.macAddress(), PEER_MAC, EtherType.ARP,
                Frames.arp(ArpPacket.OPERATION_REPLY, PEER_MAC, PEER, stack.macAddress(), US)));
            sim.runFor(SECOND / 10);
            final List<PeerPort.Received> echoes = peer.drain(f -> f.icmpType() == IcmpHeader.ECHO_REQUEST);
            assertEquals(List.of(1, 2, 3), echoes.stream().map(f -> f.bytes()[EthernetHeader.LENGTH + 27] & 0xFF).toList());
            assertEquals("reachable", stack.neighbours().stateOf(PEER));
            assertEquals(3, counter("arp.pending.sent"));
        }

        @Test
        void keepsOnlyTheNewestPacketsPerNeighbour() {
            final int limit = ArpConfig.DEFAULT.pendingPerNeighbour();
            for (int seq = 1; seq <= 100; seq++) {
                stack.pinger().send(PEER, seq, 8, sim.nowNs());
            }
            peer.send(Frames.ethernet(stack.macAddress(), PEER_MAC, EtherType.ARP,
                Frames.arp(ArpPacket.OPERATION_REPLY, PEER_MAC, PEER, stack.macAddress(), US)));
            sim.runFor(SECOND / 10);
            final List<PeerPort.Received> echoes = peer.drain(f -> f.icmpType() == IcmpHeader.ECHO_REQUEST);
            assertEquals(limit, echoes.size());
            assertEquals(100 - limit + 1, echoes.getFirst().bytes()[EthernetHeader.LENGTH + 27] & 0xFF);
            assertEquals(100 - limit, counter("arp.pending.overflow"));
        }

        @Test
        void aStaleNeighbourInUseIsProbedByUnicastAfterTheDelay() {
            peer.send(Frames.ethernet(stack.macAddress(), PEER_MAC, EtherType.ARP,
                Frames.arp(ArpPacket.OPERATION_REPLY, PEER_MAC, PEER, stack.macAddress(), US)));
            sim.runFor(SECOND);
            stack.pinger().send(PEER, 1, 8, sim.nowNs()); // makes an entry; the reply above did not (not asked)
            sim.runFor(SECOND / 10);
            peer.send(Frames.ethernet(stack.macAddress(), PEER_MAC, EtherType.ARP,
                Frames.arp(ArpPacket.OPERATION_REPLY, PEER_MAC, PEER, stack.macAddress(), US)));
            sim.runFor(SECOND);
            assertEquals("reachable", stack.neighbours().stateOf(PEER));
            sim.runFor(31 * SECOND);
            peer.clear();
            final long used = sim.nowNs();
            stack.pinger().send(PEER, 2, 8, used);
            sim.runFor(10 * SECOND);
            final List<PeerPort.Received> arp = peer.drain(f -> f.etherType() == EtherType.ARP);
            assertEquals(3, arp.size(), "three unicast probes, then the entry is forgotten");
            assertEquals(used + 5 * SECOND, arp.getFirst().atNs(), "first probe after the 5 s delay");
            for (PeerPort.Received probe : arp) {
                assertEquals(PEER_MAC, new EthernetHeader().wrap(probe.segment(), 0, 60).destination());
            }
            assertEquals("none", stack.neighbours().stateOf(PEER));
        }

        @Test
        void negativeAdviceProbesAConfirmedNeighbourAtOnceByUnicast() {
            stack.pinger().send(PEER, 1, 8, sim.nowNs());
            sim.runFor(SECOND / 10);
            peer.send(Frames.ethernet(stack.macAddress(), PEER_MAC, EtherType.ARP,
                Frames.arp(ArpPacket.OPERATION_REPLY, PEER_MAC, PEER, stack.macAddress(), US)));
            sim.runFor(SECOND);
            assertEquals("reachable", stack.neighbours().stateOf(PEER));
            peer.clear();
            // TCP at R1 (RFC 1122 §3.3.1.4, §4.2.3.5): no DELAY, the first unicast probe goes now.
            final long advised = sim.nowNs();
            assertTrue(stack.neighbours().suspect(PEER, advised));
            assertEquals("probe", stack.neighbours().stateOf(PEER));
            assertFalse(stack.neighbours().suspect(PEER, advised), "already probing: nothing more");
            sim.runFor(10 * SECOND);
            final List<PeerPort.Received> arp = peer.drain(f -> f.etherType() == EtherType.ARP);
            assertEquals(3, arp.size(), "three unicast probes, unanswered, then the entry is forgotten");
            for (int i = 0; i < 3; i++) {
                assertEquals(advised + i * SECOND, arp.get(i).atNs(), "probe " + i);
                assertEquals(PEER_MAC, new EthernetHeader().wrap(arp.get(i).segment(), 0, 60).destination());
            }
            assertEquals("none", stack.neighbours().stateOf(PEER));
            assertFalse(stack.neighbours().suspect(NOBODY, sim.nowNs()), "no entry: nothing to re-confirm");
        }
    }

    @Nested
    class BadInput {
        @Test
        void malformedAndForeignPacketsAreCountedAndDropped() {
            final byte[] good = Frames.arp(ArpPacket.OPERATION_REQUEST, PEER_MAC, PEER, 0, US);
            final byte[] header = Frames.ethernet(MacAddress.BROADCAST, PEER_MAC, EtherType.ARP, new byte[0]);
            peer.send(Frames.concat(Arrays.copyOf(header, 14), Arrays.copyOf(good, 20))); // truncated
            final byte[] ipv6 = good.clone();
            ipv6[2] = (byte) 0x86;
            ipv6[3] = (byte) 0xDD;
            peer.send(Frames.ethernet(MacAddress.BROADCAST, PEER_MAC, EtherType.ARP, ipv6));
            final byte[] badOperation = good.clone();
            badOperation[7] = 3;
            peer.send(Frames.ethernet(MacAddress.BROADCAST, PEER_MAC, EtherType.ARP, badOperation));
            sim.runFor(SECOND);
            assertTrue(peer.drain().isEmpty(), "nothing answered");
            assertEquals(1, counter("arp.drop.too_short"));
            assertEquals(1, counter("arp.drop.foreign_protocol"));
            assertEquals(1, counter("arp.drop.bad_operation"));
            assertEquals(0, counter("stack.internal_errors"));
        }

        @Test
        void aSenderThatCannotBeANeighbourIsNeitherAnsweredNorLearned() {
            peer.send(Frames.ethernet(MacAddress.BROADCAST, PEER_MAC, EtherType.ARP,
                Frames.arp(ArpPacket.OPERATION_REQUEST, PEER_MAC, Ipv4Address.parse("127.0.0.1"), 0, US)));
            peer.send(Frames.ethernet(MacAddress.BROADCAST, PEER_MAC, EtherType.ARP,
                Frames.arp(ArpPacket.OPERATION_REQUEST, PEER_MAC, Ipv4Address.parse("224.0.0.9"), 0, US)));
            peer.send(Frames.ethernet(MacAddress.BROADCAST, PEER_MAC, EtherType.ARP,
                Frames.arp(ArpPacket.OPERATION_REQUEST, MacAddress.parse("01:00:5e:00:00:09"), PEER, 0, US)));
            sim.runFor(SECOND);
            assertTrue(peer.drain().isEmpty(), "no reply, above all none to a group MAC");
            assertEquals(3, counter("arp.drop.bad_sender"));
            assertEquals("none", stack.neighbours().stateOf(Ipv4Address.parse("127.0.0.1")));
            assertEquals("none", stack.neighbours().stateOf(PEER));
        }

        @Test
        void anUnsolicitedReplyCreatesNoEntryButUpdatesOneWeHave() {
            // Linux's arp_accept=0: a LAN host cannot plant a mapping for an address we never asked about.
            final long intruder = MacAddress.parse("0a:00:00:00:00:66");
            peer.send(Frames.ethernet(stack.macAddress(), intruder, EtherType.ARP,
                Frames.arp(ArpPacket.OPERATION_REPLY, intruder, NOBODY, stack.macAddress(), US)));
            sim.runFor(SECOND);
            assertEquals("none", stack.neighbours().stateOf(NOBODY));
            assertEquals(1, counter("arp.rx.unsolicited_replies"));
            assertTrue(peer.drain().isEmpty(), "nothing answered");

            peer.send(Frames.ethernet(MacAddress.BROADCAST, PEER_MAC, EtherType.ARP,
                Frames.arp(ArpPacket.OPERATION_REQUEST, PEER_MAC, PEER, 0, US)));
            sim.runFor(SECOND);
            peer.clear();
            assertEquals("stale", stack.neighbours().stateOf(PEER));
            final long moved = MacAddress.parse("0a:00:00:00:00:02");
            peer.send(Frames.ethernet(stack.macAddress(), moved, EtherType.ARP,
                Frames.arp(ArpPacket.OPERATION_REPLY, moved, PEER, stack.macAddress(), US)));
            sim.runFor(SECOND);
            assertEquals("stale", stack.neighbours().stateOf(PEER), "an entry we have is updated, to be probed");
            assertEquals(moved, stack.neighbours().peek(PEER));
            assertEquals(1, counter("arp.rx.unsolicited_replies"));
        }

        @Test
        void requestsFromOffSubnetSendersOrTheNetworkAddressGoUnanswered() {
            peer.send(Frames.ethernet(MacAddress.BROADCAST, PEER_MAC, EtherType.ARP,
                Frames.arp(ArpPacket.OPERATION_REQUEST, PEER_MAC, Ipv4Address.parse("198.19.0.1"), 0, US)));
            peer.send(Frames.ethernet(MacAddress.BROADCAST, PEER_MAC, EtherType.ARP,
                Frames.arp(ArpPacket.OPERATION_REQUEST, PEER_MAC, Ipv4Address.parse("198.18.0.0"), 0, US)));
            sim.runFor(SECOND);
            assertTrue(peer.drain().isEmpty(), "no reply to either");
            assertEquals(1, counter("arp.drop.off_subnet"));
            assertEquals(1, counter("arp.drop.bad_sender"));
            assertEquals("none", stack.neighbours().stateOf(Ipv4Address.parse("198.19.0.1")));
            assertEquals("none", stack.neighbours().stateOf(Ipv4Address.parse("198.18.0.0")));
        }

        @Test
        void aNeighbourClaimingOurAddressIsCountedAsAConflict() {
            peer.send(Frames.ethernet(MacAddress.BROADCAST, PEER_MAC, EtherType.ARP,
                Frames.arp(ArpPacket.OPERATION_REQUEST, PEER_MAC, US, 0, US)));
            sim.runFor(SECOND);
            assertEquals(1, counter("arp.address_conflicts"));
            assertEquals("none", stack.neighbours().stateOf(US));
        }
    }

    /** RFC 5227 §2.4 (c): a configured address is defended, once per DEFEND_INTERVAL, and never given up. */
    @Nested
    class AddressDefence {
        private static final long INTRUDER_MAC = MacAddress.parse("0a:00:00:00:00:66");

        private void claimOurAddress(int operation) {
            // Whatever the packet's kind (request, reply, gratuitous), the sender IP is ours and the MAC is not.
            peer.send(Frames.ethernet(MacAddress.BROADCAST, INTRUDER_MAC, EtherType.ARP,
                Frames.arp(operation, INTRUDER_MAC, US, 0, US)));
        }

        private void assertOneDefence() {
            final List<PeerPort.Received> frames = peer.drain();
            assertEquals(1, frames.size(), "one announcement");
            final byte[] expected = Frames.ethernet(MacAddress.BROADCAST, stack.macAddress(), EtherType.ARP,
                Frames.arp(ArpPacket.OPERATION_REQUEST, stack.macAddress(), US, 0, US));
            assertArrayEquals(expected, frames.getFirst().bytes(), "a broadcast announcement of our address and MAC");
            peer.clear();
        }

        @Test
        void aGratuitousArpClaimingOurAddressIsAnsweredWithOneAnnouncement() {
            claimOurAddress(ArpPacket.OPERATION_REQUEST);
            sim.runFor(SECOND / 10);
            assertOneDefence();
            assertEquals(1, counter("arp.address_conflicts"));
            assertEquals(1, counter("arp.tx.defences"));
            assertEquals("none", stack.neighbours().stateOf(US), "the intruder is not learned");
        }

        @Test
        void aSecondConflictWithinTenSecondsIsCountedButNotDefended() {
            claimOurAddress(ArpPacket.OPERATION_REPLY);
            sim.runFor(SECOND / 10);
            assertOneDefence();
            // Two hosts configured alike would otherwise announce at each other forever.
            for (int i = 0; i < 9; i++) {
                sim.runFor(SECOND);
                claimOurAddress(i % 2 == 0 ? ArpPacket.OPERATION_REQUEST : ArpPacket.OPERATION_REPLY);
            }
            sim.runFor(SECOND / 2); // 9.6 s after the defence
            assertTrue(peer.drain().isEmpty(), "no second announcement within DEFEND_INTERVAL");
            assertEquals(10, counter("arp.address_conflicts"));
            assertEquals(9, counter("arp.address_conflicts_not_defended"));
            sim.runFor(SECOND / 2);
            claimOurAddress(ArpPacket.OPERATION_REPLY);
            sim.runFor(SECOND / 10);
            assertOneDefence();
            assertEquals(2, counter("arp.tx.defences"), "defended again once the interval passed: never given up");
        }

        @Test
        void aRequestForOurAddressIsNoClaimOnIt() {
            claimOurAddress(ArpPacket.OPERATION_REQUEST);
            sim.runFor(SECOND / 10);
            assertOneDefence();
            peer.send(Frames.ethernet(MacAddress.BROADCAST, PEER_MAC, EtherType.ARP,
                Frames.arp(ArpPacket.OPERATION_REQUEST, PEER_MAC, PEER, 0, US)));
            sim.runFor(SECOND / 10);
            assertEquals(1, counter("arp.address_conflicts"), "a request for our address is no claim on it");
        }
    }
}
