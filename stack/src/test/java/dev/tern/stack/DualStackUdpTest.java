package dev.tern.stack;

import dev.tern.arp.wire.ArpPacket;
import dev.tern.core.checksum.InternetChecksum;
import dev.tern.core.io.SocketError;
import dev.tern.core.net.Ipv4Address;
import dev.tern.core.net.Ipv6Address;
import dev.tern.ethernet.wire.EtherType;
import dev.tern.ethernet.wire.MacAddress;
import dev.tern.ipv4.wire.IpProtocol;
import dev.tern.stack.sim.Simulation;
import dev.tern.stack.testing.Frames;
import dev.tern.stack.testing.PeerPort;
import dev.tern.stack.testing.SimulatedSockets;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Dual-stack UDP sockets ({@link NetStack#openUdpDualStack}, {@code IPV6_V6ONLY} off as the JDK's): one socket on the
 * IPv6 wildcard takes both families, reports each source in its own family, answers in it, and claims its port in
 * both at once; bound to an IPv6 address it is IPv6's only. What a peer played by the test sees on the wire.
 */
class DualStackUdpTest {
    private static final long SECOND = 1_000_000_000L;
    private static final long PEER_MAC = MacAddress.parse("0a:00:00:00:00:09");
    private static final int B4 = Ipv4Address.parse("198.18.0.2");
    private static final int PEER4 = Ipv4Address.parse("198.18.0.9");
    private static final Ipv6Address B = Ipv6Address.parse("2001:db8::2");

    private Simulation sim;
    private NetStack a;
    private NetStack b;
    private final MemorySegment buffer = Arena.ofAuto().allocate(70_000);

    @BeforeEach
    void setUp() {
        sim = new Simulation();
        a = SimulatedSockets.addDualStack(sim, "a", "198.18.0.1/24", "2001:db8::1/64");
        b = SimulatedSockets.addDualStack(sim, "b", "198.18.0.2/24", "2001:db8::2/64");
    }

    @AfterEach
    void tearDown() {
        sim.close();
    }

    private static MemorySegment bytes(String text) {
        return MemorySegment.ofArray(text.getBytes());
    }

    private String receiveOne(UdpSocket socket) throws TernSocketException {
        final int length = socket.receive(buffer, 0, (int) buffer.byteSize());
        return length < 0 ? null : new String(buffer.asSlice(0, length).toArray(ValueLayout.JAVA_BYTE));
    }

    @Test
    void aWildcardSocketTakesBothFamiliesAndAnswersEachInItsOwn() throws Exception {
        final UdpSocket server = b.openUdpDualStack();
        assertTrue(server.ipv6() && server.dualStack());
        assertEquals(53, server.bind(53));
        final UdpSocket four = a.openUdp();
        final UdpSocket six = a.openUdp6();
        four.sendTo(B4, 53, bytes("four"), 0, 4);
        sim.runFor(SECOND / 10);
        six.sendTo(B, 53, bytes("six"), 0, 3);
        sim.runFor(SECOND / 10);

        assertEquals("four", receiveOne(server));
        assertFalse(server.lastSourceIpv6(), "an IPv4 source, not ::ffff:198.18.0.1");
        assertEquals(Ipv4Address.parse("198.18.0.1"), server.lastSourceAddress());
        assertEquals(four.localPort(), server.lastSourcePort());
        server.sendTo(server.lastSourceAddress(), server.lastSourcePort(), bytes("back to four"), 0, 12);

        assertEquals("six", receiveOne(server));
        assertTrue(server.lastSourceIpv6());
        assertEquals(Ipv6Address.parse("2001:db8::1"), server.lastSource6());
        server.sendTo6(server.lastSourceHigh(), server.lastSourceLow(), server.lastSourcePort(), bytes("back to six"), 0,
            11);
        sim.runFor(SECOND / 10);

        assertEquals("back to four", receiveOne(four));
        assertEquals(B4, four.lastSourceAddress());
        assertEquals("back to six", receiveOne(six));
        assertEquals(B, six.lastSource6());
        assertEquals(2, b.counters().value("udp.rx.datagrams"));
        assertEquals(1, b.counters().value("udp.rx.ipv6_datagrams"));
        assertEquals(2, b.counters().value("udp.tx.datagrams"));
        assertEquals(1, b.counters().value("udp.tx.ipv6_datagrams"));
        assertEquals(0, b.counters().value("udp.drop.no_socket"));
    }

    @Test
    void itsPortIsClaimedInBothFamiliesAtOnceOrNotAtAll() throws Exception {
        final UdpSocket four = b.openUdp();
        four.bind(B4, 5000);
        final UdpSocket dual = b.openUdpDualStack();
        final TernSocketException againstFour = assertThrows(TernSocketException.class, () -> dual.bind(5000));
        assertEquals(SocketError.ADDRESS_IN_USE, againstFour.error(), "an IPv4 socket on one address is enough");
        final UdpSocket six = b.openUdp6();
        six.bind(5001);
        final TernSocketException againstSix = assertThrows(TernSocketException.class, () -> dual.bind(5001));
        assertEquals(SocketError.ADDRESS_IN_USE, againstSix.error());
        assertEquals(0, dual.localPort(), "a failed bind leaves it unbound");

        assertEquals(5002, dual.bind(5002));
        assertThrows(TernSocketException.AddressInUseException.class, () -> b.openUdp().bind(5002));
        assertThrows(TernSocketException.AddressInUseException.class, () -> b.openUdp6().bind(5002));
        assertThrows(TernSocketException.AddressInUseException.class, () -> b.openUdpDualStack().bind(5002));
        dual.close();
        assertEquals(5002, b.openUdp().bind(5002), "closed: the port is free in IPv4");
        assertEquals(5002, b.openUdp6().bind(5002), "and in IPv6");
    }

    @Test
    void boundToAnIpv6AddressItIsIpv6sOnlyAndIpv4GetsPortUnreachable() throws Exception {
        final PeerPort peer = ipv4Peer();
        final UdpSocket dual = b.openUdpDualStack();
        dual.bind(B, 6000);
        assertEquals(6000, b.openUdp().bind(6000), "an IPv4 socket may have the port beside it");
        final UdpSocket onlySix = b.openUdpDualStack();
        onlySix.bind(B, 6001);
        peer.send(Frames.ethernet(b.macAddress(), PEER_MAC, EtherType.IPV4,
            Frames.ipv4(PEER4, B4, IpProtocol.UDP, 1, 0, 64, udp(PEER4, B4, 40000, 6001, "to six only"))));
        sim.runFor(SECOND / 10);
        assertNull(receiveOne(onlySix));
        assertEquals(1, b.counters().value("udp.drop.no_socket"));
        final List<PeerPort.Received> errors = peer.drain(f -> f.etherType() == EtherType.IPV4 && f.ipProtocol() == 1);
        assertEquals(1, errors.size(), "ICMP port unreachable");
        assertEquals(3, errors.getFirst().icmpType());
        assertThrows(TernSocketException.class, () -> onlySix.sendTo(PEER4, 7, bytes("x"), 0, 1));
    }

    @Test
    void boundToAnIpv4AddressItIsAnIpv4SocketFromThenOn() throws Exception {
        final UdpSocket dual = b.openUdpDualStack();
        assertEquals(6100, dual.bind(B4, 6100));
        assertFalse(dual.ipv6() || dual.dualStack(), "::ffff:198.18.0.2 is IPv4's, as on Linux");
        assertEquals(6100, b.openUdp6().bind(6100), "the port's IPv6 side is free");
        a.openUdp().sendTo(B4, 6100, bytes("four"), 0, 4);
        sim.runFor(SECOND / 10);
        assertEquals("four", receiveOne(dual));
    }

    @Test
    void anIpv4DatagramLeavesAsIpv4WhetherGivenAsIpv4OrAsAnIpv4MappedAddress() throws Exception {
        final PeerPort peer = ipv4Peer();
        final UdpSocket dual = b.openUdpDualStack();
        dual.bind(7000);
        dual.sendTo(PEER4, 4000, bytes("plain"), 0, 5);
        final Ipv6Address mapped = Ipv6Address.parse("::ffff:198.18.0.9");
        dual.sendTo(mapped, 4000, bytes("mapped"), 0, 6);
        sim.runFor(SECOND / 10);
        final List<byte[]> sent = peer.drain(f -> f.etherType() == EtherType.IPV4 && f.ipProtocol() == IpProtocol.UDP)
            .stream().map(f -> Arrays.copyOfRange(f.bytes(), 14, f.bytes().length)).toList();
        assertEquals(2, sent.size());
        for (int i = 0; i < 2; i++) {
            final byte[] packet = sent.get(i);
            final int headerLength = (packet[0] & 0x0f) * 4;
            final int total = ((packet[2] & 0xff) << 8) | (packet[3] & 0xff);
            final byte[] got = Arrays.copyOfRange(packet, headerLength, total);
            assertArrayEquals(udp(B4, PEER4, 7000, 4000, i == 0 ? "plain" : "mapped"), got,
                "header, checksum and data, byte for byte, over IPv4");
        }
        assertEquals(0, b.counters().value("udp.tx.ipv6_datagrams"));
        assertEquals(2, b.counters().value("udp.tx.datagrams"));
    }

    @Test
    void connectedToAnIpv4PeerItSendsAndHearsThatPeerOnly() throws Exception {
        final UdpSocket server = a.openUdp();
        server.bind(8000);
        final UdpSocket other = a.openUdp6();
        other.bind(8001);
        final UdpSocket dual = b.openUdpDualStack();
        dual.connect(Ipv6Address.parse("::ffff:198.18.0.1"), 8000);
        assertTrue(dual.send(bytes("hi"), 0, 2));
        sim.runFor(SECOND / 10);
        assertEquals("hi", receiveOne(server));
        assertEquals(0, b.counters().value("udp.tx.ipv6_datagrams"), "to the peer over IPv4");
        server.sendTo(server.lastSourceAddress(), server.lastSourcePort(), bytes("from the peer"), 0, 13);
        other.sendTo(B, dual.localPort(), bytes("from another"), 0, 12);
        sim.runFor(SECOND / 10);
        assertEquals("from the peer", receiveOne(dual));
        assertFalse(dual.lastSourceIpv6());
        assertNull(receiveOne(dual), "a connected socket hears its peer only");
    }

    @Test
    void itJoinsAnIpv4GroupAndAnIpv6OneAndHearsBoth() throws Exception {
        final UdpSocket member = b.openUdpDualStack();
        member.bind(9000);
        member.join(Ipv4Address.parse("239.1.1.1"));
        member.join(Ipv6Address.parse("ff02::1:3"));
        sim.runFor(SECOND / 10);
        final UdpSocket four = a.openUdp();
        final UdpSocket six = a.openUdp6();
        four.sendTo(Ipv4Address.parse("239.1.1.1"), 9000, bytes("group four"), 0, 10);
        sim.runFor(SECOND / 10);
        six.sendTo(Ipv6Address.parse("ff02::1:3"), 9000, bytes("group six"), 0, 9);
        sim.runFor(SECOND / 10);
        assertEquals("group four", receiveOne(member));
        assertFalse(member.lastSourceIpv6());
        assertTrue(member.lastWasGroupAddressed());
        assertEquals("group six", receiveOne(member));
        assertTrue(member.lastSourceIpv6());
        member.close();
        assertEquals(1, b.counters().value("udp.rx.ipv6_multicast_datagrams"));
    }

    /** An IPv4 peer at 198.18.0.9 that {@code b} knows (its ARP request put it in b's cache, RFC 826). */
    private PeerPort ipv4Peer() {
        final PeerPort peer = new PeerPort(sim, "peer", PEER_MAC);
        peer.send(Frames.ethernet(MacAddress.BROADCAST, PEER_MAC, EtherType.ARP,
            Frames.arp(ArpPacket.OPERATION_REQUEST, PEER_MAC, PEER4, 0, B4)));
        sim.runFor(SECOND / 10);
        peer.clear();
        return peer;
    }

    /** A UDP datagram with the checksum a correct IPv4 sender computes (RFC 768). */
    private static byte[] udp(int source, int destination, int sourcePort, int destinationPort, String text) {
        final byte[] payload = text.getBytes();
        final byte[] udp = ByteBuffer.allocate(8 + payload.length).putShort((short) sourcePort)
            .putShort((short) destinationPort).putShort((short) (8 + payload.length)).putShort((short) 0)
            .put(payload).array();
        final MemorySegment segment = MemorySegment.ofArray(udp);
        final int sum = InternetChecksum.finish(InternetChecksum.add(
            InternetChecksum.pseudoHeader(source, destination, IpProtocol.UDP, udp.length), segment, 0, udp.length));
        final int checksum = sum == 0 ? 0xffff : sum;
        udp[6] = (byte) (checksum >>> 8);
        udp[7] = (byte) checksum;
        return udp;
    }
}
