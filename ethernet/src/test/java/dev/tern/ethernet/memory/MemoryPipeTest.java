package dev.tern.ethernet.memory;

import dev.tern.core.memory.BigEndian;
import dev.tern.core.testing.Allocations;
import dev.tern.ethernet.link.FrameHandler;
import dev.tern.ethernet.link.Link;
import dev.tern.ethernet.link.TxFrame;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class MemoryPipeTest {
    private static final long A = 0x0200_0000_000AL;
    private static final long B = 0x0200_0000_000BL;

    private static boolean send(Link link, TxFrame tx, int length, int tag) {
        if (!link.claim(tx)) {
            return false;
        }
        BigEndian.u48(tx.segment(), tx.offset(), B);
        BigEndian.i32(tx.segment(), tx.offset() + 14, tag);
        BigEndian.u8(tx.segment(), tx.offset() + length - 1, tag);
        tx.length(length);
        link.commit(tx);
        return true;
    }

    @Test
    void framesArriveInOrderOnlyAfterFlushAndWrapAroundTheRing() {
        try (MemoryPipe pipe = MemoryPipe.create(A, B, 1500, 1 << 15, false)) {
            final TxFrame tx = new TxFrame();
            final List<Integer> got = new ArrayList<>();
            final FrameHandler record = (segment, offset, length, flags) -> {
                final int tag = BigEndian.i32(segment, offset + 14);
                assertEquals(tag & 0xFF, BigEndian.u8(segment, offset + length - 1), "last byte intact");
                got.add(tag);
            };
            int next = 0;
            for (int round = 0; round < 200; round++) {
                for (int i = 0; i < 5; i++) {
                    assertTrue(send(pipe.first(), tx, 60 + (next * 131) % 1400, next++));
                }
                assertEquals(0, pipe.second().receive(record, 100), "nothing before the flush");
                pipe.first().flush();
                assertEquals(5, pipe.second().receive(record, 100));
            }
            assertEquals(1000, got.size());
            for (int i = 0; i < got.size(); i++) {
                assertEquals(i, got.get(i));
            }
        }
    }

    /**
     * Batches of random size and frames of random length, read a few frames at a time so that reads stop inside
     * batches and at their ends, over many laps of a small ring: every flushed frame arrives once, in order and intact,
     * and nothing committed shows before its flush (an older lap's bytes never read as a header).
     */
    @Test
    void partialReadsAcrossBatchesSeeEveryFlushedFrameOnceInOrder() {
        try (MemoryPipe pipe = MemoryPipe.create(A, B, 1500, 1 << 15, false)) {
            final java.util.SplittableRandom random = new java.util.SplittableRandom(29);
            final TxFrame tx = new TxFrame();
            final List<Integer> got = new ArrayList<>();
            final int[] flushed = {0};
            final FrameHandler record = (segment, offset, length, flags) -> {
                final int tag = BigEndian.i32(segment, offset + 14);
                assertEquals(got.size(), tag, "in order, once");
                assertTrue(got.size() < flushed[0], "read a frame before its flush");
                assertEquals(tag & 0xFF, BigEndian.u8(segment, offset + length - 1), "last byte intact");
                got.add(tag);
            };
            int next = 0;
            for (int round = 0; round < 3000; round++) {
                final int batch = 1 + random.nextInt(6);
                for (int i = 0; i < batch && send(pipe.first(), tx, 60 + random.nextInt(1455), next); i++) {
                    next++;
                }
                if (random.nextInt(4) != 0) {
                    pipe.first().flush();
                    flushed[0] = next;
                }
                for (int reads = random.nextInt(4); reads > 0; reads--) {
                    pipe.second().receive(record, 1 + random.nextInt(3));
                }
            }
            pipe.first().flush();
            flushed[0] = next;
            while (pipe.second().receive(record, 1 + random.nextInt(3)) > 0) {
                // drain
            }
            assertEquals(next, got.size());
            for (int i = 0; i < got.size(); i++) {
                assertEquals(i, got.get(i));
            }
        }
    }

    @Test
    void aFullRingRefusesClaimsUntilThePeerReads() {
        try (MemoryPipe pipe = MemoryPipe.create(A, B, 1500, 1 << 15, false)) {
            final TxFrame tx = new TxFrame();
            int sent = 0;
            while (send(pipe.first(), tx, 1500, sent)) {
                sent++;
            }
            assertTrue(sent >= 16 && sent <= 22, "sent " + sent);
            pipe.first().flush();
            assertEquals(sent, pipe.second().receive((s, o, l, f) -> { }, 1000));
            assertTrue(send(pipe.first(), tx, 1500, 0));
        }
    }

    @Test
    void twoThreadsExchangeAMillionFramesIntact() throws Exception {
        try (MemoryPipe pipe = MemoryPipe.create(A, B, 1500, 1 << 18, false)) {
            final int frames = 1_000_000;
            final AtomicLong received = new AtomicLong();
            final long[] expected = {0};
            final boolean[] ordered = {true};
            final Thread consumer = new Thread(() -> {
                final FrameHandler check = (segment, offset, length, flags) -> {
                    ordered[0] &= BigEndian.i32(segment, offset + 14) == (int) expected[0]++;
                };
                while (expected[0] < frames) {
                    pipe.second().receive(check, 64);
                }
                received.set(expected[0]);
            });
            consumer.start();
            final TxFrame tx = new TxFrame();
            for (int i = 0; i < frames; ) {
                if (send(pipe.first(), tx, 64 + i % 1000, i)) {
                    i++;
                } else {
                    pipe.first().flush();
                }
            }
            pipe.first().flush();
            consumer.join(30_000);
            assertEquals(frames, received.get());
            assertTrue(ordered[0]);
        }
    }

    @Test
    void sendingAndReceivingAllocateNothing() {
        try (MemoryPipe pipe = MemoryPipe.create(A, B, 1500, 1 << 16, true)) {
            final TxFrame tx = new TxFrame();
            final FrameHandler ignore = (s, o, l, f) -> { };
            final long bytes = Allocations.measure(200_000, 1_000_000, () -> {
                send(pipe.first(), tx, 200, 1);
                pipe.first().flush();
                pipe.second().receive(ignore, 8);
            });
            assertEquals(0, bytes);
            assertFalse(pipe.first().claim(tx) && false);
        }
    }
}
