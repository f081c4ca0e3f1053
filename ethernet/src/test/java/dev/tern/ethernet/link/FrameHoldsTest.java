package dev.tern.ethernet.link;

import dev.tern.core.counters.CountersFile;
import dev.tern.core.memory.BigEndian;
import dev.tern.core.testing.Allocations;
import dev.tern.core.time.VirtualClock;
import dev.tern.ethernet.memory.MemoryLink;
import dev.tern.ethernet.memory.MemoryWire;
import dev.tern.ethernet.wire.EthernetHeader;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link FrameHolds} over the memory wire's lending: each held frame readable until released, released once whatever
 * the number of threads racing, returned to the wire's pool at the next drain with its owner told, and a stale hold
 * (its slot reused) refused.
 */
class FrameHoldsTest {
    private static final long A = 0x0200_0000_000AL;
    private static final long B = 0x0200_0000_000BL;

    private final VirtualClock clock = new VirtualClock();
    private final TxFrame tx = new TxFrame();
    private final EthernetHeader ethernet = new EthernetHeader();

    private void send(MemoryLink from, int tag) {
        assertTrue(from.claim(tx));
        ethernet.wrap(tx.segment(), tx.offset(), 100).destination(A).source(from.macAddress()).etherType(0x88B5);
        BigEndian.i32(tx.segment(), tx.offset() + EthernetHeader.LENGTH, tag);
        tx.length(100);
        from.commit(tx);
        from.flush();
    }

    private record Held(long hold, java.lang.foreign.MemorySegment segment, long offset, int tag) {
        int tagNow() {
            return BigEndian.i32(segment, offset + EthernetHeader.LENGTH);
        }
    }

    /** Receives everything due on {@code a}, holding each frame it can; returns the holds. */
    private static List<Held> receiveHolding(MemoryLink a, FrameHolds holds, FrameHolds.Owner owner) {
        final List<Held> held = new ArrayList<>();
        a.receive((segment, offset, length, flags) -> {
            final int tag = BigEndian.i32(segment, offset + EthernetHeader.LENGTH);
            final long hold = holds.hold(segment, offset, owner, tag, length);
            if (hold >= 0) {
                held.add(new Held(hold, segment, offset, tag));
            }
        }, 1000);
        return held;
    }

    @Test
    void heldFramesStayIntactWhileTheWireReusesEveryOtherBufferAndGoBackOnRelease() {
        try (MemoryWire wire = MemoryWire.builder().clock(clock).frames(64).build();
             CountersFile counters = CountersFile.inMemory("holds", 64)) {
            final MemoryLink a = wire.attach("a", A);
            final MemoryLink b = wire.attach("b", B);
            final FrameHolds holds = new FrameHolds(a, 32, counters);
            final long[] returnedBytes = {0};
            final FrameHolds.Owner owner = (id, bytes, now) -> returnedBytes[0] += bytes;
            for (int i = 0; i < 40; i++) {
                send(b, i);
            }
            final List<Held> held = receiveHolding(a, holds, owner);
            // A quarter of the 64 buffers may be lent at once: 16 held, the rest refused and released with the batch.
            assertEquals(16, held.size());
            assertEquals(16, holds.active());
            assertEquals(24, counters.value("ethernet.rx.hold_refused"));
            assertEquals(16, wire.framesInUse());
            // The wire goes on with the other 48 buffers, many times over; the held frames are untouched.
            for (int round = 0; round < 20; round++) {
                for (int i = 0; i < 40; i++) {
                    send(b, 1000 + i);
                }
                a.receive((segment, offset, length, flags) -> { }, 1000);
            }
            for (Held h : held) {
                assertEquals(h.tag(), h.tagNow());
            }
            for (Held h : held) {
                assertTrue(holds.release(h.hold()));
                assertFalse(holds.release(h.hold()));
            }
            assertTrue(holds.hasReleases());
            assertEquals(16, wire.framesInUse(), "back at the drain, not before");
            assertEquals(16, holds.drainReleased(0));
            assertFalse(holds.hasReleases());
            assertEquals(0, wire.framesInUse());
            assertEquals(16 * 100, returnedBytes[0]);
            assertEquals(0, counters.value("ethernet.rx.held_now"));
            assertEquals(16, counters.value("ethernet.rx.held_returned"));
            // A hold whose slot served again since is stale: refused, and the new one stays held.
            send(b, 7);
            final List<Held> again = receiveHolding(a, holds, owner);
            assertEquals(1, again.size());
            assertFalse(holds.release(held.getLast().hold()));
            assertFalse(holds.release(-1));
            assertFalse(holds.release(1L << 40 | 999));
            assertEquals(1, holds.active());
            assertTrue(holds.release(again.getFirst().hold()));
            holds.drainReleased(0);
            assertEquals(0, wire.framesInUse());
        }
    }

    @Test
    void racingReleasesFromManyThreadsReturnEachFrameOnce() throws Exception {
        try (MemoryWire wire = MemoryWire.builder().clock(clock).frames(4096).build();
             CountersFile counters = CountersFile.inMemory("holds", 64)) {
            final MemoryLink a = wire.attach("a", A);
            final MemoryLink b = wire.attach("b", B);
            final FrameHolds holds = new FrameHolds(a, 1024, counters);
            final AtomicInteger woken = new AtomicInteger();
            holds.waker(woken::incrementAndGet);
            final AtomicIntegerArray returnedPerTag = new AtomicIntegerArray(1024);
            final FrameHolds.Owner owner = (tag, bytes, now) -> returnedPerTag.incrementAndGet(tag);
            int total = 0;
            for (int round = 0; round < 20; round++) {
                for (int i = 0; i < 1000; i++) {
                    send(b, i);
                }
                final List<Held> held = receiveHolding(a, holds, owner);
                assertEquals(1000, held.size());
                // Four threads release every hold, each twice: one release per hold wins, the rest are refused.
                final AtomicInteger won = new AtomicInteger();
                final CountDownLatch start = new CountDownLatch(1);
                final List<Thread> threads = new ArrayList<>();
                for (int t = 0; t < 4; t++) {
                    final Thread thread = new Thread(() -> {
                        try {
                            start.await();
                        } catch (InterruptedException e) {
                            return;
                        }
                        for (int pass = 0; pass < 2; pass++) {
                            for (Held h : held) {
                                if (holds.release(h.hold())) {
                                    won.incrementAndGet();
                                }
                            }
                        }
                    });
                    thread.start();
                    threads.add(thread);
                }
                start.countDown();
                // The stack's thread drains while the releases race in.
                int drained = 0;
                while (drained < 1000) {
                    drained += holds.drainReleased(0);
                }
                for (Thread thread : threads) {
                    thread.join();
                }
                assertEquals(0, holds.drainReleased(0));
                assertEquals(1000, won.get());
                assertEquals(0, wire.framesInUse());
                total += 1000;
            }
            for (int tag = 0; tag < 1000; tag++) {
                assertEquals(20, returnedPerTag.get(tag));
            }
            assertEquals(total, woken.get(), "each release woke the stack's thread");
        }
    }

    @Test
    void holdingAndReleasingAllocatesNothing() {
        try (MemoryWire wire = MemoryWire.builder().clock(clock).frames(256).build();
             CountersFile counters = CountersFile.inMemory("holds", 64)) {
            final MemoryLink a = wire.attach("a", A);
            final MemoryLink b = wire.attach("b", B);
            final FrameHolds holds = new FrameHolds(a, 64, counters);
            final FrameHolds.Owner owner = (id, bytes, now) -> { };
            final long[] held = new long[64];
            final int[] count = {0};
            final FrameHandler holding = (segment, offset, length, flags) ->
                held[count[0]++] = holds.hold(segment, offset, owner, 1, length);
            final long bytes = Allocations.measure(2_000, 20_000, () -> {
                for (int i = 0; i < 8; i++) {
                    send(b, i);
                }
                count[0] = 0;
                a.receive(holding, 64);
                for (int i = 0; i < count[0]; i++) {
                    holds.release(held[i]);
                }
                holds.drainReleased(0);
            });
            assertEquals(0, bytes);
            assertEquals(0, wire.framesInUse());
        }
    }
}
