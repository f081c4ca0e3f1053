package dev.tern.tcp;

import dev.tern.core.io.ByteRing;
import dev.tern.core.net.Ipv6Address;
import dev.tern.core.net.Ipv6InterfaceAddress;
import dev.tern.core.testing.Allocations;
import dev.tern.core.time.VirtualClock;
import dev.tern.ethernet.memory.MemoryWire;
import dev.tern.ipv4.Ipv4Config;
import dev.tern.ipv6.Ipv6Config;
import dev.tern.tcp.testing.TestStack;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Steady-state TCP allocates nothing per segment: two stacks on the memory wire, driven from this thread, first a
 * bulk transfer, then request/response. The warm-up is long enough for C2 (before escape analysis, the JDK's own
 * MemorySegment.copy allocates); then at least a million segments are measured with ThreadMXBean.
 */
class ZeroAllocationTest {
    private static final int WARMUP = Integer.getInteger("warmup", 200_000);
    private static final long MIN_SEGMENTS = 1_000_000;

    /** Two connected stacks and the two ends of one connection, with no allocation in the driving loop. */
    static final class Pair implements AutoCloseable {
        final VirtualClock clock = new VirtualClock(1_000_000_000L);
        final MemoryWire wire;
        final TestStack server;
        final TestStack client;
        final Arena arena = Arena.ofConfined();
        final MemorySegment data = arena.allocate(1 << 16);
        final MemorySegment sink = arena.allocate(1 << 16);
        int clientConnection = -1;
        int serverConnection = -1;

        Pair() {
            this(MemoryWire.builder());
        }

        Pair(MemoryWire.Builder wireBuilder) {
            this(wireBuilder, TcpConfig.defaults(), TcpConfig.defaults());
        }

        Pair(MemoryWire.Builder wireBuilder, TcpConfig serverConfig, TcpConfig clientConfig) {
            this(wireBuilder, serverConfig, clientConfig, false);
        }

        /** With {@code ipv6}, the connection runs over IPv6 (2001:db8::1 and ::2, no DAD). */
        Pair(MemoryWire.Builder wireBuilder, TcpConfig serverConfig, TcpConfig clientConfig, boolean ipv6) {
            wire = wireBuilder.clock(clock).frames(8192).build();
            server = new TestStack("server", wire.attach("server", 0x0200_0000_0001L), "198.18.0.1/24",
                serverConfig, Ipv4Config.DEFAULT, ipv6 ? ipv6Config("2001:db8::1/64") : Ipv6Config.DISABLED,
                clock.nanoTime(), 64);
            client = new TestStack("client", wire.attach("client", 0x0200_0000_0002L), "198.18.0.2/24",
                clientConfig, Ipv4Config.DEFAULT, ipv6 ? ipv6Config("2001:db8::2/64") : Ipv6Config.DISABLED,
                clock.nanoTime(), 64);
            final int listener = server.tcp.listen(80, 4, TcpOptions.DEFAULT.withNoDelay(true), TcpEvents.NONE);
            final Ipv6Address serverAddress = Ipv6Address.parse("2001:db8::1");
            clientConnection = ipv6
                ? client.tcp.connect6(serverAddress.high(), serverAddress.low(), 80, 0,
                    TcpOptions.DEFAULT.withNoDelay(true), TcpEvents.NONE, clock.nanoTime())
                : client.tcp.connect(server.address(), 80, 0, TcpOptions.DEFAULT.withNoDelay(true),
                    TcpEvents.NONE, clock.nanoTime());
            assertTrue(clientConnection >= 0, "connect: " + clientConnection);
            for (int i = 0; i < 10_000 && serverConnection < 0; i++) {
                poll();
                clock.advance(1_000_000);
                serverConnection = server.tcp.accept(listener);
            }
            assertTrue(serverConnection >= 0, "connected");
            for (int i = 0; i < data.byteSize(); i++) {
                data.set(java.lang.foreign.ValueLayout.JAVA_BYTE, i, (byte) i);
            }
        }

        void poll() {
            final long now = clock.nanoTime();
            client.poll(now);
            server.poll(now);
        }

        private int clientSegmentsId = -1;
        private int serverSegmentsId = -1;

        /** Segments both sent; reads the counters by id (CountersFile.value scans and allocates). */
        long segments() {
            if (clientSegmentsId < 0) {
                clientSegmentsId = counterId(client, "tcp.tx.segments");
                serverSegmentsId = counterId(server, "tcp.tx.segments");
            }
            return client.counters.reader().getCounterValue(clientSegmentsId)
                + server.counters.reader().getCounterValue(serverSegmentsId);
        }

        private static int counterId(TestStack stack, String label) {
            final int[] found = {-1};
            stack.counters.reader().forEach((id, text) -> {
                if (text.equals(label)) {
                    found[0] = id;
                }
            });
            return found[0];
        }

        /** One round of a bulk transfer client to server: fill the send ring, move frames, drain the receive ring. */
        void bulkRound() {
            final ByteRing out = client.tcp.sendBuffer(clientConnection);
            final int room = out.freeSpace();
            if (room > 0) {
                out.write(data, 0, Math.min(room, (int) data.byteSize()));
                client.tcp.sendable(clientConnection, clock.nanoTime());
            }
            poll();
            final ByteRing in = server.tcp.receiveBuffer(serverConnection);
            int available;
            while ((available = in.available()) > 0) {
                in.read(sink, 0, Math.min(available, (int) sink.byteSize()));
            }
            server.tcp.consumed(serverConnection, clock.nanoTime());
            poll();
            clock.advance(20_000);
        }

        /**
         * One round of a bulk transfer whose server takes the data through a receive handler: fill the send ring, move
         * frames, let the handler catch up with what it left in the ring.
         */
        void zeroCopyBulkRound() {
            final ByteRing out = client.tcp.sendBuffer(clientConnection);
            final int room = out.freeSpace();
            if (room > 0) {
                out.write(data, 0, Math.min(room, (int) data.byteSize()));
                client.tcp.sendable(clientConnection, clock.nanoTime());
            }
            poll();
            server.tcp.deliverReceived(serverConnection, clock.nanoTime());
            poll();
            clock.advance(20_000);
        }

        /**
         * Warms up with a quarter of {@link #WARMUP} bulk rounds, then returns the bytes allocated over bulk rounds
         * that carry at least {@link #MIN_SEGMENTS} segments.
         */
        long bulkAllocations() {
            for (int i = 0; i < WARMUP / 4; i++) {
                bulkRound();
            }
            return Allocations.measure(0, 1, () -> {
                final long start = segments();
                while (segments() - start < MIN_SEGMENTS) {
                    bulkRound();
                }
            });
        }

        /** One 64-byte request and its 64-byte response. */
        void requestResponseRound() {
            client.tcp.sendBuffer(clientConnection).write(data, 0, 64);
            client.tcp.sendable(clientConnection, clock.nanoTime());
            poll();
            final ByteRing request = server.tcp.receiveBuffer(serverConnection);
            request.read(sink, 0, request.available());
            server.tcp.consumed(serverConnection, clock.nanoTime());
            server.tcp.sendBuffer(serverConnection).write(sink, 0, 64);
            server.tcp.sendable(serverConnection, clock.nanoTime());
            poll();
            final ByteRing response = client.tcp.receiveBuffer(clientConnection);
            response.read(sink, 0, response.available());
            client.tcp.consumed(clientConnection, clock.nanoTime());
            clock.advance(5_000);
        }

        @Override
        public void close() {
            client.close();
            server.close();
            wire.close();
            arena.close();
        }
    }

    private static Ipv6Config ipv6Config(String address) {
        return Ipv6Config.withAddresses(List.of(Ipv6InterfaceAddress.parse(address))).withDadTransmits(0);
    }

    /** Over IPv6 as well: the fold, the row's address check, IPv6 output and its checksum allocate nothing. */
    @ParameterizedTest(name = "ipv6 {0}")
    @ValueSource(booleans = {false, true})
    void bulkTransferAllocatesNothingPerSegment(boolean ipv6) {
        try (Pair pair = new Pair(MemoryWire.builder(), TcpConfig.defaults(), TcpConfig.defaults(), ipv6)) {
            assertEquals(ipv6, pair.client.tcp.ipv6(pair.clientConnection));
            final long segmentsBefore = pair.segments();
            final long receivedBefore = pair.server.tcp.bytesReceived(pair.serverConnection);
            // About 48 segments per round (64 KiB written, 1460-byte segments): 25,000 rounds are over 1M segments.
            final int rounds = 25_000;
            final long allocated = Allocations.measure(WARMUP / 4, rounds, pair::bulkRound);
            final long segments = pair.segments() - segmentsBefore;
            System.out.printf("bulk: %d segments (warm-up included) in %d rounds, %d MB moved, %d bytes allocated "
                + "while measuring%n", segments, WARMUP / 4 + rounds,
                (pair.server.tcp.bytesReceived(pair.serverConnection) - receivedBefore) >> 20, allocated);
            assertTrue(segments * rounds / (WARMUP / 4 + rounds) >= MIN_SEGMENTS, "measured over 1M segments");
            assertEquals(0, allocated, "bytes allocated over the measured rounds");
            assertEquals(0, pair.client.counter("tcp.tx.retransmits"));
        }
    }

    /**
     * A handler that copies what it takes into one buffer (the application's own copy), taking everything from two
     * offers in three and half of the third, so both the in-place path and the ring it falls back to are measured.
     */
    static final class CopyingHandler implements TcpReceiveHandler {
        private final MemorySegment sink;
        long taken;
        private int calls;

        CopyingHandler(MemorySegment sink) {
            this.sink = sink;
        }

        @Override
        public int onReceive(int connection, MemorySegment data, long offset, int length) {
            final int n = ++calls % 3 == 0 ? (length + 1) / 2 : length;
            final int copy = Math.min(n, (int) sink.byteSize());
            MemorySegment.copy(data, offset, sink, 0, copy);
            taken += n;
            return n;
        }
    }

    @Test
    void bulkTransferThroughAReceiveHandlerAllocatesNothingPerSegment() {
        try (Pair pair = new Pair()) {
            final CopyingHandler handler = new CopyingHandler(pair.sink);
            assertEquals(0, pair.server.tcp.receiveHandler(pair.serverConnection, handler, pair.clock.nanoTime()));
            final long segmentsBefore = pair.segments();
            final int rounds = 25_000;
            final long allocated = Allocations.measure(WARMUP / 4, rounds, pair::zeroCopyBulkRound);
            final long segments = pair.segments() - segmentsBefore;
            final long inPlace = pair.server.counter("tcp.rx.zero_copy_bytes");
            final long fromRing = pair.server.counter("tcp.rx.handler_ring_bytes");
            System.out.printf("zero-copy bulk: %d segments in %d rounds, %d MB in place, %d MB from the ring, %d bytes "
                + "allocated while measuring%n", segments, WARMUP / 4 + rounds, inPlace >> 20, fromRing >> 20, allocated);
            assertTrue(segments * rounds / (WARMUP / 4 + rounds) >= MIN_SEGMENTS, "measured over 1M segments");
            assertEquals(0, allocated, "bytes allocated over the measured rounds");
            assertTrue(inPlace > 0 && fromRing > 0, "both paths ran");
            assertEquals(pair.server.tcp.bytesReceived(pair.serverConnection),
                inPlace + fromRing + pair.server.tcp.receiveBuffer(pair.serverConnection).available());
        }
    }

    /**
     * Loss recovery allocates nothing either: 1 % loss and 1 % reordering exercise SACK, RACK's timer, tail loss probes,
     * PRR and undo, with the sender traced (the trace fills and then counts what it drops, both without allocating).
     */
    @Test
    void bulkTransferOverALossyWireWithATraceAllocatesNothingPerSegment() {
        try (Pair pair = new Pair(MemoryWire.builder().seed(7).loss(0.01).reordering(0.01, 40_000).delay(5_000, 0));
             TcpTrace trace = new TcpTrace(1 << 14)) {
            pair.client.tcp.trace(pair.clientConnection, trace);
            for (int i = 0; i < WARMUP / 4; i++) {
                pair.bulkRound();
            }
            // A window is a number of segments, not of rounds: how many segments a round carries swings with the
            // losses (retransmission timeouts leave thousands of rounds nearly empty).
            final long[] rounds = {0};
            final Runnable millionSegments = () -> {
                final long start = pair.segments();
                while (pair.segments() - start < MIN_SEGMENTS) {
                    pair.bulkRound();
                    rounds[0]++;
                }
            };
            final long segmentsBefore = pair.segments();
            final long allocated = Allocations.measure(0, 1, millionSegments);
            final long segments = pair.segments() - segmentsBefore;
            System.out.printf("lossy bulk: %d segments in %d measured rounds, %d retransmitted, %d trace records "
                    + "dropped, %d bytes allocated while measuring; client %s; server %s%n", segments, rounds[0],
                pair.client.counter("tcp.tx.retransmits"), trace.dropped(), allocated,
                pair.client.tcp.info(pair.clientConnection), pair.server.tcp.info(pair.serverConnection));
            assertTrue(segments >= MIN_SEGMENTS, "measured over 1M segments");
            assertEquals(0, allocated, "bytes allocated over the measured rounds");
            assertTrue(pair.client.counter("tcp.fast_recoveries.sack") > 100, "SACK recoveries happened");
            assertTrue(pair.client.counter("tcp.tx.retransmits") > 1000, "retransmissions happened");
            assertTrue(trace.available() > 0 && trace.dropped() > 0, "the trace was written until it was full");
        }
    }

    @Test
    void bulkTransferWithEcnMarksAllocatesNothingPerSegment() {
        // RFC 3168 on both ends: ECT(0) data, CE marks on 1 % of it, echoed and answered by reductions.
        final TcpConfig ecn = TcpConfig.builder().ecn(EcnMode.ON).build();
        try (Pair pair = new Pair(MemoryWire.builder().seed(11).ceMarking(0.01).delay(5_000, 0), ecn, ecn)) {
            final long allocated = pair.bulkAllocations();
            System.out.printf("ECN bulk: %d bytes allocated; CE marked %d, reductions %d, retransmits %d; %s%n",
                allocated, pair.wire.stats.ceMarked, pair.client.counter("tcp.ecn.reductions"),
                pair.client.counter("tcp.tx.retransmits"), pair.client.tcp.info(pair.clientConnection));
            assertEquals(0, allocated, "bytes allocated over the measured rounds");
            assertTrue(pair.client.tcp.info(pair.clientConnection).ecn(), "negotiated");
            assertTrue(pair.server.counter("tcp.ecn.ce_received") > 100, "marks arrived");
            assertTrue(pair.client.counter("tcp.ecn.reductions") > 100, "marks were answered");
            assertEquals(0, pair.client.counter("tcp.tx.retransmits"), "marks cause no retransmission");
        }
    }

    /**
     * BBR allocates nothing either: its table is allocated as the layer starts, and every ACK updates the model and
     * the delivery rate sample in place. Over a lossy, delayed wire, so that recovery and the loss response run too.
     */
    @Test
    void bulkTransferWithBbrAllocatesNothingPerSegment() {
        final TcpConfig bbr = TcpConfig.builder().congestionControl(BbrCongestionControl.NAME).build();
        try (Pair pair = new Pair(MemoryWire.builder().seed(13).loss(0.005).delay(50_000, 0), bbr, bbr)) {
            final long allocated = pair.bulkAllocations();
            final TcpInfo info = pair.client.tcp.info(pair.clientConnection);
            System.out.printf("BBR bulk: %d bytes allocated; retransmits %d; %s%n", allocated,
                pair.client.counter("tcp.tx.retransmits"), info);
            assertEquals(0, allocated, "bytes allocated over the measured rounds");
            assertEquals(BbrCongestionControl.NAME, info.congestionControl());
            assertTrue(info.pacingRate() > 0, "BBR paces");
            assertTrue(pair.client.counter("tcp.tx.retransmits") > 100, "losses were recovered");
        }
    }

    @Test
    void requestResponseAllocatesNothingPerSegment() {
        try (Pair pair = new Pair()) {
            final long segmentsBefore = pair.segments();
            // Each exchange is two data segments (the ACKs ride on them or on the delayed ACK timer).
            final int rounds = 500_000;
            // Allocations.measure runs settling windows before the measured one; count the exchanges it ran.
            final long[] exchanges = {0};
            final Runnable exchange = () -> {
                pair.requestResponseRound();
                exchanges[0]++;
            };
            final long allocated = Allocations.measure(WARMUP, rounds, exchange);
            final long segments = pair.segments() - segmentsBefore;
            System.out.printf("request/response: %d segments (warm-up included) in %d exchanges, %d bytes allocated "
                + "while measuring%n", segments, exchanges[0], allocated);
            assertTrue(segments * rounds / exchanges[0] >= MIN_SEGMENTS, "measured over 1M segments");
            assertEquals(0, allocated, "bytes allocated over " + rounds + " exchanges");
            assertEquals(64L * exchanges[0], pair.server.tcp.bytesReceived(pair.serverConnection));
        }
    }
}
