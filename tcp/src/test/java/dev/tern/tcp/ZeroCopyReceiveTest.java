package dev.tern.tcp;

import dev.tern.ethernet.link.ForwardingLink;
import dev.tern.ethernet.link.Link;
import dev.tern.ethernet.link.TxFrame;
import dev.tern.ethernet.memory.MemoryWire;
import dev.tern.tcp.testing.App;
import dev.tern.tcp.testing.Seg;
import dev.tern.tcp.testing.TcpHarness;
import dev.tern.tcp.testing.TcpNetwork;
import dev.tern.tcp.testing.TestStack;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.IntUnaryOperator;
import java.util.function.UnaryOperator;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.longs;

/**
 * Zero-copy receive ({@link TcpReceiveHandler}): in-order text offered in place in the frame, what the handler leaves
 * copied into the ring and offered again first, the stream exact whatever the handler takes, the window open for
 * what it took, and the counters that say which bytes were copied.
 */
class ZeroCopyReceiveTest {
    private static final long SECOND = 1_000_000_000L;
    private static final long MS = 1_000_000L;

    /**
     * The receiving application: a handler whose answer {@code policy} decides (offered length to bytes taken), the
     * bytes it took in order, and what each call was offered from (a frame or the ring).
     */
    static final class Receiver implements TcpEvents, TcpReceiveHandler {
        final TestStack stack;
        final TcpNetwork net;
        final ByteArrayOutputStream taken = new ByteArrayOutputStream();
        final List<String> calls = new ArrayList<>();
        IntUnaryOperator policy = length -> length;
        int connection = -1;
        boolean resumeOnReadable = true;
        Runnable inside;

        Receiver(TestStack stack, TcpNetwork net) {
            this.stack = stack;
            this.net = net;
        }

        @Override
        public int onReceive(int c, MemorySegment data, long offset, int length) {
            assertEquals(connection, c);
            assertTrue(length > 0);
            final boolean fromRing = data.equals(stack.tcp.receiveBuffer(c).memory());
            calls.add((fromRing ? "ring " : "frame ") + length);
            if (inside != null) {
                inside.run();
            }
            final int n = policy.applyAsInt(length);
            final int clamped = Math.max(0, Math.min(n, length));
            final byte[] bytes = new byte[clamped];
            MemorySegment.copy(data, ValueLayout.JAVA_BYTE, offset, bytes, 0, clamped);
            taken.writeBytes(bytes);
            return n;
        }

        @Override
        public void acceptable(int listener) {
            final int c = stack.tcp.accept(listener);
            if (c >= 0) {
                connection = c;
                assertEquals(0, stack.tcp.receiveHandler(c, this, net.now()));
            }
        }

        @Override
        public void readable(int c) {
            if (resumeOnReadable) {
                stack.tcp.deliverReceived(c, net.now());
            }
        }
    }

    /** Two stacks, a listener on a with {@link Receiver}, a client on b with {@link App}. */
    static final class Pair implements AutoCloseable {
        final TcpNetwork net;
        final TestStack a;
        final TestStack b;
        final Receiver receiver;
        final App client;

        Pair(MemoryWire.Builder wire, TcpOptions serverOptions, TcpOptions clientOptions, long seed) {
            this(wire, serverOptions, clientOptions, seed, link -> link);
        }

        Pair(MemoryWire.Builder wire, TcpOptions serverOptions, TcpOptions clientOptions, long seed,
             UnaryOperator<Link> clientLink) {
            net = new TcpNetwork(wire);
            a = net.add("a", "198.18.0.1/24", TcpConfig.builder().isnKey(seed, 1).build());
            b = net.add("b", "198.18.0.2/24", TcpConfig.builder().isnKey(seed, 2).build(), 64, clientLink);
            ImpairedWirePropertyTest.warmArp(net, a, b);
            receiver = new Receiver(a, net);
            client = new App(b, net::now);
            assertTrue(a.tcp.listen(80, 4, serverOptions, receiver) >= 0);
            client.connection = b.tcp.connect(a.address(), 80, 0, clientOptions, client, net.now());
            // Virtual time: the handshake over a wire losing up to 6 % (and corrupting some) may need several SYN
            // retransmissions, 1, 3, 7, 15 s... after the first (one seed took longer than 10 s).
            assertTrue(net.runUntil(() -> receiver.connection >= 0, 120 * SECOND), "accepted");
        }

        Pair() {
            this(MemoryWire.builder(), TcpOptions.DEFAULT.withBuffers(65536, 65536),
                TcpOptions.DEFAULT.withBuffers(65536, 65536), 1);
        }

        long counter(String label) {
            return a.counter(label);
        }

        @Override
        public void close() {
            net.close();
        }
    }

    /** Drops the first frame it sends that carries TCP payload (an Ethernet, IPv4 and TCP frame longer than 54+12). */
    static final class LosesFirstDataFrame extends ForwardingLink {
        private boolean dropped;

        LosesFirstDataFrame(Link inner) {
            super(inner);
        }

        @Override
        public void commit(TxFrame frame) {
            if (!dropped && frame.length() > 14 + 20 + 32 + 12) {
                dropped = true;
                link.abort(frame);
                return;
            }
            link.commit(frame);
        }
    }

    private static byte[] random(long seed, int length) {
        final byte[] bytes = new byte[length];
        new SplittableRandom(seed).nextBytes(bytes);
        return bytes;
    }

    @Nested
    class HandlerKeepsUp {
        @Test
        void everyByteIsTakenInPlaceAndNoneIsCopiedIntoTheRing() {
            try (Pair pair = new Pair()) {
                final byte[] data = random(1, 300_000);
                pair.client.send(data);
                assertTrue(pair.net.runUntil(() -> pair.receiver.taken.size() == data.length, 30 * SECOND));
                assertArrayEquals(data, pair.receiver.taken.toByteArray());
                assertEquals(data.length, pair.counter("tcp.rx.zero_copy_bytes"));
                assertEquals(0, pair.counter("tcp.rx.copied_bytes"));
                assertEquals(0, pair.counter("tcp.rx.handler_ring_bytes"));
                assertEquals(data.length, pair.counter("tcp.rx.bytes"));
                assertTrue(pair.receiver.calls.stream().allMatch(c -> c.startsWith("frame ")), "only frames offered");
                assertEquals(0, pair.a.tcp.receiveBuffer(pair.receiver.connection).available());
            }
        }

        @Test
        void theWindowStaysOpenForBytesTakenInPlace() {
            try (Pair pair = new Pair()) {
                pair.client.send(random(2, 40_000));
                assertTrue(pair.net.runUntil(() -> pair.receiver.taken.size() == 40_000, 10 * SECOND));
                pair.net.runFor(100 * MS);
                // Nothing sits in the ring: the whole buffer is offered, as if the application had read everything.
                assertEquals(65536, pair.a.tcp.receiveWindow(pair.receiver.connection));
            }
        }

        @Test
        void withoutAHandlerTheSameBytesUnreadCloseTheWindow() {
            try (Pair pair = new Pair()) {
                pair.a.tcp.receiveHandler(pair.receiver.connection, null, pair.net.now());
                pair.client.send(random(2, 40_000));
                assertTrue(pair.net.runUntil(() -> pair.counter("tcp.rx.bytes") == 40_000, 10 * SECOND));
                pair.net.runFor(100 * MS);
                assertEquals(65536 - 40_000, pair.a.tcp.receiveWindow(pair.receiver.connection), 1024);
                assertEquals(40_000, pair.counter("tcp.rx.copied_bytes"));
                assertEquals(0, pair.counter("tcp.rx.zero_copy_bytes"));
            }
        }

        @Test
        void theHandlerMayWriteAndTheReplyLeavesInTheSamePoll() {
            try (Pair pair = new Pair()) {
                final MemorySegment reply = MemorySegment.ofArray("ok".getBytes());
                pair.receiver.inside = () -> {
                    pair.a.tcp.sendBuffer(pair.receiver.connection).write(reply, 0, 2);
                    pair.a.tcp.sendable(pair.receiver.connection, pair.net.now());
                };
                pair.client.send("hello".getBytes());
                assertTrue(pair.net.runUntil(() -> pair.client.received.size() == 2, 5 * SECOND));
                assertEquals("ok", pair.client.received.toString());
                assertEquals("hello", pair.receiver.taken.toString());
                assertEquals(0, pair.counter("tcp.rx.handler_errors"));
            }
        }
    }

    /** The windows the ACKs carry, segment by segment (a 4096-byte buffer, segments of 1000 bytes). */
    @Nested
    class OnTheWire {
        private static final int L = TcpHarness.LOCAL_ISS + 1;
        private static final int R = TcpHarness.REMOTE_ISS + 1;

        private TcpHarness harness() {
            return TcpHarness.activeOpen(TcpHarness.config().build(), TcpOptions.DEFAULT.withBuffers(0, 4096),
                Seg.SYN_ACK.mss(1000));
        }

        /**
         * Taken bytes count as read before the ACK goes: the ring stays empty, and only receiver silly window
         * avoidance (RFC 9293 §3.8.6.2.2: the right edge moves by min(buffer / 2, MSS) or more, here 1460) keeps the
         * first and third ACKs at 3096; the second and fourth offer the whole buffer again. Bytes left unread would
         * give 3096, 2096, 1096, 96 (next test).
         */
        @Test
        void theAcksOfferTheWholeBufferAgainAsIfEveryByteWasReadAtOnce() {
            final int[] windows = {3096, 4096, 3096, 4096};
            try (TcpHarness h = harness()) {
                final ByteArrayOutputStream taken = new ByteArrayOutputStream();
                h.tcp.receiveHandler(h.conn, (c, data, offset, length) -> {
                    taken.writeBytes(data.asSlice(offset, length).toArray(ValueLayout.JAVA_BYTE));
                    return length;
                }, h.now());
                for (int i = 1; i <= 4; i++) {
                    h.send(Seg.ACK.seq(R + 1000 * (i - 1)).ack(L).payload(TcpHarness.bytes(1000)));
                    h.expect(Seg.ACK.seq(L).ack(R + 1000 * i).window(windows[i - 1]));
                }
                assertEquals(4000, taken.size());
                assertEquals(4000, h.counter("tcp.rx.zero_copy_bytes"));
                assertEquals(0, h.counter("tcp.rx.copied_bytes"));
            }
        }

        @Test
        void bytesTheHandlerLeftCloseTheWindowAndTakingThemOpensItWithAnUpdate() {
            try (TcpHarness h = harness()) {
                final boolean[] open = {false};
                final ByteArrayOutputStream taken = new ByteArrayOutputStream();
                h.tcp.receiveHandler(h.conn, (c, data, offset, length) -> {
                    if (!open[0]) {
                        return 0;
                    }
                    taken.writeBytes(data.asSlice(offset, length).toArray(ValueLayout.JAVA_BYTE));
                    return length;
                }, h.now());
                final int[] windows = {3096, 2096, 1096, 96};
                for (int i = 1; i <= 4; i++) {
                    h.send(Seg.ACK.seq(R + 1000 * (i - 1)).ack(L).payload(TcpHarness.bytes(1000)));
                    h.expect(Seg.ACK.seq(L).ack(R + 1000 * i).window(windows[i - 1]));
                }
                open[0] = true;
                h.tcp.deliverReceived(h.conn, h.now());
                h.poll();
                h.expect(Seg.ACK.seq(L).ack(R + 4000).window(4096));
                assertEquals(1, h.counter("tcp.tx.window_updates"));
                final byte[] expected = new byte[4000];
                for (int i = 0; i < 4; i++) {
                    System.arraycopy(TcpHarness.bytes(1000), 0, expected, 1000 * i, 1000);
                }
                assertArrayEquals(expected, taken.toByteArray());
            }
        }
    }

    @Nested
    class RingFallback {
        @Test
        void bytesTheHandlerLeftComeFirstWhenItTakesAgain() {
            try (Pair pair = new Pair()) {
                pair.receiver.resumeOnReadable = false;
                final boolean[] open = {false};
                pair.receiver.policy = length -> open[0] ? length : 0;
                final byte[] first = random(3, 20_000);
                pair.client.send(first);
                assertTrue(pair.net.runUntil(() -> pair.counter("tcp.rx.bytes") == first.length, 10 * SECOND));
                assertEquals(0, pair.receiver.taken.size());
                assertEquals(first.length, pair.a.tcp.receiveBuffer(pair.receiver.connection).available());
                assertEquals(first.length, pair.counter("tcp.rx.copied_bytes"));
                // The application catches up: the next segment finds the ring offered before it.
                open[0] = true;
                pair.receiver.calls.clear();
                final byte[] second = random(4, 5_000);
                pair.client.send(second);
                assertTrue(pair.net.runUntil(() -> pair.receiver.taken.size() == first.length + second.length,
                    10 * SECOND));
                final byte[] both = Arrays.copyOf(first, first.length + second.length);
                System.arraycopy(second, 0, both, first.length, second.length);
                assertArrayEquals(both, pair.receiver.taken.toByteArray());
                assertTrue(pair.receiver.calls.getFirst().startsWith("ring "), pair.receiver.calls.toString());
                assertEquals(first.length, pair.counter("tcp.rx.handler_ring_bytes"));
                assertEquals(first.length, pair.counter("tcp.rx.copied_bytes"), "the second part went in place");
                assertEquals(second.length, pair.counter("tcp.rx.zero_copy_bytes"));
            }
        }

        @Test
        void aPartialTakeLeavesTheRestInTheRingInOrder() {
            try (Pair pair = new Pair()) {
                pair.receiver.resumeOnReadable = false;
                pair.receiver.policy = length -> length / 3;
                final byte[] data = random(5, 100_000);
                pair.client.send(data);
                assertTrue(pair.net.runUntil(() -> pair.counter("tcp.rx.bytes") == data.length, 30 * SECOND));
                final int taken = pair.receiver.taken.size();
                assertTrue(taken > 0 && taken < data.length);
                assertArrayEquals(Arrays.copyOf(data, taken), pair.receiver.taken.toByteArray());
                pair.receiver.policy = length -> length;
                pair.a.tcp.deliverReceived(pair.receiver.connection, pair.net.now());
                assertArrayEquals(data, pair.receiver.taken.toByteArray());
                assertEquals(data.length, pair.counter("tcp.rx.zero_copy_bytes") + pair.counter("tcp.rx.handler_ring_bytes"));
            }
        }

        @Test
        void takingFromTheRingOpensTheWindowAtOnce() {
            try (Pair pair = new Pair()) {
                pair.receiver.resumeOnReadable = false;
                final boolean[] open = {false};
                pair.receiver.policy = length -> open[0] ? length : 0;
                final byte[] data = random(6, 200_000);
                pair.client.send(data);
                // The ring fills and the window closes: the sender stops.
                assertTrue(pair.net.runUntil(() -> pair.a.tcp.receiveWindow(pair.receiver.connection) == 0,
                    10 * SECOND), "window " + pair.a.tcp.receiveWindow(pair.receiver.connection) + " after "
                    + pair.counter("tcp.rx.bytes"));
                pair.net.runFor(100 * MS);
                assertEquals(pair.counter("tcp.rx.bytes"),
                    pair.a.tcp.receiveBuffer(pair.receiver.connection).available());
                final long updates = pair.counter("tcp.tx.window_updates");
                open[0] = true;
                pair.a.tcp.deliverReceived(pair.receiver.connection, pair.net.now());
                assertEquals(updates + 1, pair.counter("tcp.tx.window_updates"), "a window update went at once");
                assertEquals(65536, pair.a.tcp.receiveWindow(pair.receiver.connection));
                assertTrue(pair.net.runUntil(() -> pair.receiver.taken.size() == data.length, 30 * SECOND));
                assertArrayEquals(data, pair.receiver.taken.toByteArray());
            }
        }

        @Test
        void bytesThatArrivedBeforeTheHandlerWasSetAreOfferedWhenItIs() {
            try (Pair pair = new Pair()) {
                pair.a.tcp.receiveHandler(pair.receiver.connection, null, pair.net.now());
                final byte[] data = random(7, 3_000);
                pair.client.send(data);
                assertTrue(pair.net.runUntil(() -> pair.counter("tcp.rx.bytes") == data.length, 10 * SECOND));
                assertEquals(0, pair.receiver.taken.size());
                pair.a.tcp.receiveHandler(pair.receiver.connection, pair.receiver, pair.net.now());
                assertArrayEquals(data, pair.receiver.taken.toByteArray());
                assertEquals(List.of("ring 3000"), pair.receiver.calls);
            }
        }

        @Test
        void textFillingAHoleReachesTheHandlerThroughTheRingWithWhatWasHeldBehindIt() {
            // Lose exactly one frame from b to a (the first data segment), so the rest is held beyond a hole.
            try (Pair pair = new Pair(MemoryWire.builder(), TcpOptions.DEFAULT.withBuffers(65536, 65536),
                TcpOptions.DEFAULT.withBuffers(65536, 65536).withNoDelay(true), 1, LosesFirstDataFrame::new)) {
                final byte[] data = random(8, 6_000);
                pair.client.send(data);
                assertTrue(pair.net.runUntil(() -> pair.receiver.taken.size() == data.length, 10 * SECOND),
                    pair.receiver.calls.toString());
                assertArrayEquals(data, pair.receiver.taken.toByteArray());
                assertTrue(pair.counter("tcp.rx.out_of_order") > 0);
                assertTrue(pair.receiver.calls.contains("ring " + data.length), pair.receiver.calls.toString());
            }
        }
    }

    @Nested
    class EndOfStreamAndErrors {
        @Test
        void theFinFollowsEveryByteTheHandlerTook() {
            try (Pair pair = new Pair()) {
                final byte[] data = random(9, 50_000);
                pair.client.closeWhenSent = true;
                pair.client.send(data);
                assertTrue(pair.net.runUntil(() -> pair.a.tcp.receiveShutdown(pair.receiver.connection), 10 * SECOND));
                assertArrayEquals(data, pair.receiver.taken.toByteArray());
                assertEquals(TcpState.CLOSE_WAIT, pair.a.tcp.state(pair.receiver.connection));
            }
        }

        @Test
        void aFinBehindBytesLeftInTheRingWaitsForThemToBeTaken() {
            try (Pair pair = new Pair()) {
                pair.receiver.resumeOnReadable = false;
                pair.receiver.policy = length -> 0;
                final byte[] data = random(10, 10_000);
                pair.client.closeWhenSent = true;
                pair.client.send(data);
                assertTrue(pair.net.runUntil(() -> pair.a.tcp.receiveShutdown(pair.receiver.connection), 10 * SECOND));
                assertEquals(data.length, pair.a.tcp.receiveBuffer(pair.receiver.connection).available());
                pair.receiver.policy = length -> length;
                pair.a.tcp.deliverReceived(pair.receiver.connection, pair.net.now());
                assertArrayEquals(data, pair.receiver.taken.toByteArray());
                // Everything taken: closing is graceful (no reset for unread data).
                pair.a.tcp.close(pair.receiver.connection, pair.net.now());
                pair.net.runFor(SECOND);
                assertEquals(0, pair.counter("tcp.conn.aborted"));
            }
        }

        @Test
        void aResetEndsTheConnectionAndTheHandlerIsNotCalledAgain() {
            try (Pair pair = new Pair()) {
                pair.client.send(random(11, 2_000));
                assertTrue(pair.net.runUntil(() -> pair.receiver.taken.size() == 2_000, 10 * SECOND));
                final int calls = pair.receiver.calls.size();
                pair.b.tcp.abort(pair.client.connection, pair.net.now());
                pair.net.runFor(SECOND);
                assertEquals(TcpState.CLOSED, pair.a.tcp.state(pair.receiver.connection));
                assertEquals(1, pair.counter("tcp.conn.resets_received"));
                pair.a.tcp.deliverReceived(pair.receiver.connection, pair.net.now());
                assertEquals(calls, pair.receiver.calls.size());
            }
        }

        @Test
        void aHandlerThatThrowsIsCountedAndItsBytesStayInTheStream() {
            try (Pair pair = new Pair()) {
                pair.receiver.resumeOnReadable = false;
                final int[] throwsLeft = {1};
                pair.receiver.inside = () -> {
                    if (throwsLeft[0]-- > 0) {
                        throw new IllegalArgumentException("application bug");
                    }
                };
                final byte[] data = random(12, 1_000);
                pair.client.send(data);
                assertTrue(pair.net.runUntil(() -> pair.counter("tcp.rx.bytes") == data.length, 10 * SECOND));
                assertEquals(1, pair.counter("tcp.rx.handler_errors"));
                assertEquals(0, pair.counter("stack.internal_errors"));
                pair.a.tcp.deliverReceived(pair.receiver.connection, pair.net.now());
                assertArrayEquals(data, pair.receiver.taken.toByteArray());
            }
        }

        @Test
        void closingFromInsideTheHandlerIsRefusedAndLeavesTheConnectionAlone() {
            try (Pair pair = new Pair()) {
                pair.receiver.inside = () -> pair.a.tcp.close(pair.receiver.connection, pair.net.now());
                pair.client.send(random(13, 500));
                assertTrue(pair.net.runUntil(() -> pair.counter("tcp.rx.handler_errors") > 0, 10 * SECOND));
                assertEquals(TcpState.ESTABLISHED, pair.a.tcp.state(pair.receiver.connection));
                assertFalse(pair.a.tcp.receiveShutdown(pair.receiver.connection));
            }
        }
    }

    /**
     * The stream is exact whatever the wire and the handler do: random write sizes (so random segmentation), loss,
     * duplication, reordering and corruption on the seeded wire, a handler that takes a random prefix of each offer
     * (nothing, everything, or a part) and an application that catches up at random readable events. The bytes taken
     * equal the bytes sent, and each byte reached the handler exactly once: in place or from the ring.
     */
    @Test
    void theHandlersBytesEqualTheSentStreamOverAnImpairedWire() {
        qt().withExamples(Integer.getInteger("tern.tcp.examples", 60)).withShrinkCycles(10)
            .forAll(longs().all(), integers().between(1, 200_000), integers().between(0, 60))
            .checkAssert(ZeroCopyReceiveTest::transfer);
    }

    static void transfer(long seed, int bytes, int lossPermille) {
        final SplittableRandom random = new SplittableRandom(seed);
        final MemoryWire.Builder wire = MemoryWire.builder().seed(seed).loss(lossPermille / 1000.0)
            .duplication(random.nextDouble() * 0.03).reordering(random.nextDouble() * 0.1, 1_000_000)
            .corruption(random.nextDouble() * 0.01).delay(50_000, random.nextInt(100_000));
        final int[] buffers = {4096, 16384, 65536};
        final String scenario = "seed " + seed + ", bytes " + bytes + ", loss " + lossPermille + "/1000";
        try (Pair pair = new Pair(wire, TcpOptions.DEFAULT.withBuffers(65536, buffers[random.nextInt(3)]),
            TcpOptions.DEFAULT.withBuffers(buffers[random.nextInt(3)], 65536).withNoDelay(random.nextBoolean()), seed)) {
            final SplittableRandom handlerRandom = random.split();
            pair.receiver.policy = length -> switch (handlerRandom.nextInt(4)) {
                case 0 -> 0;
                case 1 -> handlerRandom.nextInt(length + 1);
                default -> length;
            };
            pair.receiver.resumeOnReadable = false;
            final SplittableRandom resumeRandom = random.split();
            pair.net.onPoll(() -> {
                if (pair.receiver.connection >= 0 && resumeRandom.nextInt(8) == 0) {
                    pair.a.tcp.deliverReceived(pair.receiver.connection, pair.net.now());
                }
            });
            final byte[] data = random(seed, bytes);
            int sent = 0;
            while (sent < bytes) {
                final int chunk = Math.min(bytes - sent, 1 + random.nextInt(9_000));
                pair.client.send(Arrays.copyOfRange(data, sent, sent + chunk));
                sent += chunk;
                pair.net.runFor(random.nextInt(3) * MS);
            }
            final boolean done = pair.net.runUntil(() -> pair.receiver.taken.size() >= bytes, 600 * SECOND);
            assertTrue(done, "did not finish: " + scenario + ", taken " + pair.receiver.taken.size());
            assertArrayEquals(data, pair.receiver.taken.toByteArray(), scenario);
            assertEquals(bytes, pair.counter("tcp.rx.bytes"), scenario);
            assertEquals(bytes, pair.counter("tcp.rx.zero_copy_bytes") + pair.counter("tcp.rx.handler_ring_bytes"),
                scenario);
            assertTrue(pair.counter("tcp.rx.copied_bytes") >= pair.counter("tcp.rx.handler_ring_bytes"), scenario);
            assertEquals(0, pair.counter("stack.internal_errors") + pair.counter("tcp.rx.handler_errors"), scenario);
        }
    }
}
