package dev.tern.core.io;

import dev.tern.core.checksum.InternetChecksum;
import dev.tern.core.testing.Allocations;
import dev.tern.core.testing.NaiveChecksum;
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

    @Test
    void peekAndAddCountsASecondPieceAfterAnOddFirstPieceOnePositionFurther() {
        // The readable bytes start at index 13 of 16: 3 bytes there, then 6 from index 0. The 4th byte (the first of
        // the second piece) is the low byte of the second 16-bit word, not a high byte as a new piece would read it.
        final ByteRing ring = new ByteRing(Arena.ofAuto().allocate(16));
        ring.write(MemorySegment.ofArray(new byte[13]), 0, 13);
        ring.consume(13);
        final byte[] data = {0x12, 0x34, 0x56, 0x78, (byte) 0x9A, (byte) 0xBC, (byte) 0xDE, (byte) 0xF0, 0x0F};
        ring.write(MemorySegment.ofArray(data), 0, data.length);
        assertEquals(13, ring.index(ring.consumerPosition()));
        final byte[] out = new byte[data.length];
        final long sum = ring.peekAndAdd(0, ring.consumerPosition(), MemorySegment.ofArray(out), 0, data.length);
        assertArrayEquals(data, out);
        // Words 1234 5678 9abc def0 0f00 sum to 0x1_f158: 0xf159 folded.
        assertEquals(0xf159, InternetChecksum.fold(sum));
        assertEquals(NaiveChecksum.checksum(data, 0, data.length), InternetChecksum.finish(sum));
    }

    @Test
    void peekAndAddMatchesPeekThenAddAtAnyRingPosition() {
        qt().withExamples(2000).forAll(integers().between(1, 12), integers().all(), longs().between(0, 1L << 48), longs().all())
            .checkAssert((log2, where, sum, seed) -> {
                final SplittableRandom random = new SplittableRandom(seed);
                final int capacity = 1 << log2;
                final ByteRing ring = new ByteRing(Arena.ofAuto().allocate(capacity));
                // Move the positions anywhere in the first few laps of the ring, then fill it.
                final MemorySegment filler = MemorySegment.ofArray(new byte[capacity]);
                int skip = Math.floorMod(where, 4 * capacity);
                while (skip > 0) {
                    final int n = ring.write(filler, 0, Math.min(skip, capacity));
                    ring.consume(n);
                    skip -= n;
                }
                final byte[] stream = new byte[capacity];
                random.nextBytes(stream);
                ring.write(MemorySegment.ofArray(stream), 0, capacity);
                final int start = random.nextInt(capacity + 1);
                final int length = random.nextInt(capacity - start + 1);
                final byte[] out = new byte[length + 2];
                final int offset = random.nextInt(2);
                final long fused = ring.peekAndAdd(sum, ring.consumerPosition() + start, MemorySegment.ofArray(out), offset, length);
                final byte[] expected = new byte[length + 2];
                ring.peek(ring.consumerPosition() + start, MemorySegment.ofArray(expected), offset, length);
                assertArrayEquals(expected, out);
                assertArrayEquals(Arrays.copyOfRange(stream, start, start + length), Arrays.copyOfRange(out, offset, offset + length));
                final long plain = InternetChecksum.add(sum, MemorySegment.ofArray(expected), offset, length);
                assertEquals(InternetChecksum.fold(plain), InternetChecksum.fold(fused),
                    () -> "capacity " + capacity + ", index " + ring.index(ring.consumerPosition() + start) + ", length " + length);
            });
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
                ring.peekAndAdd(0, ring.consumerPosition() + 1, chunk, 100, 1000);
                ring.read(chunk, 0, 1460);
            });
            assertEquals(0, bytes);
            assertEquals((byte) 7, chunk.get(ValueLayout.JAVA_BYTE, 5));
            assertEquals(0, Arrays.stream(new int[] {ring.available()}).sum());
        }
    }
}
