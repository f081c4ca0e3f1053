package dev.tern.stack.testing;

import dev.tern.core.net.Ipv6InterfaceAddress;
import dev.tern.ipv6.Ipv6Config;
import dev.tern.stack.NetStack;
import dev.tern.stack.TcpConnection;
import dev.tern.stack.TcpListener;
import dev.tern.stack.TernSocketException;
import dev.tern.stack.sim.Simulation;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.security.MessageDigest;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Socket steps that tests on a {@link Simulation} repeat: stacks with IPv6, accepting a connection, reading a known
 * number of bytes, a transfer checked by SHA-256.
 */
public final class SimulatedSockets {
    private static final long SECOND = 1_000_000_000L;

    private SimulatedSockets() {
    }

    /** A stack with {@code ipv4} and the IPv6 address {@code ipv6} (ADDR/N), usable at once (no DAD). */
    public static NetStack addDualStack(Simulation sim, String name, String ipv4, String ipv6) {
        return sim.addStack(name, ipv4, builder -> builder.ipv6(ipv6Now(ipv6)));
    }

    /** IPv6 with the one address {@code ipv6} (ADDR/N), without duplicate address detection. */
    public static Ipv6Config ipv6Now(String ipv6) {
        return Ipv6Config.withAddresses(List.of(Ipv6InterfaceAddress.parse(ipv6))).withDadTransmits(0);
    }

    /**
     * Writes {@code data} to {@code from} and reads it at {@code to} through {@code buffer}, stepping the simulation
     * when nothing moves, within 600 s of virtual time; asserts the SHA-256 of what arrived is that of what was sent.
     */
    public static void transfer(Simulation sim, TcpConnection from, TcpConnection to, byte[] data, MemorySegment buffer)
        throws Exception {
        final long start = sim.nowNs();
        final MessageDigest received = MessageDigest.getInstance("SHA-256");
        int written = 0;
        long got = 0;
        while (got < data.length) {
            if (written < data.length) {
                written += from.write(MemorySegment.ofArray(data), written, Math.min(65536, data.length - written));
            }
            final int n = to.read(buffer, 0, (int) buffer.byteSize());
            if (n > 0) {
                received.update(buffer.asSlice(0, n).toArray(ValueLayout.JAVA_BYTE));
                got += n;
            } else {
                sim.step();
            }
            assertTrue(sim.nowNs() - start < 600 * SECOND, "transfer stalled at " + got);
        }
        assertArrayEquals(MessageDigest.getInstance("SHA-256").digest(data), received.digest(),
            "sha-256 of what was sent and what arrived");
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
