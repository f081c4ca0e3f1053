package dev.tern.stack;

import dev.tern.core.io.SocketError;
import dev.tern.core.net.Ipv4Address;
import dev.tern.core.net.Ipv6Address;
import dev.tern.ethernet.memory.MemoryWire;
import dev.tern.ethernet.wire.EtherType;
import dev.tern.ethernet.wire.MacAddress;
import dev.tern.stack.sim.Simulation;
import dev.tern.stack.testing.Ipv6Frames;
import dev.tern.stack.testing.PeerPort;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.longs;

/**
 * UDP over IPv6 (RFC 8200 §8): datagrams between two stacks, and what a peer played by the test sees and sends on
 * the wire: the pseudo-header checksum, the mandatory checksum, ICMPv6 port unreachable and its report to a
 * connected socket, fragments, and the two families kept apart on one port.
 */
class Udp6Test {
    private static final long SECOND = 1_000_000_000L;
    private static final int UDP = 17;
    private static final long PEER_MAC = MacAddress.parse("0a:00:00:00:00:09");
    private static final Ipv6Address A = Ipv6Address.parse("2001:db8::1");
    private static final Ipv6Address B = Ipv6Address.parse("2001:db8::2");
    private static final Ipv6Address PEER = Ipv6Address.parse("2001:db8::9");

    private Simulation sim;
    private NetStack a;
    private NetStack b;
    private final MemorySegment buffer = Arena.ofAuto().allocate(70_000);

    @BeforeEach
    void setUp() {
        sim = new Simulation();
        a = addStack(sim, "a", "198.18.0.1/24", "2001:db8::1/64");
        b = addStack(sim, "b", "198.18.0.2/24", "2001:db8::2/64");
    }

    @AfterEach
    void tearDown() {
        sim.close();
    }

    private static NetStack addStack(Simulation on, String name, String ipv4, String ipv6) {
        return dev.tern.stack.testing.SimulatedSockets.addDualStack(on, name, ipv4, ipv6);
    }

    private static MemorySegment bytes(byte[] data) {
        return MemorySegment.ofArray(data);
    }

    private byte[] receiveOne(UdpSocket socket) throws TernSocketException {
        final int length = socket.receive(buffer, 0, (int) buffer.byteSize());
        return length < 0 ? null : buffer.asSlice(0, length).toArray(ValueLayout.JAVA_BYTE);
    }

    /** A UDP datagram with the checksum a correct sender computes (the test's own arithmetic, RFC 8200 §8.1). */
    private static byte[] datagram(Ipv6Address source, Ipv6Address destination, int sourcePort, int destinationPort,
                                   byte[] payload) {
        final byte[] udp = ByteBuffer.allocate(8 + payload.length).putShort((short) sourcePort)
            .putShort((short) destinationPort).putShort((short) (8 + payload.length)).putShort((short) 0)
            .put(payload).array();
        int sum = Ipv6Frames.checksum(source, destination, UDP, udp);
        sum = sum == 0 ? 0xffff : sum;
        udp[6] = (byte) (sum >>> 8);
        udp[7] = (byte) sum;
        return udp;
    }

    private static void setChecksum(byte[] udp, int value) {
        udp[6] = (byte) (value >>> 8);
        udp[7] = (byte) value;
    }

    /** The peer at {@link #PEER}: introduces itself to {@code b} by a solicitation, so replies need no resolution. */
    private PeerPort peer() {
        final PeerPort peer = new PeerPort(sim, "peer", PEER_MAC);
        final Ipv6Address solicited = B.solicitedNode();
        peer.send(Ipv6Frames.frame(Ipv6Address.multicastMac(solicited.low()), PEER_MAC,
            Ipv6Frames.icmpPacket(PEER, solicited, 255, Ipv6Frames.NS, 0, 0, Ipv6Frames.ndBody(B, 1, PEER_MAC))));
        sim.runFor(SECOND / 10);
        peer.clear();
        return peer;
    }

    private void sendFromPeer(PeerPort peer, byte[] udp) {
        peer.send(Ipv6Frames.frame(b.macAddress(), PEER_MAC, Ipv6Frames.packet(PEER, B, UDP, 64, udp)));
        sim.runFor(SECOND / 10);
    }

    /** The IPv6 packets the peer received (Ethernet header stripped) with next header {@code nextHeader}. */
    private static List<byte[]> seen(PeerPort peer, int nextHeader) {
        final List<byte[]> packets = peer.drain(f -> f.etherType() == EtherType.IPV6).stream()
            .map(f -> Arrays.copyOfRange(f.bytes(), 14, f.bytes().length))
            .filter(p -> (p[6] & 0xff) == nextHeader).toList();
        peer.clear();
        return packets;
    }

    @Test
    void aDatagramArrivesWithItsSourceAndAnAnswerGoesBack() throws Exception {
        final UdpSocket server = b.openUdp6();
        assertTrue(server.ipv6());
        assertEquals(7, server.bind(7));
        final UdpSocket client = a.openUdp6();
        final byte[] hello = "hello over IPv6".getBytes();
        assertTrue(client.sendTo(B, 7, bytes(hello), 0, hello.length));
        sim.runFor(SECOND / 10);
        assertArrayEquals(hello, receiveOne(server));
        assertEquals(A, server.lastSource6());
        final int clientPort = client.localPort();
        assertTrue(clientPort >= 32768 && clientPort <= 60999, "ephemeral port " + clientPort);
        assertEquals(clientPort, server.lastSourcePort());
        assertTrue(server.sendTo6(server.lastSourceHigh(), server.lastSourceLow(), server.lastSourcePort(),
            bytes(hello), 0, 5));
        sim.runFor(SECOND / 10);
        assertArrayEquals("hello".getBytes(), receiveOne(client));
        assertEquals(B, client.lastSource6());
        assertNull(receiveOne(client));
        assertEquals(1, b.counters().value("udp.rx.ipv6_datagrams"));
        assertEquals(1, b.counters().value("udp.tx.ipv6_datagrams"));
        assertEquals(0, b.counters().value("udp.rx.no_checksum"));
    }

    /** Any payload 0..65527 bytes (the IPv6 maximum) comes through byte-exact, in fragments, reordered and doubled. */
    @Test
    void anyPayloadRoundTripsByteExactUnderReorderingAndDuplication() {
        qt().withExamples(30).forAll(integers().between(0, 65527), longs().all()).checkAssert((size, seed) -> {
            try (Simulation impaired = new Simulation(MemoryWire.builder().seed(seed).reordering(0.3, 300_000)
                .duplication(0.2).delay(10_000, 5_000))) {
                final NetStack x = addStack(impaired, "x", "198.18.0.1/24", "2001:db8::1/64");
                final NetStack y = addStack(impaired, "y", "198.18.0.2/24", "2001:db8::2/64");
                final UdpSocket receiver = y.openUdp6();
                receiver.bind(9000);
                final UdpSocket sender = x.openUdp6();
                final byte[] payload = new byte[size];
                new SplittableRandom(seed).nextBytes(payload);
                assertTrue(sender.sendTo(B, 9000, bytes(payload), 0, size));
                impaired.runFor(2 * SECOND);
                final List<byte[]> got = new ArrayList<>();
                byte[] one;
                while ((one = receiveOne(receiver)) != null) {
                    got.add(one);
                }
                assertTrue(!got.isEmpty() && got.size() <= 2, "seed " + seed + ": " + got.size() + " copies");
                for (byte[] datagram : got) {
                    assertArrayEquals(payload, datagram, "seed " + seed);
                }
            } catch (TernSocketException e) {
                throw new AssertionError(e);
            }
        });
    }

    @Test
    void theChecksumOnTheWireCoversThePseudoHeaderAndTheHopLimitIsTheLinks() throws Exception {
        final PeerPort peer = peer();
        final UdpSocket sender = b.openUdp6();
        sender.bind(1234);
        final byte[] payload = "pseudo-header".getBytes();
        assertTrue(sender.sendTo(PEER, 4321, bytes(payload), 0, payload.length));
        sim.runFor(SECOND / 10);
        final List<byte[]> sent = seen(peer, UDP);
        assertEquals(1, sent.size());
        final byte[] packet = sent.getFirst();
        assertEquals(64, packet[7] & 0xff, "hop limit");
        final byte[] udp = Arrays.copyOfRange(packet, 40, packet.length);
        assertArrayEquals(datagram(B, PEER, 1234, 4321, payload), udp, "header, checksum and data, byte for byte");
    }

    @Test
    void aZeroChecksumIsDroppedAndABadOneCountedNeitherDelivered() throws Exception {
        final PeerPort peer = peer();
        final UdpSocket server = b.openUdp6();
        server.bind(5000);
        final byte[] none = datagram(PEER, B, 40000, 5000, "no checksum".getBytes());
        setChecksum(none, 0);
        sendFromPeer(peer, none);
        assertEquals(1, b.counters().value("udp.drop.zero_checksum_ipv6"), "RFC 8200 §8.1: mandatory over IPv6");
        final byte[] bad = datagram(PEER, B, 40000, 5000, "bad checksum".getBytes());
        bad[bad.length - 1] ^= 0x10;
        sendFromPeer(peer, bad);
        assertEquals(1, b.counters().value("udp.drop.bad_checksum"));
        assertNull(receiveOne(server));
        // A datagram whose checksum came out as zero carries all ones and is taken.
        final byte[] good = datagram(PEER, B, 40000, 5000, "good".getBytes());
        sendFromPeer(peer, good);
        assertArrayEquals("good".getBytes(), receiveOne(server));
        assertEquals(PEER, server.lastSource6());
        assertEquals(0, b.counters().value("icmp6.tx.errors"), "nothing answered for dropped datagrams");
    }

    @Test
    void aClosedPortAnswersPortUnreachableQuotingTheDatagram() throws Exception {
        final PeerPort peer = peer();
        final byte[] udp = datagram(PEER, B, 40000, 4444, new byte[20]);
        sendFromPeer(peer, udp);
        assertEquals(1, b.counters().value("udp.drop.no_socket"));
        final List<byte[]> errors = seen(peer, Ipv6Frames.ICMPV6);
        assertEquals(1, errors.size());
        final byte[] error = errors.getFirst();
        assertEquals(1, error[40] & 0xff, "destination unreachable");
        assertEquals(4, error[41] & 0xff, "port unreachable");
        assertTrue(Ipv6Frames.checksumHolds(error));
        assertArrayEquals(Ipv6Frames.packet(PEER, B, UDP, 64, udp), Arrays.copyOfRange(error, 48, error.length),
            "the whole invoking packet quoted (RFC 4443 §3.1)");
    }

    @Test
    void aConnectedSenderSeesConnectionRefusedOnceAndAnUnconnectedOneNothing() throws Exception {
        final UdpSocket connected = a.openUdp6();
        connected.connect(B, 4444);
        assertTrue(connected.send(bytes(new byte[10]), 0, 10));
        final UdpSocket unconnected = a.openUdp6();
        assertTrue(unconnected.sendTo(B, 4445, bytes(new byte[10]), 0, 10));
        sim.runFor(SECOND / 10);
        assertEquals(2, b.counters().value("udp.drop.no_socket"));
        assertEquals(2, a.counters().value("udp.rx.icmp_errors"));
        assertTrue((connected.readyOps() & SelectableSocket.ERROR) != 0);
        assertThrows(TernSocketException.ConnectionRefusedException.class, () -> connected.receive(buffer, 0, 100));
        assertEquals(0, connected.readyOps() & SelectableSocket.ERROR, "reported once");
        assertNull(receiveOne(unconnected));
    }

    @Test
    void anIpv4AndAnIpv6SocketShareAPortAndEachSeesItsOwnFamily() throws Exception {
        final UdpSocket four = b.openUdp();
        final UdpSocket six = b.openUdp6();
        assertEquals(53, four.bind(53));
        assertEquals(53, six.bind(53), "IPV6_V6ONLY: the families do not collide");
        final UdpSocket again = b.openUdp6();
        final TernSocketException taken = assertThrows(TernSocketException.class, () -> again.bind(53));
        assertEquals(SocketError.ADDRESS_IN_USE, taken.error());
        final UdpSocket client4 = a.openUdp();
        final UdpSocket client6 = a.openUdp6();
        client4.sendTo(Ipv4Address.parse("198.18.0.2"), 53, bytes("four".getBytes()), 0, 4);
        client6.sendTo(B, 53, bytes("six".getBytes()), 0, 3);
        sim.runFor(SECOND / 10);
        assertArrayEquals("four".getBytes(), receiveOne(four));
        assertNull(receiveOne(four));
        assertArrayEquals("six".getBytes(), receiveOne(six));
        assertNull(receiveOne(six));
    }

    @Test
    void aDatagramToAnotherOfOurAddressesOrAGroupReachesNoSocketOfTheWrongAddress() throws Exception {
        final UdpSocket bound = b.openUdp6();
        bound.bind(B, 6000);
        final UdpSocket client = a.openUdp6();
        client.sendTo(B, 6000, bytes("to B".getBytes()), 0, 4);
        sim.runFor(SECOND / 10);
        assertArrayEquals("to B".getBytes(), receiveOne(bound));
        final TernSocketException notOurs = assertThrows(TernSocketException.class,
            () -> b.openUdp6().bind(Ipv6Address.parse("2001:db8::77"), 6001));
        assertEquals(SocketError.ADDRESS_NOT_AVAILABLE, notOurs.error());
    }

    @Test
    void callsForTheOtherFamilyAreRefusedAndAStackWithoutIpv6SaysSo() throws Exception {
        final UdpSocket six = b.openUdp6();
        assertThrows(IllegalArgumentException.class, () -> six.bind(Ipv4Address.parse("198.18.0.2"), 1));
        assertThrows(IllegalArgumentException.class, () -> six.connect(Ipv4Address.parse("198.18.0.1"), 1));
        assertThrows(IllegalArgumentException.class, () -> six.join(Ipv4Address.parse("239.1.1.1")));
        final UdpSocket four = b.openUdp();
        assertThrows(IllegalArgumentException.class, () -> four.connect(A, 1));
        assertThrows(IllegalArgumentException.class,
            () -> four.sendTo(A, 1, bytes(new byte[1]), 0, 1));
        final TernSocketException oversize = assertThrows(TernSocketException.class,
            () -> six.sendTo(A, 1, bytes(new byte[65528]), 0, 65528));
        assertEquals(SocketError.MESSAGE_TOO_LONG, oversize.error());
        try (Simulation plain = new Simulation()) {
            final NetStack onlyIpv4 = plain.addStack("v4", "198.18.0.5/24");
            final TernSocketException none = assertThrows(TernSocketException.class, onlyIpv4::openUdp6);
            assertEquals(SocketError.ADDRESS_NOT_AVAILABLE, none.error());
            assertTrue(none.getMessage().contains("no IPv6"), none.getMessage());
        }
    }
}
