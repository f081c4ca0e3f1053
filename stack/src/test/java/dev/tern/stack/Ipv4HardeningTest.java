package dev.tern.stack;

import dev.tern.core.checksum.InternetChecksum;
import dev.tern.core.memory.BigEndian;
import dev.tern.core.net.InterfaceAddress;
import dev.tern.core.net.Ipv4Address;
import dev.tern.ethernet.wire.EtherType;
import dev.tern.ethernet.wire.EthernetHeader;
import dev.tern.ethernet.wire.MacAddress;
import dev.tern.ipv4.wire.IcmpHeader;
import dev.tern.ipv4.wire.IpProtocol;
import dev.tern.ipv4.wire.Ipv4Header;
import dev.tern.stack.sim.Simulation;
import dev.tern.stack.testing.Frames;
import dev.tern.stack.testing.HostileIpv4;
import dev.tern.stack.testing.PeerPort;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Hostile IPv4 input, as a peer on the wire sends it: martian sources (RFC 1122 §3.2.1.3, RFC 1812 §5.3.7), malformed
 * and source-routing options (RFC 791 §3.1, RFC 1122 §3.2.2.5), the per-peer ICMP error limit (RFC 1812 §4.3.2.8),
 * and identification values per destination (RFC 6864, RFC 7739).
 */
class Ipv4HardeningTest {
    private static final long SECOND = 1_000_000_000L;
    private static final int US = Ipv4Address.parse("198.18.0.2");
    private static final int PEER = Ipv4Address.parse("198.18.0.1");
    private static final int OTHER = Ipv4Address.parse("198.18.0.3");
    private static final long PEER_MAC = MacAddress.parse("0a:00:00:00:00:01");
    private static final long OTHER_MAC = MacAddress.parse("0a:00:00:00:00:03");
    private static final int ICMP_TYPE = EthernetHeader.LENGTH + Ipv4Header.MIN_LENGTH;

    private Simulation sim;
    private NetStack stack;
    private PeerPort peer;

    @BeforeEach
    void setUp() {
        sim = new Simulation();
        peer = new PeerPort(sim, "peer", PEER_MAC);
        stack = sim.addStack("us", "198.18.0.2/24");
        // Teach the stack both peers' MACs so that answers need no ARP.
        peer.send(Frames.ethernet(MacAddress.BROADCAST, PEER_MAC, EtherType.ARP, Frames.arp(1, PEER_MAC, PEER, 0, US)));
        peer.send(Frames.ethernet(MacAddress.BROADCAST, OTHER_MAC, EtherType.ARP, Frames.arp(1, OTHER_MAC, OTHER, 0, US)));
        sim.runFor(5 * SECOND);
        peer.clear();
    }

    @AfterEach
    void tearDown() {
        assertEquals(0, counter("stack.internal_errors"));
        sim.close();
    }

    private long counter(String label) {
        return stack.counters().value(label);
    }

    private void send(byte[] datagram) {
        peer.send(Frames.ethernet(stack.macAddress(), PEER_MAC, EtherType.IPV4, datagram));
    }

    private static byte[] echo(int source, int destination) {
        return Frames.ipv4(source, destination, IpProtocol.ICMP, 1, 0, 64, Frames.echoRequest(1, 1, new byte[8]));
    }

    @Nested
    class MartianSources {
        static Stream<HostileIpv4.MartianSource> martians() {
            return HostileIpv4.martianSources(new InterfaceAddress(US, 24)).stream();
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("martians")
        void anEchoRequestFromAMartianSourceIsCountedByReasonAndNeverAnswered(HostileIpv4.MartianSource martian) {
            send(echo(martian.source(), US));
            sim.runFor(SECOND);
            assertTrue(peer.drain().isEmpty(), "no echo reply, no ICMP error");
            assertEquals(1, counter("ipv4.drop." + martian.reason()), martian.what());
            assertEquals(0, counter("ipv4.rx.delivered"));
            assertEquals(0, counter("icmp.rx.echo_requests"));
        }

        @Test
        void zeroSourceIsAcceptedToTheLimitedBroadcastAsADhcpClientSendsIt() {
            peer.send(Frames.ethernet(MacAddress.BROADCAST, PEER_MAC, EtherType.IPV4,
                echo(0, Ipv4Address.LIMITED_BROADCAST)));
            sim.runFor(SECOND);
            assertEquals(0, counter("ipv4.drop.martian_source_zero"));
            assertEquals(1, counter("ipv4.rx.delivered"));
            assertEquals(1, counter("icmp.drop.echo_to_broadcast"), "ICMP got it, and ignored an echo to broadcast");
            assertTrue(peer.drain().isEmpty());
        }

        @Test
        void zeroSourceIsAcceptedForIgmpToAGroupButNotForUdp() {
            final long allSystemsMac = MacAddress.ofIpv4Multicast(Ipv4Address.ALL_SYSTEMS);
            // A snooping switch's general query (RFC 4541 §2.1.1): IGMPv2 query, max response 10 s.
            final byte[] query = {0x11, 100, 0, 0, 0, 0, 0, 0};
            BigEndian.u16(MemorySegment.ofArray(query), 2, InternetChecksum.compute(MemorySegment.ofArray(query), 0, 8));
            peer.send(Frames.ethernet(allSystemsMac, PEER_MAC, EtherType.IPV4,
                Frames.ipv4(0, Ipv4Address.ALL_SYSTEMS, IpProtocol.IGMP, 1, 0, 1, query)));
            peer.send(Frames.ethernet(allSystemsMac, PEER_MAC, EtherType.IPV4,
                Frames.ipv4(0, Ipv4Address.ALL_SYSTEMS, IpProtocol.UDP, 2, 0, 1, new byte[8])));
            sim.runFor(SECOND);
            assertEquals(1, counter("ipv4.rx.delivered"), "the IGMP query");
            assertEquals(1, counter("ipv4.drop.martian_source_zero"), "the UDP datagram");
        }

        @Test
        void datagramsWeSendOurselvesStillArriveThroughLoopback() {
            assertEquals(dev.tern.ipv4.Ipv4Layer.OK, stack.pinger().send(US, 1, 8, sim.nowNs()));
            sim.runFor(SECOND);
            assertEquals(1, counter("icmp.rx.echo_replies"));
            assertEquals(0, counter("ipv4.drop.martian_source_self"));
        }
    }

    @Nested
    class Options {
        /** Malformed options, and the octet of the header the Parameter Problem must point at. */
        static Stream<HostileIpv4.MalformedOption> malformed() {
            return HostileIpv4.malformedOptions().stream();
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("malformed")
        void aMalformedOptionIsDroppedWithAParameterProblemPointingAtIt(HostileIpv4.MalformedOption malformed) {
            final String what = malformed.what();
            final byte[] datagram = Frames.withOptions(echo(PEER, US), malformed.options());
            send(datagram);
            sim.runFor(SECOND);
            final List<PeerPort.Received> frames = peer.drain();
            assertEquals(1, frames.size(), what);
            final byte[] error = frames.getFirst().bytes();
            assertEquals(IcmpHeader.PARAMETER_PROBLEM, error[ICMP_TYPE] & 0xFF);
            assertEquals(0, error[ICMP_TYPE + 1], "code 0: the pointer indicates the error");
            assertEquals(malformed.pointer(), error[ICMP_TYPE + 4] & 0xFF, "pointer");
            assertEquals(0, error[ICMP_TYPE + 5] | error[ICMP_TYPE + 6] | error[ICMP_TYPE + 7], "unused");
            assertArrayEquals(datagram, Arrays.copyOfRange(error, ICMP_TYPE + 8, ICMP_TYPE + 8 + datagram.length),
                "quotes the whole datagram");
            final int icmpLength = error.length - ICMP_TYPE;
            assertTrue(InternetChecksum.verifies(InternetChecksum.add(0, MemorySegment.ofArray(error), ICMP_TYPE,
                Math.min(icmpLength, 8 + datagram.length))));
            assertEquals(1, counter("ipv4.drop." + malformed.reason()), what);
            assertEquals(0, counter("icmp.rx.echo_requests"), "never delivered");
            assertEquals(1, counter("icmp.tx.errors"));
        }

        @Test
        void looseAndStrictSourceRoutesAreDroppedSilently() {
            // Completed routes (pointer past the length): datagrams that did reach their final destination, us.
            send(Frames.withOptions(echo(PEER, US), 131, 7, 8, 198, 18, 0, 2));
            send(Frames.withOptions(echo(PEER, US), 137, 7, 8, 198, 18, 0, 2));
            // A route still to follow: a host does not forward, so that would have been dropped anyway.
            send(Frames.withOptions(echo(PEER, US), 131, 11, 4, 198, 18, 0, 9, 198, 18, 0, 2));
            sim.runFor(SECOND);
            assertTrue(peer.drain().isEmpty(), "no echo reply, no ICMP error");
            assertEquals(3, counter("ipv4.drop.source_routed"));
            assertEquals(0, counter("icmp.rx.echo_requests"));
        }

        @Test
        void recordRouteAndTimestampAreAcceptedAndTheReplyCarriesNoOptions() {
            send(Frames.withOptions(echo(PEER, US), 7, 11, 4, 0, 0, 0, 0, 0, 0, 0, 0, 68, 12, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0));
            sim.runFor(SECOND);
            final List<PeerPort.Received> replies = peer.drain(f -> f.icmpType() == IcmpHeader.ECHO_REPLY);
            assertEquals(1, replies.size());
            assertEquals(0x45, replies.getFirst().bytes()[EthernetHeader.LENGTH], "a 20-byte header: options ignored");
            assertEquals(0, counter("ipv4.drop.option_bad_pointer") + counter("ipv4.drop.option_bad_length"));
        }

        @Test
        void noParameterProblemAboutABroadcastANonFirstFragmentOrAnIcmpError() {
            final int[] badLength = {7, 0, 4, 0};
            peer.send(Frames.ethernet(MacAddress.BROADCAST, PEER_MAC, EtherType.IPV4,
                Frames.withOptions(echo(PEER, Ipv4Address.parse("198.18.0.255")), badLength)));
            send(Frames.withOptions(Frames.ipv4(PEER, US, IpProtocol.UDP, 7, 10, 64, new byte[16]), badLength));
            send(Frames.withOptions(Frames.ipv4(PEER, US, IpProtocol.ICMP, 8, 0, 64,
                Frames.icmp(IcmpHeader.DESTINATION_UNREACHABLE, 3, 0, new byte[28])), badLength));
            sim.runFor(SECOND);
            assertTrue(peer.drain().isEmpty());
            assertEquals(3, counter("ipv4.drop.option_bad_length"));
            assertEquals(3, counter("icmp.tx.errors_suppressed"));
        }

        @Test
        void parameterProblemsObeyThePerPeerLimit() {
            for (int i = 0; i < 10; i++) {
                send(Frames.withOptions(echo(PEER, US), 7, 1, 0, 0));
            }
            sim.runFor(SECOND / 10);
            assertEquals(6, peer.drain(f -> f.icmpType() == IcmpHeader.PARAMETER_PROBLEM).size());
            assertEquals(10, counter("ipv4.drop.option_bad_length"));
            assertEquals(4, counter("icmp.tx.errors_rate_limited_peer"));
        }
    }

    @Nested
    class IcmpLimits {
        private byte[] unknownProtocol(int source, int identification) {
            return Frames.ipv4(source, US, 253, identification, 0, 64, new byte[8]);
        }

        private List<PeerPort.Received> errorsTo(int destination) {
            return peer.drain(f -> f.icmpType() == IcmpHeader.DESTINATION_UNREACHABLE
                && BigEndian.i32(f.segment(), EthernetHeader.LENGTH + 16) == destination);
        }

        @Test
        void onePeerProvokingErrorsGetsSixThenOneASecondWhileAnotherPeerStillGetsItsOwn() {
            for (int i = 0; i < 20; i++) {
                send(unknownProtocol(PEER, i));
            }
            for (int i = 0; i < 3; i++) {
                peer.send(Frames.ethernet(stack.macAddress(), OTHER_MAC, EtherType.IPV4, unknownProtocol(OTHER, i)));
            }
            sim.runFor(SECOND / 10);
            assertEquals(6, errorsTo(PEER).size(), "a burst of 6 (Linux icmp_ratelimit's burst)");
            assertEquals(3, errorsTo(OTHER).size(), "the other peer's bucket is its own");
            assertEquals(14, counter("icmp.tx.errors_rate_limited_peer"));
            assertEquals(0, counter("icmp.tx.errors_rate_limited"), "the global limit was never reached");
            peer.clear();
            sim.runFor(SECOND);
            for (int i = 0; i < 5; i++) {
                send(unknownProtocol(PEER, 100 + i));
            }
            sim.runFor(SECOND / 10);
            assertEquals(1, errorsTo(PEER).size(), "one more a second later");
            assertEquals(18, counter("icmp.tx.errors_rate_limited_peer"));
        }
    }

    @Nested
    class Identification {
        private int identification(PeerPort.Received frame) {
            return BigEndian.u16(frame.segment(), EthernetHeader.LENGTH + 4);
        }

        private List<Integer> echoIdsTo(int destination) {
            return peer.drain(f -> f.icmpType() == IcmpHeader.ECHO_REQUEST
                && BigEndian.i32(f.segment(), EthernetHeader.LENGTH + 16) == destination).stream()
                .map(this::identification).toList();
        }

        @Test
        void whatOnePeerSeesDoesNotMoveWhenWeSendToAnother() {
            // The idle scan of RFC 7739 §4: PEER pings us, then learns how much we sent elsewhere from our IDs.
            stack.pinger().send(PEER, 1, 8, sim.nowNs());
            stack.pinger().send(PEER, 2, 8, sim.nowNs());
            sim.runFor(SECOND / 10);
            for (int i = 0; i < 50; i++) {
                stack.pinger().send(OTHER, 10 + i, 8, sim.nowNs());
            }
            sim.runFor(SECOND / 10);
            stack.pinger().send(PEER, 3, 8, sim.nowNs());
            sim.runFor(SECOND / 10);
            final List<Integer> seenByPeer = echoIdsTo(PEER);
            final List<Integer> seenByOther = echoIdsTo(OTHER);
            assertEquals(3, seenByPeer.size());
            assertEquals(50, seenByOther.size());
            assertEquals((seenByPeer.get(0) + 1) & 0xFFFF, (int) seenByPeer.get(1));
            assertEquals((seenByPeer.get(1) + 1) & 0xFFFF, (int) seenByPeer.get(2), "50 datagrams to OTHER left no trace");
            for (int i = 1; i < seenByOther.size(); i++) {
                assertEquals((seenByOther.get(i - 1) + 1) & 0xFFFF, (int) seenByOther.get(i));
            }
        }
    }
}
