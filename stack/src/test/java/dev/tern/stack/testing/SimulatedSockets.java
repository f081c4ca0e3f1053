package dev.tern.stack.testing;

import dev.tern.stack.TcpConnection;
import dev.tern.stack.TcpListener;
import dev.tern.stack.TernSocketException;
import dev.tern.stack.sim.Simulation;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Socket steps that tests on a {@link Simulation} repeat: accepting a connection, reading a known number of bytes. */
public final class SimulatedSockets {
    private static final long SECOND = 1_000_000_000L;

    private SimulatedSockets() {
    }

    /** The first connection {@code listener} accepts within 5 s of virtual time (the test fails without one). */
    public static TcpConnection accepted(Simulation sim, TcpListener listener) {
        final TcpConnection[] accepted = new TcpConnection[1];
        assertTrue(sim.runUntil(() -> {
            try {
                accepted[0] = accepted[0] != null ? accepted[0] : listener.accept();
            } catch (TernSocketException e) {
                throw new AssertionError(e);
            }
            return accepted[0] != null;
        }, 5 * SECOND), "no connection to accept");
        return accepted[0];
    }

    /**
     * Exactly {@code expected} bytes read from {@code connection} through {@code buffer}, stepping the simulation while
     * none are waiting, within {@code timeoutNs} of virtual time (the test fails with fewer).
     */
    public static byte[] readAll(Simulation sim, TcpConnection connection, int expected, MemorySegment buffer,
                                 long timeoutNs) throws TernSocketException {
        final byte[] out = new byte[expected];
        int got = 0;
        final long deadline = sim.nowNs() + timeoutNs;
        while (got < expected && sim.nowNs() < deadline) {
            final int n = connection.read(buffer, 0, Math.min(expected - got, (int) buffer.byteSize()));
            if (n < 0) {
                break;
            }
            MemorySegment.copy(buffer, ValueLayout.JAVA_BYTE, 0, out, got, n);
            got += n;
            if (n == 0) {
                sim.step();
            }
        }
        assertEquals(expected, got, "bytes read");
        return out;
    }
}
