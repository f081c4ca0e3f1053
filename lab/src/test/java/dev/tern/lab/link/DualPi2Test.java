package dev.tern.lab.link;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** DualPI2 (RFC 9332) on hand-made arrivals: classification, the coupling, the L4S ramp, the scheduler, overload. */
class DualPi2Test {
    private static final long MS = 1_000_000L;
    private static final long US = 1_000L;

    private static DualPi2 dualPi2(FrameSlots slots, boolean anyEct, BottleneckStats stats) {
        return new DualPi2(slots, QueueLimit.ofPackets(10_000), 15 * MS, 15 * MS, 0.15, 3.0, 2.0, 800 * US,
            400 * US, 1, 30 * MS, anyEct, 5, stats);
    }

    @Test
    void ect1AndCeGoToTheL4sQueueAndAnyEctTakesEct0Too() {
        try (FrameSlots slots = new FrameSlots(16)) {
            final BottleneckStats stats = new BottleneckStats();
            final DualPi2 dual = dualPi2(slots, false, stats);
            final DualPi2 any = dualPi2(slots, true, stats);
            final int[] expected = {DualPi2.CLASSIC, DualPi2.L4S, DualPi2.CLASSIC, DualPi2.L4S};
            final int[] expectedAny = {DualPi2.CLASSIC, DualPi2.L4S, DualPi2.L4S, DualPi2.L4S};
            for (int ecn = 0; ecn < 4; ecn++) {
                final int slot = TestFrames.ipv4(slots, 1500, ecn);
                assertEquals(expected[ecn], dual.classify(slot), "codepoint " + ecn);
                assertEquals(expectedAny[ecn], any.classify(slot), "any_ect, codepoint " + ecn);
                slots.release(slot);
            }
        }
    }

    /**
     * A classic queue held at 25 ms: every update moves p' by alpha times 10 ms (and beta times the change), and the
     * L4S queue's coupled probability is exactly k p' while the classic one is p' squared.
     */
    @Test
    void theCouplingIsTwoPPrimeForL4sAndPPrimeSquaredForClassic() {
        try (FrameSlots slots = new FrameSlots(256)) {
            final BottleneckStats stats = new BottleneckStats();
            final DualPi2 dual = dualPi2(slots, false, stats);
            for (long t = 0; t < 25; t++) {
                dual.enqueue(TestFrames.ipv4(slots, 1500, EcnField.ECT0), t * MS);
            }
            double previous = 0;
            for (long t = 25; t <= 1000; t++) {
                slots.release(dual.dequeue(t * MS));
                dual.enqueue(TestFrames.ipv4(slots, 1500, EcnField.ECT0), t * MS);
                final double p = dual.baseProbability();
                assertEquals(Math.min(2 * p, 1), dual.coupledProbability(), 1e-15);
                assertEquals(p * p, dual.classicProbability(), 1e-15);
                assertTrue(p >= previous, "p' only rises while the delay is above target");
                previous = p;
            }
            // Beta's steps while the delay rose to 25 ms (0.075), then alpha times 10 ms every 15 ms (0.1 a second).
            assertEquals(0.075 + 0.1 * 0.975, previous, 0.01);
            assertTrue(stats.aqmMarks > 0 && stats.aqmDrops == 0, "ECT(0) classic packets are marked, not dropped");
        }
    }

    @Test
    void theFirstUpdatesMoveThePrimeProbabilityByTheGains() {
        try (FrameSlots slots = new FrameSlots(256)) {
            final BottleneckStats stats = new BottleneckStats();
            final DualPi2 dual = dualPi2(slots, false, stats);
            // One classic frame at 0 and nothing else: its sojourn is the queue delay at each update.
            dual.enqueue(TestFrames.ipv4(slots, 1500, 0), 0);
            dual.enqueue(TestFrames.ipv4(slots, 60, 0), 15 * MS);
            // At 15 ms: 15 ms of delay, on target; beta times 15 ms of change.
            assertEquals(3.0 * 0.015, dual.baseProbability(), 1e-12);
            dual.enqueue(TestFrames.ipv4(slots, 60, 0), 30 * MS);
            // At 30 ms: 30 ms, 15 ms above target, 15 ms more than before.
            assertEquals(3.0 * 0.015 + 0.15 * 0.015 + 3.0 * 0.015, dual.baseProbability(), 1e-12);
            assertEquals(2 * dual.baseProbability(), dual.coupledProbability(), 1e-15);
        }
    }

    @Test
    void theNativeRampRisesFromMinThOverTheRange() {
        try (FrameSlots slots = new FrameSlots(16)) {
            final DualPi2 dual = dualPi2(slots, false, new BottleneckStats());
            assertEquals(0, dual.ramp(800 * US));
            assertEquals(0.5, dual.ramp(1000 * US), 1e-12);
            assertEquals(1, dual.ramp(1200 * US));
            final DualPi2 step = new DualPi2(slots, QueueLimit.ofPackets(10), 15 * MS, 15 * MS, 0.15, 3.0, 2.0,
                1 * MS, 0, 1, 30 * MS, false, 5, new BottleneckStats());
            assertEquals(0, step.ramp(1 * MS - 1));
            assertEquals(1, step.ramp(1 * MS));
        }
    }

    /**
     * A link of one frame a millisecond, a classic frame and an L4S frame every two milliseconds, over a classic
     * backlog of 8 frames: the L4S frames go straight out (the time-shifted FIFO favours them by 30 ms) while the
     * classic frames, served every other millisecond behind eight others, wait 17 ms. Each L4S frame has waited 1 ms,
     * half way up the ramp, so about half of them are marked (the PI gains are 0 here: only the native ramp marks).
     */
    @Test
    void l4sFramesSkipTheClassicQueueAndAreMarkedOnTheirOwnDelay() {
        try (FrameSlots slots = new FrameSlots(256)) {
            final BottleneckStats stats = new BottleneckStats();
            final DualPi2 dual = new DualPi2(slots, QueueLimit.ofPackets(1000), 15 * MS, 15 * MS, 0, 0, 2.0,
                800 * US, 400 * US, 0, 30 * MS, false, 5, stats);
            for (long t = 0; t < 8; t++) {
                dual.enqueue(TestFrames.ipv4(slots, 1500, 0), t * MS);
            }
            long l4sMaxUs = 0;
            long classicSumUs = 0;
            long classicCount = 0;
            for (long t = 8; t < 1008; t++) {
                if (t % 2 == 0) {
                    dual.enqueue(TestFrames.ipv4(slots, 1500, 0), t * MS);
                    dual.enqueue(TestFrames.ipv4(slots, 1500, EcnField.ECT1), t * MS - 1 * MS);
                }
                final int slot = dual.dequeue(t * MS);
                final long sojournUs = (t * MS - slots.enqueuedNs(slot)) / US;
                if (EcnField.codepoint(slots.slab(), slots.offset(slot), 1500) == 0) {
                    classicSumUs += sojournUs;
                    classicCount++;
                } else {
                    l4sMaxUs = Math.max(l4sMaxUs, sojournUs);
                }
                slots.release(slot);
            }
            assertTrue(l4sMaxUs <= 1_000, "L4S sojourn at most " + l4sMaxUs + " us");
            assertEquals(17_000, classicSumUs / classicCount, 500);
            assertEquals(500, dual.dequeued(DualPi2.L4S));
            assertTrue(stats.aqmMarks > 200 && stats.aqmMarks < 300, "marks " + stats.aqmMarks);
            assertEquals(0, stats.aqmDrops);
        }
    }

    /** Appendix A.2: at p' of 1 the classic probability is at its maximum, so ECT classic packets are dropped too. */
    @Test
    void overloadDropsInsteadOfMarking() {
        try (FrameSlots slots = new FrameSlots(1024)) {
            final BottleneckStats stats = new BottleneckStats();
            final DualPi2 dual = dualPi2(slots, false, stats);
            for (int i = 0; i < 600; i++) {
                dual.enqueue(TestFrames.ipv4(slots, 1500, EcnField.ECT0), 0);
            }
            // Nothing leaves for a second: the classic head's delay drives p' to 1.
            dual.enqueue(TestFrames.ipv4(slots, 1500, EcnField.ECT1), 1000 * MS);
            assertEquals(1, dual.baseProbability());
            assertEquals(1, dual.classicProbability());
            final long marksBefore = stats.aqmMarks;
            for (int i = 0; i < 100 && dual.packets() > 0; i++) {
                final int slot = dual.dequeue(1000 * MS);
                if (slot >= 0) {
                    slots.release(slot);
                }
            }
            assertEquals(marksBefore, stats.aqmMarks, "no marks under overload");
            assertTrue(stats.aqmDrops >= 100, "drops " + stats.aqmDrops);
            assertThrows(IllegalArgumentException.class, () -> new DualPi2(slots, QueueLimit.ofPackets(10), 15 * MS,
                15 * MS, 0.15, 3.0, 0, 800 * US, 400 * US, 1, 30 * MS, false, 5, stats));
        }
    }
}
