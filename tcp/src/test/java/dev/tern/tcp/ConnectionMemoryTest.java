package dev.tern.tcp;

import dev.tern.core.io.ByteRing;
import dev.tern.ethernet.memory.MemoryWire;
import dev.tern.tcp.testing.EchoServer;
import dev.tern.tcp.testing.TcpNetwork;
import dev.tern.tcp.testing.TestStack;
import dev.tern.tcp.testing.TcpHarness;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;

import static dev.tern.tcp.testing.Seg.ACK;
import static dev.tern.tcp.testing.Seg.PSH_ACK;
import static dev.tern.tcp.testing.TcpHarness.LOCAL_ISS;
import static dev.tern.tcp.testing.TcpHarness.REMOTE_ISS;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Socket buffer memory follows use (as Linux's tcp_mem does): an idle connection costs the pages it touched, not its buffer sizes;
 * closed connections give their pages back to the system; under memory pressure new connections get smaller
 * buffers, and beyond the limit none opens. Residency is asked of the system ({@code mincore}), not estimated.
 */
class ConnectionMemoryTest {
    private static final long SECOND = 1_000_000_000L;
    private static final int MESSAGE = 100;
    private static final int DEFAULT_BUFFER = 128 * 1024;

    @Test
    void idleConnectionsCostThePagesTheyTouchedAndClosedOnesGiveThemBack() {
        final int connections = 1000;
        final TcpConfig config = TcpConfig.builder().synQueueSize(connections).maxBacklog(connections).build();
        try (TcpNetwork net = new TcpNetwork(MemoryWire.builder().frames(16384));
             Arena arena = Arena.ofConfined()) {
            final TestStack server = net.add("server", "198.18.0.1/24", config);
            final TestStack client = net.add("client", "198.18.0.2/24", config);
            final MemorySegment scratch = arena.allocate(4096);
            final long rssBefore = residentSetBytes();
            assertTrue(server.tcp.listen(7, connections, new EchoServer(server, scratch, net::now)) >= 0);
            final int[] handles = new int[connections];
            for (int i = 0; i < connections; i++) {
                handles[i] = client.tcp.connect(server.address(), 7, 0, TcpOptions.DEFAULT, TcpEvents.NONE, net.now());
                assertTrue(handles[i] >= 0, TcpError.describe(handles[i]));
            }
            assertTrue(net.runUntil(() -> server.tcp.connectionCount() == connections
                && client.counter("tcp.conn.established") == connections, 30 * SECOND));
            for (int h : handles) {
                client.tcp.sendBuffer(h).write(scratch, 0, MESSAGE);
                client.tcp.sendable(h, net.now());
            }
            assertTrue(net.runUntil(() -> {
                for (int h : handles) {
                    if (client.tcp.receiveBuffer(h).available() < MESSAGE) {
                        return false;
                    }
                }
                return true;
            }, 30 * SECOND), "every message echoed");

            final TcpMemory idle = server.tcp.memory();
            final long perConnection = idle.ringsResident() / connections;
            final long rssIdle = residentSetBytes();
            System.out.printf("%d idle connections with %d KiB + %d KiB buffers, one %d-byte exchange each: %d MiB of "
                    + "buffers in use, %d KiB resident (%d bytes per connection); process RSS %d -> %d MiB%n",
                connections, DEFAULT_BUFFER >> 10, DEFAULT_BUFFER >> 10, MESSAGE, idle.ringsInUse() >> 20,
                idle.ringsResident() >> 10, perConnection, rssBefore >> 20, rssIdle >> 20);
            assertEquals(connections * (2L * DEFAULT_BUFFER + TcpMemory.recordBytes(DEFAULT_BUFFER)), idle.ringsInUse());
            // Each ring touched one page, the record of sent segments one entry: about 8 KiB, not 260 KiB.
            assertTrue(perConnection <= 12 * 1024, "resident per idle connection: " + perConnection);

            for (int h : handles) {
                final ByteRing echoed = client.tcp.receiveBuffer(h);
                echoed.read(scratch, 0, echoed.available());
                client.tcp.consumed(h, net.now());
                client.tcp.close(h, net.now());
            }
            assertTrue(net.runUntil(() -> server.tcp.connectionCount() == 0, 120 * SECOND),
                "server connections left: " + server.tcp.connectionCount());
            final TcpMemory closed = server.tcp.memory();
            System.out.printf("after they closed: %d KiB resident of %d MiB mapped, %d MiB handed back to the system; "
                    + "process RSS %d MiB%n", closed.ringsResident() >> 10, closed.ringsAllocated() >> 20,
                server.counter("tcp.memory.returned_bytes") >> 20, residentSetBytes() >> 20);
            assertEquals(0, closed.ringsInUse());
            assertTrue(closed.ringsResident() <= RingPool.WARM_BYTES,
                "resident after close: " + closed.ringsResident() + " bytes");
            assertEquals(0, server.counter("tcp.memory.in_use_bytes"));
        }
    }

    @Test
    void underPressureNewConnectionsGetAQuarterOfTheirBuffersAndBeyondTheLimitNoneOpens() {
        final long full = 2L * DEFAULT_BUFFER + TcpMemory.recordBytes(DEFAULT_BUFFER);
        final int quarter = DEFAULT_BUFFER / 4;
        final long small = 2L * quarter + TcpMemory.recordBytes(quarter);
        // Two connections at full size reach the pressure mark; three more fit under the limit at a quarter.
        final TcpConfig serverConfig = TcpConfig.builder().memoryLimits(2 * full, 2 * full + 3 * small).build();
        try (TcpNetwork net = new TcpNetwork(MemoryWire.builder())) {
            final TestStack server = net.add("server", "198.18.0.1/24", serverConfig);
            final TestStack client = net.add("client", "198.18.0.2/24", TcpConfig.defaults());
            final int listener = server.tcp.listen(7, 16, TcpEvents.NONE);
            assertTrue(listener >= 0);
            final int[] capacities = new int[6];
            for (int i = 0; i < 6; i++) {
                final int h = client.tcp.connect(server.address(), 7, 0, TcpOptions.DEFAULT, TcpEvents.NONE,
                    net.now());
                assertTrue(h >= 0);
                net.runFor(SECOND / 10);
                final int accepted = server.tcp.accept(listener);
                capacities[i] = accepted < 0 ? 0 : server.tcp.receiveBuffer(accepted).capacity();
            }
            assertEquals(DEFAULT_BUFFER, capacities[0]);
            assertEquals(DEFAULT_BUFFER, capacities[1]);
            assertEquals(quarter, capacities[2]);
            assertEquals(quarter, capacities[3]);
            assertEquals(quarter, capacities[4]);
            assertEquals(0, capacities[5], "the sixth SYN is dropped");
            assertEquals(4, server.counter("tcp.memory.pressure_opens"), "three opened small, the fourth refused");
            assertTrue(server.counter("tcp.drop.memory_limit") >= 1);
            assertEquals(2 * full + 3 * small, server.counter("tcp.memory.in_use_bytes"));
        }
    }

    @Test
    void idleConnectionsGiveTheirBudgetBackSoMoreAreLetInAndComeBackBeyondTheLimitWithoutLosingData() {
        final long full = FULL;
        try (TcpNetwork net = new TcpNetwork(MemoryWire.builder());
             Arena arena = Arena.ofConfined()) {
            final TestStack server = serverWithRoomForTwo(net);
            final TestStack client = net.add("client", "198.18.0.2/24", TcpConfig.defaults());
            final MemorySegment scratch = arena.allocate(4096);
            final int listener = server.tcp.listen(7, 16, TcpEvents.NONE);
            assertTrue(listener >= 0);
            final int[] clients = new int[5];
            final int[] servers = new int[5];
            for (int i = 0; i < 2; i++) {
                clients[i] = client.tcp.connect(server.address(), 7, 0, TcpOptions.DEFAULT, TcpEvents.NONE, net.now());
                net.runFor(SECOND / 10);
                servers[i] = server.tcp.accept(listener);
                assertEquals(DEFAULT_BUFFER, server.tcp.receiveBuffer(servers[i]).capacity());
            }
            assertEquals(2 * full, server.counter("tcp.memory.in_use_bytes"));
            assertEquals(1, server.counter("tcp.memory.pressure"));

            // A third is refused while the two hold their buffers.
            clients[2] = connectRefused(net, client, server, listener, 1);

            // The two idle without buffers: the budget is empty, the pressure over, and the third gets in (its
            // retransmitted SYN) with full buffers, then a fourth, which takes the budget to its limit again.
            for (int i = 0; i < 2; i++) {
                assertTrue(server.tcp.releaseIdleBuffers(servers[i]));
                assertFalse(server.tcp.releaseIdleBuffers(servers[i]), "nothing left to give back");
            }
            assertEquals(0, server.counter("tcp.memory.in_use_bytes"));
            assertEquals(0, server.counter("tcp.memory.pressure"));
            assertTrue(net.runUntil(() -> (servers[2] = server.tcp.accept(listener)) >= 0, 5 * SECOND),
                "the third let in after the two went idle");
            clients[3] = client.tcp.connect(server.address(), 7, 0, TcpOptions.DEFAULT, TcpEvents.NONE, net.now());
            net.runFor(SECOND / 10);
            servers[3] = server.tcp.accept(listener);
            for (int i = 2; i < 4; i++) {
                assertEquals(DEFAULT_BUFFER, server.tcp.receiveBuffer(servers[i]).capacity());
            }
            assertEquals(2 * full, server.counter("tcp.memory.in_use_bytes"));

            // Data for the two idle ones: they take their rings back, beyond the limit, and every byte arrives.
            for (int i = 0; i < 4; i++) {
                fill(scratch, i);
                client.tcp.sendBuffer(clients[i]).write(scratch, 0, 4096);
                client.tcp.sendable(clients[i], net.now());
            }
            assertTrue(net.runUntil(() -> {
                for (int i = 0; i < 4; i++) {
                    if (server.tcp.receiveBuffer(servers[i]).available() < 4096) {
                        return false;
                    }
                }
                return true;
            }, 5 * SECOND), "every connection's 4096 bytes arrived");
            for (int i = 0; i < 4; i++) {
                final ByteRing ring = server.tcp.receiveBuffer(servers[i]);
                assertEquals(DEFAULT_BUFFER, ring.capacity(), "back with the buffers it was let in with");
                assertEquals(4096, ring.read(scratch, 0, 4096));
                for (int b = 0; b < 4096; b++) {
                    assertEquals((byte) (i * 31 + b), scratch.get(ValueLayout.JAVA_BYTE, b),
                        "connection " + i + " byte " + b);
                }
            }
            assertEquals(4 * full, server.counter("tcp.memory.in_use_bytes"));
            assertEquals(2, server.counter("tcp.memory.over_limit_attaches"));
            assertEquals(2, server.counter("tcp.memory.rings_released_idle"));

            // Beyond the limit nothing new is let in.
            clients[4] = connectRefused(net, client, server, listener, 2);

            // Closing gives back what each counts, whether it idled or not.
            for (int i = 0; i < 4; i++) {
                server.tcp.abort(servers[i], net.now());
            }
            assertEquals(0, server.counter("tcp.memory.in_use_bytes"));
        }
    }

    /**
     * Three SYNs let in together against a budget with room for two: the third handshake to complete finds the memory
     * taken. Its ACK is dropped and counted, and the connection stays half-open rather than being reset (the client
     * already holds it open); once one of the first two closes, the retransmitted SYN-ACK's answer completes it, and
     * its data arrives whole.
     */
    @Test
    void aHandshakeThatCompletesBeyondTheLimitWaitsHalfOpenInsteadOfBeingReset() {
        final long full = FULL;
        try (TcpNetwork net = new TcpNetwork(MemoryWire.builder());
             Arena arena = Arena.ofConfined()) {
            final TestStack server = serverWithRoomForTwo(net);
            final TestStack client = net.add("client", "198.18.0.2/24", TcpConfig.defaults());
            final int listener = server.tcp.listen(7, 16, TcpEvents.NONE);
            final int[] clients = new int[3];
            for (int i = 0; i < 3; i++) {
                // All three SYNs before any handshake completes: each is let in against an empty budget.
                clients[i] = client.tcp.connect(server.address(), 7, 0, TcpOptions.DEFAULT, TcpEvents.NONE, net.now());
                assertTrue(clients[i] >= 0);
            }
            net.runFor(SECOND / 2);
            final int first = server.tcp.accept(listener);
            final int second = server.tcp.accept(listener);
            assertTrue(first >= 0 && second >= 0);
            assertTrue(server.tcp.accept(listener) < 0, "the third let in beyond the limit");
            assertEquals(1, server.counter("tcp.drop.memory_limit"));
            assertEquals(0, server.counter("tcp.tx.resets"), "the third was reset");
            for (int i = 0; i < 3; i++) {
                assertEquals(TcpState.ESTABLISHED, client.tcp.state(clients[i]), "client " + i);
            }
            assertEquals(2 * full, server.counter("tcp.memory.in_use_bytes"));

            // Data from the waiting client is dropped with its ACK until there is room; then it arrives whole.
            final MemorySegment data = arena.allocate(4096);
            fill(data, 2);
            client.tcp.sendBuffer(clients[2]).write(data, 0, 4096);
            client.tcp.sendable(clients[2], net.now());
            net.runFor(SECOND / 2);
            assertTrue(server.tcp.accept(listener) < 0);
            server.tcp.abort(first, net.now());
            final int[] third = {-1};
            assertTrue(net.runUntil(() -> (third[0] = server.tcp.accept(listener)) >= 0, 10 * SECOND),
                "the third completed once the first closed");
            assertTrue(net.runUntil(() -> server.tcp.receiveBuffer(third[0]).available() == 4096, 10 * SECOND));
            final MemorySegment scratch = arena.allocate(4096);
            assertEquals(4096, server.tcp.receiveBuffer(third[0]).read(scratch, 0, 4096));
            assertEquals(-1, scratch.mismatch(data));
            assertEquals(TcpState.ESTABLISHED, client.tcp.state(clients[2]));
            assertEquals(1, server.counter("tcp.tx.resets"), "the one reset is the abort");
        }
    }

    /** A connection's reservation at the default buffer sizes: both rings and the record. */
    private static final long FULL = 2L * DEFAULT_BUFFER + TcpMemory.recordBytes(DEFAULT_BUFFER);

    /** A server at 198.18.0.1 whose budget has room for two connections at full size, and none at a quarter beside. */
    private static TestStack serverWithRoomForTwo(TcpNetwork net) {
        return net.add("server", "198.18.0.1/24", TcpConfig.builder().memoryLimits(2 * FULL, 2 * FULL).build());
    }

    /** A connection the server does not let in for memory: its SYN is the {@code drops}th dropped for it. */
    private static int connectRefused(TcpNetwork net, TestStack client, TestStack server, int listener, int drops) {
        final int h = client.tcp.connect(server.address(), 7, 0, TcpOptions.DEFAULT, TcpEvents.NONE, net.now());
        net.runFor(SECOND / 10);
        assertTrue(server.tcp.accept(listener) < 0, "let in beyond the limit");
        assertEquals(drops, server.counter("tcp.drop.memory_limit"));
        return h;
    }

    private static void fill(MemorySegment segment, int connection) {
        for (int b = 0; b < 4096; b++) {
            segment.set(ValueLayout.JAVA_BYTE, b, (byte) (connection * 31 + b));
        }
    }

    @Test
    void aConnectBeyondTheLimitFailsWithNoBuffer() {
        final long full = 2L * DEFAULT_BUFFER + TcpMemory.recordBytes(DEFAULT_BUFFER);
        final TcpConfig config = TcpConfig.builder().memoryLimits(full, full).build();
        try (TcpNetwork net = new TcpNetwork(MemoryWire.builder())) {
            final TestStack client = net.add("client", "198.18.0.2/24", config);
            assertTrue(client.tcp.connect(0xc612_0001, 7, 0, TcpOptions.DEFAULT, TcpEvents.NONE, net.now()) >= 0);
            assertEquals(-TcpError.NO_BUFFER,
                client.tcp.connect(0xc612_0001, 8, 0, TcpOptions.DEFAULT, TcpEvents.NONE, net.now()));
            assertEquals(1, client.counter("tcp.drop.memory_limit"));
        }
    }

    @Test
    void idleRingsGoBackOnlyWhenNothingWaitsAndComeBackEmptyForTheNextData() {
        try (TcpHarness h = TcpHarness.established()) {
            assertEquals(0, h.tcp.memory().ringsAttached(), "the handshake attached nothing");
            h.write("ping");
            h.expect(PSH_ACK.seq(LOCAL_ISS + 1).ack(REMOTE_ISS + 1).payload("ping"));
            assertFalse(h.tcp.releaseIdleBuffers(h.conn), "data in flight");
            h.send(ACK.seq(REMOTE_ISS + 1).ack(LOCAL_ISS + 5));
            h.send(PSH_ACK.seq(REMOTE_ISS + 1).ack(LOCAL_ISS + 5).payload("pong"));
            assertFalse(h.tcp.releaseIdleBuffers(h.conn), "data waiting to be read");
            assertArrayEquals("pong".getBytes(), h.read());
            final long reserved = h.counter("tcp.memory.in_use_bytes");
            assertTrue(reserved > 0);
            assertTrue(h.tcp.releaseIdleBuffers(h.conn));
            assertEquals(0, h.tcp.memory().ringsAttached());
            assertEquals(0, h.counter("tcp.memory.in_use_bytes"), "an idle connection counts nothing in the budget");
            assertEquals(1, h.counter("tcp.memory.rings_released_idle"));
            assertFalse(h.tcp.releaseIdleBuffers(h.conn), "none attached");

            h.send(PSH_ACK.seq(REMOTE_ISS + 5).ack(LOCAL_ISS + 5).payload("again"));
            assertArrayEquals("again".getBytes(), h.read());
            h.clearReceived(); // the ACKs of what was read
            h.write("ok");
            h.expect(PSH_ACK.seq(LOCAL_ISS + 5).ack(REMOTE_ISS + 10).payload("ok"));
            assertEquals(2, h.counter("tcp.memory.rings_attached"));
            assertEquals(reserved, h.counter("tcp.memory.in_use_bytes"), "counted again with its rings");
            assertEquals(0, h.counter("tcp.memory.over_limit_attaches"));
        }
    }

    /** The process's resident set (Linux), for the report; 0 where it cannot be read. */
    private static long residentSetBytes() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("VmRSS:")) {
                    return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
                }
            }
        } catch (IOException | NumberFormatException unreadable) {
            return 0;
        }
        return 0;
    }
}
