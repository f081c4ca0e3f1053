package dev.tern.lab.link;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

/**
 * RFC 8289's schedule on a standing queue: a thousand frames queued at 0, one dequeued each millisecond. The sojourn
 * time passes 5 ms at once, so the first drop comes one interval after the first dequeue above target (10 ms + 100
 * ms), then at interval / sqrt(count) steps counted from the previous scheduled drop.
 */
class CoDelTest {
    private static final long MS = 1_000_000L;

    @Test
    void dropScheduleFollowsTheControlLaw() {
        assertEquals(List.of(110L, 210L, 281L, 339L, 389L, 434L), signalTimes(false));
    }

    @Test
    void ecnMarksOnTheSameScheduleAndDropsNothing() {
        assertEquals(List.of(110L, 210L, 281L, 339L, 389L, 434L), signalTimes(true));
    }

    private static List<Long> signalTimes(boolean ecn) {
        try (FrameSlots slots = new FrameSlots(2048)) {
            final BottleneckStats stats = new BottleneckStats();
            final CoDel codel = new CoDel(slots, QueueLimit.ofPackets(2000), 5 * MS, 100 * MS, ecn, 1514, stats);
            for (int i = 0; i < 1000; i++) {
                codel.enqueue(TestFrames.ipv4(slots, 1500, EcnField.ECT0), 0);
            }
            final List<Long> times = new ArrayList<>();
            long signals = 0;
            for (long t = 10; t <= 450; t++) {
                final int slot = codel.dequeue(t * MS);
                slots.release(slot);
                if (stats.aqmDrops + stats.aqmMarks > signals) {
                    signals = stats.aqmDrops + stats.aqmMarks;
                    times.add(t);
                }
            }
            assertEquals(ecn ? 0 : 6, stats.aqmDrops);
            assertEquals(ecn ? 6 : 0, stats.aqmMarks);
            return times;
        }
    }

    @Test
    void leavesTheDroppingStateWhenTheQueueIsShort() {
        try (FrameSlots slots = new FrameSlots(2048)) {
            final BottleneckStats stats = new BottleneckStats();
            final CoDel codel = new CoDel(slots, QueueLimit.ofPackets(2000), 5 * MS, 100 * MS, false, 1514, stats);
            for (int i = 0; i < 300; i++) {
                codel.enqueue(TestFrames.ipv4(slots, 1500, 0), 0);
            }
            for (long t = 10; t <= 120; t++) {
                slots.release(codel.dequeue(t * MS));
            }
            assertEquals(1, stats.aqmDrops);
            // Fresh frames with no sojourn time behind the old ones: once the old ones are gone, CoDel stops.
            while (codel.packets() > 0) {
                slots.release(codel.dequeue(121 * MS));
            }
            codel.enqueue(TestFrames.ipv4(slots, 1500, 0), 500 * MS);
            slots.release(codel.dequeue(500 * MS));
            assertFalse(codel.dropping());
        }
    }

    @Test
    void neverDropsWhenOnlyOneFrameIsQueued() {
        try (FrameSlots slots = new FrameSlots(16)) {
            final BottleneckStats stats = new BottleneckStats();
            final CoDel codel = new CoDel(slots, QueueLimit.ofPackets(10), 5 * MS, 100 * MS, false, 1514, stats);
            for (long t = 0; t < 1000; t += 20) {
                codel.enqueue(TestFrames.ipv4(slots, 1500, 0), t * MS);
                slots.release(codel.dequeue((t + 19) * MS));
            }
            assertEquals(0, stats.aqmDrops, "a sojourn above target with at most MAXPACKET queued is no standing queue");
        }
    }
}
