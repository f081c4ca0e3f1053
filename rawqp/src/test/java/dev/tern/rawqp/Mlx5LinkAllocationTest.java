package dev.tern.rawqp;

import dev.tern.core.testing.Allocations;
import dev.tern.ethernet.link.FrameHandler;
import dev.tern.rawqp.testing.Mlx5DeviceModel;
import dev.tern.rawqp.testing.TestFrames;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The Mlx5Link data path allocates nothing per frame: claim, write, commit, flush (doorbell), send completions,
 * receive and replenish, over a million frames after warm-up, with the device model (itself allocation-free) on the
 * same thread. Counts ThreadMXBean allocated bytes of this thread; a window of a million frames must allocate 0.
 */
class Mlx5LinkAllocationTest {
    private static final int BATCH = 32;
    private static final int FRAME = 64;

    /** Counts frames and checks they arrive in order; a field-holding object, not a capturing lambda. */
    static final class Counter implements FrameHandler {
        int expected;
        long received;
        long outOfOrder;

        @Override
        public void onFrame(MemorySegment segment, long offset, int length, int flags) {
            if (TestFrames.tag(segment, offset, TestFrames.UDP_PAYLOAD) != expected) {
                outOfOrder++;
            }
            expected++;
            received++;
        }
    }

    /** One batch: the stack sends 32 frames with one flush, the device runs, the stack receives them. */
    static final class Batch implements Runnable {
        final Mlx5LinkRingModelTest.Rig rig;
        final Counter counter = new Counter();
        int tag;
        long refused;

        Batch(Mlx5LinkRingModelTest.Rig rig) {
            this.rig = rig;
        }

        @Override
        public void run() {
            for (int i = 0; i < BATCH; i++) {
                if (!rig.link.claim(rig.tx)) {
                    refused++;
                    continue;
                }
                TestFrames.udp(rig.tx.segment(), rig.tx.offset(), Mlx5LinkRingModelTest.PEER, Mlx5LinkRingModelTest.MAC, tag++, FRAME, true);
                rig.tx.length(FRAME).requestIpChecksum().requestL4Checksum(34, 6);
                rig.link.commit(rig.tx);
            }
            rig.link.flush();
            rig.device.run();
            while (rig.link.receive(counter, 64) > 0) {
                // keep reading until the receive CQ is empty
            }
        }
    }

    @Test
    void aMillionFramesThroughTheMlx5DataPathAllocateNothing() {
        final Mlx5DeviceModel.Config config = new Mlx5DeviceModel.Config(0x1234, 0x5678, 256, 64, 16, 256, 64, 64, 0, 256);
        try (Mlx5LinkRingModelTest.Rig rig = new Mlx5LinkRingModelTest.Rig(config, 2048, Mlx5LinkRingModelTest.CSUM, 16)) {
            final Batch batch = new Batch(rig);
            final int measuredBatches = 1_000_000 / BATCH + 1;
            // On a busy machine the JIT may still be compiling after warm-up: Allocations.measure lets a few windows
            // settle, then measures one of a million frames whole, which must show zero.
            final long allocated = Allocations.measure(20_000, measuredBatches, batch);
            assertEquals(List.of(), rig.device.violations());
            assertEquals(0, batch.refused, "the rings never ran out of room");
            assertEquals(0, batch.counter.outOfOrder);
            assertTrue(batch.counter.received >= 1_000_000 + 20_000L * BATCH, "received " + batch.counter.received);
            assertEquals(0, allocated, "bytes allocated in a window of " + measuredBatches * BATCH + " frames after warm-up");
        }
    }

    @Test
    void readingTheStatisticsAllocatesNothing() {
        try (Mlx5LinkRingModelTest.Rig rig = new Mlx5LinkRingModelTest.Rig(0, 4)) {
            final List<String> names = List.of(rig.link.statisticNames());
            final long[] values = new long[names.size()];
            final Runnable read = () -> rig.link.statistics(values);
            assertEquals(0, Allocations.measure(20_000, 1_000_000, read), "bytes allocated by a million reads after warm-up");
            assertEquals(Mlx5LinkRingModelTest.RECEIVE, values[names.indexOf("buffers_in_use")]);
        }
    }
}
