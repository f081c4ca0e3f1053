package dev.tern.stack;

import dev.tern.stack.sim.Simulation;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link TcpConnection#releaseIdleBuffers}: an idle connection gives its rings back (the stack's attached bytes fall
 * by both rings), refuses while it has unread or unacknowledged bytes, and gets its rings back when data arrives or
 * the application writes, with nothing lost either way.
 */
class IdleBuffersTest {
    private static final long SECOND = 1_000_000_000L;

    private static byte[] random(long seed, int length) {
        final byte[] bytes = new byte[length];
        new SplittableRandom(seed).nextBytes(bytes);
        return bytes;
    }

    private static TcpConnection[] connect(Simulation sim, NetStack a, TcpListener listener) throws Exception {
        return ZeroCopyReceiveTest.connect(sim, a, listener);
    }

    /** Sends {@code data} from {@code from} and reads it all at {@code to}. */
    private static byte[] move(Simulation sim, TcpConnection from, TcpConnection to, byte[] data) throws Exception {
        final MemorySegment in = MemorySegment.ofArray(data);
        final byte[] out = new byte[data.length];
        final MemorySegment outSegment = MemorySegment.ofArray(out);
        final int[] done = {0, 0};
        assertTrue(sim.runUntil(() -> {
            try {
                if (done[0] < data.length) {
                    done[0] += from.write(in, done[0], data.length - done[0]);
                }
                int n;
                while (done[1] < data.length && (n = to.read(outSegment, done[1], data.length - done[1])) > 0) {
                    done[1] += n;
                }
            } catch (TernSocketException e) {
                throw new AssertionError(e);
            }
            return done[1] == data.length;
        }, 30 * SECOND));
        return out;
    }

    @Test
    void anIdleConnectionGivesItsRingsBackAndGetsThemAgainFromArrivingDataOrAWrite() throws Exception {
        try (Simulation sim = new Simulation()) {
            final NetStack a = sim.addStack("a", "198.18.0.1/24");
            final NetStack b = sim.addStack("b", "198.18.0.2/24");
            final TcpListener listener = b.listen(7, 4);
            final TcpConnection[] pair = connect(sim, a, listener);
            final TcpConnection client = pair[0];
            final TcpConnection server = pair[1];
            final byte[] first = random(1, 100_000);
            assertArrayEquals(first, move(sim, client, server, first));
            sim.runFor(SECOND);
            final long busy = b.counters().value("tcp.memory.attached_bytes");
            assertTrue(busy > 0);

            assertTrue(server.releaseIdleBuffers());
            assertFalse(server.holdsBuffers());
            assertFalse(server.releaseIdleBuffers(), "nothing left to release");
            assertEquals(0, b.counters().value("tcp.memory.attached_bytes"));
            assertEquals(1, b.counters().value("tcp.memory.rings_released_idle"));
            assertEquals(0, server.available());
            assertEquals(0, server.unsent());
            assertTrue(server.writableBytes() > 0, "a write would find room");
            assertTrue((server.readyOps() & SelectableSocket.WRITE) != 0);

            // Data arriving brings the rings back; it is read intact.
            final byte[] second = random(2, 200_000);
            assertArrayEquals(second, move(sim, client, server, second));
            assertTrue(server.holdsBuffers());

            // Released again; this time the application writes first.
            sim.runFor(SECOND);
            assertTrue(server.releaseIdleBuffers());
            final byte[] reply = random(3, 50_000);
            assertArrayEquals(reply, move(sim, server, client, reply));
            assertTrue(server.holdsBuffers());
            assertEquals(2, b.counters().value("tcp.memory.rings_released_idle"));
        }
    }

    @Test
    void aConnectionWithUnreadOrUnacknowledgedBytesKeepsItsRings() throws Exception {
        try (Simulation sim = new Simulation()) {
            final NetStack a = sim.addStack("a", "198.18.0.1/24");
            final NetStack b = sim.addStack("b", "198.18.0.2/24");
            final TcpListener listener = b.listen(7, 4);
            final TcpConnection[] pair = connect(sim, a, listener);
            final byte[] data = random(4, 1000);
            assertEquals(data.length, pair[0].write(MemorySegment.ofArray(data), 0, data.length));
            assertTrue(sim.runUntil(() -> pair[1].available() == data.length, 5 * SECOND));
            assertFalse(pair[1].releaseIdleBuffers(), "unread bytes");
            assertEquals(data.length, pair[1].read(MemorySegment.ofArray(new byte[2000]), 0, 2000));
            // Written and not yet acknowledged: the step that sends it has not run.
            assertEquals(data.length, pair[1].write(MemorySegment.ofArray(data), 0, data.length));
            assertTrue(pair[1].unsent() > 0);
            assertFalse(pair[1].releaseIdleBuffers(), "unacknowledged bytes");
            sim.runFor(SECOND);
            assertTrue(pair[1].releaseIdleBuffers());
        }
    }

    /**
     * An owner letting many connections go at once ({@link TcpConnection#letGoIfIdle}, then one
     * {@link TcpConnection#releaseLetGo}, as the NIO provider's idle sweep does): a connection written to, or sent
     * data, between the two keeps its rings, and nothing is lost.
     */
    @Test
    void connectionsLetGoTogetherGoBackInOneReleaseUnlessTheyTookTheirRingsBackMeanwhile() throws Exception {
        try (Simulation sim = new Simulation()) {
            final NetStack a = sim.addStack("a", "198.18.0.1/24");
            final NetStack b = sim.addStack("b", "198.18.0.2/24");
            final TcpListener listener = b.listen(7, 8);
            final List<TcpConnection[]> pairs = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                pairs.add(connect(sim, a, listener));
                final byte[] hello = random(10 + i, 1000);
                assertArrayEquals(hello, move(sim, pairs.get(i)[0], pairs.get(i)[1], hello));
            }
            sim.runFor(SECOND);
            for (TcpConnection[] pair : pairs) {
                assertTrue(pair[1].letGoIfIdle());
                assertFalse(pair[1].holdsBuffers());
                assertFalse(pair[1].letGoIfIdle(), "already let go");
            }
            // Between letting go and the release: the second connection's owner writes, the third receives.
            final byte[] reply = random(20, 30_000);
            assertEquals(reply.length, pairs.get(1)[1].write(MemorySegment.ofArray(reply), 0, reply.length));
            final byte[] request = random(21, 30_000);
            assertEquals(request.length, pairs.get(2)[0].write(MemorySegment.ofArray(request), 0, request.length));
            assertTrue(sim.runUntil(() -> pairs.get(2)[1].available() == request.length, 5 * SECOND));

            final List<TcpConnection> letGo = new ArrayList<>();
            for (TcpConnection[] pair : pairs) {
                letGo.add(pair[1]);
            }
            assertEquals(2, TcpConnection.releaseLetGo(letGo), "the first and the fourth");
            assertFalse(pairs.get(0)[1].holdsBuffers());
            assertTrue(pairs.get(1)[1].holdsBuffers());
            assertTrue(pairs.get(2)[1].holdsBuffers());
            assertFalse(pairs.get(3)[1].holdsBuffers());
            assertEquals(2, b.counters().value("tcp.memory.rings_released_idle"));

            final byte[] got = new byte[reply.length];
            final MemorySegment into = MemorySegment.ofArray(got);
            final int[] read = {0};
            assertTrue(sim.runUntil(() -> {
                try {
                    int n;
                    while ((n = pairs.get(1)[0].read(into, read[0], got.length - read[0])) > 0) {
                        read[0] += n;
                    }
                } catch (TernSocketException e) {
                    throw new AssertionError(e);
                }
                return read[0] == got.length;
            }, 5 * SECOND));
            assertArrayEquals(reply, got, "the write made between letting go and the release arrived intact");
            final byte[] received = new byte[request.length];
            assertEquals(request.length, pairs.get(2)[1].read(MemorySegment.ofArray(received), 0, received.length));
            assertArrayEquals(request, received, "the data that arrived meanwhile is read intact");
            // The released ones still work.
            final byte[] again = random(22, 5000);
            assertArrayEquals(again, move(sim, pairs.get(3)[0], pairs.get(3)[1], again));
        }
    }

    /** A server holding many idle connections: each one's rings released, the stack's attached bytes are nothing. */
    /**
     * A connection whose receive handler takes its data lets its rings go from the stack's thread (here the test's:
     * nothing else drives the simulation), never from inside the handler; the next data brings them back and reaches
     * the handler whole.
     */
    @Test
    void aConnectionWithAReceiveHandlerLetsGoOutsideTheHandlerOnly() throws Exception {
        try (Simulation sim = new Simulation()) {
            final NetStack a = sim.addStack("a", "198.18.0.1/24");
            final NetStack b = sim.addStack("b", "198.18.0.2/24");
            final TcpConnection[] pair = connect(sim, a, b.listen(7, 4));
            final TcpConnection client = pair[0];
            final TcpConnection server = pair[1];
            final java.io.ByteArrayOutputStream taken = new java.io.ByteArrayOutputStream();
            final boolean[] releasedInside = {false};
            final boolean[] holdNext = {false};
            final List<Long> holds = new ArrayList<>();
            server.receiveHandler((connection, data, offset, length) -> {
                releasedInside[0] |= connection.releaseIdleBuffers();
                taken.writeBytes(data.asSlice(offset, length).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE));
                if (holdNext[0]) {
                    holds.add(connection.holdReceived());
                }
                return length;
            });
            final byte[] first = random(7, 50_000);
            final byte[] second = random(8, 50_000);
            assertTrue(move(sim, client, first, taken, first.length));
            sim.runFor(SECOND);
            assertFalse(releasedInside[0], "let go from inside the handler");
            assertTrue(server.releaseIdleBuffers());
            assertEquals(0, b.counters().value("tcp.memory.attached_bytes"));
            assertTrue(move(sim, client, second, taken, first.length + second.length));
            assertFalse(releasedInside[0], "let go from inside the handler");
            final byte[] all = taken.toByteArray();
            assertArrayEquals(first, Arrays.copyOfRange(all, 0, first.length));
            assertArrayEquals(second, Arrays.copyOfRange(all, first.length, all.length));
            sim.runFor(SECOND);
            assertTrue(server.releaseIdleBuffers(), "idle again");
            assertEquals(2, b.counters().value("tcp.memory.rings_released_idle"));

            // Frames the handler holds keep the connection busy until they are released.
            holdNext[0] = true;
            final byte[] third = random(9, 1_000);
            assertTrue(move(sim, client, third, taken, first.length + second.length + third.length));
            assertTrue(!holds.isEmpty() && holds.stream().allMatch(hold -> hold >= 0), "held: " + holds);
            sim.runFor(SECOND);
            assertFalse(server.releaseIdleBuffers(), "a held frame is in use");
            holds.forEach(hold -> assertTrue(b.releaseHeld(hold)));
            sim.runFor(SECOND);     // the stack takes the releases back at its next turn
            assertTrue(server.releaseIdleBuffers(), "idle once the frames are back");
        }
    }

    /** Writes {@code data} from {@code from} until {@code taken} holds {@code total} bytes; whether it did in time. */
    private static boolean move(Simulation sim, TcpConnection from, byte[] data, java.io.ByteArrayOutputStream taken,
                                int total) {
        final MemorySegment in = MemorySegment.ofArray(data);
        final int[] written = {0};
        return sim.runUntil(() -> {
            try {
                if (written[0] < data.length) {
                    written[0] += from.write(in, written[0], data.length - written[0]);
                }
            } catch (TernSocketException e) {
                throw new AssertionError(e);
            }
            return taken.size() == total;
        }, 30 * SECOND);
    }

    @Test
    void aThousandIdleConnectionsHoldNoRings() throws Exception {
        try (Simulation sim = new Simulation()) {
            final NetStack a = sim.addStack("a", "198.18.0.1/24");
            final NetStack b = sim.addStack("b", "198.18.0.2/24");
            final TcpListener listener = b.listen(7, 1024);
            final List<TcpConnection[]> pairs = new ArrayList<>();
            for (int i = 0; i < 1000; i++) {
                pairs.add(connect(sim, a, listener));
            }
            final byte[] hello = "hello".getBytes();
            for (TcpConnection[] pair : pairs) {
                assertArrayEquals(hello, move(sim, pair[0], pair[1], hello));
            }
            sim.runFor(SECOND);
            assertTrue(b.counters().value("tcp.memory.attached_bytes") > 0);
            int released = 0;
            for (TcpConnection[] pair : pairs) {
                released += pair[1].releaseIdleBuffers() ? 1 : 0;
            }
            assertEquals(1000, released);
            assertEquals(0, b.counters().value("tcp.memory.attached_bytes"));
            // Each still works.
            final byte[] again = Arrays.copyOf(hello, 3);
            assertArrayEquals(again, move(sim, pairs.get(500)[0], pairs.get(500)[1], again));
        }
    }
}
