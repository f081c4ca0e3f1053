package dev.tern.stack;

import dev.tern.core.net.Ipv4Address;
import dev.tern.ethernet.memory.MemoryWire;
import dev.tern.stack.testing.SleepyLink;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.security.MessageDigest;
import java.util.SplittableRandom;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Held-frame zero-copy receive through the socket API, with real threads: a handler on the stack's thread holds what
 * it is offered ({@link TcpConnection#holdReceived}, {@link UdpSocket#holdReceived}) and hands the views to an
 * application thread, which reads them and gives them back ({@link NetStack#releaseHeld}); the bytes arrive intact,
 * every frame goes back, and a release wakes a stack asleep in its link.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class HeldReceiveSocketTest {
    private static final int A = Ipv4Address.parse("198.18.0.1");
    private static final int B = Ipv4Address.parse("198.18.0.2");

    /** A view handed from the stack's thread to the application's: held (hold at least 0), or copied at once. */
    private record Piece(long hold, MemorySegment data, long offset, int length, byte[] copy) {
        static final Piece END = new Piece(-1, null, 0, 0, null);

        byte[] bytes() {
            if (copy != null) {
                return copy;
            }
            final byte[] bytes = new byte[length];
            MemorySegment.copy(data, ValueLayout.JAVA_BYTE, offset, bytes, 0, length);
            return bytes;
        }
    }

    private static Piece piece(long hold, MemorySegment data, long offset, int length) {
        if (hold >= 0) {
            return new Piece(hold, data, offset, length, null);
        }
        final byte[] copy = new byte[length];
        MemorySegment.copy(data, ValueLayout.JAVA_BYTE, offset, copy, 0, length);
        return new Piece(-1, null, 0, length, copy);
    }

    private static NetStack stack(MemoryWire wire, String name, long mac, String cidr) {
        return NetStack.builder().name(name).link(wire.attach(name, mac)).address(cidr).countersInMemory().build();
    }

    @Test
    void anApplicationThreadReadsHeldTcpBytesAndReleasesThemAndTheStreamArrivesIntact() throws Exception {
        final byte[] data = new byte[8 << 20];
        new SplittableRandom(16).nextBytes(data);
        try (MemoryWire wire = MemoryWire.builder().concurrent(true).build();
             NetStack a = stack(wire, "a", 0x0200_0000_0001L, "198.18.0.1/24");
             NetStack b = stack(wire, "b", 0x0200_0000_0002L, "198.18.0.2/24");
             StackRunner ra = StackRunner.start(a, new BackoffIdleStrategy());
             StackRunner rb = StackRunner.start(b, new BackoffIdleStrategy())) {
            final TcpListener listener = b.listen(7, 4);
            final TcpConnection client = a.connect(B, 7);
            client.awaitConnected(5_000_000_000L);
            final TcpConnection server = listener.accept(5_000_000_000L);
            final BlockingQueue<Piece> pieces = new ArrayBlockingQueue<>(100_000);
            final long[] refused = {0};
            server.receiveHandler((connection, segment, offset, length) -> {
                final long hold = connection.holdReceived();
                if (hold < 0) {
                    refused[0]++;
                }
                pieces.add(piece(hold, segment, offset, length));
                return length;
            });
            // The application's thread: reads each piece (a held one in the frame, long after the handler returned)
            // and gives it back, every 16th after a pause so that holds pile up.
            final CompletableFuture<byte[]> digest = CompletableFuture.supplyAsync(() -> {
                try {
                    final MessageDigest sha = MessageDigest.getInstance("SHA-256");
                    long received = 0;
                    int n = 0;
                    while (received < data.length) {
                        final Piece piece = pieces.poll(30, TimeUnit.SECONDS);
                        if (piece == null) {
                            throw new AssertionError("stalled at " + received);
                        }
                        if (++n % 16 == 0) {
                            Thread.sleep(1);
                        }
                        sha.update(piece.bytes());
                        received += piece.length();
                        if (piece.hold() >= 0) {
                            assertTrue(b.releaseHeld(piece.hold()));
                            assertFalse(b.releaseHeld(piece.hold()), "a hold is released once");
                        }
                    }
                    return sha.digest();
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
            });
            int written = 0;
            while (written < data.length) {
                written += client.write(MemorySegment.ofArray(data), written, data.length - written, 10_000_000_000L);
            }
            assertArrayEquals(MessageDigest.getInstance("SHA-256").digest(data), digest.get(60, TimeUnit.SECONDS));
            final long deadline = System.nanoTime() + 5_000_000_000L;
            while (b.counters().value("ethernet.rx.held_now") != 0 && System.nanoTime() < deadline) {
                Thread.sleep(1);
            }
            assertEquals(0, b.counters().value("ethernet.rx.held_now"), "every frame back");
            final long held = b.counters().value("ethernet.rx.held_frames");
            assertTrue(held > 1000, "held frames: " + held);
            assertEquals(held, b.counters().value("ethernet.rx.held_returned"));
            assertEquals(b.counters().value("tcp.rx.held_bytes") + b.counters().value("tcp.rx.handler_ring_bytes")
                + (b.counters().value("tcp.rx.zero_copy_bytes") - b.counters().value("tcp.rx.held_bytes")),
                data.length, "every byte held, or taken in place or from the ring after a refused hold");
            client.close();
            server.close();
        }
    }

    @Test
    void heldDatagramsAreReadOnAnotherThreadAndAReleaseWakesTheSleepingStack() throws Exception {
        try (MemoryWire wire = MemoryWire.builder().concurrent(true).build()) {
            final SleepyLink link = new SleepyLink(wire.attach("b", 0x0200_0000_0002L));
            try (NetStack a = stack(wire, "a", 0x0200_0000_0001L, "198.18.0.1/24");
                 NetStack b = NetStack.builder().name("b").link(link).address("198.18.0.2/24").countersInMemory()
                     .build()) {
                final UdpSocket receiver = b.openUdp();
                receiver.bind(9);
                final UdpSocket sender = a.openUdp();
                final BlockingQueue<Piece> pieces = new ArrayBlockingQueue<>(1000);
                receiver.receiveHandler((socket, source, port, segment, offset, length) -> {
                    pieces.add(piece(socket.holdReceived(), segment, offset, length));
                    return false; // ignored for a held datagram
                });
                final SplittableRandom random = new SplittableRandom(9);
                final byte[][] sent = new byte[200][];
                for (int i = 0; i < sent.length; i++) {
                    sent[i] = new byte[1 + random.nextInt(1400)];
                    random.nextBytes(sent[i]);
                    assertTrue(sender.sendTo(B, 9, MemorySegment.ofArray(sent[i]), 0, sent[i].length));
                    for (int turn = 0; turn < 100 && pieces.size() <= i; turn++) {
                        a.doWork();
                        b.doWork();
                    }
                }
                assertEquals(sent.length, pieces.size());
                final Piece[] held = pieces.toArray(new Piece[0]);
                assertTrue(held[0].hold() >= 0);
                assertEquals(sent.length, b.counters().value("udp.rx.held_datagrams"));
                assertEquals(sent.length, b.counters().value("udp.rx.zero_copy_datagrams"));
                assertEquals(0, b.counters().value("udp.rx.copied_datagrams"));
                // Read and released on another thread, all but the last, while this thread keeps the stack busy.
                CompletableFuture.runAsync(() -> {
                    for (int i = 0; i < held.length - 1; i++) {
                        assertArrayEquals(sent[i], held[i].bytes());
                        assertTrue(b.releaseHeld(held[i].hold()));
                    }
                }).get(10, TimeUnit.SECONDS);
                b.doWork();
                assertEquals(1, b.counters().value("ethernet.rx.held_now"));
                // The stack sleeps in its link; the last release, from another thread, wakes it.
                final CompletableFuture<Long> slept = CompletableFuture.supplyAsync(() -> {
                    final long start = System.nanoTime();
                    b.awaitWork(20_000);
                    return System.nanoTime() - start;
                });
                while (!link.sleeping) {
                    Thread.onSpinWait();
                }
                assertArrayEquals(sent[held.length - 1], held[held.length - 1].bytes());
                assertTrue(b.releaseHeld(held[held.length - 1].hold()));
                assertTrue(slept.get(10, TimeUnit.SECONDS) < 10_000_000_000L, "woken by the release");
                assertEquals(1, link.wakes);
                b.doWork();
                assertEquals(0, b.counters().value("ethernet.rx.held_now"));
                assertEquals(0, wire.framesInUse(), "every buffer back on the wire");
            }
        }
    }
}
