package dev.tern.core.io;

import dev.tern.core.testing.Allocations;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.security.MessageDigest;
import java.util.Arrays;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.longs;

class ByteRingTest {
    @Test
    void refusesSizesThatAreNotAPowerOfTwo() {
        assertThrows(IllegalArgumentException.class, () -> new ByteRing(MemorySegment.ofArray(new byte[1000])));
    }

    @Test
    void writesWrapAroundAndReadBackInOrder() {
        final ByteRing ring = new ByteRing(Arena.ofAuto().allocate(16));
        final MemorySegment source = MemorySegment.ofArray(new byte[] {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
        assertEquals(12, ring.write(source, 0, 12));
        final byte[] out = new byte[10];
        assertEquals(10, ring.read(MemorySegment.ofArray(out), 0, 10));
        assertEquals(12, ring.write(source, 0, 12), "wraps past the end");
        assertEquals(2, ring.freeSpace());
        assertEquals(0, ring.write(source, 0, 0));
        assertEquals(2, ring.write(source, 0, 12), "only what fits");
        final byte[] rest = new byte[16];
        assertEquals(16, ring.read(MemorySegment.ofArray(rest), 0, 16));
        assertArrayEquals(new byte[] {11, 12, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 1, 2}, rest);
    }

    @Test
    void peekReadsAnyPublishedRangeWithoutConsuming() {
        final ByteRing ring = new ByteRing(Arena.ofAuto().allocate(8));
        ring.write(MemorySegment.ofArray(new byte[] {1, 2, 3, 4, 5, 6}), 0, 6);
        ring.consume(4);
        ring.write(MemorySegment.ofArray(new byte[] {7, 8, 9, 10}), 0, 4);
        final byte[] out = new byte[5];
        ring.peek(ring.consumerPosition() + 1, MemorySegment.ofArray(out), 0, 5);
        assertArrayEquals(new byte[] {6, 7, 8, 9, 10}, out);
        assertEquals(6, ring.available());
    }

    /** Random writes and reads of random sizes keep the stream intact (model: the bytes in order). */
    @Test
    void keepsTheByteStreamIntactForAnySequenceOfOperations() {
        qt().withExamples(300).forAll(integers().between(1, 12), longs().all()).checkAssert((log2, seed) -> {
            final SplittableRandom random = new SplittableRandom(seed);
            final ByteRing ring = new ByteRing(Arena.ofAuto().allocate(1L << log2));
            final byte[] stream = new byte[20_000];
            random.nextBytes(stream);
            final byte[] received = new byte[stream.length];
            int written = 0;
            int read = 0;
            while (read < stream.length) {
                if (written < stream.length && random.nextBoolean()) {
                    written += ring.write(MemorySegment.ofArray(stream), written,
                        Math.min(stream.length - written, random.nextInt(1 + (2 << log2))));
                } else {
                    read += ring.read(MemorySegment.ofArray(received), read, random.nextInt(1 + (2 << log2)));
                }
                assertEquals(written - read, ring.available());
            }
            assertArrayEquals(stream, received);
        });
    }

    @Test
    void aProducerAndAConsumerThreadMoveEveryByteInOrder() throws Exception {
        final ByteRing ring = new ByteRing(Arena.ofShared().allocate(4096));
        final byte[] stream = new byte[32 << 20];
        new SplittableRandom(5).nextBytes(stream);
        final Thread producer = new Thread(() -> {
            final MemorySegment source = MemorySegment.ofArray(stream);
            int written = 0;
            while (written < stream.length) {
                written += ring.write(source, written, Math.min(1500, stream.length - written));
            }
        });
        producer.start();
        final MessageDigest digest = MessageDigest.getInstance("SHA-256");
        final byte[] chunk = new byte[1000];
        long read = 0;
        while (read < stream.length) {
            final int n = ring.read(MemorySegment.ofArray(chunk), 0, chunk.length);
            digest.update(chunk, 0, n);
            read += n;
        }
        producer.join();
        assertArrayEquals(MessageDigest.getInstance("SHA-256").digest(stream), digest.digest());
    }

    @Test
    void movingBytesAllocatesNothing() {
        try (Arena arena = Arena.ofConfined()) {
            final ByteRing ring = new ByteRing(arena.allocate(1 << 16));
            final MemorySegment chunk = arena.allocate(1460);
            chunk.fill((byte) 7);
            final long bytes = Allocations.measure(200_000, 1_000_000, () -> {
                ring.write(chunk, 0, 1460);
                ring.peek(ring.consumerPosition(), chunk, 0, 100);
                ring.read(chunk, 0, 1460);
            });
            assertEquals(0, bytes);
            assertEquals((byte) 7, chunk.get(ValueLayout.JAVA_BYTE, 5));
            assertEquals(0, Arrays.stream(new int[] {ring.available()}).sum());
        }
    }
}
