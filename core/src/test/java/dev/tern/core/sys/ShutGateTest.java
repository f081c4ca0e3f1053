package dev.tern.core.sys;

import org.junit.jupiter.api.Test;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@link ShutGate}: the owner's shut waits for a user inside, and nobody enters after it. */
class ShutGateTest {
    @Test
    void shutWaitsForAUserInsideAndRefusesEveryLaterOne() throws Exception {
        final ShutGate gate = new ShutGate();
        assertTrue(gate.enter());
        final CompletableFuture<Void> shut = CompletableFuture.runAsync(gate::shut);
        Thread.sleep(100);
        assertFalse(shut.isDone(), "shut returned while a user was inside");
        gate.exit();
        shut.get(5, TimeUnit.SECONDS);
        assertFalse(gate.enter(), "entered after the shut");
        assertFalse(gate.enter(), "and again");
        gate.shut(); // a second shut returns at once
        assertFalse(gate.enter());
    }

    @Test
    void usersComeAndGoFreelyUntilTheShut() {
        final ShutGate gate = new ShutGate();
        for (int i = 0; i < 1000; i++) {
            assertTrue(gate.enter());
            assertTrue(gate.enter());
            gate.exit();
            gate.exit();
        }
        gate.shut();
        assertFalse(gate.enter());
    }
}
