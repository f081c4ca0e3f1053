package dev.tern.core.testing;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.IntPredicate;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** What every link that sleeps in the kernel must do when another thread wakes it (its {@code wakeAwaitingThread}). */
public final class WakeChecks {
    private WakeChecks() {
    }

    /**
     * A thread asleep in {@code awaitFrames} (20 s, nothing to receive) returns at the {@code wake} from this thread,
     * and the wake is taken once: the next wait, of 100 ms, sleeps all of it.
     */
    public static void aWakeEndsAWaitAndIsTakenOnce(IntPredicate awaitFrames, BooleanSupplier wake) throws Exception {
        final CompletableFuture<Long> waited = CompletableFuture.supplyAsync(() -> {
            final long start = System.nanoTime();
            awaitFrames.test(20_000);
            return System.nanoTime() - start;
        });
        Thread.sleep(200);
        assertFalse(waited.isDone(), "asleep in poll(2) with nothing to receive");
        assertTrue(wake.getAsBoolean());
        final long waitedNs = waited.get(10, TimeUnit.SECONDS);
        assertTrue(waitedNs < 10_000_000_000L, "woken, not timed out: " + waitedNs + " ns");
        final long start = System.nanoTime();
        assertFalse(awaitFrames.test(100));
        assertTrue(System.nanoTime() - start >= 90_000_000L, "the event counter was read back to 0");
    }
}
