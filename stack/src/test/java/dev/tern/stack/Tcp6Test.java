package dev.tern.stack;

import dev.tern.core.io.SocketError;
import dev.tern.core.net.Ipv4Address;
import dev.tern.core.net.Ipv6Address;
import dev.tern.core.net.Ipv6InterfaceAddress;
import dev.tern.ipv6.Ipv6Config;
import dev.tern.tcp.TcpOptions;
import dev.tern.ethernet.memory.MemoryWire;
import dev.tern.ethernet.wire.EtherType;
import dev.tern.ethernet.wire.MacAddress;
import dev.tern.stack.sim.Simulation;
import dev.tern.stack.testing.Ipv6Frames;
import dev.tern.stack.testing.PeerPort;
import dev.tern.stack.testing.SimulatedSockets;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * TCP over IPv6 (RFC 8200 §8): connections between two stacks, one listener taking both families, and what a peer
 * played by the test sees and sends on the wire (the pseudo-header checksum, the MSS of a 1500-byte link less 60,
 * resets from the address the segment was sent to, packet too big lowering the MSS).
 */
class Tcp6Test {
    private static final long SECOND = 1_000_000_000L;
    private static final int TCP = 6;
    private static final long PEER_MAC = MacAddress.parse("0a:00:00:00:00:09");
    private static final Ipv6Address A = Ipv6Address.parse("2001:db8::1");
    private static final Ipv6Address B = Ipv6Address.parse("2001:db8::2");
    private static final Ipv6Address PEER = Ipv6Address.parse("2001:db8::9");

    private final MemorySegment buffer = Arena.ofAuto().allocate(1 << 16);

    private static NetStack addStack(Simulation sim, String name, String ipv4, String ipv6) {
        return SimulatedSockets.addDualStack(sim, name, ipv4, ipv6);
    }

    private void transfer(Simulation sim, TcpConnection from, TcpConnection to, byte[] data) throws Exception {
        SimulatedSockets.transfer(sim, from, to, data, buffer);
    }

    @Test
    void aConnectionOverIpv6CarriesBytesBothWaysAndClosesIntoTimeWait() throws Exception {
        try (Simulation sim = new Simulation()) {
            final NetStack a = addStack(sim, "a", "198.18.0.1/24", "2001:db8::1/64");
            final NetStack b = addStack(sim, "b", "198.18.0.2/24", "2001:db8::2/64");
            final TcpListener listener = b.listen(7, 16);
            final TcpConnection client = a.connect(B, 7);
            assertTrue(sim.runUntil(client::isConnected, 5 * SECOND));
            final TcpConnection server = SimulatedSockets.accepted(sim, listener);
            assertTrue(client.ipv6() && server.ipv6());
            assertEquals(A, server.remoteAddress6());
            assertEquals(B, server.localAddress6());
            assertEquals(B, client.remoteAddress6());
            assertEquals(client.localPort(), server.remotePort());
            assertEquals("[2001:db8::1]:" + client.localPort(), server.describeRemote());
            final byte[] data = new byte[1 << 20];
            new SplittableRandom(6).nextBytes(data);
            transfer(sim, client, server, data);
            transfer(sim, server, client, Arrays.copyOf(data, 300_000));
            client.close();
            assertTrue(sim.runUntil(() -> {
                try {
                    return server.read(buffer, 0, 100) < 0;
                } catch (TernSocketException e) {
                    throw new AssertionError(e);
                }
            }, 5 * SECOND), "the server sees the end of the stream");
            server.close();
            sim.runFor(SECOND);
            assertEquals(1, a.tcp().timeWaitCount());
            assertEquals(0, a.counters().value("tcp.drop.bad_checksum") + b.counters().value("tcp.drop.bad_checksum"));
            assertEquals(0, b.counters().value("tcp.drop.key_collision"));
            listener.close();
        }
    }

    /** SACK, RACK, CUBIC and timestamps are family-neutral: 4 MiB through loss, reordering and duplication. */
    @Test
    void aTransferSurvivesLossReorderingAndDuplicationOverIpv6() throws Exception {
        try (Simulation sim = new Simulation(MemoryWire.builder().seed(43).loss(0.02).reordering(0.02, 300_000)
            .duplication(0.01).delay(50_000, 10_000).bandwidth(10_000_000_000L, 4 << 20))) {
            final NetStack a = addStack(sim, "a", "198.18.0.1/24", "2001:db8::1/64");
            final NetStack b = addStack(sim, "b", "198.18.0.2/24", "2001:db8::2/64");
            final TcpListener listener = b.listen(5001, 4);
            final TcpConnection client = a.connect(B, 5001);
            assertTrue(sim.runUntil(client::isConnected, 30 * SECOND));
            final TcpConnection server = SimulatedSockets.accepted(sim, listener);
            final byte[] data = new byte[4 << 20];
            new SplittableRandom(7).nextBytes(data);
            transfer(sim, client, server, data);
            assertTrue(a.counters().value("tcp.tx.retransmits") > 0, "2% loss must have cost retransmissions");
            assertTrue(b.counters().value("tcp.tx.sack_blocks") > 0, "SACK works over IPv6");
        }
    }

    /** One listener, both families: an IPv4 and an IPv6 client on one port, each told apart (a dual-stack server). */
    @Test
    void oneListenerAcceptsBothFamiliesOnOnePort() throws Exception {
        try (Simulation sim = new Simulation()) {
            final NetStack a = addStack(sim, "a", "198.18.0.1/24", "2001:db8::1/64");
            final NetStack b = addStack(sim, "b", "198.18.0.2/24", "2001:db8::2/64");
            final TcpListener listener = b.listen(80, 16);
            final TcpConnection four = a.connect(Ipv4Address.parse("198.18.0.2"), 80, 40000,
                dev.tern.tcp.TcpOptions.DEFAULT);
            final TcpConnection six = a.connect(B, 80, 40000, dev.tern.tcp.TcpOptions.DEFAULT);
            assertTrue(sim.runUntil(() -> four.isConnected() && six.isConnected(), 5 * SECOND));
            final TcpConnection first = SimulatedSockets.accepted(sim, listener);
            final TcpConnection second = SimulatedSockets.accepted(sim, listener);
            final TcpConnection serverSix = first.ipv6() ? first : second;
            final TcpConnection serverFour = first.ipv6() ? second : first;
            assertFalse(serverFour.ipv6());
            assertNull(serverFour.remoteAddress6());
            assertEquals(Ipv4Address.parse("198.18.0.1"), serverFour.remoteAddress());
            assertEquals(A, serverSix.remoteAddress6());
            four.write(MemorySegment.ofArray("four".getBytes()), 0, 4);
            six.write(MemorySegment.ofArray("six!".getBytes()), 0, 4);
            assertArrayEquals("four".getBytes(), SimulatedSockets.readAll(sim, serverFour, 4, buffer, 5 * SECOND));
            assertArrayEquals("six!".getBytes(), SimulatedSockets.readAll(sim, serverSix, 4, buffer, 5 * SECOND));
        }
    }

    @Test
    void aClosedPortIsRefusedAndAStackWithoutIpv6SaysSo() throws Exception {
        try (Simulation sim = new Simulation()) {
            final NetStack a = addStack(sim, "a", "198.18.0.1/24", "2001:db8::1/64");
            addStack(sim, "b", "198.18.0.2/24", "2001:db8::2/64");
            final NetStack plain = sim.addStack("c", "198.18.0.3/24");
            final TcpConnection client = a.connect(B, 4444);
            assertTrue(sim.runUntil(client::isEnded, 5 * SECOND));
            assertEquals(SocketError.CONNECTION_REFUSED, client.error());
            final TernSocketException none = assertThrows(TernSocketException.class, () -> plain.connect(B, 80));
            assertEquals(SocketError.ADDRESS_NOT_AVAILABLE, none.error());
            assertTrue(none.getMessage().contains("no IPv6"), none.getMessage());
        }
    }

    // ------------------------------------------------------------------------------------------ on the wire

    /** A peer at {@link #PEER} introduced to {@code b} by a solicitation, so that replies need no resolution. */
    private static PeerPort peer(Simulation sim) {
        final PeerPort peer = new PeerPort(sim, "peer", PEER_MAC);
        final Ipv6Address solicited = B.solicitedNode();
        peer.send(Ipv6Frames.frame(Ipv6Address.multicastMac(solicited.low()), PEER_MAC,
            Ipv6Frames.icmpPacket(PEER, solicited, 255, Ipv6Frames.NS, 0, 0, Ipv6Frames.ndBody(B, 1, PEER_MAC))));
        sim.runFor(SECOND / 10);
        peer.clear();
        return peer;
    }

    /** A TCP segment from the peer with a correct checksum (the test's own arithmetic), options as given. */
    private static byte[] segment(int sourcePort, int destinationPort, int seq, int ack, int flags, byte[] options,
                                  byte[] payload) {
        final int header = 20 + options.length;
        final byte[] tcp = ByteBuffer.allocate(header + payload.length).putShort((short) sourcePort)
            .putShort((short) destinationPort).putInt(seq).putInt(ack).put((byte) ((header / 4) << 4)).put((byte) flags)
            .putShort((short) 65535).putInt(0).put(options).put(payload).array();
        final int sum = Ipv6Frames.checksum(PEER, B, TCP, tcp);
        tcp[16] = (byte) (sum >>> 8);
        tcp[17] = (byte) sum;
        return tcp;
    }

    private static void send(Simulation sim, PeerPort peer, NetStack b, byte[] tcp) {
        peer.send(Ipv6Frames.frame(b.macAddress(), PEER_MAC, Ipv6Frames.packet(PEER, B, TCP, 64, tcp)));
        sim.runFor(SECOND / 100);
    }

    private static List<byte[]> tcpSeen(PeerPort peer) {
        final List<byte[]> packets = peer.drain(f -> f.etherType() == EtherType.IPV6).stream()
            .map(f -> Arrays.copyOfRange(f.bytes(), 14, f.bytes().length)).filter(p -> p[6] == TCP).toList();
        peer.clear();
        return packets;
    }

    private static boolean checksumHolds(byte[] packet) {
        final byte[] tcp = Arrays.copyOfRange(packet, 40, packet.length);
        final int stored = ((tcp[16] & 0xff) << 8) | (tcp[17] & 0xff);
        tcp[16] = 0;
        tcp[17] = 0;
        final ByteBuffer b = ByteBuffer.wrap(packet);
        return Ipv6Frames.checksum(new Ipv6Address(b.getLong(8), b.getLong(16)),
            new Ipv6Address(b.getLong(24), b.getLong(32)), TCP, tcp) == stored;
    }

    @Test
    void theSynAckOffersTheMssOfTheLinkLess60AndAClosedPortResetsFromTheAddressAsked() throws Exception {
        try (Simulation sim = new Simulation()) {
            final NetStack b = addStack(sim, "b", "198.18.0.2/24", "2001:db8::2/64");
            final PeerPort peer = peer(sim);
            b.listen(80, 4);
            final byte[] mss1440 = {2, 4, 0x05, (byte) 0xa0};
            send(sim, peer, b, segment(40000, 80, 1000, 0, 0x02, mss1440, new byte[0]));
            final List<byte[]> synAck = tcpSeen(peer);
            assertEquals(1, synAck.size());
            final byte[] p = synAck.getFirst();
            assertTrue(checksumHolds(p), "checksum over the IPv6 pseudo-header");
            final ByteBuffer w = ByteBuffer.wrap(p);
            assertEquals(B, new Ipv6Address(w.getLong(8), w.getLong(16)));
            assertEquals(PEER, new Ipv6Address(w.getLong(24), w.getLong(32)));
            assertEquals(0x12, p[40 + 13] & 0xff, "SYN-ACK");
            assertEquals(1001, w.getInt(40 + 8), "acknowledges the SYN");
            assertEquals(2, p[60] & 0xff, "the MSS option first");
            assertEquals(1440, w.getShort(62) & 0xffff, "1500 - 40 - 20 (RFC 8200 §8.3)");
            final int label = w.getInt(0) & 0xF_FFFF;
            assertTrue(label != 0, "a flow label (RFC 6437)");

            send(sim, peer, b, segment(40001, 81, 5000, 0, 0x02, new byte[0], new byte[0]));
            final List<byte[]> reset = tcpSeen(peer);
            assertEquals(1, reset.size());
            final byte[] r = reset.getFirst();
            assertTrue(checksumHolds(r));
            assertEquals(0x14, r[40 + 13] & 0xff, "RST, ACK");
            assertEquals(5001, ByteBuffer.wrap(r).getInt(40 + 8));
            assertEquals(1, b.counters().value("tcp.drop.no_socket"));

            final byte[] corrupt = segment(40002, 80, 7000, 0, 0x02, new byte[0], new byte[0]);
            corrupt[4] ^= 1;
            send(sim, peer, b, corrupt);
            assertEquals(1, b.counters().value("tcp.drop.bad_checksum"));
            assertTrue(tcpSeen(peer).isEmpty(), "nothing answers a bad checksum");
        }
    }

    /** The SYN-ACK Tern sent and the connection it accepted. */
    private record Accepted(byte[] synAck, TcpConnection server) {
    }

    /** A listener on port 80 of {@code b}, a SYN from the peer with {@code synOptions}, the SYN-ACK, the last ACK. */
    private static Accepted handshake(Simulation sim, PeerPort peer, NetStack b, byte[] synOptions) throws Exception {
        final TcpListener listener = b.listen(80, 4);
        send(sim, peer, b, segment(40000, 80, 1000, 0, 0x02, synOptions, new byte[0]));
        final byte[] synAck = tcpSeen(peer).getFirst();
        final int iss = ByteBuffer.wrap(synAck).getInt(40 + 4);
        send(sim, peer, b, segment(40000, 80, 1001, iss + 1, 0x10, new byte[0], new byte[0]));
        return new Accepted(synAck, SimulatedSockets.accepted(sim, listener));
    }

    @Test
    void aPacketTooBigForAnEstablishedConnectionLowersItsSegmentsTo1220Bytes() throws Exception {
        try (Simulation sim = new Simulation()) {
            final NetStack b = addStack(sim, "b", "198.18.0.2/24", "2001:db8::2/64");
            final PeerPort peer = peer(sim);
            final Accepted accepted = handshake(sim, peer, b, new byte[] {2, 4, 0x05, (byte) 0xa0}); // MSS 1440
            final int label = ByteBuffer.wrap(accepted.synAck()).getInt(0) & 0xF_FFFF;
            final TcpConnection server = accepted.server();
            server.write(MemorySegment.ofArray(new byte[1400]), 0, 1400);
            sim.runFor(SECOND / 100);
            final List<byte[]> full = tcpSeen(peer);
            assertEquals(1, full.size());
            assertEquals(40 + 20 + 1400, full.getFirst().length, "one segment: the peer's MSS allows it");
            // A router on the path says 1280 fits (RFC 4443 §3.2), quoting the segment.
            final byte[] quoted = Arrays.copyOf(full.getFirst(), 1232);
            peer.send(Ipv6Frames.frame(b.macAddress(), PEER_MAC, Ipv6Frames.icmpPacket(Ipv6Address.parse("2001:db8::fe"),
                B, 64, 2, 0, 1280, quoted)));
            sim.runFor(SECOND / 100);
            assertEquals(1, b.counters().value("tcp.pmtu_updates"));
            server.write(MemorySegment.ofArray(new byte[3000]), 0, 3000);
            sim.runFor(SECOND / 100);
            final List<byte[]> after = peer.drain(f -> f.etherType() == EtherType.IPV6).stream()
                .map(f -> Arrays.copyOfRange(f.bytes(), 14, f.bytes().length)).toList();
            assertFalse(after.isEmpty());
            assertTrue(after.stream().allMatch(q -> q.length <= 1280 && q[6] == TCP),
                "every segment fits 1280 bytes, none in fragments: " + after.stream().map(q -> q.length).toList());
            assertTrue(after.stream().anyMatch(q -> q.length == 1280), "segments of 1220 bytes: 1280 - 60");
            assertTrue(after.stream().allMatch(q -> (ByteBuffer.wrap(q).getInt(0) & 0xF_FFFF) == label),
                "every packet of the connection carries its flow label");
        }
    }

    /**
     * RFC 9293 §3.7.1 (MUST-15): a SYN without an MSS option means 1220 over IPv6 (1280 less the headers), where
     * IPv4's is 536: Tern's segments to that peer then carry 1220 bytes each.
     */
    @Test
    void withoutAnMssOptionTheSendMssOverIpv6Is1220() throws Exception {
        try (Simulation sim = new Simulation()) {
            final NetStack b = addStack(sim, "b", "198.18.0.2/24", "2001:db8::2/64");
            final PeerPort peer = peer(sim);
            final TcpConnection server = handshake(sim, peer, b, new byte[0]).server();
            assertEquals(1220, server.info().sndMss());
            server.write(MemorySegment.ofArray(new byte[3000]), 0, 3000);
            sim.runFor(SECOND / 100);
            final List<Integer> lengths = tcpSeen(peer).stream().map(q -> q.length - 40 - 20).toList();
            assertEquals(1220, lengths.getFirst(), "segments of 1220 bytes: " + lengths);
        }
    }

    /**
     * One peer reaches two of our addresses from one port to one port: two connections, each with its own bytes. The
     * connection key holds no local address, so the peer's fold is bound to the address of ours it talks to
     * (docs/TCP.md, "Families"); before, the second SYN was dropped as a key collision.
     */
    @Test
    void onePeerReachesTwoOfOurAddressesFromOnePortToOnePortAsTwoConnections() throws Exception {
        try (Simulation sim = new Simulation()) {
            final Ipv6Address second = Ipv6Address.parse("2001:db8::3");
            final NetStack a = addStack(sim, "a", "198.18.0.1/24", "2001:db8::1/64");
            final NetStack b = sim.addStack("b", "198.18.0.2/24", builder -> builder.ipv6(Ipv6Config.withAddresses(
                List.of(Ipv6InterfaceAddress.parse(B + "/64"), Ipv6InterfaceAddress.parse(second + "/64")))
                .withDadTransmits(0)));
            final TcpListener listener = b.listen(80, 4);
            final TcpConnection toFirst = a.connect(B, 80, 40000, TcpOptions.DEFAULT);
            final TcpConnection atFirst = SimulatedSockets.accepted(sim, listener);
            final TcpConnection toSecond = a.connect(second, 80, 40000, TcpOptions.DEFAULT);
            final TcpConnection atSecond = SimulatedSockets.accepted(sim, listener);
            assertEquals(B, atFirst.localAddress6());
            assertEquals(second, atSecond.localAddress6());
            assertEquals(40000, atFirst.remotePort());
            assertEquals(40000, atSecond.remotePort());
            transfer(sim, toFirst, atFirst, "to the first address".getBytes());
            transfer(sim, toSecond, atSecond, "to the second address, another stream".getBytes());
            transfer(sim, atSecond, toSecond, "back from the second".getBytes());
            assertEquals(0, b.counters().value("tcp.drop.key_collision"));
        }
    }
}
