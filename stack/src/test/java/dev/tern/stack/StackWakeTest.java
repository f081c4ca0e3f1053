package dev.tern.stack;

import dev.tern.core.net.Ipv4Address;
import dev.tern.ethernet.memory.MemoryWire;
import dev.tern.stack.testing.SleepyLink;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A stack's thread asleep in its link ({@link NetStack#awaitWork}, what {@link LinkIdleStrategy} does when idle) is
 * woken by work another thread queues for it, not left until its timeout; and it does not sleep at all when work is
 * queued already.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class StackWakeTest {
    @Test
    void workQueuedByAnotherThreadWakesTheSleepingStackAndQueuedWorkKeepsItAwake() throws Exception {
        try (MemoryWire wire = MemoryWire.builder().concurrent(true).build()) {
            final SleepyLink link = new SleepyLink(wire.attach("tern", 0x0200_0000_0002L));
            try (NetStack stack = NetStack.builder().name("tern").link(link).address("198.18.0.2/24").countersInMemory()
                .build()) {
                final UdpSocket socket = stack.openUdp();
                final byte[] hello = "wake up".getBytes();

                // Asleep for up to 20 s: a datagram queued from this thread wakes it.
                final CompletableFuture<Long> slept = CompletableFuture.supplyAsync(() -> {
                    final long start = System.nanoTime();
                    stack.awaitWork(20_000);
                    return System.nanoTime() - start;
                });
                while (!link.sleeping) {
                    Thread.onSpinWait();
                }
                assertTrue(socket.sendTo(Ipv4Address.parse("198.18.0.1"), 9, MemorySegment.ofArray(hello), 0, hello.length));
                final long sleptNs = slept.get(10, TimeUnit.SECONDS);
                assertTrue(sleptNs < 10_000_000_000L, "woken by the queued datagram: " + sleptNs + " ns");
                assertEquals(1, link.wakes);

                // The datagram still waits for the stack's turn: the next wait returns at once, without sleeping.
                assertTrue(stack.awaitWork(20_000));
                assertEquals(1, link.wakes, "nobody had to wake it");
                stack.doWork();
                assertFalse(link.sleeping);
            }
        }
    }
}
