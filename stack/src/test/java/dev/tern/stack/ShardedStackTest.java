package dev.tern.stack;

import dev.tern.arp.NeighbourCache;
import dev.tern.core.net.Ipv4Address;
import dev.tern.ethernet.link.ShardRule;
import dev.tern.ethernet.link.ShardSteering;
import dev.tern.ethernet.wire.EtherType;
import dev.tern.stack.sim.Simulation;
import dev.tern.stack.testing.Frames;
import dev.tern.stack.testing.PeerPort;
import dev.tern.tcp.TcpOptions;
import dev.tern.tcp.wire.TcpFlags;
import dev.tern.tcp.wire.TcpHeader;
import dev.tern.tcp.wire.TcpRepr;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A sharded stack on the memory wire, which steers each flow to a shard as the AF_PACKET fanout program does:
 * connections spread over the shards with every byte intact, per-shard counters, active opens from each shard, ARP
 * learned through shard 0, a frame that reaches the wrong shard counted and dropped without a reset, and a failing
 * shard named while the others serve.
 */
class ShardedStackTest {
    private static final long SECOND = 1_000_000_000L;
    private static final int CLIENT = Ipv4Address.parse("198.18.0.1");
    private static final int SERVER = Ipv4Address.parse("198.18.0.2");
    private static final int ECHO_PORT = 7;
    private static final int CLOSED_PORT = 9;

    /** Echoes on every accepted connection of every listener; remembers which shard accepted what. */
    private static final class EchoService implements Runnable {
        final List<TcpListener> listeners;
        final List<TcpConnection> accepted = new ArrayList<>();
        final List<Integer> acceptedOnShard = new ArrayList<>();
        final MemorySegment buffer = Arena.ofAuto().allocate(1 << 16);

        EchoService(List<TcpListener> listeners) {
            this.listeners = listeners;
        }

        @Override
        public void run() {
            try {
                for (int shard = 0; shard < listeners.size(); shard++) {
                    TcpConnection connection;
                    while ((connection = listeners.get(shard).accept()) != null) {
                        accepted.add(connection);
                        acceptedOnShard.add(shard);
                    }
                }
                for (TcpConnection connection : accepted) {
                    final int room = Math.min(connection.writableBytes(), (int) buffer.byteSize());
                    if (room > 0 && !connection.isEnded()) {
                        final int n = connection.read(buffer, 0, room);
                        if (n > 0) {
                            assertEquals(n, connection.write(buffer, 0, n));
                        }
                    }
                }
            } catch (TernSocketException e) {
                throw new AssertionError(e);
            }
        }
    }

    @Test
    void connectionsSpreadOverTwoShardsAndEachGetsItsOwnBytesBack() throws Exception {
        try (Simulation sim = new Simulation()) {
            final NetStack client = sim.addStack("client", "198.18.0.1/24");
            final StackShards server = sim.addShardedStack("server", "198.18.0.2/24", 2, b -> { });
            final EchoService echo = new EchoService(server.listen(ECHO_PORT, 64, TcpOptions.DEFAULT));
            sim.onPoll(echo);

            final int connections = 32;
            final int length = 5000;
            final List<TcpConnection> clients = new ArrayList<>();
            final List<byte[]> sent = new ArrayList<>();
            final List<byte[]> received = new ArrayList<>();
            final int[] receivedLength = new int[connections];
            for (int i = 0; i < connections; i++) {
                clients.add(client.connect(SERVER, ECHO_PORT));
                final byte[] data = new byte[length];
                new SplittableRandom(i).nextBytes(data);
                sent.add(data);
                received.add(new byte[length]);
            }
            assertTrue(sim.runUntil(() -> clients.stream().allMatch(TcpConnection::isConnected), 5 * SECOND));
            final int[] written = new int[connections];
            final MemorySegment buffer = Arena.ofAuto().allocate(1 << 16);
            assertTrue(sim.runUntil(() -> {
                boolean done = true;
                for (int i = 0; i < connections; i++) {
                    try {
                        final TcpConnection c = clients.get(i);
                        if (written[i] < length) {
                            written[i] += c.write(MemorySegment.ofArray(sent.get(i)), written[i], length - written[i]);
                        }
                        final int n = c.read(buffer, 0, length - receivedLength[i]);
                        if (n > 0) {
                            MemorySegment.copy(buffer, ValueLayout.JAVA_BYTE, 0, received.get(i), receivedLength[i], n);
                            receivedLength[i] += n;
                        }
                    } catch (TernSocketException e) {
                        throw new AssertionError(e);
                    }
                    done &= receivedLength[i] == length;
                }
                return done;
            }, 30 * SECOND), "every connection got its bytes back: " + Arrays.toString(receivedLength));

            for (int i = 0; i < connections; i++) {
                assertArrayEquals(sent.get(i), received.get(i), "connection " + i);
            }
            assertEquals(connections, echo.accepted.size());
            final long[] perShard = new long[2];
            for (int i = 0; i < echo.accepted.size(); i++) {
                final TcpConnection accepted = echo.accepted.get(i);
                final int shard = echo.acceptedOnShard.get(i);
                perShard[shard]++;
                assertEquals(ShardSteering.shardOf(CLIENT, SERVER, accepted.remotePort(), ECHO_PORT, 2), shard,
                    "the shard the steering function names accepted port " + accepted.remotePort());
            }
            assertTrue(perShard[0] > 0 && perShard[1] > 0, "both shards accepted: " + Arrays.toString(perShard));
            for (int k = 0; k < 2; k++) {
                final NetStack shard = server.shard(k);
                assertEquals(perShard[k], shard.counters().value("tcp.conn.passive_opens"), "shard " + k + "'s own counter");
                assertEquals(0, shard.counters().value("shard.rx.wrong_shard"), "shard " + k);
                assertEquals(0, shard.counters().value("tcp.tx.resets"), "shard " + k);
                assertEquals("server[" + k + "/2]", shard.name());
            }
            assertEquals(0, server.shard(1).counters().value("arp.rx.requests"), "ARP reaches shard 0 only");
            assertTrue(server.shard(0).counters().value("arp.rx.requests") > 0);
            assertEquals(List.of(), server.failures());
        }
    }

    @Test
    void eachShardsActiveOpenGetsItsRepliesOnItsOwnShardAndLearnsTheMacThroughShardZero() throws Exception {
        try (Simulation sim = new Simulation()) {
            final NetStack peer = sim.addStack("peer", "198.18.0.1/24");
            final StackShards tern = sim.addShardedStack("tern", "198.18.0.2/24", 3, b -> { });
            final EchoService echo = new EchoService(List.of(peer.listen(ECHO_PORT, 16)));
            sim.onPoll(echo);
            final byte[] hello = "hello from a shard".getBytes();
            final MemorySegment buffer = Arena.ofAuto().allocate(1024);
            for (int k = 0; k < 3; k++) {
                final NetStack shard = tern.shard(k);
                for (int n = 0; n < 4; n++) {
                    final TcpConnection connection = shard.connect(CLIENT, ECHO_PORT, 0, TcpOptions.DEFAULT);
                    assertEquals(k, ShardSteering.shardOf(CLIENT, SERVER, ECHO_PORT, connection.localPort(), 3),
                        "shard " + k + " picked a port whose replies come back to it");
                    assertTrue(sim.runUntil(connection::isConnected, 5 * SECOND), "shard " + k + " connected");
                    assertEchoed(sim, connection, hello, buffer);
                }
                assertNotEquals(NeighbourCache.UNRESOLVED, shard.neighbours().peek(CLIENT), "shard " + k + " knows the peer's MAC");
                assertEquals(0, shard.counters().value("shard.rx.wrong_shard"));
                assertEquals(0, shard.counters().value("tcp.tx.resets"));
            }
            assertEquals(0, tern.shard(1).counters().value("arp.rx.replies"), "shard 1 saw no ARP itself");
            assertEquals(0, tern.shard(2).counters().value("arp.rx.replies"), "shard 2 saw no ARP itself");
            assertEquals(12, peer.counters().value("tcp.conn.passive_opens"));
        }
    }

    @Test
    void onALinkSteeringByPortBitsAsANicsFlowRulesDoEveryFlowIsServedOnTheShardThoseBitsName() throws Exception {
        try (Simulation sim = new Simulation()) {
            final NetStack peer = sim.addStack("peer", "198.18.0.1/24");
            final StackShards tern = sim.addShardedStack("tern", "198.18.0.2/24", 4, ShardRule.PORT_XOR, b -> { });
            final EchoService ternEcho = new EchoService(tern.listen(ECHO_PORT, 64, TcpOptions.DEFAULT));
            final EchoService peerEcho = new EchoService(List.of(peer.listen(ECHO_PORT, 64)));
            sim.onPoll(ternEcho);
            sim.onPoll(peerEcho);
            final byte[] hello = "port bits".getBytes();
            final MemorySegment buffer = Arena.ofAuto().allocate(1024);
            final List<TcpConnection> opened = new ArrayList<>();
            for (int n = 0; n < 24; n++) {
                opened.add(peer.connect(SERVER, ECHO_PORT));
            }
            for (int k = 0; k < 4; k++) {
                final TcpConnection fromShard = tern.shard(k).connect(CLIENT, ECHO_PORT, 0, TcpOptions.DEFAULT);
                assertEquals(k, (fromShard.localPort() ^ ECHO_PORT) & 3, "shard " + k + "'s port names it by its low bits");
                opened.add(fromShard);
            }
            for (TcpConnection connection : opened) {
                assertTrue(sim.runUntil(connection::isConnected, 5 * SECOND), "connected from port " + connection.localPort());
                assertEchoed(sim, connection, hello, buffer);
            }
            final int[] perShard = new int[4];
            for (int i = 0; i < ternEcho.accepted.size(); i++) {
                final int shard = ternEcho.acceptedOnShard.get(i);
                assertEquals((ternEcho.accepted.get(i).remotePort() ^ ECHO_PORT) & 3, shard, "accepted where the bits say");
                perShard[shard]++;
            }
            assertEquals(24, ternEcho.accepted.size());
            for (int k = 0; k < 4; k++) {
                assertTrue(perShard[k] > 0, "every shard accepted: " + Arrays.toString(perShard));
                assertEquals(0, tern.shard(k).counters().value("shard.rx.wrong_shard"), "shard " + k);
                assertEquals(0, tern.shard(k).counters().value("tcp.tx.resets"), "shard " + k);
                assertEquals(ShardRule.PORT_XOR, tern.shard(k).shardRule());
            }
        }
        try (Simulation sim = new Simulation()) {
            org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                () -> sim.addShardedStack("tern", "198.18.0.2/24", 3, ShardRule.PORT_XOR, b -> { }),
                "port bits name a power-of-two number of shards");
        }
    }

    /** Writes {@code hello} on {@code connection} and asserts the same bytes come back within 5 s (an echo's). */
    private static void assertEchoed(Simulation sim, TcpConnection connection, byte[] hello, MemorySegment buffer)
        throws TernSocketException {
        connection.write(MemorySegment.ofArray(hello), 0, hello.length);
        final int[] got = {0};
        assertTrue(sim.runUntil(() -> {
            try {
                got[0] += Math.max(0, connection.read(buffer, got[0], hello.length - got[0]));
            } catch (TernSocketException e) {
                throw new AssertionError(e);
            }
            return got[0] == hello.length;
        }, 5 * SECOND), "echoed on port " + connection.localPort());
        assertArrayEquals(hello, buffer.asSlice(0, hello.length).toArray(ValueLayout.JAVA_BYTE));
    }

    /** UDP echo on one socket: each datagram goes back to its source. */
    private static final class UdpEcho implements Runnable {
        final UdpSocket socket;
        final MemorySegment buffer = Arena.ofAuto().allocate(2048);

        UdpEcho(UdpSocket socket) {
            this.socket = socket;
        }

        @Override
        public void run() {
            try {
                int n;
                while ((n = socket.receive(buffer, 0, (int) buffer.byteSize())) >= 0) {
                    assertTrue(socket.ipv6()
                        ? socket.sendTo(socket.lastSource6(), socket.lastSourcePort(), buffer, 0, n)
                        : socket.sendTo(socket.lastSourceAddress(), socket.lastSourcePort(), buffer, 0, n));
                }
            } catch (TernSocketException e) {
                throw new AssertionError(e);
            }
        }
    }

    /** What the ephemeral-port test does with a family's sockets. */
    private interface UdpFamily {
        UdpSocket open(NetStack shard) throws TernSocketException;

        void connect(UdpSocket socket) throws TernSocketException;

        boolean sendTo(UdpSocket socket, byte[] data) throws TernSocketException;

        /** The shard the peer's reply to our {@code localPort} steers to. */
        int shardOfReply(int localPort);
    }

    /**
     * On each of {@code tern}'s three shards, four connected sockets (bound at connect) and four that only send (bound
     * at the first datagram) each get the peer's echo, on a port whose reply steers to that shard (by chance one in
     * three would).
     */
    private static void assertEphemeralSocketsGetTheirRepliesOnTheirShard(Simulation sim, StackShards tern,
                                                                         UdpFamily family) throws Exception {
        final MemorySegment buffer = Arena.ofAuto().allocate(2048);
        for (int k = 0; k < 3; k++) {
            final NetStack shard = tern.shard(k);
            for (int n = 0; n < 8; n++) {
                final UdpSocket socket = family.open(shard);
                final byte[] hello = ("shard " + k + " socket " + n).getBytes();
                if (n < 4) {
                    family.connect(socket);
                    assertTrue(socket.send(MemorySegment.ofArray(hello), 0, hello.length));
                } else {
                    assertTrue(family.sendTo(socket, hello));
                }
                final int[] got = {-1};
                assertTrue(sim.runUntil(() -> {
                    try {
                        got[0] = socket.receive(buffer, 0, (int) buffer.byteSize());
                    } catch (TernSocketException e) {
                        throw new AssertionError(e);
                    }
                    return got[0] >= 0;
                }, SECOND), "shard " + k + " socket " + n + " got its reply");
                assertArrayEquals(hello, buffer.asSlice(0, got[0]).toArray(ValueLayout.JAVA_BYTE));
                assertEquals(k, family.shardOfReply(socket.localPort()),
                    "shard " + k + " socket " + n + ": port " + socket.localPort());
            }
        }
        for (int k = 0; k < 3; k++) {
            final NetStack shard = tern.shard(k);
            assertEquals(8, shard.counters().value("udp.rx.datagrams"), "shard " + k + " received its own replies");
            assertEquals(0, shard.counters().value("udp.drop.no_socket"), "shard " + k);
            assertEquals(0, shard.counters().value("shard.rx.wrong_shard"), "shard " + k);
        }
    }

    @Test
    void eachShardsUdpSocketOnAnEphemeralPortGetsItsRepliesOnItsOwnShard() throws Exception {
        try (Simulation sim = new Simulation()) {
            final NetStack peer = sim.addStack("peer", "198.18.0.1/24");
            final StackShards tern = sim.addShardedStack("tern", "198.18.0.2/24", 3, b -> { });
            final UdpSocket echoSocket = peer.openUdp();
            echoSocket.bind(ECHO_PORT);
            sim.onPoll(new UdpEcho(echoSocket));
            assertEphemeralSocketsGetTheirRepliesOnTheirShard(sim, tern, new UdpFamily() {
                public UdpSocket open(NetStack shard) throws TernSocketException {
                    return shard.openUdp();
                }

                public void connect(UdpSocket socket) throws TernSocketException {
                    socket.connect(CLIENT, ECHO_PORT);
                }

                public boolean sendTo(UdpSocket socket, byte[] data) throws TernSocketException {
                    return socket.sendTo(CLIENT, ECHO_PORT, MemorySegment.ofArray(data), 0, data.length);
                }

                public int shardOfReply(int localPort) {
                    return ShardSteering.shardOf(CLIENT, SERVER, ECHO_PORT, localPort, 3);
                }
            });
            // A datagram to a group names no one peer: any free port is taken, as before.
            final UdpSocket toGroup = tern.shard(1).openUdp();
            assertTrue(toGroup.sendTo(Ipv4Address.parse("239.1.2.3"), ECHO_PORT, MemorySegment.ofArray(new byte[8]), 0, 8));
            sim.runFor(SECOND / 10);
            assertTrue(toGroup.localPort() > 0);
        }
    }

    @Test
    void aUdpSocketThatSteersItsPortHereGetsEveryPeersDatagramsWhateverShardTheyHashTo() throws Exception {
        try (Simulation sim = new Simulation()) {
            final NetStack peer = sim.addStack("peer", "198.18.0.1/24");
            final StackShards tern = sim.addShardedStack("tern", "198.18.0.2/24", 3, b -> { });
            final int serverPort = 5000;
            final UdpSocket server = tern.shard(1).openUdp();
            server.bind(serverPort);
            server.steerPortHere();
            assertEquals(1, tern.shard(0).udpPortOwners().owner(serverPort), "the claim is seen by every shard");
            final MemorySegment buffer = Arena.ofAuto().allocate(8192);
            final int[] hashedTo = new int[3];
            final int clients = 30;
            final List<UdpSocket> sockets = new ArrayList<>();
            for (int n = 0; n < clients; n++) {
                final UdpSocket client = peer.openUdp();
                client.bind(41000 + n);
                hashedTo[ShardSteering.shardOf(CLIENT, SERVER, 41000 + n, serverPort, 3)]++;
                // The last client's datagram is larger than the MTU: its fragments reach shard 0, which reassembles it.
                final byte[] hello = n == clients - 1 ? new byte[3000] : ("client " + n).getBytes();
                hello[0] = (byte) n;
                assertTrue(client.sendTo(SERVER, serverPort, MemorySegment.ofArray(hello), 0, hello.length));
                final int[] got = {-1};
                assertTrue(sim.runUntil(() -> {
                    try {
                        got[0] = server.receive(buffer, 0, (int) buffer.byteSize());
                    } catch (TernSocketException e) {
                        throw new AssertionError(e);
                    }
                    return got[0] >= 0;
                }, SECOND), "client " + n + "'s datagram reached the socket on shard 1");
                assertArrayEquals(hello, buffer.asSlice(0, got[0]).toArray(ValueLayout.JAVA_BYTE), "client " + n);
                assertEquals(41000 + n, server.lastSourcePort());
                assertTrue(server.sendTo(CLIENT, 41000 + n, buffer, 0, Math.min(got[0], 64)), "the answer");
                sockets.add(client);
            }
            assertTrue(hashedTo[0] > 0 && hashedTo[2] > 0, "the peers' ports hash to every shard: " + Arrays.toString(hashedTo));
            for (int n = 0; n < clients; n++) {
                final UdpSocket client = sockets.get(n);
                final int[] got = {-1};
                assertTrue(sim.runUntil(() -> {
                    try {
                        got[0] = client.receive(buffer, 0, (int) buffer.byteSize());
                    } catch (TernSocketException e) {
                        throw new AssertionError(e);
                    }
                    return got[0] >= 0;
                }, SECOND), "client " + n + " got its answer");
                assertEquals((byte) n, buffer.get(ValueLayout.JAVA_BYTE, 0));
            }
            assertEquals(clients, tern.shard(1).counters().value("udp.rx.datagrams"));
            for (int k = 0; k < 3; k++) {
                final var counters = tern.shard(k).counters();
                assertEquals(0, counters.value("udp.drop.no_socket"), "shard " + k);
                assertEquals(0, counters.value("icmp.tx.errors"), "shard " + k + " sent no port unreachable");
                assertEquals(0, counters.value("shard.rx.wrong_shard"), "shard " + k + ": steering agreed");
            }
            // Whole datagrams that hashed to shards 0 and 2 were handed over as claimed; the fragmented one was
            // reassembled on shard 0 and handed over from there.
            final boolean lastHashedToShardOne = ShardSteering.shardOf(CLIENT, SERVER, 41000 + clients - 1, serverPort, 3) == 1;
            assertEquals(hashedTo[0] + hashedTo[2] - (lastHashedToShardOne ? 0 : 1),
                tern.shard(0).counters().value("shard.rx.udp_port_claimed")
                    + tern.shard(2).counters().value("shard.rx.udp_port_claimed"));
            assertEquals(1, tern.shard(0).counters().value("shard.tx.reassembled_handed_over"));

            server.close();
            assertEquals(-1, tern.shard(0).udpPortOwners().owner(serverPort), "closing ends the claim");
        }
    }

    /** A bare ACK for a connection nobody has, from the client to the server's closed port 9, checksum correct. */
    private static byte[] strayAck(long destinationMac, long sourceMac, int sourcePort) {
        final byte[] segment = new byte[TcpHeader.MIN_LENGTH];
        final TcpHeader header = new TcpHeader().wrap(MemorySegment.ofArray(segment), 0, segment.length);
        TcpRepr.of(sourcePort, CLOSED_PORT, 1000, 2000, TcpFlags.ACK, 1024).emit(header);
        TcpRepr.fillChecksum(header, CLIENT, SERVER, segment.length);
        return Frames.ethernet(destinationMac, sourceMac, EtherType.IPV4,
            Frames.ipv4(CLIENT, SERVER, 6, 1, 0x4000, 64, segment));
    }

    private static boolean isReset(PeerPort.Received frame) {
        return frame.ipProtocol() == 6 && (frame.bytes()[14 + 20 + 13] & TcpFlags.RST) != 0;
    }

    @Test
    void aFrameThatReachesTheWrongShardIsHandedToItsOwnerAndNeverAnsweredByTheShardItReached() throws Exception {
        try (Simulation sim = new Simulation()) {
            final StackShards server = sim.addShardedStack("server", "198.18.0.2/24", 2, b -> { });
            final PeerPort peer = new PeerPort(sim, "peer", 0x0200_0000_00AAL);
            sim.runFor(SECOND / 10);
            int port = 40000;
            while (ShardSteering.shardOf(CLIENT, SERVER, port, CLOSED_PORT, 2) != 0) {
                port++;
            }
            final long serverMac = server.shard(0).macAddress();
            // Through the wire it reaches shard 0, which answers an ACK for no connection with a reset (RFC 9293
            // §3.10.7.1): the frame is one a shard would answer.
            peer.send(Frames.ethernet(serverMac, peer.mac(), EtherType.ARP, Frames.arp(1, peer.mac(), CLIENT, 0, SERVER)));
            peer.send(strayAck(serverMac, peer.mac(), port));
            sim.runFor(SECOND / 10);
            assertEquals(1, peer.drain(ShardedStackTest::isReset).size(), "the owner shard answers with a reset");
            peer.clear();

            // The same frame handed to shard 1, as a link whose steering disagrees would: shard 1 counts it and hands
            // it to shard 0, the owner, which answers it as its own; shard 1 answers nothing.
            final byte[] misSteered = strayAck(serverMac, peer.mac(), port);
            final ShardFilterLink shardOne = (ShardFilterLink) server.shard(1).link();
            shardOne.onFrame(MemorySegment.ofArray(misSteered), 0, misSteered.length, 0);
            sim.runFor(SECOND / 10);
            assertEquals(1, peer.drain(ShardedStackTest::isReset).size(), "the owner answers the handed-over frame");
            assertEquals(1, server.shard(1).counters().value("shard.rx.wrong_shard"));
            assertEquals(1, server.shard(1).counters().value("shard.tx.handed_over"));
            assertEquals(1, server.shard(0).counters().value("shard.rx.handed_in"));
            assertEquals(0, server.shard(1).counters().value("tcp.tx.resets"), "not answered by the shard it reached");
            assertEquals(0, server.shard(1).counters().value("ipv4.rx.packets"), "no layer of shard 1 saw it");
            assertEquals(2, server.shard(0).counters().value("tcp.tx.resets"));
            assertEquals(0, server.shard(1).counters().value("shard.handoff_full"));
        }
    }

    @Test
    void anIcmpErrorAboutAnotherShardsFlowIsHandedToThatShardWhoseSocketLearnsIt() throws Exception {
        try (Simulation sim = new Simulation()) {
            final StackShards server = sim.addShardedStack("server", "198.18.0.2/24", 2, b -> { });
            final PeerPort peer = peerKnownTo(sim, server);
            final long serverMac = server.shard(0).macAddress();
            final int serverPort = 9999;
            for (int owner = 0; owner < 2; owner++) {
                // A peer port whose datagrams to serverPort steer to `owner`: that shard's socket talks to it.
                int peerPort = 42000 + owner * 1000;
                while (ShardSteering.shardOf(CLIENT, SERVER, peerPort, serverPort, 2) != owner) {
                    peerPort++;
                }
                final UdpSocket socket = server.shard(owner).openUdp();
                socket.bind(serverPort);
                socket.connect(CLIENT, peerPort);
                // Port unreachable (RFC 792) quoting a datagram the server sent: source the server, destination the peer.
                final byte[] quoted = Frames.ipv4(SERVER, CLIENT, 17, 7, 0, 64,
                    new byte[] {(byte) (serverPort >> 8), (byte) serverPort, (byte) (peerPort >> 8), (byte) peerPort, 0, 8, 0, 0});
                peer.send(Frames.ethernet(serverMac, peer.mac(), EtherType.IPV4,
                    Frames.ipv4(CLIENT, SERVER, 1, 8 + owner, 0, 64, Frames.icmp(3, 3, 0, quoted))));
                sim.runFor(SECOND / 10);
                assertEquals(1, server.shard(owner).counters().value("udp.rx.icmp_errors"), "shard " + owner + " learnt it");
                final MemorySegment buffer = Arena.ofAuto().allocate(64);
                final int shardOfSocket = owner;
                final TernSocketException refused = org.junit.jupiter.api.Assertions.assertThrows(TernSocketException.class,
                    () -> socket.receive(buffer, 0, 64), "shard " + shardOfSocket + "'s connected socket sees the error");
                assertTrue(refused.getMessage().toLowerCase(java.util.Locale.ROOT).contains("refused"), refused.getMessage());
                socket.close();
            }
            assertEquals(1, server.shard(0).counters().value("udp.rx.icmp_errors"), "shard 0 kept only its own");
            assertEquals(1, server.shard(0).counters().value("shard.tx.handed_over"));
            assertEquals(1, server.shard(1).counters().value("shard.rx.handed_in"));
            assertEquals(0, server.shard(1).counters().value("shard.rx.wrong_shard"), "not a wrong-shard arrival");
        }
    }

    @Test
    void aPingFromAnyShardGetsItsReplyOnThatShard() throws Exception {
        try (Simulation sim = new Simulation()) {
            sim.addStack("client", "198.18.0.1/24");
            final StackShards server = sim.addShardedStack("server", "198.18.0.2/24", 2, b -> { });
            sim.runFor(SECOND / 10);
            for (int shard = 0; shard < 2; shard++) {
                final Pinger pinger = server.shard(shard).pinger();
                assertEquals(shard, pinger.identifier() % 2, "the identifier names the shard");
                for (int sequence = 0; sequence < 3; sequence++) {
                    pinger.send(CLIENT, sequence, 56, sim.nowNs());
                    sim.runFor(SECOND / 10);
                }
                assertEquals(3, pinger.replies(), "shard " + shard + "'s pinger got its replies");
            }
            assertEquals(3, server.shard(0).counters().value("shard.tx.handed_over"), "shard 1's replies went through shard 0");
            assertEquals(3, server.shard(1).counters().value("shard.rx.handed_in"));
        }
    }

    /**
     * A raw peer at {@code CLIENT} whose MAC the server has learnt (an ARP request for the server's address through
     * shard 0, answered, 100 ms run; a reply the server never asked for would teach it nothing), its frames cleared.
     */
    private static PeerPort peerKnownTo(Simulation sim, StackShards server) {
        final PeerPort peer = new PeerPort(sim, "peer", 0x0200_0000_00AAL);
        final long serverMac = server.shard(0).macAddress();
        peer.send(Frames.ethernet(serverMac, peer.mac(), EtherType.ARP, Frames.arp(1, peer.mac(), CLIENT, 0, SERVER)));
        sim.runFor(SECOND / 10);
        peer.clear();
        return peer;
    }

    /** {@code segment} as two IPv4 fragments (8 bytes, then the rest), each in its own Ethernet frame. */
    private static List<byte[]> fragments(long destinationMac, long sourceMac, int protocol, int id, byte[] segment) {
        final byte[] first = Arrays.copyOfRange(segment, 0, 8);
        final byte[] rest = Arrays.copyOfRange(segment, 8, segment.length);
        return List.of(
            Frames.ethernet(destinationMac, sourceMac, EtherType.IPV4, Frames.ipv4(CLIENT, SERVER, protocol, id, 0x2000, 64, first)),
            Frames.ethernet(destinationMac, sourceMac, EtherType.IPV4, Frames.ipv4(CLIENT, SERVER, protocol, id, 1, 64, rest)));
    }

    @Test
    void fragmentsAllReachShardZeroWhichHandsAnotherShardsTcpSegmentToItsOwnerWhoAloneAnswersIt() throws Exception {
        try (Simulation sim = new Simulation()) {
            final StackShards server = sim.addShardedStack("server", "198.18.0.2/24", 2, b -> { });
            final PeerPort peer = peerKnownTo(sim, server);
            final long serverMac = server.shard(0).macAddress();
            for (int owner = 0; owner < 2; owner++) {
                int port = 41000;
                while (ShardSteering.shardOf(CLIENT, SERVER, port, CLOSED_PORT, 2) != owner) {
                    port++;
                }
                final byte[] ack = strayAck(serverMac, peer.mac(), port);
                final byte[] segment = Arrays.copyOfRange(ack, 14 + 20, 14 + 20 + TcpHeader.MIN_LENGTH); // no padding
                peer.clear();
                for (byte[] fragment : fragments(serverMac, peer.mac(), 6, 100 + owner, segment)) {
                    peer.send(fragment);
                }
                sim.runFor(SECOND / 10);
                assertEquals(1 + owner, server.shard(0).counters().value("ipv4.reasm.ok"), "shard 0 reassembled it");
                assertEquals(0, server.shard(1).counters().value("ipv4.reasm.fragments"), "no fragment reached shard 1");
                // An ACK for no connection is answered with a reset (RFC 9293 §3.10.7.1) by the shard that owns its
                // flow, the one that knows its connections, and by it alone.
                assertEquals(1, peer.drain(ShardedStackTest::isReset).size(), "one reset, from shard " + owner);
                assertEquals(1, server.shard(owner).counters().value("tcp.tx.resets"), "shard " + owner + " answered");
                assertEquals(owner, server.shard(0).counters().value("shard.tx.reassembled_handed_over"));
                assertEquals(owner, server.shard(1).counters().value("shard.rx.handed_in"));
            }
            assertEquals(1, server.shard(0).counters().value("tcp.tx.resets"), "shard 0 answered only its own");
            for (int k = 0; k < 2; k++) {
                assertEquals(0, server.shard(k).counters().value("shard.rx.wrong_shard"), "not a steering disagreement");
                assertEquals(0, server.shard(k).counters().value("shard.handoff_full"));
            }
        }
    }

    /** A TCP segment from the raw peer at CLIENT to the server, checksum correct, as IPv4 payload. */
    private static byte[] tcpSegment(int peerPort, int seq, int ack, int flags, byte[] data) {
        final byte[] segment = new byte[TcpHeader.MIN_LENGTH + data.length];
        final TcpHeader header = new TcpHeader().wrap(MemorySegment.ofArray(segment), 0, segment.length);
        TcpRepr.of(peerPort, ECHO_PORT, seq, ack, flags, 65535).emit(header);
        System.arraycopy(data, 0, segment, TcpHeader.MIN_LENGTH, data.length);
        TcpRepr.fillChecksum(header, CLIENT, SERVER, segment.length);
        return segment;
    }

    @Test
    void dataOfAnotherShardsConnectionArrivingInFragmentsReachesThatConnectionIntact() throws Exception {
        try (Simulation sim = new Simulation()) {
            final StackShards server = sim.addShardedStack("server", "198.18.0.2/24", 2, b -> { });
            final List<TcpListener> listeners = server.listen(ECHO_PORT, 16, TcpOptions.DEFAULT);
            final PeerPort peer = peerKnownTo(sim, server);
            final long serverMac = server.shard(0).macAddress();
            int peerPort = 43000;
            while (ShardSteering.shardOf(CLIENT, SERVER, peerPort, ECHO_PORT, 2) != 1) {
                peerPort++;
            }
            // The handshake, whole frames: the link steers them to shard 1.
            peer.send(Frames.ethernet(serverMac, peer.mac(), EtherType.IPV4,
                Frames.ipv4(CLIENT, SERVER, 6, 1, 0x4000, 64, tcpSegment(peerPort, 1000, 0, TcpFlags.SYN, new byte[0]))));
            sim.runFor(SECOND / 10);
            final List<PeerPort.Received> synAcks = peer.drain(frame -> frame.ipProtocol() == 6
                && (frame.bytes()[14 + 20 + 13] & (TcpFlags.SYN | TcpFlags.ACK)) == (TcpFlags.SYN | TcpFlags.ACK));
            assertEquals(1, synAcks.size());
            final int serverSeq = dev.tern.core.memory.BigEndian.i32(synAcks.getFirst().segment(), 14 + 20 + 4);
            peer.send(Frames.ethernet(serverMac, peer.mac(), EtherType.IPV4,
                Frames.ipv4(CLIENT, SERVER, 6, 2, 0x4000, 64, tcpSegment(peerPort, 1001, serverSeq + 1, TcpFlags.ACK, new byte[0]))));
            sim.runFor(SECOND / 10);
            final TcpConnection accepted = listeners.get(1).accept();
            assertTrue(accepted != null, "shard 1 accepted the connection");

            // 1,200 bytes of data in two fragments: shard 0 reassembles them and hands the segment to shard 1.
            final byte[] data = new byte[1200];
            new SplittableRandom(16).nextBytes(data);
            for (byte[] fragment : fragments(serverMac, peer.mac(), 6, 3,
                tcpSegment(peerPort, 1001, serverSeq + 1, TcpFlags.ACK | TcpFlags.PSH, data))) {
                peer.send(fragment);
            }
            sim.runFor(SECOND / 10);
            final MemorySegment buffer = Arena.ofAuto().allocate(4096);
            assertEquals(data.length, accepted.read(buffer, 0, 4096));
            assertArrayEquals(data, buffer.asSlice(0, data.length).toArray(ValueLayout.JAVA_BYTE));
            // Shard 1 acknowledged it: an ACK for all of it, and no reset from anyone.
            assertTrue(peer.drain(frame -> frame.ipProtocol() == 6
                && dev.tern.core.memory.BigEndian.i32(frame.segment(), 14 + 20 + 8) == 1001 + data.length).size() >= 1,
                "the data was acknowledged");
            assertEquals(List.of(), peer.drain(ShardedStackTest::isReset));
            assertEquals(1, server.shard(0).counters().value("ipv4.reasm.ok"));
            assertEquals(1, server.shard(0).counters().value("shard.tx.reassembled_handed_over"));
            assertEquals(1, server.shard(1).counters().value("shard.rx.handed_in"));
            assertEquals(0, server.shard(0).counters().value("tcp.rx.segments"), "shard 0's TCP saw nothing");
        }
    }

    @Test
    void aFragmentedUdpDatagramIsReceivedByTheShardItsPortsNameIntact() throws Exception {
        try (Simulation sim = new Simulation()) {
            final NetStack client = sim.addStack("client", "198.18.0.1/24");
            final StackShards server = sim.addShardedStack("server", "198.18.0.2/24", 2, b -> { });
            final UdpSocket[] sockets = {server.shard(0).openUdp(), server.shard(1).openUdp()};
            for (UdpSocket socket : sockets) {
                socket.bind(9999);
            }
            final int[] perShard = new int[2];
            final MemorySegment buffer = Arena.ofAuto().allocate(8192);
            for (int n = 0; n < 8; n++) {
                // A datagram of 4,000 bytes leaves the client in three fragments; each sender has its own port.
                final UdpSocket sender = client.openUdp();
                final byte[] datagram = new byte[4000];
                new SplittableRandom(n).nextBytes(datagram);
                assertTrue(sender.sendTo(SERVER, 9999, MemorySegment.ofArray(datagram), 0, datagram.length));
                sim.runFor(SECOND / 10);
                final int owner = ShardSteering.shardOf(CLIENT, SERVER, sender.localPort(), 9999, 2);
                assertEquals(datagram.length, sockets[owner].receive(buffer, 0, 8192), "datagram " + n + " on shard " + owner);
                assertArrayEquals(datagram, buffer.asSlice(0, datagram.length).toArray(ValueLayout.JAVA_BYTE));
                assertEquals(sender.localPort(), sockets[owner].lastSourcePort());
                assertEquals(-1, sockets[1 - owner].receive(buffer, 0, 8192), "nothing on the other shard");
                perShard[owner]++;
                sender.close();
            }
            assertTrue(perShard[0] > 0 && perShard[1] > 0, "both shards owned some: " + Arrays.toString(perShard));
            assertEquals(8, server.shard(0).counters().value("ipv4.reasm.ok"), "shard 0 reassembled them all");
            assertEquals(perShard[1], server.shard(0).counters().value("shard.tx.reassembled_handed_over"));
            assertEquals(perShard[1], server.shard(1).counters().value("shard.rx.handed_in"));
            assertEquals(perShard[0], server.shard(0).counters().value("udp.rx.datagrams"));
            assertEquals(perShard[1], server.shard(1).counters().value("udp.rx.datagrams"));
        }
    }

    @Test
    void aShardWhoseLoopThrowsIsNamedAndTheOtherShardsServeOn() throws Exception {
        try (Simulation sim = new Simulation()) {
            final NetStack client = sim.addStack("client", "198.18.0.1/24");
            final StackShards server = sim.addShardedStack("server", "198.18.0.2/24", 2, b -> { });
            final EchoService echo = new EchoService(server.listen(ECHO_PORT, 64, TcpOptions.DEFAULT));
            sim.onPoll(echo);
            server.failed(1, new IllegalStateException("injected"));
            assertEquals(List.of("shard 1 (server[1/2]): java.lang.IllegalStateException: injected"), server.failures());
            // Shard 0 still accepts and serves the flows steered to it.
            int port = 50000;
            while (ShardSteering.shardOf(CLIENT, SERVER, port, ECHO_PORT, 2) != 0) {
                port++;
            }
            final TcpConnection connection = client.connect(SERVER, ECHO_PORT, port, TcpOptions.DEFAULT);
            assertTrue(sim.runUntil(connection::isConnected, 5 * SECOND));
            assertEquals(1, server.shard(0).counters().value("tcp.conn.passive_opens"));
        }
    }

    // ------------------------------------------------------------------------------------------------ IPv6

    private static final dev.tern.core.net.Ipv6Address CLIENT6 = dev.tern.core.net.Ipv6Address.parse("2001:db8::1");
    private static final dev.tern.core.net.Ipv6Address SERVER6 = dev.tern.core.net.Ipv6Address.parse("2001:db8::2");

    private static StackShards shardedDualStack(Simulation sim, String name, int shards, dev.tern.ipv6.Ipv6Config ipv6) {
        return sim.addShardedStack(name, "198.18.0.2/24", shards, b -> b.ipv6(ipv6));
    }

    private static int shardOf6(dev.tern.core.net.Ipv6Address source, dev.tern.core.net.Ipv6Address destination,
                                int sourcePort, int destinationPort, int shards) {
        return ShardSteering.shardOf6(ShardRule.FLOW_HASH, source.high(), source.low(), destination.high(),
            destination.low(), sourcePort, destinationPort, shards);
    }

    /**
     * IPv6 on every shard: connections to the shared IPv6 address spread over the shards the steering names, each
     * shard answering its own; shard 0 answers the client's solicitation and passes it on, so the others know the
     * client's MAC without a solicitation of their own, and never answer one.
     */
    @Test
    void ipv6ConnectionsSpreadOverTheShardsAndOnlyShardZeroAnswersNeighbourDiscovery() throws Exception {
        try (Simulation sim = new Simulation()) {
            final NetStack client = dev.tern.stack.testing.SimulatedSockets.addDualStack(sim, "client",
                "198.18.0.1/24", "2001:db8::1/64");
            final StackShards server = shardedDualStack(sim, "server", 3,
                dev.tern.stack.testing.SimulatedSockets.ipv6Now("2001:db8::2/64"));
            final EchoService echo = new EchoService(server.listen(ECHO_PORT, 64, TcpOptions.DEFAULT));
            sim.onPoll(echo);
            final List<TcpConnection> clients = new ArrayList<>();
            for (int i = 0; i < 24; i++) {
                clients.add(client.connect(SERVER6, ECHO_PORT));
            }
            assertTrue(sim.runUntil(() -> clients.stream().allMatch(TcpConnection::isConnected), 5 * SECOND));
            final byte[] hello = "hello over IPv6".getBytes();
            final MemorySegment buffer = Arena.ofAuto().allocate(1024);
            for (TcpConnection connection : clients) {
                assertEchoed(sim, connection, hello, buffer);
            }
            final int[] perShard = new int[3];
            for (int i = 0; i < echo.accepted.size(); i++) {
                final TcpConnection accepted = echo.accepted.get(i);
                assertTrue(accepted.ipv6());
                final int shard = echo.acceptedOnShard.get(i);
                assertEquals(shardOf6(CLIENT6, SERVER6, accepted.remotePort(), ECHO_PORT, 3), shard,
                    "the shard the steering names accepted port " + accepted.remotePort());
                perShard[shard]++;
            }
            assertTrue(perShard[0] > 0 && perShard[1] > 0 && perShard[2] > 0, "every shard accepted: "
                + Arrays.toString(perShard));
            for (int k = 0; k < 3; k++) {
                final NetStack shard = server.shard(k);
                assertEquals(0, shard.counters().value("shard.rx.wrong_shard"), "shard " + k);
                assertEquals(0, shard.counters().value("tcp.tx.resets"), "shard " + k);
                if (k > 0) {
                    assertEquals(0, shard.counters().value("nd.tx.advertisements"), "shard " + k + " answers nothing");
                    assertEquals(0, shard.counters().value("nd.tx.solicitations"),
                        "shard " + k + " knew the client from shard 0's copy of its solicitation");
                    assertTrue(shard.counters().value("nd.rx.solicitations") > 0, "shard " + k + " got the copy");
                }
            }
            assertEquals(1, server.shard(0).counters().value("nd.tx.advertisements"), "one answer, shard 0's");
            assertEquals(2, server.shard(0).counters().value("shard.tx.nd_passed_on"));
            assertEquals(List.of(), server.failures());
        }
    }

    /**
     * An active open over IPv6 from any shard takes a port whose replies the link steers back to it; the shard
     * resolves the peer by its own solicitation, whose answer reaches shard 0 and comes back as its copy.
     */
    @Test
    void eachShardsIpv6ActiveOpenGetsItsRepliesOnItsOwnShard() throws Exception {
        try (Simulation sim = new Simulation()) {
            final NetStack peer = dev.tern.stack.testing.SimulatedSockets.addDualStack(sim, "peer",
                "198.18.0.1/24", "2001:db8::1/64");
            final StackShards tern = shardedDualStack(sim, "tern", 3,
                dev.tern.stack.testing.SimulatedSockets.ipv6Now("2001:db8::2/64"));
            final EchoService echo = new EchoService(List.of(peer.listen(ECHO_PORT, 16)));
            sim.onPoll(echo);
            final byte[] hello = "hello from a shard over IPv6".getBytes();
            final MemorySegment buffer = Arena.ofAuto().allocate(1024);
            for (int k = 0; k < 3; k++) {
                final NetStack shard = tern.shard(k);
                for (int n = 0; n < 4; n++) {
                    final TcpConnection connection = shard.connect(CLIENT6, ECHO_PORT, 0, TcpOptions.DEFAULT);
                    assertEquals(k, shardOf6(CLIENT6, SERVER6, ECHO_PORT, connection.localPort(), 3),
                        "shard " + k + " picked a port whose replies come back to it");
                    assertTrue(sim.runUntil(connection::isConnected, 5 * SECOND), "shard " + k + " connected");
                    assertEchoed(sim, connection, hello, buffer);
                }
                assertEquals(0, shard.counters().value("shard.rx.wrong_shard"));
                assertEquals(0, shard.counters().value("tcp.tx.resets"));
                if (k > 0) {
                    assertEquals(0, shard.counters().value("nd.tx.advertisements"), "shard " + k + " answers nothing");
                    assertTrue(shard.counters().value("nd.rx.advertisements") > 0, "shard " + k + " got the copy");
                }
            }
            assertEquals(12, peer.counters().value("tcp.conn.passive_opens"));
        }
    }

    /**
     * Duplicate address detection is shard 0's: one solicitation per address on the wire, and every shard's address
     * usable when shard 0's is. A duplicate found fails the address on every shard, each seeing the same answer.
     */
    @Test
    void duplicateAddressDetectionIsShardZerosAndItsOutcomeHoldsOnEveryShard() throws Exception {
        try (Simulation sim = new Simulation()) {
            final NetStack peer = dev.tern.stack.testing.SimulatedSockets.addDualStack(sim, "peer",
                "198.18.0.1/24", "2001:db8::1/64");
            final StackShards tern = shardedDualStack(sim, "tern", 2, dev.tern.ipv6.Ipv6Config.withAddresses(List.of(
                dev.tern.core.net.Ipv6InterfaceAddress.parse("2001:db8::2/64"),
                dev.tern.core.net.Ipv6InterfaceAddress.parse("2001:db8::1/64")))); // the peer's own address
            sim.runFor(3 * SECOND);
            // The link-local address and 2001:db8::2: solicited by shard 0 only.
            assertEquals(0, tern.shard(1).counters().value("nd.tx.solicitations"));
            assertEquals(3, tern.shard(0).counters().value("nd.tx.solicitations"), "one per address");
            for (int k = 0; k < 2; k++) {
                final dev.tern.ipv6.Ipv6Addresses addresses = tern.shard(k).ipv6().addresses();
                assertEquals(2, tern.shard(k).counters().value("nd.dad.completed"), "shard " + k);
                assertEquals(1, tern.shard(k).counters().value("nd.dad.duplicates"), "shard " + k + " saw the answer");
                assertTrue(addresses.isOurs(SERVER6.high(), SERVER6.low()), "shard " + k);
                assertTrue(!addresses.isOurs(CLIENT6.high(), CLIENT6.low()), "shard " + k + ": the duplicate is not used");
            }
            assertEquals(0, tern.shard(1).counters().value("mld.tx.reports"), "shard 0 reports the groups");
            assertTrue(tern.shard(0).counters().value("mld.tx.reports") > 0);
        }
    }

    /** As over IPv4: each shard's IPv6 UDP socket on an ephemeral port gets its peer's replies on its own shard. */
    @Test
    void eachShardsIpv6UdpSocketOnAnEphemeralPortGetsItsRepliesOnItsOwnShard() throws Exception {
        try (Simulation sim = new Simulation()) {
            final NetStack peer = dev.tern.stack.testing.SimulatedSockets.addDualStack(sim, "peer",
                "198.18.0.1/24", "2001:db8::1/64");
            final StackShards tern = shardedDualStack(sim, "tern", 3,
                dev.tern.stack.testing.SimulatedSockets.ipv6Now("2001:db8::2/64"));
            final UdpSocket echoSocket = peer.openUdp6();
            echoSocket.bind(dev.tern.core.net.Ipv6Address.UNSPECIFIED, ECHO_PORT);
            sim.onPoll(new UdpEcho(echoSocket));
            assertEphemeralSocketsGetTheirRepliesOnTheirShard(sim, tern, new UdpFamily() {
                public UdpSocket open(NetStack shard) throws TernSocketException {
                    return shard.openUdp6();
                }

                public void connect(UdpSocket socket) throws TernSocketException {
                    socket.connect(CLIENT6, ECHO_PORT);
                }

                public boolean sendTo(UdpSocket socket, byte[] data) throws TernSocketException {
                    return socket.sendTo(CLIENT6, ECHO_PORT, MemorySegment.ofArray(data), 0, data.length);
                }

                public int shardOfReply(int localPort) {
                    return shardOf6(CLIENT6, SERVER6, ECHO_PORT, localPort, 3);
                }
            });
        }
    }

    /**
     * A UDP datagram over IPv6 that arrives in fragments reaches shard 0, which reassembles it and hands it to the
     * shard its ports name, as over IPv4.
     */
    @Test
    void aFragmentedIpv6UdpDatagramIsReceivedByTheShardItsPortsNameIntact() throws Exception {
        try (Simulation sim = new Simulation()) {
            final NetStack client = dev.tern.stack.testing.SimulatedSockets.addDualStack(sim, "client",
                "198.18.0.1/24", "2001:db8::1/64");
            final StackShards server = shardedDualStack(sim, "server", 2,
                dev.tern.stack.testing.SimulatedSockets.ipv6Now("2001:db8::2/64"));
            final UdpSocket[] sockets = {server.shard(0).openUdp6(), server.shard(1).openUdp6()};
            for (UdpSocket socket : sockets) {
                socket.bind(dev.tern.core.net.Ipv6Address.UNSPECIFIED, 9999);
            }
            final int[] perShard = new int[2];
            final MemorySegment buffer = Arena.ofAuto().allocate(8192);
            for (int n = 0; n < 8; n++) {
                final UdpSocket sender = client.openUdp6();
                final byte[] datagram = new byte[4000];
                new SplittableRandom(n).nextBytes(datagram);
                assertTrue(sender.sendTo(SERVER6, 9999, MemorySegment.ofArray(datagram), 0, datagram.length));
                sim.runFor(SECOND / 10);
                final int owner = shardOf6(CLIENT6, SERVER6, sender.localPort(), 9999, 2);
                assertEquals(datagram.length, sockets[owner].receive(buffer, 0, 8192), "datagram " + n + " on shard " + owner);
                assertArrayEquals(datagram, buffer.asSlice(0, datagram.length).toArray(ValueLayout.JAVA_BYTE));
                assertEquals(CLIENT6, sockets[owner].lastSource6());
                assertEquals(-1, sockets[1 - owner].receive(buffer, 0, 8192), "nothing on the other shard");
                perShard[owner]++;
                sender.close();
            }
            assertTrue(perShard[0] > 0 && perShard[1] > 0, "both shards owned some: " + Arrays.toString(perShard));
            assertEquals(perShard[1], server.shard(0).counters().value("shard.tx.reassembled_handed_over"));
            assertEquals(perShard[0], server.shard(0).counters().value("udp.rx.datagrams"));
            assertEquals(perShard[1], server.shard(1).counters().value("udp.rx.datagrams"));
            assertEquals(0, server.shard(0).counters().value("icmp6.tx.errors"), "shard 0 answered nothing of shard 1's");
        }
    }

    /**
     * A packet too big about a TCP flow of shard 1 reaches shard 0 (every ICMPv6 message does) and is handed to shard
     * 1, whose connection lowers its segments to the reported MTU.
     */
    @Test
    void aPacketTooBigAboutAnotherShardsConnectionReachesThatShard() throws Exception {
        try (Simulation sim = new Simulation()) {
            final NetStack peer = dev.tern.stack.testing.SimulatedSockets.addDualStack(sim, "peer",
                "198.18.0.1/24", "2001:db8::1/64");
            final StackShards tern = shardedDualStack(sim, "tern", 2,
                dev.tern.stack.testing.SimulatedSockets.ipv6Now("2001:db8::2/64"));
            final EchoService echo = new EchoService(List.of(peer.listen(ECHO_PORT, 16)));
            sim.onPoll(echo);
            final NetStack shard = tern.shard(1);
            final TcpConnection connection = shard.connect(CLIENT6, ECHO_PORT, 0, TcpOptions.DEFAULT);
            assertTrue(sim.runUntil(connection::isConnected, 5 * SECOND));
            final PeerPort router = new PeerPort(sim, "router", 0x0200_0000_0099L);
            // Packet too big (RFC 4443 §3.2), MTU 1280, quoting the start of a segment shard 1 sent.
            final byte[] quotedTcp = new byte[20];
            quotedTcp[0] = (byte) (connection.localPort() >> 8);
            quotedTcp[1] = (byte) connection.localPort();
            quotedTcp[3] = ECHO_PORT;
            final byte[] quoted = dev.tern.stack.testing.Ipv6Frames.packet(SERVER6, CLIENT6, 6, 64, quotedTcp);
            final dev.tern.core.net.Ipv6Address routerAddress = dev.tern.core.net.Ipv6Address.parse("2001:db8::99");
            router.send(dev.tern.stack.testing.Ipv6Frames.frame(shard.macAddress(), router.mac(),
                dev.tern.stack.testing.Ipv6Frames.icmpPacket(routerAddress, SERVER6, 64, 2, 0, 1280, quoted)));
            sim.runFor(SECOND / 10);
            assertEquals(1, tern.shard(0).counters().value("shard.tx.handed_over"));
            assertEquals(1, shard.counters().value("icmp6.rx.path_mtu_updates"), "shard 1 learnt the path MTU");
            assertEquals(0, tern.shard(0).counters().value("icmp6.rx.path_mtu_updates"));
            assertEquals(1280, shard.ipv6().pathMtu(CLIENT6.high(), CLIENT6.low(), sim.clock().nanoTime()));
        }
    }

    /**
     * A fragmented IPv6 datagram to a group stays on shard 0, which keeps the memberships, even when another shard
     * claimed its port (as over IPv4, where the group's address keeps it there).
     */
    @Test
    void aFragmentedIpv6DatagramToAGroupStaysOnShardZeroWhoeverClaimedItsPort() throws Exception {
        try (Simulation sim = new Simulation()) {
            final NetStack client = dev.tern.stack.testing.SimulatedSockets.addDualStack(sim, "client",
                "198.18.0.1/24", "2001:db8::1/64");
            final StackShards server = shardedDualStack(sim, "server", 2,
                dev.tern.stack.testing.SimulatedSockets.ipv6Now("2001:db8::2/64"));
            final dev.tern.core.net.Ipv6Address group = dev.tern.core.net.Ipv6Address.parse("ff0e::1:2");
            final UdpSocket member = server.shard(0).openUdp6();
            member.bind(dev.tern.core.net.Ipv6Address.UNSPECIFIED, 9999);
            member.join(group);
            final UdpSocket claimant = server.shard(1).openUdp6();
            claimant.bind(dev.tern.core.net.Ipv6Address.UNSPECIFIED, 9999);
            claimant.steerPortHere();
            sim.runFor(SECOND / 10);
            final UdpSocket sender = client.openUdp6();
            final byte[] datagram = new byte[4000];
            new SplittableRandom(3).nextBytes(datagram);
            assertTrue(sender.sendTo(group, 9999, MemorySegment.ofArray(datagram), 0, datagram.length));
            sim.runFor(SECOND / 10);
            final MemorySegment buffer = Arena.ofAuto().allocate(8192);
            assertEquals(datagram.length, member.receive(buffer, 0, 8192), "the member on shard 0 got it");
            assertArrayEquals(datagram, buffer.asSlice(0, datagram.length).toArray(ValueLayout.JAVA_BYTE));
            assertEquals(-1, claimant.receive(buffer, 0, 8192), "not the port's claimant");
            assertEquals(0, server.shard(0).counters().value("shard.tx.reassembled_handed_over"));
        }
    }
}
