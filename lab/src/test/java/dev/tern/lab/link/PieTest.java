package dev.tern.lab.link;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * PIE (RFC 8033) on a standing queue: 35 frames queued a millisecond apart, then one in and one out each
 * millisecond, so every frame leaves after 35 ms. Updates fall every 15 ms from the first arrival.
 */
class PieTest {
    private static final long MS = 1_000_000L;

    private static Pie pie(FrameSlots slots, long maxBurstNs, double markThreshold, BottleneckStats stats) {
        return new Pie(slots, QueueLimit.ofPackets(1000), 15 * MS, 15 * MS, 0.125, 1.25, maxBurstNs, true,
            markThreshold, 3, stats);
    }

    /** Fills the queue, then runs one in, one out each millisecond up to {@code untilMs}. */
    private static void standing(FrameSlots slots, Pie pie, long fromMs, long untilMs, int ecn) {
        if (fromMs == 0) {
            for (long t = 0; t < 35; t++) {
                pie.enqueue(TestFrames.ipv4(slots, 1500, ecn), t * MS);
            }
            fromMs = 35;
        }
        for (long t = fromMs; t <= untilMs; t++) {
            final int slot = pie.dequeue(t * MS);
            if (slot >= 0) {
                slots.release(slot);
            }
            pie.enqueue(TestFrames.ipv4(slots, 1500, ecn), t * MS);
        }
    }

    @Test
    void theProbabilityFollowsTheControlLawWithItsAutoTuning() {
        try (FrameSlots slots = new FrameSlots(256)) {
            final BottleneckStats stats = new BottleneckStats();
            final Pie pie = pie(slots, 150 * MS, 0.1, stats);
            standing(slots, pie, 0, 44, EcnField.ECT0);
            // Updates at 15 and 30 ms saw no departure yet: a queue delay of 0 keeps the probability at 0.
            assertEquals(0, pie.dropProbability());
            standing(slots, pie, 45, 45, EcnField.ECT0);
            // At 45 ms: 35 ms against the 15 ms reference, up 35 ms from 0; below one in a million, divided by 2048.
            final double first = (0.125 * 0.020 + 1.25 * 0.035) / 2048;
            assertEquals(first, pie.dropProbability(), 1e-15);
            standing(slots, pie, 46, 60, EcnField.ECT0);
            // At 60 ms: only the integral term is left; above one in a hundred thousand, divided by 128.
            assertEquals(first + 0.125 * 0.020 / 128, pie.dropProbability(), 1e-15);
            standing(slots, pie, 61, 1500, EcnField.ECT0);
            // 0.0025 an update, divided less as the probability grows: 7.5 % by 1.5 s, everything marked so far.
            assertEquals(0.075, pie.dropProbability(), 0.005);
            assertEquals(0, stats.aqmDrops);
            assertEquals(35, pie.packets());
            standing(slots, pie, 1501, 3000, EcnField.ECT0);
            // Past 10 % arrivals are dropped, not marked, and the standing queue shrinks.
            assertTrue(stats.aqmDrops > 0 && pie.packets() < 20, stats.aqmDrops + " drops, " + pie.packets() + " queued");
        }
    }

    @Test
    void theBurstAllowanceHoldsOffTheFirstMarks() {
        try (FrameSlots slots = new FrameSlots(256)) {
            final BottleneckStats stats = new BottleneckStats();
            final Pie pie = pie(slots, 150 * MS, 1.0, stats);
            standing(slots, pie, 0, 44, EcnField.ECT0);
            assertEquals(150 * MS, pie.burstAllowanceNs(), "reset while the queue delay stayed low");
            standing(slots, pie, 45, 45 + 150 - 1, EcnField.ECT0);
            assertEquals(0, stats.aqmMarks + stats.aqmDrops, "nothing is signalled within the allowance");
            assertEquals(0, pie.burstAllowanceNs());
            standing(slots, pie, 195, 3000, EcnField.ECT0);
            assertTrue(stats.aqmMarks > 50 && stats.aqmDrops == 0, "marks " + stats.aqmMarks);
        }
    }

    /** §5.1: ECN-capable packets are marked while the probability is at most 10 %, dropped above it. */
    @Test
    void marksBelowTheThresholdAndDropsAbove() {
        try (FrameSlots slots = new FrameSlots(256)) {
            final BottleneckStats stats = new BottleneckStats();
            final Pie pie = pie(slots, 0, 0.1, stats);
            standing(slots, pie, 0, 35, EcnField.ECT0);
            long marks = 0;
            long drops = 0;
            for (long t = 36; t <= 4000; t++) {
                final double p = pie.dropProbability();
                standing(slots, pie, t, t, EcnField.ECT0);
                if (stats.aqmMarks > marks) {
                    assertTrue(p <= 0.1, "marked at " + p);
                }
                if (stats.aqmDrops > drops) {
                    assertTrue(p > 0.1, "dropped at " + p);
                }
                marks = stats.aqmMarks;
                drops = stats.aqmDrops;
            }
            assertTrue(marks > 0 && drops > 0, marks + " marks, " + drops + " drops");
        }
    }

    @Test
    void notEcnCapablePacketsAreDroppedAndAnEmptyQueueLetsTheProbabilityDecay() {
        try (FrameSlots slots = new FrameSlots(256)) {
            final BottleneckStats stats = new BottleneckStats();
            final Pie pie = pie(slots, 0, 0.1, stats);
            standing(slots, pie, 0, 2000, EcnField.NOT_ECT);
            assertTrue(stats.aqmDrops > 0 && stats.aqmMarks == 0);
            final double high = pie.dropProbability();
            while (pie.packets() > 0) {
                slots.release(pie.dequeue(2001 * MS));
            }
            pie.dequeue(4000 * MS);
            assertTrue(pie.dropProbability() < high / 10, pie.dropProbability() + " from " + high);
            assertThrows(IllegalArgumentException.class, () -> new Pie(slots, QueueLimit.ofPackets(10), 0, 15 * MS,
                0.125, 1.25, 0, true, 0.1, 1, stats));
            assertThrows(IllegalArgumentException.class, () -> new Pie(slots, QueueLimit.ofPackets(10), 15 * MS,
                15 * MS, 0.125, 1.25, 0, true, 1.5, 1, stats));
        }
    }
}
