package dev.tern.cli.bench;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertTrue;

/** The connection-rate benchmark's cycle works on both sides (its speed is for {@code ./tern bench}, not a test). */
class ConnectBenchTest {
    @Test
    void bothSidesOpenAcceptAndResetConnections() throws Exception {
        final ConnectBench.Rate tern = ConnectBench.tern(0.5);
        final ConnectBench.Rate kernel = ConnectBench.kernel(0.5);
        System.out.printf("tern %.0f/s (%d), kernel %.0f/s (%d)%n", tern.perSecond(), tern.connections(),
            kernel.perSecond(), kernel.connections());
        assertTrue(tern.connections() > 100, "tern connections: " + tern.connections());
        assertTrue(kernel.connections() > 100, "kernel connections: " + kernel.connections());
    }
}
