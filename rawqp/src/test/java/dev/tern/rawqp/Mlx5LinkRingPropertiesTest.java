package dev.tern.rawqp;

import dev.tern.rawqp.testing.Mlx5DeviceModel;
import org.junit.jupiter.api.Test;
import org.quicktheories.core.Gen;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.booleans;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.lists;

/**
 * Generated interleavings of the stack (claim/commit/flush/receive) and the device model (consuming a limited
 * number of WQEs per step, so the device lags and the send queue fills up) on small rings, starting the counters
 * before their 16-, 24- and 32-bit wraps: every frame arrives once, in order, intact; the device sees no protocol
 * violation; doorbells, completions and buffers add up.
 */
class Mlx5LinkRingPropertiesTest {
    /** One round: the stack commits {@code frames}, maybe flushes; the device consumes up to {@code deviceBudget} WQEs; the stack receives up to {@code receiveMax}. */
    record Step(int frames, boolean flush, int deviceBudget, int receiveMax) {
    }

    /** Ring geometry and counters' start. */
    record Setup(int startIndex, int cqeSize, int moderation, int receiveStride) {
    }

    private static final int[] STARTS = {0, 0xFFF0, 0xFF_FFF0, -16, 40_000};
    private static final int[] MODERATIONS = {1, 2, 4, 8, 16};

    private static Gen<Setup> setups() {
        return integers().between(0, STARTS.length - 1).zip(booleans().all(), integers().between(0, MODERATIONS.length - 1), booleans().all(),
            (start, bigCqe, moderation, wideStride) -> new Setup(STARTS[start], bigCqe ? 128 : 64, MODERATIONS[moderation], wideStride ? 32 : 16));
    }

    private static Gen<List<Step>> scripts() {
        final Gen<Step> step = integers().between(0, 12).zip(booleans().all(), integers().between(0, 40), integers().between(0, 24), Step::new);
        return lists().of(step).ofSizeBetween(1, 80);
    }

    @Test
    void anyInterleavingDeliversEveryFrameOnceInOrderWithConsistentDoorbellsAndCompletions() {
        qt().withExamples(60).forAll(setups(), scripts()).checkAssert(Mlx5LinkRingPropertiesTest::play);
    }

    private static void play(Setup setup, List<Step> script) {
        final Mlx5DeviceModel.Config config = new Mlx5DeviceModel.Config(0x4321, 0x8765, 64, 64, setup.receiveStride(), 64, 64, setup.cqeSize(),
            setup.startIndex(), 2048);
        try (Mlx5LinkRingModelTest.Rig rig = new Mlx5LinkRingModelTest.Rig(config, 2048, Mlx5LinkRingModelTest.CSUM, setup.moderation())) {
            int committed = 0;
            int doorbellsExpected = 0;
            int unflushed = 0;
            for (Step step : script) {
                for (int i = 0; i < step.frames() && rig.commit(committed, length(committed)); i++) {
                    committed++;
                    unflushed++;
                }
                if (step.flush()) {
                    rig.link.flush();
                    doorbellsExpected += unflushed > 0 ? 1 : 0;
                    unflushed = 0;
                }
                rig.device.step(step.deviceBudget());
                if (step.receiveMax() > 0) {
                    rig.link.receive(rig.collect, step.receiveMax());
                }
            }
            // Drain: the last flush, the device catching up, the stack reading everything.
            rig.link.flush();
            doorbellsExpected += unflushed > 0 ? 1 : 0;
            for (int round = 0; round < 4; round++) {
                rig.device.run();
                rig.receiveAll();
                rig.link.flush();
            }
            final String context = setup + " after " + committed + " frames";
            assertEquals(List.of(), rig.device.violations(), context);
            assertEquals(Mlx5LinkRingModelTest.range(0, committed), rig.tags, context);
            assertEquals(0, rig.corrupt, context);
            assertEquals(committed, rig.device.wqesConsumed(), context);
            assertEquals(doorbellsExpected, rig.link.doorbells(), "one doorbell per flush that had frames, " + context);
            assertEquals(committed / setup.moderation(), rig.device.sendCqes(), "one CQE per moderation window, " + context);
            assertEquals(rig.device.sendCqes(), rig.link.signalledWqes(), context);
            assertEquals(Mlx5LinkRingModelTest.RECEIVE + committed % setup.moderation(), rig.link.buffersInUse(),
                "only the unsignalled tail still holds buffers, " + context);
        }
    }

    private static int length(int tag) {
        return 60 + (tag * 131) % 1455;
    }
}
