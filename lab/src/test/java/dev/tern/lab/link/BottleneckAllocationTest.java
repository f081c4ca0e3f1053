package dev.tern.lab.link;

import com.sun.management.ThreadMXBean;
import org.junit.jupiter.api.Test;

import java.lang.management.ManagementFactory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The bottleneck and its disciplines allocate nothing per frame: after a warm-up that compiles the path, a million
 * frames through each discipline (with loss, marking, drops and a trace-driven rate) are measured with ThreadMXBean.
 */
class BottleneckAllocationTest {
    private static final long MS = 1_000_000L;

    @Test
    void dropTailWithMarkingAllocatesNothing() {
        measure(false);
    }

    @Test
    void codelAllocatesNothing() {
        measure(true);
    }

    private static void measure(boolean codel) {
        final ThreadMXBean threads = (ThreadMXBean) ManagementFactory.getThreadMXBean();
        try (FrameSlots slots = new FrameSlots(512)) {
            final BottleneckStats stats = new BottleneckStats();
            final QueueLimit limit = QueueLimit.ofPackets(200);
            final QueueDiscipline discipline = codel
                ? new CoDel(slots, limit, 5 * MS, 100 * MS, true, 1514, stats)
                : new DropTail(slots, limit, QueueLimit.ofPackets(20), stats);
            final Bottleneck link = new Bottleneck(slots, LinkRate.trace(new long[] {1, 1, 2, 3, 3, 3, 4}), discipline,
                LossModel.gilbertElliott(0.01, 0.2, 0.001, 0.3, 1), Outages.none(), stats);
            final int template = TestFrames.ipv4(slots, 1500, EcnField.ECT0);
            long now = 0;
            long allocated = 0;
            for (int round = 0; round < 2; round++) {
                final long before = threads.getCurrentThreadAllocatedBytes();
                for (int i = 0; i < 1_000_000; i++) {
                    // Offer about twice what the trace carries, so the queue stays long.
                    now += 300_000;
                    final int slot = slots.acquire();
                    if (slot >= 0) {
                        java.lang.foreign.MemorySegment.copy(slots.slab(), slots.offset(template), slots.slab(),
                            slots.offset(slot), 1500);
                        slots.length(slot, 1500);
                        link.arrive(slot, now);
                    }
                    while (link.nextDepartureNs(now) <= now) {
                        final int out = link.depart(now);
                        if (out < 0) {
                            break;
                        }
                        slots.release(out);
                    }
                }
                allocated = threads.getCurrentThreadAllocatedBytes() - before;
            }
            assertEquals(0, allocated, "bytes allocated over a million frames");
            assertTrue(stats.departed > 500_000 && stats.randomLoss > 0 && stats.marks() > 0, "exercised");
        }
    }
}
