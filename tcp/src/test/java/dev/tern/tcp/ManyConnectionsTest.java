package dev.tern.tcp;

import dev.tern.core.io.ByteRing;
import dev.tern.ethernet.memory.MemoryWire;
import dev.tern.tcp.testing.EchoServer;
import dev.tern.tcp.testing.TcpNetwork;
import dev.tern.tcp.testing.TestStack;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Ten thousand concurrent connections between two stacks: all open, each echoes a message, all close without an
 * error; and what an idle connection costs in memory, measured on the layer's own accounting.
 */
class ManyConnectionsTest {
    private static final int CONNECTIONS = 10_000;
    private static final int MESSAGE = 100;
    private static final int BUFFER = 4096;
    private static final long SECOND = 1_000_000_000L;
    /** The bound we document for a connection with 4 KiB + 4 KiB buffers: rings, row, lookup share, ring objects. */
    /**
     * Two 4 KiB buffers, the 640-byte row, the 1 KiB record of sent segments (16 entries of 64 bytes: the delivery
     * rate stamps doubled them) and the per-slot shares.
     */
    private static final long IDLE_CONNECTION_BOUND = 2 * BUFFER + 2560;

    @Test
    void tenThousandConnectionsOpenExchangeDataAndCloseCleanly() {
        final TcpConfig config = TcpConfig.builder().bufferSizes(BUFFER, BUFFER).synQueueSize(CONNECTIONS)
            .maxBacklog(CONNECTIONS).build();
        try (TcpNetwork net = new TcpNetwork(MemoryWire.builder().frames(16384))) {
            final TestStack server = net.add("server", "198.18.0.1/24", config);
            final TestStack client = net.add("client", "198.18.0.2/24", config);
            final Arena arena = Arena.ofConfined();
            final MemorySegment scratch = arena.allocate(BUFFER);
            final Set<Integer> clientsDone = new HashSet<>();
            final Map<Integer, Integer> clientReceived = new HashMap<>();
            final int[] clientErrors = {0};

            final EchoServer serverEvents = new EchoServer(server, scratch, net::now);
            final TcpEvents clientEvents = new TcpEvents() {
                @Override
                public void established(int c) {
                    for (int i = 0; i < MESSAGE; i++) {
                        scratch.set(ValueLayout.JAVA_BYTE, i, (byte) (c + i));
                    }
                    client.tcp.sendBuffer(c).write(scratch, 0, MESSAGE);
                    client.tcp.sendable(c, net.now());
                }

                @Override
                public void readable(int c) {
                    final ByteRing in = client.tcp.receiveBuffer(c);
                    final int n = in.read(scratch, 0, BUFFER);
                    for (int i = 0; i < n; i++) {
                        if (scratch.get(ValueLayout.JAVA_BYTE, i) != (byte) (c + clientReceived.getOrDefault(c, 0) + i)) {
                            clientErrors[0]++;
                        }
                    }
                    client.tcp.consumed(c, net.now());
                    final int total = clientReceived.merge(c, n, Integer::sum);
                    if (total == MESSAGE) {
                        clientsDone.add(c);
                    }
                }

                @Override
                public void closed(int c, int error) {
                    if (error != 0) {
                        clientErrors[0]++;
                    }
                }
            };
            assertTrue(server.tcp.listen(7, CONNECTIONS, serverEvents) >= 0);
            // Hold the echo back until every connection is open, to measure them idle.
            final int[] handles = new int[CONNECTIONS];
            final TcpEvents holdBack = new TcpEvents() {
            };
            for (int wave = 0; wave < CONNECTIONS; wave += 1000) {
                for (int i = wave; i < wave + 1000; i++) {
                    handles[i] = client.tcp.connect(server.address(), 7, 0, TcpOptions.DEFAULT, holdBack, net.now());
                    assertTrue(handles[i] >= 0, "connect " + i + ": " + TcpError.describe(handles[i]));
                }
                final int opened = wave + 1000;
                assertTrue(net.runUntil(() -> server.tcp.connectionCount() == opened
                    && client.counter("tcp.conn.established") == opened, 30 * SECOND), "wave " + wave);
            }
            final TcpMemory memory = client.tcp.memory();
            final long perConnection = memory.perConnection(BUFFER, BUFFER, config.maxConnections());
            final long withoutBuffers = perConnection - 2L * BUFFER;
            System.out.printf("%d idle connections: %d KiB of ring memory in use (%d KiB taken from the system), "
                    + "table %d KiB, lookup %d KiB; per idle connection %d bytes (%d without its %d + %d byte buffers)%n",
                memory.connections(), memory.ringsInUse() >> 10, memory.ringsAllocated() >> 10,
                memory.tableBytes() >> 10, memory.lookupBytes() >> 10, perConnection, withoutBuffers, BUFFER, BUFFER);
            assertEquals(CONNECTIONS * (2L * BUFFER + TcpMemory.recordBytes(BUFFER)), memory.ringsInUse());
            assertTrue(perConnection <= IDLE_CONNECTION_BOUND, "idle connection costs " + perConnection);

            // Now every connection exchanges its message and closes.
            for (int h : handles) {
                clientEvents.established(h);
            }
            // The client handles were opened with hold-back events: poll their rings instead.
            final boolean echoed = net.runUntil(() -> {
                for (int h : handles) {
                    final ByteRing in = client.tcp.receiveBuffer(h);
                    if (in != null && in.available() > 0) {
                        clientEvents.readable(h);
                    }
                }
                return clientsDone.size() == CONNECTIONS;
            }, 60 * SECOND);
            assertTrue(echoed, "echoed: " + clientsDone.size());
            for (int h : handles) {
                client.tcp.close(h, net.now());
            }
            assertTrue(net.runUntil(() -> server.tcp.connectionCount() == 0, 120 * SECOND),
                "server connections left: " + server.tcp.connectionCount());
            assertEquals(CONNECTIONS, client.tcp.timeWaitCount(), "the active closer keeps TIME-WAIT");
            final TcpMemory serverMemory = server.tcp.memory();
            System.out.printf("after the burst closed, the server: %d KiB of ring memory resident of %d KiB mapped%n",
                serverMemory.ringsResident() >> 10, serverMemory.ringsAllocated() >> 10);
            // Rings go back page by page beyond the warm pool; records of sent segments smaller than a page (512
            // bytes with a 4 KiB send buffer) share pages and stay with the pool.
            assertTrue(serverMemory.ringsResident() <= RingPool.WARM_BYTES + CONNECTIONS * TcpMemory.recordBytes(BUFFER),
                "the pages went back to the system");
            assertEquals(0, serverEvents.errors + clientErrors[0]);
            assertEquals(0, client.counter("tcp.conn.resets_received") + server.counter("tcp.conn.resets_received"));
            assertEquals(0, client.counter("stack.internal_errors") + server.counter("stack.internal_errors"));
            arena.close();
        }
    }
}
