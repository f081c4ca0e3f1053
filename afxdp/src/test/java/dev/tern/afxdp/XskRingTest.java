package dev.tern.afxdp;

import dev.tern.afxdp.sys.XdpAbi;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The ring logic against a kernel played by the test: the same memory layout as a mapped ring (producer, consumer,
 * flags, then the entries), with the kernel's index written directly.
 */
class XskRingTest {
    private static final long PRODUCER = 0;
    private static final long CONSUMER = 64;
    private static final long FLAGS = 128;
    private static final long DESC = 192;

    private static XskRing ring(Arena arena, int size) {
        final MemorySegment memory = arena.allocate(DESC + (long) size * XdpAbi.ADDR_SIZE, 64);
        return new XskRing(memory, PRODUCER, CONSUMER, FLAGS, DESC, XdpAbi.ADDR_SIZE, size);
    }

    private static void kernelConsumes(XskRing ring, int count) {
        final int consumer = ring.memory().get(ValueLayout.JAVA_INT, CONSUMER);
        ring.memory().set(ValueLayout.JAVA_INT, CONSUMER, consumer + count);
    }

    private static void kernelProduces(XskRing ring, long... addresses) {
        final int producer = ring.memory().get(ValueLayout.JAVA_INT, PRODUCER);
        for (int i = 0; i < addresses.length; i++) {
            ring.memory().set(ValueLayout.JAVA_LONG, ring.entryOffset(producer + i), addresses[i]);
        }
        ring.memory().set(ValueLayout.JAVA_INT, PRODUCER, producer + addresses.length);
    }

    @Test
    void aProducerFillsTheRingThenWaitsForTheConsumer() {
        try (Arena arena = Arena.ofConfined()) {
            final XskRing fill = ring(arena, 8);
            assertEquals(8, fill.free(10));
            fill.submit(8);
            assertEquals(8, fill.memory().get(ValueLayout.JAVA_INT, PRODUCER), "the producer index is published");
            assertEquals(0, fill.free(1), "full until the kernel consumes");
            kernelConsumes(fill, 3);
            assertEquals(3, fill.free(8), "the consumer index is reread when the cache says full");
        }
    }

    @Test
    void aConsumerSeesOnlyWhatThePublishedProducerIndexCovers() {
        try (Arena arena = Arena.ofConfined()) {
            final XskRing completion = ring(arena, 4);
            assertEquals(0, completion.available(4));
            kernelProduces(completion, 0x1000, 0x1800);
            assertEquals(2, completion.available(4));
            assertEquals(0x1000, completion.memory().get(ValueLayout.JAVA_LONG, completion.entryOffset(completion.consumerIndex())));
            completion.release(2);
            assertEquals(2, completion.memory().get(ValueLayout.JAVA_INT, CONSUMER), "the consumer index is published");
            assertEquals(0, completion.available(4));
        }
    }

    @Test
    void indicesWrapAt2To32() {
        try (Arena arena = Arena.ofConfined()) {
            final MemorySegment memory = arena.allocate(DESC + 4L * XdpAbi.ADDR_SIZE, 64);
            memory.set(ValueLayout.JAVA_INT, PRODUCER, -2);
            memory.set(ValueLayout.JAVA_INT, CONSUMER, -2);
            final XskRing ring = new XskRing(memory, PRODUCER, CONSUMER, FLAGS, DESC, XdpAbi.ADDR_SIZE, 4);
            assertEquals(4, ring.free(4));
            ring.submit(3);
            assertEquals(1, memory.get(ValueLayout.JAVA_INT, PRODUCER));
            assertEquals(1, ring.free(4));
            assertEquals(DESC + 8L * 2, ring.entryOffset(-2), "entry -2 lives in slot 2 of 4");
        }
    }

    @Test
    void theNeedWakeupFlagIsTheKernels() {
        try (Arena arena = Arena.ofConfined()) {
            final XskRing tx = ring(arena, 4);
            assertFalse(tx.needsWakeup());
            tx.memory().set(ValueLayout.JAVA_INT, FLAGS, XdpAbi.XDP_RING_NEED_WAKEUP);
            assertTrue(tx.needsWakeup());
        }
    }

    @Test
    void aRingSizeMustBeAPowerOfTwo() {
        try (Arena arena = Arena.ofConfined()) {
            assertThrows(IllegalArgumentException.class, () -> ring(arena, 6));
        }
    }
}
