package dev.tern.tcp;

import dev.tern.core.io.ByteRing;
import dev.tern.ethernet.memory.MemoryWire;
import dev.tern.tcp.testing.TcpNetwork;
import dev.tern.tcp.testing.TestStack;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.management.ManagementFactory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Connection scale on one stack (the goal: 100,000 connections on one stack): many concurrent established connections between two stacks on the
 * memory wire, what an idle one costs on and off the heap, data still flowing on a sample of them, and the sample's
 * rings given back once they idle again.
 *
 * <p>100,000 connections, the number of the issue, in the normal build (about 17 s here);
 * {@code -Dtern.scale.connections=N} runs another number. The client connects from one address to two
 * listening ports with the ephemeral range widened to 1024-65535: one 4-tuple space of 64,512 ports per listener.
 * Connections are opened in waves spread over virtual time (as a real client would), since a wave opened at one
 * instant puts every SYN timer in one spoke of the timer wheel, which grows all spokes to that size.
 *
 * <p>Idle means established, accepted by the owner through the handle API and never given data: such a connection
 * holds its control-block row and nothing else (rings come on demand). Heap per connection is measured as the
 * growth of the heap after GC between the first half of the connections and all of them (the same waves, so the
 * timer wheel and its payload map have reached their high-water marks already): it is the memory each further
 * connection costs, not the fixed per-slot arrays sized by maxConnections.
 */
class ConnectionScaleTest {
    private static final long SECOND = 1_000_000_000L;
    private static final long MS = 1_000_000L;
    private static final int CONNECTIONS = Integer.getInteger("tern.scale.connections", 100_000);
    private static final int WAVE = 500;
    private static final int SAMPLE_EVERY = 100;
    private static final int MESSAGE = 100;
    private static final int BUFFER = 4096;
    /** The goal: at most 4 KiB off-heap beyond the control block per idle connection. */
    private static final long OFF_HEAP_BEYOND_ROW_BOUND = 4096;
    /** The goal is 0 B; the bound leaves room for the noise of a heap measured after GC. */
    private static final long HEAP_PER_CONNECTION_BOUND = 64;

    @Test
    void manyConnectionsOpenStayIdleForAlmostNothingAndCarryDataOnASample() {
        final TcpConfig config = TcpConfig.builder().maxConnections(CONNECTIONS + 1024).bufferSizes(BUFFER, BUFFER)
            .ephemeralPorts(1024, 65535).build();
        try (TcpNetwork net = new TcpNetwork(MemoryWire.builder().frames(16384));
             Arena arena = Arena.ofConfined()) {
            final TestStack server = net.add("server", "198.18.0.1/24", config);
            final TestStack client = net.add("client", "198.18.0.2/24", config);
            final MemorySegment scratch = arena.allocate(BUFFER);
            final int[] accepted = new int[CONNECTIONS];
            final int[] acceptedCount = {0};
            final int[] echoed = {0};
            final TcpEvents acceptAndEcho = new TcpEvents() {
                @Override
                public void acceptable(int listener) {
                    int c;
                    while ((c = server.tcp.accept(listener)) >= 0) {
                        accepted[acceptedCount[0]++] = c; // accepted, and no ring asked for
                    }
                }

                @Override
                public void readable(int c) {
                    final int n = server.tcp.receiveBuffer(c).read(scratch, 0, BUFFER);
                    server.tcp.consumed(c, net.now());
                    echoed[0] += server.tcp.sendBuffer(c).write(scratch, 0, n);
                    server.tcp.sendable(c, net.now());
                }
            };
            assertTrue(server.tcp.listen(7, 4096, acceptAndEcho) >= 0);
            assertTrue(server.tcp.listen(8, 4096, acceptAndEcho) >= 0);
            final int[] handles = new int[CONNECTIONS];

            final long heapEmpty = heapAfterGc();
            long wallNs = open(net, server, client, handles, acceptedCount, 0, CONNECTIONS / 2);
            final long heapHalf = heapAfterGc();
            wallNs += open(net, server, client, handles, acceptedCount, CONNECTIONS / 2, CONNECTIONS);
            final long heapAll = heapAfterGc();

            assertEquals(CONNECTIONS, server.tcp.connectionCount());
            assertEquals(CONNECTIONS, client.tcp.connectionCount());
            for (int i = 0; i < CONNECTIONS; i++) {
                assertEquals(TcpState.ESTABLISHED, client.tcp.state(handles[i]), "client connection " + i);
                assertEquals(TcpState.ESTABLISHED, server.tcp.state(accepted[i]), "server connection " + i);
            }
            final TcpMemory idle = server.tcp.memory();
            final long heapPerConnection = (heapAll - heapHalf) / (2L * (CONNECTIONS - CONNECTIONS / 2));
            final long offHeapBeyondRow = (idle.tableResident() + idle.ringsResident()) / CONNECTIONS
                - TcpControlBlocks.ROW_BYTES;
            System.out.printf("%d connections established in %d ms of wall time (%d per second, both stacks on one "
                    + "thread, virtual time); idle: rings attached %d B, table resident %d KiB (%d B per connection, "
                    + "row %d B), rings resident %d B; heap after GC %d MiB with the stacks made, %d MiB at half, %d MiB "
                    + "at all: %d B per further connection (both stacks)%n",
                CONNECTIONS, wallNs / 1_000_000, CONNECTIONS * 1_000_000_000L / wallNs, idle.ringsAttached(),
                idle.tableResident() >> 10, idle.tableResident() / CONNECTIONS, TcpControlBlocks.ROW_BYTES,
                idle.ringsResident(), heapEmpty >> 20, heapHalf >> 20, heapAll >> 20, heapPerConnection);
            assertEquals(0, idle.ringsAttached(), "an idle connection holds no ring");
            assertEquals(0, server.counter("tcp.memory.rings_attached"));
            assertTrue(offHeapBeyondRow <= OFF_HEAP_BEYOND_ROW_BOUND, "off-heap beyond the row: " + offHeapBeyondRow);
            assertTrue(heapPerConnection <= HEAP_PER_CONNECTION_BOUND, "heap per connection: " + heapPerConnection);

            // Data flows on a sample: each sampled client sends a message, the server echoes it.
            int sampled = 0;
            for (int i = 0; i < CONNECTIONS; i += SAMPLE_EVERY) {
                for (int b = 0; b < MESSAGE; b++) {
                    scratch.set(ValueLayout.JAVA_BYTE, b, (byte) (i + b));
                }
                assertEquals(MESSAGE, client.tcp.sendBuffer(handles[i]).write(scratch, 0, MESSAGE));
                client.tcp.sendable(handles[i], net.now());
                sampled++;
            }
            final int expected = sampled * MESSAGE;
            assertTrue(net.runUntil(() -> echoed[0] == expected, 10 * SECOND), "echoed " + echoed[0]);
            net.runFor(SECOND);
            for (int i = 0; i < CONNECTIONS; i += SAMPLE_EVERY) {
                final ByteRing in = client.tcp.receiveBuffer(handles[i]);
                assertEquals(MESSAGE, in.read(scratch, 0, BUFFER), "echo on connection " + i);
                for (int b = 0; b < MESSAGE; b++) {
                    assertEquals((byte) (i + b), scratch.get(ValueLayout.JAVA_BYTE, b), "byte " + b + " of " + i);
                }
            }
            final TcpMemory used = server.tcp.memory();
            System.out.printf("after %d sampled connections echoed %d bytes: rings attached %d KiB, rings resident "
                    + "%d KiB (%d B per sampled connection)%n", sampled, MESSAGE, used.ringsAttached() >> 10,
                used.ringsResident() >> 10, used.ringsResident() / sampled);
            assertEquals(sampled * (2L * BUFFER + TcpMemory.recordBytes(BUFFER)), used.ringsAttached());

            // Idle again, the owners give the rings back: the connections hold their rows only, and a ring asked for
            // later comes back empty and carries data.
            for (int i = 0; i < CONNECTIONS; i += SAMPLE_EVERY) {
                assertTrue(client.tcp.releaseIdleBuffers(handles[i]), "client " + i);
            }
            for (int i = 0; i < acceptedCount[0]; i++) {
                server.tcp.releaseIdleBuffers(accepted[i]);
            }
            assertEquals(0, server.tcp.memory().ringsAttached());
            assertEquals(0, client.tcp.memory().ringsAttached());
            assertEquals(sampled, server.counter("tcp.memory.rings_released_idle"));
            final int again = handles[SAMPLE_EVERY];
            final long echoedBefore = echoed[0];
            assertEquals(MESSAGE, client.tcp.sendBuffer(again).write(scratch, 0, MESSAGE));
            client.tcp.sendable(again, net.now());
            assertTrue(net.runUntil(() -> echoed[0] == echoedBefore + MESSAGE, 10 * SECOND), "echoed again");
            net.runFor(SECOND);
            assertEquals(MESSAGE, client.tcp.receiveBuffer(again).available());
            assertEquals(CONNECTIONS, server.tcp.connectionCount(), "none closed");
            assertEquals(0, server.counter("tcp.conn.resets_received") + client.counter("tcp.conn.resets_received"));
            assertEquals(0, server.counter("tcp.listen.drops"));
        }
    }

    /**
     * Opens connections [from, to) in waves a millisecond of virtual time apart, until all are accepted; returns the
     * wall time that took (the idle time after it not included).
     */
    private static long open(TcpNetwork net, TestStack server, TestStack client, int[] handles, int[] acceptedCount,
                             int from, int to) {
        final long start = System.nanoTime();
        for (int first = from; first < to; first += WAVE) {
            final int last = Math.min(to, first + WAVE);
            for (int i = first; i < last; i++) {
                handles[i] = client.tcp.connect(server.address(), 7 + (i & 1), 0, TcpOptions.DEFAULT, TcpEvents.NONE,
                    net.now());
                assertTrue(handles[i] >= 0, "connect " + i + ": " + TcpError.describe(handles[i]));
            }
            net.runFor(MS);
        }
        assertTrue(net.runUntil(() -> acceptedCount[0] == to && client.counter("tcp.conn.established") == to,
            30 * SECOND), "established " + client.counter("tcp.conn.established") + ", accepted " + acceptedCount[0]);
        final long wallNs = System.nanoTime() - start;
        // Let the handshakes' timers (left to fire and find nothing) drain, as they would on an idle server.
        net.runFor(2 * SECOND);
        return wallNs;
    }

    private static long heapAfterGc() {
        for (int i = 0; i < 3; i++) {
            System.gc();
        }
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }
}
