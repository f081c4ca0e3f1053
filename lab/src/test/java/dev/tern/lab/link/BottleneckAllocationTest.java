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
        measure("droptail");
    }

    @Test
    void codelAllocatesNothing() {
        measure("codel");
    }

    @Test
    void fqCodelAllocatesNothing() {
        measure("fq_codel");
    }

    @Test
    void pieAllocatesNothing() {
        measure("pie");
    }

    @Test
    void dualPi2AllocatesNothing() {
        measure("dualpi2");
    }

    private static QueueDiscipline discipline(String name, FrameSlots slots, QueueLimit limit, BottleneckStats stats) {
        return switch (name) {
            case "codel" -> new CoDel(slots, limit, 5 * MS, 100 * MS, true, 1514, stats);
            case "fq_codel" -> new FqCoDel(slots, limit, 1024, 1514, 5 * MS, 100 * MS, true, 1514, 1, stats);
            case "pie" -> new Pie(slots, limit, 15 * MS, 15 * MS, 0.125, 1.25, 150 * MS, true, 0.1, 1, stats);
            case "dualpi2" -> new DualPi2(slots, limit, 15 * MS, 15 * MS, 0.15, 3.0, 2.0, 800_000, 400_000, 1,
                30 * MS, false, 1, stats);
            default -> new DropTail(slots, limit, QueueLimit.ofPackets(20), stats);
        };
    }

    private static void measure(String name) {
        final ThreadMXBean threads = (ThreadMXBean) ManagementFactory.getThreadMXBean();
        try (FrameSlots slots = new FrameSlots(512)) {
            final BottleneckStats stats = new BottleneckStats();
            final QueueLimit limit = QueueLimit.ofPackets(200);
            final QueueDiscipline discipline = discipline(name, slots, limit, stats);
            final Bottleneck link = new Bottleneck(slots, LinkRate.trace(new long[] {1, 1, 2, 3, 3, 3, 4}), discipline,
                LossModel.gilbertElliott(0.01, 0.2, 0.001, 0.3, 1), Outages.none(), stats);
            // Four flows, ECT(0), ECT(1) and Not-ECT: every queue of FQ-CoDel and DualPI2 is used.
            final int[] templates = {TestFrames.tcp(slots, 1500, EcnField.ECT0, 1), TestFrames.tcp(slots, 1500,
                EcnField.ECT1, 2), TestFrames.tcp(slots, 1500, EcnField.NOT_ECT, 3), TestFrames.tcp(slots, 1500,
                EcnField.ECT0, 4)};
            long now = 0;
            long allocated = 0;
            for (int round = 0; round < 2; round++) {
                final long before = threads.getCurrentThreadAllocatedBytes();
                for (int i = 0; i < 1_000_000; i++) {
                    // Offer about twice what the trace carries, so the queue stays long.
                    now += 300_000;
                    final int slot = slots.acquire();
                    if (slot >= 0) {
                        java.lang.foreign.MemorySegment.copy(slots.slab(), slots.offset(templates[i & 3]),
                            slots.slab(), slots.offset(slot), 1500);
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
