package dev.tern.lab.link;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class DropTailTest {
    @Test
    void packetLimitDropsTheFrameThatDoesNotFit() {
        try (FrameSlots slots = new FrameSlots(64)) {
            final BottleneckStats stats = new BottleneckStats();
            final DropTail queue = new DropTail(slots, QueueLimit.ofPackets(3), null, stats);
            for (int i = 0; i < 3; i++) {
                assertTrue(queue.enqueue(TestFrames.ipv4(slots, 100, 0), 0));
            }
            assertFalse(queue.enqueue(TestFrames.ipv4(slots, 100, 0), 0));
            assertEquals(1, stats.overflowDrops);
            assertEquals(3, slots.inUse(), "the dropped frame's slot was released");
            assertEquals(300, queue.bytes());
        }
    }

    @Test
    void byteLimitCountsBytesAndKeepsOrder() {
        try (FrameSlots slots = new FrameSlots(64)) {
            final BottleneckStats stats = new BottleneckStats();
            final DropTail queue = new DropTail(slots, QueueLimit.ofBytes(3000), null, stats);
            final int a = TestFrames.ipv4(slots, 1500, 0);
            final int b = TestFrames.ipv4(slots, 1400, 0);
            assertTrue(queue.enqueue(a, 0));
            assertTrue(queue.enqueue(b, 0));
            assertFalse(queue.enqueue(TestFrames.ipv4(slots, 101, 0), 0), "2900 + 101 > 3000");
            assertTrue(queue.enqueue(TestFrames.ipv4(slots, 100, 0), 0), "2900 + 100 fits exactly");
            assertEquals(a, queue.dequeue(1));
            assertEquals(b, queue.dequeue(1));
            assertEquals(1, stats.overflowDrops);
        }
    }

    @Test
    void thresholdMarksEctPacketsOnlyAndMendsTheChecksum() {
        try (FrameSlots slots = new FrameSlots(64)) {
            final BottleneckStats stats = new BottleneckStats();
            final DropTail queue = new DropTail(slots, QueueLimit.ofPackets(10), QueueLimit.ofPackets(2), stats);
            queue.enqueue(TestFrames.ipv4(slots, 100, EcnField.ECT0), 0);
            queue.enqueue(TestFrames.ipv4(slots, 100, EcnField.ECT0), 0);
            final int marked = TestFrames.ipv4(slots, 100, EcnField.ECT0);
            final int notEct = TestFrames.ipv4(slots, 100, EcnField.NOT_ECT);
            final int ect1 = TestFrames.ipv4(slots, 100, EcnField.ECT1);
            queue.enqueue(marked, 0);
            queue.enqueue(notEct, 0);
            queue.enqueue(ect1, 0);
            assertEquals(2, stats.thresholdMarks);
            assertEquals(EcnField.CE, EcnField.codepoint(slots.slab(), slots.offset(marked), 100));
            assertEquals(EcnField.NOT_ECT, EcnField.codepoint(slots.slab(), slots.offset(notEct), 100));
            assertEquals(EcnField.CE, EcnField.codepoint(slots.slab(), slots.offset(ect1), 100));
            final long ip = slots.offset(marked) + 14;
            assertEquals(TestFrames.checksum(slots.slab(), ip),
                dev.tern.core.memory.BigEndian.u16(slots.slab(), ip + 10), "incremental checksum equals a full one");
            assertEquals(0, stats.overflowDrops);
        }
    }
}
