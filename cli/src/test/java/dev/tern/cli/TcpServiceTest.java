package dev.tern.cli;

import dev.tern.core.net.Ipv4Address;
import dev.tern.stack.NetStack;
import dev.tern.stack.TcpConnection;
import dev.tern.stack.sim.Simulation;
import org.junit.jupiter.api.Test;

import dev.tern.ethernet.memory.MemoryWire;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The services of {@code tern serve} on two stacks of a simulation. */
class TcpServiceTest {
    private static final long SECOND = 1_000_000_000L;

    @Test
    void discardTakesTheBytesInPlaceOnceItHasTheConnectionAndClosesAtTheEndOfTheStream() throws Exception {
        try (Simulation sim = new Simulation(); Arena arena = Arena.ofConfined()) {
            final NetStack a = sim.addStack("a", "198.18.0.1/24");
            final NetStack b = sim.addStack("b", "198.18.0.2/24");
            try (TcpService.Discard discard = new TcpService.Discard(b, 9)) {
                final TcpConnection client = connected(sim, a, 9);
                final MemorySegment data = arena.allocate(1 << 20);
                int written = 0;
                while (written < data.byteSize()) {
                    written += client.write(data, written, (int) data.byteSize() - written);
                    sim.step();
                    discard.poll();
                }
                client.shutdownOutput();
                assertTrue(sim.runUntil(() -> {
                    discard.poll();
                    return client.isEndOfStream();
                }, 10 * SECOND), "the service closed after the client's end of stream");
                assertEquals(1 << 20, b.counters().value("tcp.rx.bytes"));
                // Bytes that came before the service accepted the connection waited in the ring (copied once) and
                // went to the handler when it was set; everything after was taken in the frames.
                final long fromRing = b.counters().value("tcp.rx.handler_ring_bytes");
                assertEquals(1 << 20, b.counters().value("tcp.rx.zero_copy_bytes") + fromRing);
                assertEquals(fromRing, b.counters().value("tcp.rx.copied_bytes"));
                assertTrue(fromRing < 1 << 18, "most bytes taken in place: " + fromRing + " from the ring");
                client.close();
            }
        }
    }

    /**
     * Echo over an impaired wire (1 % loss, 1 % reordering) to a client that writes 4 MiB in random pieces and reads
     * its echo as it comes, except once not at all for 30 s of virtual time: every byte comes back in order, bytes
     * waited in the server's receive ring while its send ring was full, and the service closes after the client's
     * end of stream.
     */
    @Test
    void echoSendsEveryByteBackInOrderAndHoldsWhatTheClientDoesNotTakeYet() throws Exception {
        final long[] inPlaceAndFromRing =
            echo(MemoryWire.builder().seed(13).loss(0.01).reordering(0.01, 2_000_000), true);
        assertTrue(inPlaceAndFromRing[1] > 0, "bytes from the ring: " + inPlaceAndFromRing[1]);
    }

    /**
     * On a clean wire, with a client that reads as the echo comes, nearly every byte goes back from the frame it
     * arrived in: one copy (frame to send ring) where reading and writing back took three.
     */
    @Test
    void echoOnACleanWireSendsTheBytesBackFromTheirFrames() throws Exception {
        final long[] inPlaceAndFromRing = echo(MemoryWire.builder(), false);
        final long inPlace = inPlaceAndFromRing[0];
        final long fromRing = inPlaceAndFromRing[1];
        assertTrue(inPlace > 0.9 * (4 << 20), "in place " + inPlace + ", from the ring " + fromRing);
    }

    /**
     * A client that writes a burst larger than the server's send ring, then only reads (no more data, no FIN to stir
     * the server's input): the bytes the server could not send back at once wait in its receive ring and are offered
     * to the handler again as the send ring drains, so the whole burst returns.
     */
    @Test
    void echoReturnsABurstLargerThanItsSendRingWithoutMoreInputFromTheClient() throws Exception {
        try (Simulation sim = new Simulation(); Arena arena = Arena.ofConfined()) {
            final NetStack a = sim.addStack("a", "198.18.0.1/24");
            final NetStack b = sim.addStack("b", "198.18.0.2/24");
            try (TcpService.Echo echo = new TcpService.Echo(b, 7)) {
                sim.onPoll(echo::poll);
                final TcpConnection client = connected(sim, a, 7);
                // Over the server's send ring and the client's receive ring together (128 KiB each), within what all
                // four rings hold (512 KiB), so the client can write it all before it reads.
                final int burst = 400_000;
                final byte[] sent = new byte[burst];
                new Random(5).nextBytes(sent);
                final MemorySegment out = arena.allocate(burst);
                MemorySegment.copy(sent, 0, out, ValueLayout.JAVA_BYTE, 0, burst);
                int written = 0;
                final long writeDeadline = sim.nowNs() + 30 * SECOND;
                while (written < burst && sim.nowNs() < writeDeadline) {
                    written += client.write(out, written, burst - written);
                    sim.step();
                }
                assertEquals(burst, written);
                sim.runFor(2 * SECOND);      // the client reads nothing yet: the echo backs up into the server's rings
                assertTrue(b.counters().value("tcp.rx.handler_ring_bytes") == 0 && client.available() < burst,
                    "the burst could not come back whole before the client read");
                final MemorySegment in = arena.allocate(burst);
                int read = 0;
                final long deadline = sim.nowNs() + 30 * SECOND;
                while (read < burst && sim.nowNs() < deadline) {
                    final int n = client.read(in, read, burst - read);
                    if (n > 0) {
                        read += n;
                    }
                    sim.step();
                }
                assertEquals(burst, read, "the echo stalled with bytes held in the server's receive ring");
                assertTrue(Arrays.equals(sent, in.toArray(ValueLayout.JAVA_BYTE)));
                assertTrue(b.counters().value("tcp.rx.handler_ring_bytes") > 0, "held bytes were offered again");
                client.close();
            }
        }
    }

    /**
     * Echo and discard connections on which nothing arrives for a second give their rings back (the server's attached
     * bytes and memory budget fall to 0), and the next bytes bring them back: the echo is intact, the discard takes
     * everything, and each quiet second after gives them back again. An echo the client has not read yet keeps the
     * rings that hold it, for as long as it waits.
     */
    @Test
    void quietEchoAndDiscardConnectionsGiveTheirRingsBackUntilTheNextBytes() throws Exception {
        try (Simulation sim = new Simulation(); Arena arena = Arena.ofConfined()) {
            final NetStack a = sim.addStack("a", "198.18.0.1/24");
            final NetStack b = sim.addStack("b", "198.18.0.2/24");
            try (TcpService.Echo echo = new TcpService.Echo(b, 7);
                 TcpService.Discard discard = new TcpService.Discard(b, 9)) {
                sim.onPoll(() -> {
                    echo.poll();
                    discard.poll();
                });
                final TcpConnection echoed = connected(sim, a, 7);
                final TcpConnection discarded = connected(sim, a, 9);
                // More than the client's receive ring and the server's send ring hold (128 KiB each), so that an
                // unread echo backs up into the server's rings.
                final byte[] sent = new byte[300_000];
                new Random(3).nextBytes(sent);
                final MemorySegment out = arena.allocate(sent.length);
                MemorySegment.copy(sent, 0, out, ValueLayout.JAVA_BYTE, 0, sent.length);
                final MemorySegment in = arena.allocate(sent.length);
                long released = 0;
                for (int round = 0; round < 3; round++) {
                    writeAll(sim, echoed, out);
                    writeAll(sim, discarded, out);
                    // The client does not read its echo for 3 s: the server's rings hold what it could not send.
                    sim.runFor(3 * SECOND);
                    final long waiting = b.counters().value("tcp.memory.attached_bytes");
                    assertTrue(waiting > 0, "the echo waiting in the server's rings keeps them");
                    int read = 0;
                    final long deadline = sim.nowNs() + 10 * SECOND;
                    while (read < sent.length && sim.nowNs() < deadline) {
                        read += Math.max(0, echoed.read(in, read, sent.length - read));
                        sim.step();
                    }
                    assertEquals(sent.length, read);
                    assertTrue(Arrays.equals(sent, in.asSlice(0, read).toArray(ValueLayout.JAVA_BYTE)), "round " + round);
                    sim.runFor(3 * SECOND);
                    assertEquals(0, b.counters().value("tcp.memory.attached_bytes"), "round " + round);
                    assertEquals(0, b.counters().value("tcp.memory.in_use_bytes"), "round " + round);
                    final long now = b.counters().value("tcp.memory.rings_released_idle");
                    assertTrue(now >= released + 2, "both connections gave their rings back: " + now);
                    released = now;
                }
                assertEquals(2 * 3L * sent.length, b.counters().value("tcp.rx.bytes"));
                assertTrue(echoed.isConnected() && discarded.isConnected());
                echoed.close();
                discarded.close();
            }
        }
    }

    /**
     * Runs the echo exchange described above on {@code wire}; returns the server's bytes taken by the handler in place
     * and from its receive ring.
     */
    private static long[] echo(MemoryWire.Builder wire, boolean pause) throws Exception {
        try (Simulation sim = new Simulation(wire); Arena arena = Arena.ofConfined()) {
            final NetStack a = sim.addStack("a", "198.18.0.1/24");
            final NetStack b = sim.addStack("b", "198.18.0.2/24");
            try (TcpService.Echo echo = new TcpService.Echo(b, 7)) {
                sim.onPoll(echo::poll);
                final TcpConnection client = connected(sim, a, 7);
                final int total = 4 << 20;
                final byte[] sent = new byte[total];
                final Random random = new Random(42);
                random.nextBytes(sent);
                final MemorySegment out = arena.allocate(total);
                MemorySegment.copy(sent, 0, out, ValueLayout.JAVA_BYTE, 0, total);
                final MemorySegment in = arena.allocate(total);
                int written = 0;
                int read = 0;
                boolean paused = !pause;
                final long deadline = sim.nowNs() + 600 * SECOND;
                while (!client.isEndOfStream() && sim.nowNs() < deadline) {
                    if (written < total) {
                        written += client.write(out, written, Math.min(total - written, 1 + random.nextInt(100_000)));
                        if (written == total) {
                            client.shutdownOutput();
                        }
                    }
                    if (!paused && read > total / 4) {
                        paused = true;
                        sim.runFor(30 * SECOND);   // the client stops reading: the echo backs up into both rings
                    }
                    final int n = client.read(in, read, total - read);
                    if (n > 0) {
                        read += n;
                    }
                    sim.step();
                }
                assertTrue(client.isEndOfStream(),
                    "the service closed after echoing everything: " + read + " of " + total);
                assertEquals(total, read);
                assertTrue(Arrays.equals(sent, in.toArray(ValueLayout.JAVA_BYTE)),
                    "the echo differs from what was sent");
                final long inPlace = b.counters().value("tcp.rx.zero_copy_bytes");
                final long fromRing = b.counters().value("tcp.rx.handler_ring_bytes");
                assertEquals(total, inPlace + fromRing, "every byte went through the handler");
                client.close();
                return new long[] {inPlace, fromRing};
            }
        }
    }

    /** Writes all of {@code data} on {@code connection}, stepping the simulation while its send ring is full. */
    private static void writeAll(Simulation sim, TcpConnection connection, MemorySegment data) throws Exception {
        int written = 0;
        final long deadline = sim.nowNs() + 30 * SECOND;
        while (written < data.byteSize() && sim.nowNs() < deadline) {
            written += connection.write(data, written, (int) data.byteSize() - written);
            sim.step();
        }
        assertEquals(data.byteSize(), written);
    }

    /** A connection from {@code client} to port {@code port} of stack "b" (198.18.0.2), once established. */
    /**
     * {@code --max-per-source 2}: a third connection from the same address is reset as it is accepted and counted,
     * another address is not affected, and once one of the two closes the source may connect again.
     */
    @Test
    void aSourceBeyondItsLimitIsResetAtAcceptAndOthersAreServed() throws Exception {
        try (Simulation sim = new Simulation()) {
            final NetStack a = sim.addStack("a", "198.18.0.1/24");
            final NetStack b = sim.addStack("b", "198.18.0.2/24");
            final NetStack other = sim.addStack("c", "198.18.0.3/24");
            try (TcpService echo = new TcpService.Echo(b, 7).limitPerSource(2)) {
                final TcpConnection first = connected(sim, a, 7);
                final TcpConnection second = connected(sim, a, 7);
                final TcpConnection third = connected(sim, a, 7);
                final TcpConnection elsewhere = connected(sim, other, 7);
                assertTrue(sim.runUntil(() -> {
                    echo.poll();
                    return third.isEnded();
                }, 5 * SECOND), "the third connection from 198.18.0.1 was reset");
                assertEquals(dev.tern.core.io.SocketError.CONNECTION_RESET, third.error());
                assertEquals(1, b.counters().value("serve.conn.source_limit"));
                assertEquals(3, echo.connections(), "two from 198.18.0.1, one from 198.18.0.3");
                assertTrue(!first.isEnded() && !second.isEnded() && !elsewhere.isEnded());

                first.close();
                assertTrue(sim.runUntil(() -> {
                    echo.poll();
                    return echo.connections() == 2;
                }, 5 * SECOND), "the closed connection left the service");
                final TcpConnection again = connected(sim, a, 7);
                for (int i = 0; i < 100; i++) {
                    sim.step();
                    echo.poll();
                }
                assertTrue(!again.isEnded(), "a new connection within the limit stays");
                assertEquals(1, b.counters().value("serve.conn.source_limit"));
                assertEquals(3, echo.connections());
            }
        }
    }

    private static TcpConnection connected(Simulation sim, NetStack client, int port) throws Exception {
        final TcpConnection connection = client.connect(Ipv4Address.parse("198.18.0.2"), port);
        assertTrue(sim.runUntil(connection::isConnected, 5 * SECOND));
        return connection;
    }
}
