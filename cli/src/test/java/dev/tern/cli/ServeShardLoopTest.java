package dev.tern.cli;

import org.agrona.concurrent.NoOpIdleStrategy;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code tern serve}'s shard loop: a turn that throws is reported and the shard goes on with its next turn (its flows
 * are not left unserved), unless the report rethrows, which ends the loop (one shard: the command fails).
 */
class ServeShardLoopTest {
    @Test
    void aTurnThatThrowsIsReportedAndTheLoopGoesOn() {
        final int[] turns = {0};
        final IllegalStateException bug = new IllegalStateException("a bug in turn 3");
        final List<RuntimeException> reported = new ArrayList<>();
        ServeCommand.pollUntilStopped(() -> {
            if (++turns[0] == 3) {
                throw bug;
            }
            return 1;
        }, new NoOpIdleStrategy(), () -> turns[0] >= 10, reported::add);
        assertEquals(10, turns[0], "turns went on after the failure");
        assertEquals(List.of(bug), reported);
    }

    @Test
    void aReportThatRethrowsEndsTheLoop() {
        final int[] turns = {0};
        final IllegalStateException bug = new IllegalStateException("a bug");
        final IllegalStateException thrown = assertThrows(IllegalStateException.class, () -> ServeCommand.pollUntilStopped(
            () -> {
                turns[0]++;
                throw bug;
            }, new NoOpIdleStrategy(), () -> false, error -> {
                throw error;
            }));
        assertSame(bug, thrown);
        assertEquals(1, turns[0]);
    }

    /**
     * A shard whose thread dies (an Error ends its loop) would leave its flows unanswered while shard 0 answers ping:
     * instead the command is told to stop every shard, and fails with one line naming the shard and the cause.
     */
    @Test
    void aShardWhoseThreadDiesStopsTheCommandWithOneLineNamingTheShardAndTheCause() throws InterruptedException {
        final ServeCommand serve = new ServeCommand(System.out);
        final Thread shard = serve.startShard(1, "serve[1/2]", 2, () -> {
            throw new OutOfMemoryError("a shard's thread dies");
        });
        shard.join(5_000);
        assertTrue(serve.stopping(), "every shard told to stop");
        assertEquals("serve: shard 1 of 2 (serve[1/2]) stopped: java.lang.OutOfMemoryError: a shard's thread dies; its "
            + "flows would go unanswered, so every shard stops", serve.shardStopped());
    }
}
