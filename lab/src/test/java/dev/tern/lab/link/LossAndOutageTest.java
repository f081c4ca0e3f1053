package dev.tern.lab.link;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class LossAndOutageTest {
    private static final long MS = 1_000_000L;

    @Test
    void bernoulliLosesItsShareAndIsSeeded() {
        final LossModel a = LossModel.bernoulli(0.05, 7);
        final LossModel b = LossModel.bernoulli(0.05, 7);
        int lost = 0;
        for (int i = 0; i < 100_000; i++) {
            final boolean x = a.lose();
            assertEquals(x, b.lose(), "same seed, same losses");
            lost += x ? 1 : 0;
        }
        assertTrue(Math.abs(lost - 5000) < 300, "lost " + lost);
    }

    @Test
    void gilbertElliottLosesInBurstsAtItsMeanRate() {
        // p = 0.01, r = 0.1: a tenth of a tenth... bad about 9 % of the time, losing half there.
        final LossModel model = LossModel.gilbertElliott(0.01, 0.1, 0, 0.5, 3);
        int lost = 0;
        int runs = 0;
        boolean previous = false;
        for (int i = 0; i < 200_000; i++) {
            final boolean x = model.lose();
            lost += x ? 1 : 0;
            runs += x && !previous ? 1 : 0;
            previous = x;
        }
        final double expected = model.meanLoss() * 200_000;
        assertTrue(Math.abs(lost - expected) < expected * 0.1, "lost " + lost + " expected " + expected);
        assertTrue((double) lost / runs > 1.5, "losses cluster: " + lost + " in " + runs + " runs");
    }

    @Test
    void outagesSilenceTheLinkAndFramesWait() {
        try (FrameSlots slots = new FrameSlots(64)) {
            final BottleneckStats stats = new BottleneckStats();
            final Bottleneck link = new Bottleneck(slots, LinkRate.constant(12_000_000),
                new DropTail(slots, QueueLimit.ofPackets(50), null, stats), LossModel.none(),
                new Outages(new long[] {2 * MS}, new long[] {10 * MS}), stats);
            link.arrive(TestFrames.ipv4(slots, 1500, 0), 0);
            assertEquals(-1, link.depart(0));
            assertEquals(1 * MS, link.nextDepartureNs(0), "1500 bytes at 12 Mbit/s");
            slots.release(link.depart(1 * MS));
            link.arrive(TestFrames.ipv4(slots, 1500, 0), 3 * MS);
            assertEquals(-1, link.depart(3 * MS));
            assertEquals(12 * MS, link.nextDepartureNs(3 * MS), "silent until the outage ends");
            assertEquals(-1, link.depart(12 * MS));
            assertEquals(13 * MS, link.nextDepartureNs(12 * MS));
            slots.release(link.depart(13 * MS));
            assertEquals(2, stats.departed);
            assertEquals(9000, link.queueDelay().quantileUs(1.0), 9000 * 0.002, "the second frame waited 9 ms (one bucket)");
            assertEquals(10 * MS, link.outages().silentNs(20 * MS));
        }
    }
}
