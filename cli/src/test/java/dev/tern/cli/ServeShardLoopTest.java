package dev.tern.cli;

import org.agrona.concurrent.NoOpIdleStrategy;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

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
}
