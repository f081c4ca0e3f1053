package dev.tern.stack;

import dev.tern.core.net.Ipv4Address;
import dev.tern.core.testing.Allocations;
import dev.tern.ethernet.memory.MemoryWire;
import dev.tern.stack.sim.Simulation;
import dev.tern.udp.UdpConfig;
import dev.tern.udp.wire.UdpHeader;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.longs;

/**
 * Zero-copy receive through the socket API: {@link TcpConnection.ReceiveHandler} and {@link UdpSocket.ReceiveHandler}
 * get the bytes in the frame, the copying calls are refused meanwhile, what a handler declines is offered again in
 * order, and the counters tell which bytes were copied.
 */
class ZeroCopyReceiveTest {
    private static final long SECOND = 1_000_000_000L;
    private static final int A = Ipv4Address.parse("198.18.0.1");
    private static final int B = Ipv4Address.parse("198.18.0.2");

    private static byte[] random(long seed, int length) {
        final byte[] bytes = new byte[length];
        new SplittableRandom(seed).nextBytes(bytes);
        return bytes;
    }

    private static byte[] bytesOf(MemorySegment data, long offset, int length) {
        final byte[] bytes = new byte[length];
        MemorySegment.copy(data, ValueLayout.JAVA_BYTE, offset, bytes, 0, length);
        return bytes;
    }

    /** A connected pair: a's client, b's accepted server. */
    private static TcpConnection[] connect(Simulation sim, NetStack a, NetStack b) throws TernSocketException {
        return connect(sim, a, b.listen(7, 4));
    }

    /** A connected pair: a's client, and the server {@code listener} (port 7 on 198.18.0.2) accepted. */
    static TcpConnection[] connect(Simulation sim, NetStack a, TcpListener listener) throws TernSocketException {
        final TcpConnection client = a.connect(B, 7);
        assertTrue(sim.runUntil(client::isConnected, 5 * SECOND));
        final TcpConnection[] server = new TcpConnection[1];
        assertTrue(sim.runUntil(() -> {
            try {
                server[0] = server[0] != null ? server[0] : listener.accept();
            } catch (TernSocketException e) {
                throw new AssertionError(e);
            }
            return server[0] != null;
        }, 5 * SECOND));
        return new TcpConnection[] {client, server[0]};
    }

    private static void writeAll(Simulation sim, TcpConnection connection, byte[] data) throws TernSocketException {
        int written = 0;
        while (written < data.length) {
            written += connection.write(MemorySegment.ofArray(data), written, data.length - written);
            sim.step();
        }
    }

    @Test
    void aTcpHandlerGetsTheStreamInPlaceAndTheEndOfStreamFollows() throws Exception {
        try (Simulation sim = new Simulation()) {
            final NetStack a = sim.addStack("a", "198.18.0.1/24");
            final NetStack b = sim.addStack("b", "198.18.0.2/24");
            final TcpConnection[] pair = connect(sim, a, b);
            final ByteArrayOutputStream taken = new ByteArrayOutputStream();
            pair[1].receiveHandler((connection, data, offset, length) -> {
                taken.writeBytes(bytesOf(data, offset, length));
                return length;
            });
            assertThrows(IllegalStateException.class, () -> pair[1].read(MemorySegment.ofArray(new byte[8]), 0, 8));
            final byte[] data = random(1, 500_000);
            writeAll(sim, pair[0], data);
            pair[0].shutdownOutput();
            assertTrue(sim.runUntil(pair[1]::isEndOfStream, 10 * SECOND));
            assertArrayEquals(data, taken.toByteArray());
            assertEquals(data.length, b.counters().value("tcp.rx.zero_copy_bytes"));
            assertEquals(0, b.counters().value("tcp.rx.copied_bytes"));
            assertEquals(SelectableSocket.READ, pair[1].readyOps() & SelectableSocket.READ, "end of stream is readable");
        }
    }

    @Test
    void bytesATcpHandlerDeclinedAreOfferedFirstWhenItResumes() throws Exception {
        try (Simulation sim = new Simulation(MemoryWire.builder().seed(3).loss(0.01).reordering(0.02, 200_000))) {
            final NetStack a = sim.addStack("a", "198.18.0.1/24");
            final NetStack b = sim.addStack("b", "198.18.0.2/24");
            final TcpConnection[] pair = connect(sim, a, b);
            final ByteArrayOutputStream taken = new ByteArrayOutputStream();
            final SplittableRandom random = new SplittableRandom(4);
            final boolean[] full = {false};
            pair[1].receiveHandler((connection, data, offset, length) -> {
                // An application whose output fills up now and then, and takes part of an offer at times.
                final int n = full[0] ? 0 : random.nextInt(3) == 0 ? random.nextInt(length + 1) : length;
                taken.writeBytes(bytesOf(data, offset, n));
                if (n < length) {
                    full[0] = true;
                }
                return n;
            });
            final byte[] data = random(5, 400_000);
            int written = 0;
            while (written < data.length || taken.size() < data.length) {
                if (written < data.length) {
                    written += pair[0].write(MemorySegment.ofArray(data), written, data.length - written);
                }
                sim.step();
                if (full[0] && random.nextInt(4) == 0) {
                    full[0] = false;
                    pair[1].resumeReceive();
                }
                assertTrue(sim.nowNs() < 120 * SECOND, "stalled at " + taken.size());
            }
            assertArrayEquals(data, taken.toByteArray());
            final long inPlace = b.counters().value("tcp.rx.zero_copy_bytes");
            final long fromRing = b.counters().value("tcp.rx.handler_ring_bytes");
            assertEquals(data.length, inPlace + fromRing);
            assertTrue(inPlace > 0 && fromRing > 0, "both paths: " + inPlace + " in place, " + fromRing + " from the ring");
        }
    }

    @Test
    void aTcpHandlerMayWriteButNotClose() throws Exception {
        try (Simulation sim = new Simulation()) {
            final NetStack a = sim.addStack("a", "198.18.0.1/24");
            final NetStack b = sim.addStack("b", "198.18.0.2/24");
            final TcpConnection[] pair = connect(sim, a, b);
            final List<Class<?>> refused = new ArrayList<>();
            pair[1].receiveHandler((connection, data, offset, length) -> {
                try {
                    connection.write(data, offset, length);
                } catch (TernSocketException e) {
                    throw new AssertionError(e);
                }
                try {
                    connection.close();
                } catch (IllegalStateException e) {
                    refused.add(e.getClass());
                }
                return length;
            });
            final byte[] hello = "echo me".getBytes();
            writeAll(sim, pair[0], hello);
            final MemorySegment buffer = Arena.ofAuto().allocate(64);
            final int[] got = {0};
            assertTrue(sim.runUntil(() -> {
                try {
                    got[0] += Math.max(0, pair[0].read(buffer, got[0], 64 - got[0]));
                } catch (TernSocketException e) {
                    throw new AssertionError(e);
                }
                return got[0] == hello.length;
            }, 5 * SECOND));
            assertArrayEquals(hello, bytesOf(buffer, 0, hello.length));
            assertEquals(List.of(IllegalStateException.class), refused);
            assertTrue(pair[1].isConnected(), "the refused close changed nothing");
            assertEquals(0, b.counters().value("stack.internal_errors"));
        }
    }

    @Test
    void aUdpHandlerTakesDatagramsInPlaceAndDeclinedOnesWaitInOrder() throws Exception {
        try (Simulation sim = new Simulation()) {
            final NetStack a = sim.addStack("a", "198.18.0.1/24");
            final NetStack b = sim.addStack("b", "198.18.0.2/24");
            final UdpSocket receiver = b.openUdp();
            receiver.bind(9000);
            final UdpSocket sender = a.openUdp();
            sender.connect(B, 9000);
            final List<String> taken = new ArrayList<>();
            final boolean[] open = {true};
            receiver.receiveHandler((socket, source, sourcePort, data, offset, length) -> {
                if (!open[0]) {
                    return false;
                }
                assertEquals(A, source);
                assertEquals(sender.localPort(), sourcePort);
                taken.add(new String(bytesOf(data, offset, length)));
                return true;
            });
            assertThrows(IllegalStateException.class, () -> receiver.receive(MemorySegment.ofArray(new byte[8]), 0, 8));
            for (int i = 0; i < 3; i++) {
                sender.send(MemorySegment.ofArray(("d" + i).getBytes()), 0, 2);
            }
            sim.runFor(SECOND / 10);
            assertEquals(List.of("d0", "d1", "d2"), taken);
            assertEquals(3, b.counters().value("udp.rx.zero_copy_datagrams"));
            open[0] = false;
            for (int i = 3; i < 6; i++) {
                sender.send(MemorySegment.ofArray(("d" + i).getBytes()), 0, 2);
            }
            sim.runFor(SECOND / 10);
            assertEquals(3, b.counters().value("udp.rx.copied_datagrams"));
            open[0] = true;
            receiver.resumeReceive();
            sim.runFor(SECOND / 10);
            assertEquals(List.of("d0", "d1", "d2", "d3", "d4", "d5"), taken);
            assertEquals(3, b.counters().value("udp.rx.handler_ring_datagrams"));
            // A new datagram after the queue drained goes in place again, after the older ones.
            sender.send(MemorySegment.ofArray("d6".getBytes()), 0, 2);
            sim.runFor(SECOND / 10);
            assertEquals("d6", taken.getLast());
            assertEquals(4, b.counters().value("udp.rx.zero_copy_datagrams"));
        }
    }

    /**
     * UDP through a handler that declines at random and resumes at random, over a lossy wire that keeps order: the
     * handler gets each datagram that arrived exactly once, intact, in the order sent, whether in place or from the
     * queue (sizes up to 3000 bytes, so queued records wrap around the ring's end and are joined for the handler).
     */
    @Test
    void aUdpHandlerGetsEveryArrivedDatagramOnceInOrderWhateverItDeclines() {
        qt().withExamples(30).withShrinkCycles(5).forAll(longs().all(), integers().between(1, 1500))
            .checkAssert((seed, count) -> udpThroughAHandler(seed, count));
    }

    /** One case of the property above, long enough that queued datagrams wrap around the 128 KiB ring's end. */
    @Test
    void aQueuedDatagramAcrossTheRingsEndReachesTheHandlerWhole() {
        assertTrue(udpThroughAHandler(11, 1500)[2] > 0, "a datagram was joined across the ring's end");
    }

    private static byte[] datagram(int sequence, int length) {
        final byte[] bytes = random(sequence, Math.max(4, length));
        bytes[0] = (byte) (sequence >>> 24);
        bytes[1] = (byte) (sequence >>> 16);
        bytes[2] = (byte) (sequence >>> 8);
        bytes[3] = (byte) sequence;
        return bytes;
    }

    /** Returns how many datagrams the handler took in place, from the ring, and joined across the ring's end. */
    private static int[] udpThroughAHandler(long seed, int count) {
        try {
            return udpThroughAHandlerOrThrow(seed, count);
        } catch (TernSocketException e) {
            throw new AssertionError(e);
        }
    }

    private static int[] udpThroughAHandlerOrThrow(long seed, int count) throws TernSocketException {
        final SplittableRandom random = new SplittableRandom(seed);
        final int ring = 128 * 1024;
        final int[] kinds = new int[3];
        try (Simulation sim = new Simulation(MemoryWire.builder().seed(seed).loss(random.nextDouble() * 0.05))) {
            final NetStack a = sim.addStack("a", "198.18.0.1/24");
            final NetStack b = sim.addStack("b", "198.18.0.2/24",
                builder -> builder.udp(new UdpConfig(64, ring, 128 * 1024, 32768, 60999)));
            final UdpSocket receiver = b.openUdp();
            receiver.bind(9000);
            final UdpSocket sender = a.openUdp();
            sender.connect(B, 9000);
            final List<Integer> taken = new ArrayList<>();
            final boolean[] open = {true};
            final SplittableRandom handlerRandom = random.split();
            receiver.receiveHandler((socket, source, sourcePort, data, offset, length) -> {
                if (!open[0] || handlerRandom.nextInt(4) == 0) {
                    return false;
                }
                final int sequence = data.get(ValueLayout.JAVA_INT_UNALIGNED.withOrder(java.nio.ByteOrder.BIG_ENDIAN), offset);
                assertArrayEquals(datagram(sequence, length), bytesOf(data, offset, length), "datagram " + sequence);
                taken.add(sequence);
                // Where the view lies: the ring's memory, the joining buffer (64 KiB and a little), or a frame.
                kinds[data.byteSize() == ring ? 1 : data.byteSize() == UdpHeader.MAX_PAYLOAD_IPV6 + 8 ? 2 : 0]++;
                return true;
            });
            for (int i = 0; i < count; i++) {
                final byte[] bytes = datagram(i, random.nextInt(3001));
                while (!sender.send(MemorySegment.ofArray(bytes), 0, bytes.length)) {
                    sim.step();
                }
                if (random.nextInt(3) == 0) {
                    sim.step();
                }
                if (random.nextInt(10) == 0) {
                    open[0] = !open[0];
                }
                if (random.nextInt(5) == 0) {
                    receiver.resumeReceive();
                }
            }
            sim.runFor(SECOND / 10);
            open[0] = true;
            // Take everything left: resume until the queue is empty (the handler still declines one in four).
            for (int i = 0; i < 1000 && taken.size() < b.counters().value("udp.rx.datagrams")
                - b.counters().value("udp.drop.receive_queue_full"); i++) {
                receiver.resumeReceive();
                sim.step();
            }
            final String scenario = "seed " + seed + ", " + count + " datagrams, taken " + taken.size();
            for (int i = 1; i < taken.size(); i++) {
                assertTrue(taken.get(i) > taken.get(i - 1), "in order, once each: " + scenario + " " + taken);
            }
            final long arrived = b.counters().value("udp.rx.datagrams");
            final long dropped = b.counters().value("udp.drop.receive_queue_full");
            assertEquals(arrived - dropped, taken.size(), scenario);
            assertEquals(taken.size(), b.counters().value("udp.rx.zero_copy_datagrams")
                + b.counters().value("udp.rx.handler_ring_datagrams"), scenario);
            assertEquals(0, b.counters().value("udp.rx.handler_errors") + b.counters().value("stack.internal_errors"));
            assertEquals(b.counters().value("udp.rx.zero_copy_datagrams"), kinds[0], scenario);
        }
        return kinds;
    }

    @Test
    void receivingDatagramsThroughAUdpHandlerAllocatesNothing() throws Exception {
        try (Simulation sim = new Simulation(); Arena arena = Arena.ofConfined()) {
            final NetStack a = sim.addStack("a", "198.18.0.1/24");
            final NetStack b = sim.addStack("b", "198.18.0.2/24");
            final UdpSocket receiver = b.openUdp();
            receiver.bind(9000);
            final UdpSocket sender = a.openUdp();
            sender.connect(B, 9000);
            final MemorySegment message = arena.allocate(200);
            final CountingHandler handler = new CountingHandler();
            receiver.receiveHandler(handler);
            final Runnable exchange = () -> {
                try {
                    sender.send(message, 0, 200);
                    a.poll(sim.nowNs());
                    b.poll(sim.nowNs());
                    if (handler.taken % 5 == 4) {
                        receiver.resumeReceive();
                    }
                } catch (TernSocketException e) {
                    throw new IllegalStateException(e);
                }
            };
            for (int i = 0; i < 10; i++) {
                exchange.run();
                sim.runFor(SECOND / 100); // ARP first
            }
            final long bytes = Allocations.measure(200_000, 1_000_000, exchange);
            assertEquals(0, bytes, "bytes allocated receiving 1M datagrams through a handler");
            assertTrue(handler.taken > 1_000_000);
            assertTrue(b.counters().value("udp.rx.handler_ring_datagrams") > 0, "the queue path ran too");
            assertFalse(b.counters().value("udp.rx.zero_copy_datagrams") == 0);
        }
    }

    /**
     * The socket API's TCP handler path allocates nothing per segment either: a bulk transfer between two stacks on the
     * memory wire, driven from this thread, the server taking every byte through a {@link TcpConnection.ReceiveHandler}
     * (all but every fifth offer whole, so {@code resumeReceive} and the ring run too).
     */
    @Test
    void receivingTcpThroughAHandlerAllocatesNothingPerSegment() throws Exception {
        try (Simulation sim = new Simulation(); Arena arena = Arena.ofConfined()) {
            final NetStack a = sim.addStack("a", "198.18.0.1/24");
            final NetStack b = sim.addStack("b", "198.18.0.2/24");
            final TcpConnection[] pair = connect(sim, a, b);
            final MemorySegment data = arena.allocate(1 << 16);
            final StreamHandler handler = new StreamHandler(arena.allocate(1 << 16));
            pair[1].receiveHandler(handler);
            final long[] rounds = {0};
            final Runnable round = () -> {
                rounds[0]++;
                try {
                    pair[0].write(data, 0, (int) data.byteSize());
                } catch (TernSocketException e) {
                    throw new IllegalStateException(e);
                }
                for (int i = 0; i < 4; i++) {
                    a.poll(sim.nowNs());
                    b.poll(sim.nowNs());
                }
                pair[1].resumeReceive();
            };
            final long segmentsBefore = b.counters().value("tcp.rx.segments");
            final long allocated = dev.tern.core.testing.Allocations.measure(20_000, 40_000, round);
            final long segments = b.counters().value("tcp.rx.segments") - segmentsBefore;
            System.out.printf("tcp through a handler: %d segments, %d bytes taken, %d allocated while measuring%n",
                segments, handler.taken, allocated);
            assertEquals(0, allocated, "bytes allocated over the measured rounds");
            assertTrue(segments * (rounds[0] - 20_000) / rounds[0] >= 1_000_000, "measured over 1M segments: " + segments
                + " in " + rounds[0] + " rounds, the first 20,000 of them warm-up");
            assertTrue(b.counters().value("tcp.rx.handler_ring_bytes") > 0, "the ring path ran too");
        }
    }

    /** Copies what it takes into one buffer; takes half of every fifth offer. */
    private static final class StreamHandler implements TcpConnection.ReceiveHandler {
        private final MemorySegment sink;
        private long offers;
        long taken;

        StreamHandler(MemorySegment sink) {
            this.sink = sink;
        }

        @Override
        public int onReceive(TcpConnection connection, MemorySegment data, long offset, int length) {
            final int n = ++offers % 5 == 0 ? (length + 1) / 2 : length;
            MemorySegment.copy(data, offset, sink, 0, Math.min(n, (int) sink.byteSize()));
            taken += n;
            return n;
        }
    }

    /** Takes every datagram but declines every seventh offer, so the queue and the resume path run too. */
    private static final class CountingHandler implements UdpSocket.ReceiveHandler {
        long taken;
        private long offers;
        long bytes;

        @Override
        public boolean onDatagram(UdpSocket socket, int sourceAddress, int sourcePort, MemorySegment data, long offset,
                                  int length) {
            if (++offers % 7 == 0) {
                return false;
            }
            bytes += data.get(ValueLayout.JAVA_BYTE, offset);
            taken++;
            return true;
        }
    }
}
