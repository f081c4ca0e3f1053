package dev.tern.stack;

import dev.tern.core.io.SocketError;
import dev.tern.core.net.Ipv4Address;
import dev.tern.ethernet.memory.MemoryPipe;
import dev.tern.ethernet.memory.MemoryWire;
import dev.tern.stack.sim.Simulation;
import dev.tern.stack.testing.SimulatedSockets;
import org.agrona.concurrent.BusySpinIdleStrategy;
import org.junit.jupiter.api.Test;

import java.io.InputStream;
import java.io.OutputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The public TCP API (connect, listen, accept, read, write, close) on the memory wire and across threads. */
class TcpSocketTest {
    private static final long SECOND = 1_000_000_000L;
    private static final int B = Ipv4Address.parse("198.18.0.2");

    private final MemorySegment buffer = Arena.ofAuto().allocate(1 << 16);

    private TcpConnection accepted(Simulation sim, TcpListener listener) {
        return SimulatedSockets.accepted(sim, listener);
    }

    private byte[] readAll(Simulation sim, TcpConnection connection, int expected) throws TernSocketException {
        return SimulatedSockets.readAll(sim, connection, expected, buffer, 60 * SECOND);
    }

    @Test
    void aClientConnectsSendsAndGetsItsBytesEchoedThenBothClose() throws Exception {
        try (Simulation sim = new Simulation()) {
            final NetStack a = sim.addStack("a", "198.18.0.1/24");
            final NetStack b = sim.addStack("b", "198.18.0.2/24");
            final TcpListener listener = b.listen(7, 16);
            final TcpConnection client = a.connect(B, 7);
            assertTrue(sim.runUntil(client::isConnected, 5 * SECOND));
            final TcpConnection server = accepted(sim, listener);
            final byte[] hello = "hello over tern tcp".getBytes();
            assertEquals(hello.length, client.write(MemorySegment.ofArray(hello), 0, hello.length));
            final byte[] got = readAll(sim, server, hello.length);
            assertArrayEquals(hello, got);
            server.write(MemorySegment.ofArray(got), 0, got.length);
            assertArrayEquals(hello, readAll(sim, client, hello.length));
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
            assertEquals(1, a.tcp().timeWaitCount(), "the side that closed first waits in TIME-WAIT");
            listener.close();
        }
    }

    @Test
    void aHalfClosedConnectionStillCarriesDataTheOtherWay() throws Exception {
        try (Simulation sim = new Simulation()) {
            final NetStack a = sim.addStack("a", "198.18.0.1/24");
            final NetStack b = sim.addStack("b", "198.18.0.2/24");
            final TcpListener listener = b.listen(9, 4);
            final TcpConnection client = a.connect(B, 9);
            sim.runUntil(client::isConnected, 5 * SECOND);
            final TcpConnection server = accepted(sim, listener);
            client.write(MemorySegment.ofArray(new byte[] {1, 2, 3}), 0, 3);
            client.shutdownOutput();
            assertThrows(TernSocketException.class, () -> client.write(MemorySegment.ofArray(new byte[1]), 0, 1));
            assertArrayEquals(new byte[] {1, 2, 3}, readAll(sim, server, 3));
            sim.runFor(SECOND / 10);
            assertEquals(-1, server.read(buffer, 0, 10), "end of stream after the client's FIN");
            final byte[] answer = new byte[100_000];
            new SplittableRandom(1).nextBytes(answer);
            int written = 0;
            while (written < answer.length) {
                written += server.write(MemorySegment.ofArray(answer), written, answer.length - written);
                sim.step();
            }
            server.shutdownOutput();
            assertArrayEquals(answer, readAll(sim, client, answer.length));
            sim.runFor(SECOND / 10);
            assertEquals(-1, client.read(buffer, 0, 10));
        }
    }

    /**
     * Found by the kernel interop suite: a blocking write in CLOSE-WAIT with a full send ring spun forever, because
     * the peer's FIN made HANGUP ready for good and the wait returned at once without reaching its deadline.
     */
    @Test
    void aBlockingWriteAfterThePeersFinWaitsForRoomAndReturnsAtItsTimeout() throws Exception {
        try (Simulation sim = new Simulation()) {
            final NetStack a = sim.addStack("a", "198.18.0.1/24");
            final NetStack b = sim.addStack("b", "198.18.0.2/24");
            final TcpListener listener = b.listen(9, 4);
            final TcpConnection client = a.connect(B, 9);
            assertTrue(sim.runUntil(client::isConnected, 5 * SECOND));
            final TcpConnection server = accepted(sim, listener);
            server.shutdownOutput();
            assertTrue(sim.runUntil(() -> {
                try {
                    return client.read(buffer, 0, 10) < 0;
                } catch (TernSocketException e) {
                    throw new AssertionError(e);
                }
            }, 5 * SECOND), "the client sees the server's FIN");
            assertEquals(SelectableSocket.READ | SelectableSocket.WRITE, client.readyOps(),
                "CLOSE-WAIT: the end of the stream to read, room to write, no hang-up");

            // Nobody polls b from here on, so nothing is acknowledged and the send ring fills and stays full.
            final byte[] data = new byte[client.writableBytes() + (1 << 20)];
            final int went = assertTimeoutPreemptively(java.time.Duration.ofSeconds(10),
                () -> client.write(MemorySegment.ofArray(data), 0, data.length, SECOND / 5));
            assertTrue(went > 0 && went < data.length, "what fit went in, then the timeout: " + went);
            assertEquals(0, client.writableBytes());

            client.close();
            sim.runFor(SECOND);
            assertEquals(0, client.readyOps(), "closed: nothing to report");
            assertEquals(SelectableSocket.READ | SelectableSocket.HANGUP,
                server.readyOps() & (SelectableSocket.READ | SelectableSocket.HANGUP),
                "both directions done: the end of the stream and a hang-up");
        }
    }

    @Test
    void theLinuxSocketOptionsReachTheConnection() throws Exception {
        try (Simulation sim = new Simulation()) {
            final NetStack a = sim.addStack("a", "198.18.0.1/24");
            final NetStack b = sim.addStack("b", "198.18.0.2/24");
            final TcpListener listener = b.listen(7, 16);
            final TcpConnection client = a.connect(B, 7, 0, dev.tern.tcp.TcpOptions.DEFAULT.withMaxSegment(1000));
            assertTrue(sim.runUntil(client::isConnected, 5 * SECOND));
            final TcpConnection server = accepted(sim, listener);
            // TCP_MAXSEG: the client offered 1000, which bounds both sides (less the timestamp option, Linux's value).
            assertEquals(988, client.maxSegment());
            assertEquals(988, server.maxSegment());
            client.maxSegment(500);
            assertEquals(488, client.maxSegment());
            assertThrows(TernSocketException.class, () -> client.maxSegment(87));
            client.userTimeout(3000);
            assertEquals(3000, client.info().userTimeoutMs());
            assertThrows(TernSocketException.class, () -> client.userTimeout(-1));
            client.notsentLowat(1);
            assertEquals(0, client.notsentBytes());
        }
    }

    @Test
    void connectingToAClosedPortIsRefused() throws Exception {
        try (Simulation sim = new Simulation()) {
            final NetStack a = sim.addStack("a", "198.18.0.1/24");
            sim.addStack("b", "198.18.0.2/24");
            final TcpConnection client = a.connect(B, 4444);
            assertTrue(sim.runUntil(client::isEnded, 5 * SECOND));
            assertEquals(SocketError.CONNECTION_REFUSED, client.error());
            assertThrows(TernSocketException.ConnectionRefusedException.class, () -> client.read(buffer, 0, 10));
            client.close();
        }
    }

    @Test
    void listeningTwiceOnAPortIsAnAddressInUseError() throws Exception {
        try (Simulation sim = new Simulation()) {
            final NetStack b = sim.addStack("b", "198.18.0.2/24");
            b.listen(80, 8);
            assertThrows(TernSocketException.AddressInUseException.class, () -> b.listen(80, 8));
        }
    }

    /** Bytes arrive exactly, in order, over a wire that loses, reorders and duplicates (a shorter demo transfer). */
    @Test
    void aTransferSurvivesLossReorderingAndDuplication() throws Exception {
        try (Simulation sim = new Simulation(MemoryWire.builder().seed(42).loss(0.02).reordering(0.02, 300_000)
            .duplication(0.01).delay(50_000, 10_000).bandwidth(10_000_000_000L, 4 << 20))) {
            final NetStack a = sim.addStack("a", "198.18.0.1/24");
            final NetStack b = sim.addStack("b", "198.18.0.2/24");
            final TcpListener listener = b.listen(5001, 4);
            final TcpConnection client = a.connect(B, 5001);
            assertTrue(sim.runUntil(client::isConnected, 30 * SECOND));
            final TcpConnection server = accepted(sim, listener);
            final byte[] data = new byte[4 << 20];
            new SplittableRandom(7).nextBytes(data);
            SimulatedSockets.transfer(sim, client, server, data, buffer);
            assertTrue(a.counters().value("tcp.tx.retransmits") > 0, "2% loss must have cost retransmissions");
        }
    }

    @Test
    void aSelectorReportsAcceptableListenersAndReadableConnections() throws Exception {
        try (Simulation sim = new Simulation()) {
            final NetStack a = sim.addStack("a", "198.18.0.1/24");
            final NetStack b = sim.addStack("b", "198.18.0.2/24");
            final Selector selector = new Selector(b);
            final TcpListener listener = b.listen(7, 4);
            selector.register(listener, SelectableSocket.READ, "listener");
            final List<String> ready = new ArrayList<>();
            final TcpConnection client = a.connect(B, 7);
            sim.runUntil(client::isConnected, 5 * SECOND);
            sim.runFor(SECOND / 100);
            selector.selectNow((socket, ops, attachment) -> ready.add((String) attachment));
            assertEquals(List.of("listener"), ready);
            final TcpConnection server = listener.accept();
            assertNotNull(server);
            selector.register(server, SelectableSocket.READ, "connection");
            ready.clear();
            selector.selectNow((socket, ops, attachment) -> ready.add((String) attachment));
            assertEquals(List.of(), ready, "no data yet, nothing else waiting");
            client.write(MemorySegment.ofArray(new byte[] {42}), 0, 1);
            sim.runFor(SECOND / 10);
            selector.selectNow((socket, ops, attachment) -> ready.add((String) attachment));
            assertEquals(List.of("connection"), ready);
        }
    }

    /** Two stacks on their own StackRunner threads; application threads use blocking streams. */
    @Test
    void blockingStreamsMoveTenMegabytesAcrossThreadsIntact() throws Exception {
        try (MemoryPipe pipe = MemoryPipe.create(0x0200_0000_0001L, 0x0200_0000_0002L, 1500, 1 << 22, true)) {
            final NetStack client = NetStack.builder().name("client").link(pipe.first()).address("198.18.0.1/24")
                .countersInMemory().build();
            final NetStack server = NetStack.builder().name("server").link(pipe.second()).address("198.18.0.2/24")
                .countersInMemory().build();
            try (StackRunner clientRunner = StackRunner.start(client, new BusySpinIdleStrategy());
                 StackRunner serverRunner = StackRunner.start(server, new BusySpinIdleStrategy())) {
                final TcpListener listener = server.listen(5001, 4);
                final byte[] data = new byte[10 << 20];
                new SplittableRandom(3).nextBytes(data);
                final CompletableFuture<byte[]> digest = CompletableFuture.supplyAsync(() -> {
                    try (TcpConnection connection = listener.accept(10 * SECOND)) {
                        final MessageDigest sha = MessageDigest.getInstance("SHA-256");
                        final InputStream in = connection.inputStream();
                        final byte[] chunk = new byte[32768];
                        int n;
                        while ((n = in.read(chunk)) > 0) {
                            sha.update(chunk, 0, n);
                        }
                        return sha.digest();
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                });
                try (TcpConnection connection = client.connect(B, 5001)) {
                    connection.awaitConnected(5 * SECOND);
                    try (OutputStream out = connection.outputStream()) {
                        out.write(data);
                    }
                    assertArrayEquals(MessageDigest.getInstance("SHA-256").digest(data), digest.get(60, TimeUnit.SECONDS));
                }
            }
        }
    }
}
