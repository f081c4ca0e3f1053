package dev.tern.lab.link;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** FQ-CoDel (RFC 8290) on hand-made arrivals: flow isolation, DRR by bytes, the fattest flow's drop, per-flow CoDel. */
class FqCoDelTest {
    private static final long MS = 1_000_000L;
    private static final int BULK = 40_000;
    private static final int SPARSE = 40_001;

    private static FqCoDel fqCoDel(FrameSlots slots, QueueLimit limit, boolean ecn, BottleneckStats stats) {
        return new FqCoDel(slots, limit, 1024, 1514, 5 * MS, 100 * MS, ecn, 1514, 7, stats);
    }

    /** §4.2's new-flows list: a sparse flow's packet goes out next, not behind the bulk flow's standing queue. */
    @Test
    void aSparseFlowSkipsTheBulkFlowsQueue() {
        try (FrameSlots slots = new FrameSlots(1024)) {
            final BottleneckStats stats = new BottleneckStats();
            final FqCoDel fq = fqCoDel(slots, QueueLimit.ofPackets(1000), false, stats);
            final CoDel codel = new CoDel(slots, QueueLimit.ofPackets(1000), 5 * MS, 100 * MS, false, 1514, stats);
            assertEquals(1, sparseDelayMs(slots, fq), "FQ-CoDel: the sparse packet waits one frame time");
            assertTrue(sparseDelayMs(slots, codel) > 100, "one FIFO: it waits behind the bulk flow");
        }
    }

    /** The sparse packet arrives at 50 ms behind 200 bulk frames; the link sends one frame a millisecond. */
    private static long sparseDelayMs(FrameSlots slots, QueueDiscipline discipline) {
        for (int i = 0; i < 200; i++) {
            discipline.enqueue(TestFrames.tcp(slots, 1500, 0, BULK), 0);
        }
        long delay = -1;
        for (long t = 1; discipline.packets() > 0; t++) {
            if (t == 50) {
                discipline.enqueue(TestFrames.tcp(slots, 100, 0, SPARSE), 49 * MS);
            }
            final int slot = discipline.dequeue(t * MS);
            if (slot >= 0) {
                if (slots.length(slot) == 100) {
                    delay = t - 49;
                }
                slots.release(slot);
            }
        }
        return delay;
    }

    @Test
    void theTwoFlowsHashToDifferentQueuesAndTheSeedMovesThem() {
        try (FrameSlots slots = new FrameSlots(64)) {
            final BottleneckStats stats = new BottleneckStats();
            final FqCoDel fq = fqCoDel(slots, QueueLimit.ofPackets(10), false, stats);
            final int bulk = TestFrames.tcp(slots, 1500, 0, BULK);
            final int sparse = TestFrames.tcp(slots, 1500, 0, SPARSE);
            assertNotEquals(fq.flowOf(bulk), fq.flowOf(sparse));
            assertEquals(fq.flowOf(bulk), fqCoDel(slots, QueueLimit.ofPackets(10), false, stats).flowOf(bulk),
                "the same seed places a flow in the same queue");
            final List<Integer> seven = new ArrayList<>();
            final List<Integer> eight = new ArrayList<>();
            final FqCoDel other = new FqCoDel(slots, QueueLimit.ofPackets(10), 1024, 1514, 5 * MS, 100 * MS, false,
                1514, 8, stats);
            for (int port = 1; port <= 8; port++) {
                final int slot = TestFrames.tcp(slots, 1500, 0, port);
                seven.add(fq.flowOf(slot));
                eight.add(other.flowOf(slot));
                slots.release(slot);
            }
            assertNotEquals(seven, eight, "another seed places the flows elsewhere");
        }
    }

    /** DRR with a byte quantum: a flow of 500-byte frames gets as many bytes as a flow of 1500-byte frames. */
    @Test
    void deficitRoundRobinSharesBytesNotPackets() {
        try (FrameSlots slots = new FrameSlots(2048)) {
            final BottleneckStats stats = new BottleneckStats();
            final FqCoDel fq = fqCoDel(slots, QueueLimit.ofPackets(2000), false, stats);
            for (int i = 0; i < 600; i++) {
                fq.enqueue(TestFrames.tcp(slots, 1500, 0, BULK), 0);
                fq.enqueue(TestFrames.tcp(slots, 500, 0, SPARSE), 0);
            }
            long big = 0;
            long small = 0;
            for (int i = 0; i < 800; i++) {
                final int slot = fq.dequeue(MS);
                if (slots.length(slot) == 1500) {
                    big += 1500;
                } else {
                    small += 500;
                }
                slots.release(slot);
            }
            assertTrue(Math.abs(big - small) <= 1514, big + " bytes against " + small);
        }
    }

    /** §4.1: at the shared limit the head of the queue with the most bytes goes, not the arriving packet. */
    @Test
    void aFullQueueDropsFromTheFattestFlow() {
        try (FrameSlots slots = new FrameSlots(256)) {
            final BottleneckStats stats = new BottleneckStats();
            final FqCoDel fq = fqCoDel(slots, QueueLimit.ofPackets(100), false, stats);
            for (int i = 0; i < 90; i++) {
                assertTrue(fq.enqueue(TestFrames.tcp(slots, 1500, 0, BULK), 0));
            }
            for (int i = 0; i < 15; i++) {
                assertTrue(fq.enqueue(TestFrames.tcp(slots, 1500, 0, SPARSE), 0), "the thin flow's packet stays");
            }
            assertEquals(5, stats.overflowDrops);
            assertEquals(100, fq.packets());
            int sparse = 0;
            for (int slot; (slot = fq.dequeue(MS)) >= 0; ) {
                sparse += TestFrames.port(slots, slot) == SPARSE ? 1 : 0;
                slots.release(slot);
            }
            assertEquals(15, sparse);
            assertThrows(IllegalArgumentException.class, () -> new FqCoDel(slots, QueueLimit.ofPackets(10), 0, 1514,
                5 * MS, 100 * MS, false, 1514, 1, stats));
            assertThrows(IllegalArgumentException.class, () -> new FqCoDel(slots, QueueLimit.ofPackets(10), 16, 0,
                5 * MS, 100 * MS, false, 1514, 1, stats));
        }
    }

    /** Each flow queue runs RFC 8289's schedule: one flow's standing queue is marked as plain CoDel marks it. */
    @Test
    void eachFlowRunsCoDelAndMarksWithEcn() {
        try (FrameSlots slots = new FrameSlots(2048)) {
            final BottleneckStats stats = new BottleneckStats();
            final FqCoDel fq = fqCoDel(slots, QueueLimit.ofPackets(2000), true, stats);
            for (int i = 0; i < 1000; i++) {
                fq.enqueue(TestFrames.tcp(slots, 1500, EcnField.ECT0, BULK), 0);
            }
            final List<Long> times = new ArrayList<>();
            long marks = 0;
            for (long t = 10; t <= 450; t++) {
                slots.release(fq.dequeue(t * MS));
                if (stats.aqmMarks > marks) {
                    marks = stats.aqmMarks;
                    times.add(t);
                }
            }
            assertEquals(List.of(110L, 210L, 281L, 339L, 389L, 434L), times);
            assertEquals(0, stats.aqmDrops);
        }
    }
}
