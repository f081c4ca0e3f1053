package dev.tern.tcp;

import dev.tern.ethernet.link.FrameHolds;
import dev.tern.ethernet.memory.MemoryWire;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.longs;

/**
 * Held-frame zero-copy receive ({@link TcpLayer#holdOffered}): bytes a handler holds stay readable in the link's frame
 * until the application releases them, whenever that is; they keep their room in the window meanwhile; and every
 * lent frame goes back to the link.
 */
class HeldReceiveTest {
    private static final long SECOND = 1_000_000_000L;
    private static final long MS = 1_000_000L;

    /**
     * A handler that holds what it is offered (when {@code holdChance} says so and the layer can), and copies the rest
     * at once. Each offer becomes a piece, in stream order; a held piece's bytes are read only when it is released,
     * so a frame the link reused while held would show as wrong bytes.
     */
    static final class Holder implements TcpReceiveHandler {
        final TcpLayer tcp;
        final FrameHolds holds;
        final SplittableRandom random;
        final double holdChance;
        final List<Piece> pieces = new ArrayList<>();
        final List<Piece> held = new ArrayList<>();
        long offered;
        int refusedHolds;

        Holder(ZeroCopyReceiveTest.Pair pair, long seed, double holdChance) {
            this.tcp = pair.a.tcp;
            this.holds = pair.a.ethernet.holds();
            this.random = new SplittableRandom(seed);
            this.holdChance = holdChance;
        }

        @Override
        public int onReceive(int connection, MemorySegment data, long offset, int length) {
            offered += length;
            if (random.nextDouble() < holdChance) {
                final long hold = tcp.holdOffered(connection);
                if (hold >= 0) {
                    assertEquals(-1, tcp.holdOffered(connection), "an offer is held once");
                    final Piece piece = new Piece(hold, data, offset, length);
                    pieces.add(piece);
                    held.add(piece);
                    return 0; // ignored: a hold takes the whole offer
                }
                refusedHolds++;
            }
            final Piece piece = new Piece(-1, data, offset, length);
            piece.read();
            pieces.add(piece);
            return length;
        }

        /** Releases held pieces at random (each with {@code chance}), reading their bytes first. */
        void releaseSome(double chance) {
            for (int i = held.size() - 1; i >= 0; i--) {
                if (random.nextDouble() < chance) {
                    release(held.remove(i));
                }
            }
        }

        void releaseAll() {
            while (!held.isEmpty()) {
                release(held.removeLast());
            }
        }

        private void release(Piece piece) {
            piece.read();
            assertTrue(holds.release(piece.hold));
            assertFalse(holds.release(piece.hold), "a second release of the same hold is refused");
        }

        long heldBytes() {
            long sum = 0;
            for (Piece piece : held) {
                sum += piece.length;
            }
            return sum;
        }

        byte[] stream() {
            final ByteArrayOutputStream out = new ByteArrayOutputStream();
            for (Piece piece : pieces) {
                assertTrue(piece.bytes != null, "every piece read");
                out.writeBytes(piece.bytes);
            }
            return out.toByteArray();
        }
    }

    static final class Piece {
        final long hold;
        final MemorySegment data;
        final long offset;
        final int length;
        byte[] bytes;

        Piece(long hold, MemorySegment data, long offset, int length) {
            this.hold = hold;
            this.data = data;
            this.offset = offset;
            this.length = length;
        }

        void read() {
            bytes = new byte[length];
            MemorySegment.copy(data, ValueLayout.JAVA_BYTE, offset, bytes, 0, length);
        }
    }

    private static byte[] random(long seed, int length) {
        final byte[] bytes = new byte[length];
        new SplittableRandom(seed).nextBytes(bytes);
        return bytes;
    }

    private static Holder install(ZeroCopyReceiveTest.Pair pair, long seed, double holdChance) {
        final Holder holder = new Holder(pair, seed, holdChance);
        assertEquals(0, pair.a.tcp.receiveHandler(pair.receiver.connection, holder, pair.net.now()));
        return holder;
    }

    /**
     * Property: over a wire that loses, duplicates and reorders, a handler holding offers at random and releasing them
     * at random later reads the sent stream exactly, each held piece read at its release; no byte ever arrives
     * beyond the window offered (held bytes kept their room); at the end every hold is back and the buffer's room with it.
     */
    @Test
    void heldPiecesReadAtTheirReleaseAreTheStreamOverAnImpairedWire() {
        qt().withExamples(25).withShrinkCycles(0)
            .forAll(longs().all(), integers().between(0, 30), integers().between(0, 100))
            .checkAssert((seed, lossPermille, holdPercent) -> {
                final MemoryWire.Builder wire = MemoryWire.builder().seed(seed).loss(lossPermille / 1000.0)
                    .duplication(0.01).reordering(0.02, 1_000_000);
                try (ZeroCopyReceiveTest.Pair pair = new ZeroCopyReceiveTest.Pair(wire,
                    TcpOptions.DEFAULT.withBuffers(65536, 65536), TcpOptions.DEFAULT.withBuffers(65536, 65536), seed)) {
                    final Holder holder = install(pair, seed, holdPercent / 100.0);
                    final SplittableRandom releases = new SplittableRandom(seed ^ 0x5DEECE66DL);
                    final double releaseChance = 0.05 + releases.nextDouble() * 0.5;
                    pair.net.onPoll(() -> holder.releaseSome(releaseChance));
                    final byte[] data = random(seed, 150_000 + (int) (Math.abs(seed) % 100_000));
                    pair.client.send(data);
                    assertTrue(pair.net.runUntil(() -> holder.offered == data.length, 600 * SECOND),
                        "all offered: " + holder.offered + " of " + data.length);
                    holder.releaseAll();
                    pair.net.runFor(300 * MS);
                    assertArrayEquals(data, holder.stream());
                    assertEquals(0, pair.counter("tcp.rx.beyond_window_bytes"), "nothing beyond the window");
                    assertEquals(0, pair.counter("ethernet.rx.held_now"));
                    assertEquals(pair.counter("ethernet.rx.held_frames"), pair.counter("ethernet.rx.held_returned"));
                    assertEquals(0, pair.a.tcp.heldBytes(pair.receiver.connection));
                    if (holdPercent == 100) {
                        assertTrue(pair.counter("tcp.rx.held_bytes") > 0);
                    }
                    // All the room is back (the window offered grows with the next ACK: a window update of its own
                    // goes only when it would double, RFC 9293 §3.8.6.2.2).
                    assertEquals(65536, pair.a.tcp.receiveBuffer(pair.receiver.connection).freeSpace());
                }
            });
    }

    @Test
    void heldBytesKeepTheirRoomInTheWindowUntilReleased() {
        try (ZeroCopyReceiveTest.Pair pair = new ZeroCopyReceiveTest.Pair()) {
            final Holder holder = install(pair, 7, 1.0);
            final byte[] data = random(7, 200_000);
            pair.client.send(data);
            pair.net.runFor(2 * SECOND);
            // Nothing released: the peer filled the 64 KiB window with held bytes and waits.
            final int c = pair.receiver.connection;
            final long held = holder.heldBytes();
            assertEquals(0, holder.refusedHolds);
            assertTrue(held > 60_000 && held <= 65536, "held " + held);
            assertEquals(held, pair.a.tcp.heldBytes(c));
            assertEquals(held, pair.counter("tcp.rx.held_bytes"));
            assertEquals(held, pair.counter("tcp.rx.zero_copy_bytes"));
            assertEquals(0, pair.counter("tcp.rx.copied_bytes"));
            assertEquals(holder.held.size(), pair.counter("ethernet.rx.held_now"));
            assertTrue(pair.a.tcp.receiveWindow(c) <= 65536 - held, "window " + pair.a.tcp.receiveWindow(c));
            assertEquals(0, pair.a.tcp.receiveBuffer(c).available(), "held bytes are not in the ring");
            // Released, the window reopens with an update and the rest flows.
            holder.releaseAll();
            pair.net.onPoll(() -> holder.releaseSome(1.0));
            assertTrue(pair.net.runUntil(() -> holder.offered == data.length, 30 * SECOND));
            holder.releaseAll();
            pair.net.runFor(100 * MS);
            assertArrayEquals(data, holder.stream());
            assertTrue(pair.counter("tcp.tx.window_updates") > 0);
            assertEquals(0, pair.counter("ethernet.rx.held_now"));
        }
    }

    @Test
    void aLinkThatLendsNoMoreRefusesTheHoldAndTheHandlerTakesTheBytesAsBefore() {
        // 64 buffers on the wire: each port lends at most 16 frames at once.
        final MemoryWire.Builder wire = MemoryWire.builder().frames(64);
        try (ZeroCopyReceiveTest.Pair pair = new ZeroCopyReceiveTest.Pair(wire,
            TcpOptions.DEFAULT.withBuffers(65536, 65536), TcpOptions.DEFAULT.withBuffers(65536, 65536), 3)) {
            final Holder holder = install(pair, 3, 1.0);
            final byte[] data = random(3, 60_000);
            pair.client.send(data);
            assertTrue(pair.net.runUntil(() -> holder.offered == data.length, 30 * SECOND));
            assertEquals(16, holder.held.size());
            assertTrue(holder.refusedHolds > 0);
            assertEquals(holder.refusedHolds, pair.counter("ethernet.rx.hold_refused"));
            holder.releaseAll();
            pair.net.runFor(100 * MS);
            assertArrayEquals(data, holder.stream());
            assertEquals(0, pair.counter("ethernet.rx.held_now"));
        }
    }

    @Test
    void bytesOfferedFromTheRingCannotBeHeld() {
        try (ZeroCopyReceiveTest.Pair pair = new ZeroCopyReceiveTest.Pair()) {
            final int c = pair.receiver.connection;
            pair.a.tcp.receiveHandler(c, null, pair.net.now());
            final byte[] data = random(9, 5_000);
            pair.client.send(data);
            assertTrue(pair.net.runUntil(() -> pair.counter("tcp.rx.bytes") == data.length, 10 * SECOND));
            final long[] hold = {0};
            final byte[] seen = new byte[data.length];
            final int[] at = {0};
            pair.a.tcp.receiveHandler(c, (connection, segment, offset, length) -> {
                hold[0] = pair.a.tcp.holdOffered(connection);
                MemorySegment.copy(segment, ValueLayout.JAVA_BYTE, offset, seen, at[0], length);
                at[0] += length;
                return length;
            }, pair.net.now());
            assertEquals(-1, hold[0], "the ring's bytes are copies: nothing to hold");
            assertArrayEquals(data, Arrays.copyOf(seen, at[0]));
            assertEquals(-1, pair.a.tcp.holdOffered(c), "outside a handler");
        }
    }

    @Test
    void aHoldOutlivesItsConnectionAndItsReleaseTouchesNoOther() {
        try (ZeroCopyReceiveTest.Pair pair = new ZeroCopyReceiveTest.Pair()) {
            final Holder holder = install(pair, 11, 1.0);
            final byte[] data = random(11, 30_000);
            pair.client.send(data);
            assertTrue(pair.net.runUntil(() -> holder.offered == data.length, 10 * SECOND));
            pair.a.tcp.abort(pair.receiver.connection, pair.net.now());
            pair.net.runFor(100 * MS);
            // The frames are still the application's: their bytes read intact after the connection is gone.
            holder.releaseAll();
            pair.net.runFor(100 * MS);
            assertArrayEquals(data, holder.stream());
            assertEquals(0, pair.counter("ethernet.rx.held_now"));
        }
    }
}
