package dev.tern.ethernet.memory;

import dev.tern.core.checksum.InternetChecksum;
import dev.tern.core.memory.BigEndian;
import dev.tern.core.testing.Allocations;
import dev.tern.core.time.VirtualClock;
import dev.tern.ethernet.link.FrameHandler;
import dev.tern.ethernet.link.Offloads;
import dev.tern.ethernet.link.TxFrame;
import dev.tern.ethernet.wire.EtherType;
import dev.tern.ethernet.wire.EthernetHeader;
import dev.tern.ethernet.wire.MacAddress;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.longs;

class MemoryWireTest {
    private static final long A = 0x0200_0000_000AL;
    private static final long B = 0x0200_0000_000BL;
    private static final long C = 0x0200_0000_000CL;
    private static final long MS = 1_000_000;

    private final VirtualClock clock = new VirtualClock();
    private final TxFrame tx = new TxFrame();
    private final EthernetHeader ethernet = new EthernetHeader();

    /** Sends one 100-byte frame whose payload starts with {@code tag}. */
    private void send(MemoryLink from, long destination, int tag) {
        send(from, destination, tag, 100);
    }

    private void send(MemoryLink from, long destination, int tag, int length) {
        assertTrue(from.claim(tx));
        ethernet.wrap(tx.segment(), tx.offset(), length).destination(destination).source(from.macAddress()).etherType(0x88B5);
        BigEndian.i32(tx.segment(), tx.offset() + EthernetHeader.LENGTH, tag);
        tx.length(length);
        from.commit(tx);
        from.flush();
    }

    /** Receives everything due now and returns the tags. */
    private static List<Integer> tags(MemoryLink link) {
        final List<Integer> tags = new ArrayList<>();
        link.receive((segment, offset, length, flags) -> tags.add(BigEndian.i32(segment, offset + EthernetHeader.LENGTH)), 1000);
        return tags;
    }

    @Test
    void unicastReachesOnlyTheAddressedPortBroadcastReachesAllOthers() {
        try (MemoryWire wire = MemoryWire.builder().clock(clock).build()) {
            final MemoryLink a = wire.attach("a", A);
            final MemoryLink b = wire.attach("b", B);
            final MemoryLink c = wire.attach("c", C);
            send(a, B, 1);
            send(a, MacAddress.BROADCAST, 2);
            send(a, 0x0200_0000_00FFL, 3);
            assertEquals(List.of(1, 2), tags(b));
            assertEquals(List.of(2), tags(c));
            assertEquals(List.of(), tags(a), "a sender does not hear itself");
            assertEquals(0, wire.framesInUse(), "every buffer back once handled");
        }
    }

    @Test
    void multicastReachesOnlySubscribedPortsUntilTheyLeave() {
        try (MemoryWire wire = MemoryWire.builder().clock(clock).build()) {
            final MemoryLink a = wire.attach("a", A);
            final MemoryLink b = wire.attach("b", B);
            final MemoryLink c = wire.attach("c", C);
            final long group = MacAddress.ofIpv4Multicast(0xE0000101);
            b.addMulticast(group);
            b.addMulticast(group);
            send(a, group, 1);
            assertEquals(List.of(1), tags(b));
            assertEquals(List.of(), tags(c));
            b.removeMulticast(group);
            send(a, group, 2);
            assertEquals(List.of(2), tags(b), "still subscribed once");
            b.removeMulticast(group);
            send(a, group, 3);
            assertEquals(List.of(), tags(b));
        }
    }

    @Test
    void delayHoldsFramesBackOnVirtualTime() {
        try (MemoryWire wire = MemoryWire.builder().clock(clock).delay(5 * MS, 0).build()) {
            final MemoryLink a = wire.attach("a", A);
            final MemoryLink b = wire.attach("b", B);
            send(a, B, 7);
            assertEquals(5 * MS, wire.nextDeliveryNs());
            clock.advance(5 * MS - 1);
            assertEquals(List.of(), tags(b));
            clock.advance(1);
            assertEquals(List.of(7), tags(b));
            assertEquals(Long.MAX_VALUE, wire.nextDeliveryNs());
        }
    }

    @Test
    void bandwidthSpacesFramesAndTheBottleneckQueueTailDrops() {
        // 1 Gbit/s: a 1000-byte frame takes 8 us to serialise; the queue holds 4000 bytes not yet serialised.
        try (MemoryWire wire = MemoryWire.builder().clock(clock).bandwidth(1_000_000_000L, 4000).build()) {
            final MemoryLink a = wire.attach("a", A);
            final MemoryLink b = wire.attach("b", B);
            for (int i = 0; i < 10; i++) {
                send(a, B, i, 1000);
            }
            assertEquals(6, wire.stats.queueDrops, "four 1000-byte frames fill a 4000-byte queue");
            final List<Long> arrivals = new ArrayList<>();
            while (wire.nextDeliveryNs() != Long.MAX_VALUE) {
                clock.advanceTo(wire.nextDeliveryNs());
                arrivals.add(clock.nanoTime());
                tags(b);
            }
            assertEquals(List.of(8_000L, 16_000L, 24_000L, 32_000L), arrivals);
        }
    }

    @Test
    void ceMarkingSetsCeOnEcnCapableIpv4PacketsAndMendsTheChecksum() {
        try (MemoryWire wire = MemoryWire.builder().clock(clock).ceMarking(1.0).build()) {
            final MemoryLink a = wire.attach("a", A);
            final MemoryLink b = wire.attach("b", B);
            // RFC 3168 §5: ECT(0) and ECT(1) become CE; Not-ECT is never marked; CE stays CE.
            final int[] sent = {0b10, 0b01, 0b00, 0b11};
            for (int ecn : sent) {
                sendIpv4(a, B, ecn);
            }
            final List<Integer> seen = new ArrayList<>();
            b.receive((segment, offset, length, flags) -> {
                final long ip = offset + EthernetHeader.LENGTH;
                seen.add(BigEndian.u8(segment, ip + 1) & 0b11);
                assertEquals(0, dev.tern.core.checksum.InternetChecksum.compute(segment, ip, 20),
                    "the IPv4 header checksum still verifies");
            }, 10);
            assertEquals(List.of(0b11, 0b11, 0b00, 0b11), seen);
            assertEquals(2, wire.stats.ceMarked);
        }
    }

    /** A 20-byte IPv4 header with TOS {@code tos} and a correct checksum, in a frame to {@code destination}. */
    private void sendIpv4(MemoryLink from, long destination, int tos) {
        assertTrue(from.claim(tx));
        ethernet.wrap(tx.segment(), tx.offset(), 60).destination(destination).source(from.macAddress()).etherType(0x0800);
        final long ip = tx.offset() + EthernetHeader.LENGTH;
        BigEndian.zero(tx.segment(), ip, 46);
        BigEndian.u16(tx.segment(), ip, 0x4500 | tos);
        BigEndian.u16(tx.segment(), ip + 2, 20);
        BigEndian.u8(tx.segment(), ip + 8, 64);
        BigEndian.u8(tx.segment(), ip + 9, 17);
        BigEndian.u16(tx.segment(), ip + 10, dev.tern.core.checksum.InternetChecksum.compute(tx.segment(), ip, 20));
        tx.length(60);
        from.commit(tx);
        from.flush();
    }

    @Test
    void lossRateIsHonouredStatistically() {
        try (MemoryWire wire = MemoryWire.builder().clock(clock).seed(7).loss(0.1).build()) {
            final MemoryLink a = wire.attach("a", A);
            final MemoryLink b = wire.attach("b", B);
            int received = 0;
            for (int i = 0; i < 20_000; i++) {
                send(a, B, i);
                received += tags(b).size();
            }
            assertTrue(received > 17_600 && received < 18_400, "received " + received + " of 20000 at 10% loss");
            assertEquals(20_000 - received, wire.stats.lost);
        }
    }

    @Test
    void reorderingLetsLaterFramesOvertake() {
        try (MemoryWire wire = MemoryWire.builder().clock(clock).seed(3).reordering(0.2, 2 * MS).build()) {
            final MemoryLink a = wire.attach("a", A);
            final MemoryLink b = wire.attach("b", B);
            for (int i = 0; i < 100; i++) {
                send(a, B, i);
                clock.advance(100_000);
            }
            clock.advance(10 * MS);
            final List<Integer> order = tags(b);
            assertEquals(100, order.size());
            assertNotEquals(order.stream().sorted().toList(), order);
            assertTrue(wire.stats.reordered > 5 && wire.stats.reordered < 40, "reordered " + wire.stats.reordered);
        }
    }

    @Test
    void corruptionFlipsOneBitAfterTheEthernetHeaderAndClearsOffloadFlags() {
        try (MemoryWire wire = MemoryWire.builder().clock(clock).corruption(1.0).checksumOffload(true).build()) {
            final MemoryLink a = wire.attach("a", A);
            final MemoryLink b = wire.attach("b", B);
            send(a, B, 0);
            final List<Integer> bitsFlipped = new ArrayList<>();
            final List<Integer> flags = new ArrayList<>();
            b.receive((segment, offset, length, f) -> {
                int bits = 0;
                for (int i = 0; i < length; i++) {
                    final int expected = i < 6 ? (int) (B >>> (40 - 8 * i)) & 0xFF
                        : i < 12 ? (int) (A >>> (40 - 8 * (i - 6))) & 0xFF
                        : i == 12 ? 0x88 : i == 13 ? 0xB5 : 0;
                    bits += Integer.bitCount(expected ^ BigEndian.u8(segment, offset + i));
                    if (i < EthernetHeader.LENGTH) {
                        assertEquals(expected, BigEndian.u8(segment, offset + i), "header byte " + i);
                    }
                }
                bitsFlipped.add(bits);
                flags.add(f);
            }, 10);
            assertEquals(List.of(1), bitsFlipped);
            assertEquals(List.of(0), flags);
        }
    }

    @Test
    void duplicationDeliversASecondCopy() {
        try (MemoryWire wire = MemoryWire.builder().clock(clock).duplication(1.0).checksumOffload(true).build()) {
            final MemoryLink a = wire.attach("a", A);
            final MemoryLink b = wire.attach("b", B);
            send(a, B, 9);
            final List<Integer> flags = new ArrayList<>();
            b.receive((segment, offset, length, f) -> flags.add(f), 10);
            assertEquals(List.of(Offloads.RX_CHECKSUM_OK, Offloads.RX_CHECKSUM_OK), flags);
            tags(b);
            assertEquals(0, wire.framesInUse());
        }
    }

    /** The same seed and the same sends give the same deliveries: arrival time, port and content, frame for frame. */
    @Test
    void sameSeedGivesTheSameDeliveredSequence() {
        qt().withExamples(40).forAll(longs().all()).checkAssert(seed -> {
            final List<String> first = impairedRun(seed);
            assertEquals(first, impairedRun(seed));
            assertFalse(first.isEmpty());
        });
    }

    private List<String> impairedRun(long seed) {
        final VirtualClock time = new VirtualClock();
        final List<String> log = new ArrayList<>();
        try (MemoryWire wire = MemoryWire.builder().clock(time).seed(seed).loss(0.1).duplication(0.05).corruption(0.05)
            .reordering(0.1, 300_000).delay(50_000, 20_000).bandwidth(100_000_000L, 20_000).build()) {
            final MemoryLink a = wire.attach("a", A);
            final MemoryLink b = wire.attach("b", B);
            final MemoryLink c = wire.attach("c", C);
            final FrameHandler record = (segment, offset, length, flags) ->
                log.add(time.nanoTime() + " " + MacAddress.format(BigEndian.u48(segment, offset)) + " " + length + " "
                    + InternetChecksum.compute(segment, offset, length));
            for (int i = 0; i < 300; i++) {
                send(i % 3 == 0 ? a : b, i % 5 == 0 ? MacAddress.BROADCAST : (i % 3 == 0 ? B : A), i, 60 + (i * 37) % 1400);
                time.advance(7_000);
                a.receive(record, 64);
                b.receive(record, 64);
                c.receive(record, 64);
            }
        }
        return log;
    }

    @Test
    void concurrentPortsExchangeFramesBetweenThreads() throws Exception {
        try (MemoryWire wire = MemoryWire.builder().concurrent(true).build()) {
            final MemoryLink a = wire.attach("a", A);
            final MemoryLink b = wire.attach("b", B);
            final int rounds = 50_000;
            final AtomicLong echoed = new AtomicLong();
            final Thread echo = new Thread(() -> {
                final TxFrame reply = new TxFrame();
                final FrameHandler bounce = (segment, offset, length, flags) -> {
                    if (b.claim(reply)) {
                        MemorySegment.copy(segment, offset, reply.segment(), reply.offset(), length);
                        BigEndian.u48(reply.segment(), reply.offset(), A);
                        reply.length(length);
                        b.commit(reply);
                        echoed.incrementAndGet();
                    }
                };
                while (echoed.get() < rounds) {
                    b.receive(bounce, 16);
                    b.flush();
                }
            });
            echo.start();
            final int[] got = {0};
            for (int i = 0; i < rounds; i++) {
                send(a, B, i);
                final int expected = i;
                int before = got[0];
                while (got[0] == before) {
                    a.receive((segment, offset, length, flags) -> {
                        assertEquals(expected, BigEndian.i32(segment, offset + EthernetHeader.LENGTH));
                        got[0]++;
                    }, 16);
                }
            }
            echo.join(10_000);
            assertEquals(rounds, got[0]);
            a.receive((s, o, l, f) -> { }, 16);
            b.close();
            assertEquals(0, wire.framesInUse());
        }
    }

    @Test
    void aFrameRoundTripAllocatesNothing() {
        try (MemoryWire wire = MemoryWire.builder().clock(clock).seed(1).loss(0.01).reordering(0.01, 1000).build()) {
            final MemoryLink a = wire.attach("a", A);
            final MemoryLink b = wire.attach("b", B);
            final FrameHandler ignore = (segment, offset, length, flags) -> { };
            final long bytes = Allocations.measure(50_000, 1_000_000, () -> {
                if (a.claim(tx)) {
                    ethernet.wrap(tx.segment(), tx.offset(), 64).destination(B).source(A).etherType(EtherType.IPV4);
                    tx.length(64);
                    a.commit(tx);
                }
                a.flush();
                clock.advance(1000);
                b.receive(ignore, 8);
            });
            assertEquals(0, bytes, "bytes allocated by 1M frames");
        }
    }
}
