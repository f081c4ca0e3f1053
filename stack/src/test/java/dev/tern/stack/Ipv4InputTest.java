package dev.tern.stack;

import dev.tern.core.checksum.InternetChecksum;
import dev.tern.core.memory.BigEndian;
import dev.tern.core.net.Ipv4Address;
import dev.tern.ethernet.wire.EtherType;
import dev.tern.ethernet.wire.EthernetHeader;
import dev.tern.ethernet.wire.MacAddress;
import dev.tern.ipv4.Ipv4Config;
import dev.tern.ipv4.Ipv4Layer;
import dev.tern.ipv4.wire.IcmpHeader;
import dev.tern.ipv4.wire.IcmpRepr;
import dev.tern.ipv4.wire.IpProtocol;
import dev.tern.ipv4.wire.Ipv4Header;
import dev.tern.ipv4.wire.Ipv4Repr;
import dev.tern.stack.sim.Simulation;
import dev.tern.stack.testing.Frames;
import dev.tern.stack.testing.PeerPort;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** IPv4 input checks, ICMP error rules and path MTU, as seen from a peer on the wire. */
class Ipv4InputTest {
    private static final long SECOND = 1_000_000_000L;
    private static final int US = Ipv4Address.parse("198.18.0.2");
    private static final int PEER = Ipv4Address.parse("198.18.0.1");
    private static final long PEER_MAC = MacAddress.parse("0a:00:00:00:00:01");

    private Simulation sim;
    private NetStack stack;
    private PeerPort peer;

    @BeforeEach
    void setUp() {
        start(builder -> { });
    }

    private void start(Consumer<NetStack.Builder> customize) {
        sim = new Simulation();
        peer = new PeerPort(sim, "peer", PEER_MAC);
        stack = sim.addStack("us", "198.18.0.2/24", customize);
        // Teach the stack the peer's MAC so replies need no ARP.
        peer.send(Frames.ethernet(MacAddress.BROADCAST, PEER_MAC, EtherType.ARP,
            Frames.arp(1, PEER_MAC, PEER, 0, US)));
        sim.runFor(5 * SECOND);
        peer.clear();
    }

    @AfterEach
    void tearDown() {
        sim.close();
    }

    private long counter(String label) {
        return stack.counters().value(label);
    }

    private byte[] frame(byte[] ipv4) {
        return Frames.ethernet(stack.macAddress(), PEER_MAC, EtherType.IPV4, ipv4);
    }

    private static byte[] echo(int destination) {
        return Frames.ipv4(PEER, destination, IpProtocol.ICMP, 1, 0, 64, Frames.echoRequest(1, 1, new byte[8]));
    }

    /** One malformed variant of a good echo request, and the counter that must count it. */
    static Stream<Arguments> malformed() {
        return Stream.of(
            Arguments.of("truncated below 20 bytes", (UnaryOperator<byte[]>) p -> Arrays.copyOf(p, 19), "ipv4.drop.too_short"),
            Arguments.of("version 6", (UnaryOperator<byte[]>) p -> set(p, 0, 0x65), "ipv4.drop.bad_version"),
            Arguments.of("IHL 4", (UnaryOperator<byte[]>) p -> set(p, 0, 0x44), "ipv4.drop.bad_header_length"),
            Arguments.of("IHL beyond the frame", (UnaryOperator<byte[]>) p -> set(Arrays.copyOf(p, 28), 0, 0x48),
                "ipv4.drop.bad_header_length"),
            Arguments.of("total length beyond the frame", (UnaryOperator<byte[]>) p -> setShort(p, 2, 1000),
                "ipv4.drop.bad_total_length"),
            Arguments.of("total length below the header", (UnaryOperator<byte[]>) p -> setShort(p, 2, 16),
                "ipv4.drop.bad_total_length"),
            Arguments.of("bad header checksum", (UnaryOperator<byte[]>) p -> set(p, 10, p[10] ^ 0x01), "ipv4.drop.bad_checksum"),
            Arguments.of("multicast source", (UnaryOperator<byte[]>) p -> fixChecksum(setInt(p, 12, 0xE0000005)),
                "ipv4.drop.martian_source_multicast"),
            Arguments.of("limited broadcast source", (UnaryOperator<byte[]>) p -> fixChecksum(setInt(p, 12, -1)),
                "ipv4.drop.martian_source_broadcast"),
            Arguments.of("another host's address", (UnaryOperator<byte[]>) p -> fixChecksum(setInt(p, 16, 0xC6120063)),
                "ipv4.drop.not_for_us"),
            Arguments.of("the subnet broadcast as source (a smurf)", (UnaryOperator<byte[]>) p -> fixChecksum(setInt(p, 12, 0xC61200FF)),
                "ipv4.drop.martian_source_broadcast"),
            Arguments.of("bad ICMP checksum", (UnaryOperator<byte[]>) p -> set(p, 22, p[22] ^ 0x10), "icmp.drop.bad_checksum"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("malformed")
    void malformedDatagramsAreCountedAndDroppedNeverAnswered(String what, UnaryOperator<byte[]> breakIt, String counter) {
        final byte[] broken = breakIt.apply(echo(US));
        final byte[] ethernet = Frames.ethernet(stack.macAddress(), PEER_MAC, EtherType.IPV4, new byte[0]);
        peer.send(Frames.concat(Arrays.copyOf(ethernet, EthernetHeader.LENGTH), broken));
        sim.runFor(SECOND);
        assertEquals(1, counter(counter), what);
        assertTrue(peer.drain().isEmpty(), "nothing answered");
        assertEquals(0, counter("stack.internal_errors"));
    }

    @Test
    void optionsAreSkippedAndEthernetPaddingIgnored() {
        final byte[] plain = echo(US);
        final byte[] withOptions = new byte[plain.length + 4];
        System.arraycopy(plain, 0, withOptions, 0, 20);
        withOptions[20] = 1; // NOP NOP NOP END
        withOptions[21] = 1;
        withOptions[22] = 1;
        System.arraycopy(plain, 20, withOptions, 24, plain.length - 20);
        withOptions[0] = 0x46;
        setShort(withOptions, 2, withOptions.length);
        peer.send(frame(fixChecksum(withOptions)));
        sim.runFor(SECOND);
        final List<PeerPort.Received> replies = peer.drain(f -> f.icmpType() == IcmpHeader.ECHO_REPLY);
        assertEquals(1, replies.size());
        assertEquals(60, replies.getFirst().bytes().length, "a 36-byte reply is padded to the Ethernet minimum");
    }

    @Test
    void unknownProtocolGetsProtocolUnreachableQuotingTheDatagram() {
        final byte[] datagram = Frames.ipv4(PEER, US, 253, 77, 0, 64, Frames.pattern(100, 3));
        peer.send(frame(datagram));
        sim.runFor(SECOND);
        final List<PeerPort.Received> frames = peer.drain();
        assertEquals(1, frames.size());
        final MemorySegment reply = frames.getFirst().segment();
        final Ipv4Header ip = new Ipv4Header().wrap(reply, EthernetHeader.LENGTH, frames.getFirst().bytes().length - 14);
        assertEquals(Ipv4Header.OK, ip.check(true));
        final Ipv4Repr header = Ipv4Repr.parse(ip);
        assertEquals(US, header.source());
        assertEquals(PEER, header.destination());
        assertEquals(IpProtocol.ICMP, header.protocol());
        assertEquals(8 + datagram.length, header.payloadLength(), "the whole 120-byte datagram fits in 576");
        final IcmpHeader icmp = new IcmpHeader().wrap(reply, 34, 8 + datagram.length);
        assertEquals(new IcmpRepr(IcmpHeader.DESTINATION_UNREACHABLE, IcmpHeader.PROTOCOL_UNREACHABLE, 0), IcmpRepr.parse(icmp));
        assertTrue(InternetChecksum.verifies(InternetChecksum.add(0, reply, 34, 8 + datagram.length)));
        assertArrayEquals(datagram, Arrays.copyOfRange(frames.getFirst().bytes(), 42, 42 + datagram.length));
        assertEquals(1, counter("ipv4.drop.unknown_protocol"));
    }

    @Test
    void errorsAreNeverSentAboutBroadcastsOrQuotedBeyond576Bytes() {
        peer.send(Frames.ethernet(MacAddress.BROADCAST, PEER_MAC, EtherType.IPV4,
            Frames.ipv4(PEER, Ipv4Address.parse("198.18.0.255"), 253, 1, 0, 64, new byte[10])));
        peer.send(Frames.ethernet(MacAddress.BROADCAST, PEER_MAC, EtherType.IPV4,
            Frames.ipv4(PEER, Ipv4Address.LIMITED_BROADCAST, 253, 2, 0, 64, new byte[10])));
        sim.runFor(SECOND);
        assertTrue(peer.drain().isEmpty(), "no error about broadcasts");
        assertEquals(2, counter("icmp.tx.errors_suppressed"));
        peer.send(frame(Frames.ipv4(PEER, US, 253, 3, 0, 64, new byte[1400])));
        sim.runFor(SECOND);
        assertEquals(576, peer.drain().getFirst().bytes().length - EthernetHeader.LENGTH);
    }

    @Test
    void noErrorAboutAnIcmpErrorEvenAfterReassemblyTimesOut() {
        // Fragment 0 of an ICMP "destination unreachable" datagram, never completed: no time exceeded about it.
        final byte[] error = Frames.icmp(IcmpHeader.DESTINATION_UNREACHABLE, 3, 0, new byte[40]);
        peer.send(frame(Frames.ipv4(PEER, US, IpProtocol.ICMP, 5, Ipv4Header.FLAG_MORE_FRAGMENTS, 64,
            Arrays.copyOf(error, 24))));
        sim.runFor(40 * SECOND);
        assertTrue(peer.drain().isEmpty());
        assertEquals(1, counter("ipv4.reasm.timeouts"));
        assertEquals(1, counter("icmp.tx.errors_suppressed"));
    }

    @Test
    void errorsAreRateLimitedByATokenBucket() {
        // The global limit alone: the per-peer one (Ipv4HardeningTest) would stop this single peer at 6.
        sim.close();
        start(builder -> builder.ipv4(Ipv4Config.DEFAULT.withIcmpPeerRate(0, 1, 1)));
        for (int i = 0; i < 200; i++) {
            peer.send(frame(Frames.ipv4(PEER, US, 253, i, 0, 64, new byte[8])));
        }
        sim.pollAll();
        sim.pollAll();
        assertEquals(50, counter("icmp.tx.errors"), "burst of 50");
        assertEquals(150, counter("icmp.tx.errors_rate_limited"));
        sim.runFor(10_000_000L);
        for (int i = 0; i < 100; i++) {
            peer.send(frame(Frames.ipv4(PEER, US, 253, i, 0, 64, new byte[8])));
        }
        sim.pollAll();
        sim.pollAll();
        assertEquals(60, counter("icmp.tx.errors"), "one token per ms at 1000/s");
    }

    @Test
    void aUnicastDatagramThatCameAsALinkLayerBroadcastIsDiscardedUnanswered() {
        // RFC 1122 §3.3.6 (and §3.2.2: no ICMP error about a link-layer broadcast).
        peer.send(Frames.ethernet(MacAddress.BROADCAST, PEER_MAC, EtherType.IPV4, echo(US)));
        peer.send(Frames.ethernet(MacAddress.BROADCAST, PEER_MAC, EtherType.IPV4, Frames.ipv4(PEER, US, 253, 9, 0, 64, new byte[8])));
        sim.runFor(SECOND);
        assertTrue(peer.drain(f -> f.etherType() == EtherType.IPV4).isEmpty(), "neither an echo reply nor an ICMP error");
        assertEquals(2, counter("ipv4.drop.unicast_in_link_broadcast"));
    }

    @Test
    void theReplyToAnAllZeroEchoRequestCarriesTheOnlyChecksumThatVerifies() {
        peer.send(frame(Frames.ipv4(PEER, US, IpProtocol.ICMP, 1, 0, 64, Frames.echoRequest(0, 0, new byte[1]))));
        sim.runFor(SECOND);
        final byte[] reply = peer.drain(f -> f.icmpType() == IcmpHeader.ECHO_REPLY).getFirst().bytes();
        assertEquals(0xFF, reply[36] & 0xFF);
        assertEquals(0xFF, reply[37] & 0xFF, "0xFFFF: the words of the reply all sum to zero");
    }

    @Test
    void echoRequestsToBroadcastAreIgnoredAsLinuxDoes() {
        peer.send(Frames.ethernet(MacAddress.BROADCAST, PEER_MAC, EtherType.IPV4, echo(Ipv4Address.parse("198.18.0.255"))));
        sim.runFor(SECOND);
        assertTrue(peer.drain().isEmpty());
        assertEquals(1, counter("icmp.drop.echo_to_broadcast"));
    }

    @Test
    void fragmentationNeededLowersThePathMtuForLaterDatagrams() {
        // As if a router between us and the peer had an MTU of 1000: it quotes one of our (DF) datagrams.
        final byte[] ours = Frames.ipv4(US, PEER, IpProtocol.ICMP, 9, Ipv4Header.FLAG_DONT_FRAGMENT, 64,
            Frames.echoRequest(1, 1, new byte[1400]));
        peer.send(frame(Frames.ipv4(PEER, US, IpProtocol.ICMP, 1, 0, 64, Frames.icmp(IcmpHeader.DESTINATION_UNREACHABLE,
            IcmpHeader.FRAGMENTATION_NEEDED, 1000, Arrays.copyOf(ours, 28)))));
        sim.runFor(SECOND);
        assertEquals(1, counter("icmp.rx.path_mtu_updates"));
        assertEquals(1000, stack.ipv4().pathMtus().mtu(PEER, 1500, sim.nowNs()));
        assertEquals(Ipv4Layer.OK, stack.pinger().send(PEER, 1, 3000, sim.nowNs()));
        sim.runFor(SECOND);
        final List<PeerPort.Received> fragments = peer.drain(f -> f.ipProtocol() == IpProtocol.ICMP);
        assertEquals(4, fragments.size(), "3008 bytes in 976-byte pieces");
        for (PeerPort.Received fragment : fragments) {
            assertTrue(fragment.bytes().length - EthernetHeader.LENGTH <= 1000);
        }
    }

    @Test
    void aLearnedPathMtuExpiresAfterTenMinutes() {
        stack.ipv4().pathMtus().reduce(PEER, 1000, sim.nowNs());
        sim.runFor(601 * SECOND);
        assertEquals(1500, stack.ipv4().pathMtus().mtu(PEER, 1500, sim.nowNs()));
    }

    private static byte[] set(byte[] bytes, int at, int value) {
        bytes[at] = (byte) value;
        return bytes;
    }

    private static byte[] setShort(byte[] bytes, int at, int value) {
        BigEndian.u16(MemorySegment.ofArray(bytes), at, value);
        return bytes;
    }

    private static byte[] setInt(byte[] bytes, int at, int value) {
        BigEndian.i32(MemorySegment.ofArray(bytes), at, value);
        return bytes;
    }

    private static byte[] fixChecksum(byte[] datagram) {
        new Ipv4Header().wrap(MemorySegment.ofArray(datagram), 0, datagram.length).fillChecksum();
        return datagram;
    }
}
