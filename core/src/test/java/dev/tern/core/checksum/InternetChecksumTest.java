package dev.tern.core.checksum;

import dev.tern.core.testing.Allocations;
import dev.tern.core.testing.NaiveChecksum;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.longs;

class InternetChecksumTest {
    private static final int MAX_LENGTH = 9000;

    @Test
    void rfc1071ExampleSumsToDdf2() {
        // RFC 1071 §3: the words 0001 f203 f4f5 f6f7 sum to ddf2, so the checksum is ~ddf2 = 220d.
        final MemorySegment bytes = MemorySegment.ofArray(new byte[] {0x00, 0x01, (byte) 0xf2, 0x03, (byte) 0xf4, (byte) 0xf5, (byte) 0xf6, (byte) 0xf7});
        assertEquals(0xddf2, InternetChecksum.fold(InternetChecksum.add(0, bytes, 0, 8)));
        assertEquals(0x220d, InternetChecksum.compute(bytes, 0, 8));
    }

    @Test
    void matchesNaiveLoopForEveryLengthUpTo9000AtOddAndEvenOffsets() {
        final byte[] data = new byte[MAX_LENGTH + 16];
        new SplittableRandom(1071).nextBytes(data);
        final MemorySegment heap = MemorySegment.ofArray(data);
        try (Arena arena = Arena.ofConfined()) {
            final MemorySegment offHeap = arena.allocate(data.length, 8);
            offHeap.copyFrom(heap);
            for (int offset : new int[] {0, 1, 2, 3, 5, 7}) {
                for (int length = 0; length <= MAX_LENGTH; length++) {
                    final int expected = NaiveChecksum.checksum(data, offset, length);
                    assertEquals(expected, InternetChecksum.compute(offHeap, offset, length),
                        () -> "off-heap mismatch");
                    if (length % 97 == 0) {
                        assertEquals(expected, InternetChecksum.compute(heap, offset, length), "heap mismatch");
                    }
                }
            }
        }
    }

    @Test
    void allOnesDataSumsToAllOnesNotZero() {
        final byte[] data = new byte[1500];
        java.util.Arrays.fill(data, (byte) 0xFF);
        assertEquals(NaiveChecksum.checksum(data, 0, data.length), InternetChecksum.compute(MemorySegment.ofArray(data), 0, data.length));
        assertEquals(0, InternetChecksum.compute(MemorySegment.ofArray(data), 0, data.length));
    }

    @Test
    void randomBuffersMatchNaiveLoop() {
        qt().withExamples(2000).forAll(integers().between(0, MAX_LENGTH), integers().between(0, 15), longs().all())
            .checkAssert((length, offset, seed) -> {
                final byte[] data = new byte[length + offset];
                new SplittableRandom(seed).nextBytes(data);
                assertEquals(NaiveChecksum.checksum(data, offset, length),
                    InternetChecksum.compute(MemorySegment.ofArray(data), offset, length));
            });
    }

    @Test
    void piecesOfEvenLengthChainToTheWholeSum() {
        qt().withExamples(1000).forAll(integers().between(0, 3000), integers().between(0, 3000), longs().all())
            .checkAssert((first, rest, seed) -> {
                final int split = first & ~1;
                final byte[] data = new byte[split + rest];
                new SplittableRandom(seed).nextBytes(data);
                final MemorySegment segment = MemorySegment.ofArray(data);
                final long partial = InternetChecksum.add(0, segment, 0, split);
                assertEquals(InternetChecksum.compute(segment, 0, data.length),
                    InternetChecksum.finish(InternetChecksum.add(partial, segment, split, rest)));
            });
    }

    @Test
    void copyAndAddMatchesCopyThenAddForEveryLengthUpTo9000AtOddAndEvenOffsets() {
        final byte[] data = new byte[MAX_LENGTH + 16];
        new SplittableRandom(1624).nextBytes(data);
        try (Arena arena = Arena.ofConfined()) {
            final MemorySegment source = arena.allocate(data.length, 8);
            source.copyFrom(MemorySegment.ofArray(data));
            final MemorySegment copied = arena.allocate(data.length, 8);
            final MemorySegment plain = arena.allocate(data.length, 8);
            for (int[] offsets : new int[][] {{0, 0}, {1, 0}, {0, 1}, {3, 5}, {2, 7}, {6, 6}}) {
                final int from = offsets[0];
                final int to = offsets[1];
                for (int length = 0; length <= MAX_LENGTH; length++) {
                    final long sum = 0xF00D_0000L + length;
                    copied.fill((byte) length);
                    final long fused = InternetChecksum.copyAndAdd(sum, source, from, copied, to, length);
                    MemorySegment.copy(source, from, plain, to, length);
                    final int expected = InternetChecksum.fold(InternetChecksum.add(sum, plain, to, length));
                    if (expected != InternetChecksum.fold(fused)) {
                        assertEquals(expected, InternetChecksum.fold(fused), "from " + from + " to " + to + ", length " + length);
                    }
                    if (copied.asSlice(to, length).mismatch(plain.asSlice(to, length)) != -1) {
                        fail("bytes differ: from " + from + " to " + to + ", length " + length);
                    }
                }
            }
        }
    }

    @Test
    void copyAndAddCopiesExactlyTheBytesAndSumsThemAsCopyThenAdd() {
        // Offsets are packed in one int (source in the low 4 bits, destination in the next 4), sums span 48 bits:
        // far beyond any frame's unfolded sum, never near the long's overflow.
        qt().withExamples(3000)
            .forAll(integers().between(0, MAX_LENGTH), integers().between(0, 255), longs().between(0, 1L << 48), longs().all())
            .checkAssert((length, offsets, sum, seed) -> {
                final int from = offsets & 15;
                final int to = offsets >>> 4;
                final SplittableRandom random = new SplittableRandom(seed);
                final byte[] source = new byte[from + length + 16];
                random.nextBytes(source);
                final byte[] destination = new byte[to + length + 16];
                random.nextBytes(destination);
                final byte[] expectedDestination = destination.clone();
                System.arraycopy(source, from, expectedDestination, to, length);
                final MemorySegment target = MemorySegment.ofArray(destination);
                final long fused = InternetChecksum.copyAndAdd(sum, MemorySegment.ofArray(source), from, target, to, length);
                assertArrayEquals(expectedDestination, destination, "bytes copied, and none outside the range");
                final long plain = InternetChecksum.add(sum, MemorySegment.ofArray(expectedDestination), to, length);
                assertEquals(InternetChecksum.fold(plain), InternetChecksum.fold(fused));
                assertEquals(InternetChecksum.finish(plain), InternetChecksum.finish(fused));
            });
    }

    @Test
    void aCopiedPieceChainsBetweenBigEndianPiecesOfEvenLength() {
        qt().withExamples(1000).forAll(integers().between(0, 40), integers().between(0, 3000), integers().between(0, 40), longs().all())
            .checkAssert((head, body, tail, seed) -> {
                final int header = head & ~1;
                final int payload = body & ~1;
                final byte[] data = new byte[header + payload + tail];
                final SplittableRandom random = new SplittableRandom(seed);
                random.nextBytes(data);
                final byte[] frame = new byte[data.length];
                System.arraycopy(data, 0, frame, 0, header);
                System.arraycopy(data, header + payload, frame, header + payload, tail);
                final MemorySegment out = MemorySegment.ofArray(frame);
                long sum = InternetChecksum.add(0, out, 0, header);
                sum = InternetChecksum.copyAndAdd(sum, MemorySegment.ofArray(data), header, out, header, payload);
                sum = InternetChecksum.add(sum, out, header + payload, tail);
                assertArrayEquals(data, frame);
                assertEquals(NaiveChecksum.checksum(data, 0, data.length), InternetChecksum.finish(sum));
            });
    }

    @Test
    void copyAndAddOfZerosAddsNothingAndOfOnesAddsAllOnes() {
        final MemorySegment zeros = MemorySegment.ofArray(new byte[64]);
        final MemorySegment ones = MemorySegment.ofArray(new byte[64]);
        ones.fill((byte) 0xFF);
        final MemorySegment out = MemorySegment.ofArray(new byte[64]);
        for (int length = 0; length <= 64; length++) {
            assertEquals(0, InternetChecksum.copyAndAdd(0, zeros, 0, out, 0, length), "zeros, length " + length);
            assertEquals(InternetChecksum.fold(InternetChecksum.add(0, ones, 0, length)),
                InternetChecksum.fold(InternetChecksum.copyAndAdd(0, ones, 0, out, 0, length)), "ones, length " + length);
        }
    }

    @Test
    void swappingASumIsSummingTheBytesOnePositionFurther() {
        // RFC 1071 §2(B): bytes that start at an odd offset contribute their sum byte-swapped.
        qt().withExamples(1000).forAll(integers().between(0, 3000), longs().all()).checkAssert((length, seed) -> {
            final byte[] data = new byte[length + 1];
            new SplittableRandom(seed).nextBytes(data);
            data[0] = 0;
            final MemorySegment segment = MemorySegment.ofArray(data);
            assertEquals(InternetChecksum.fold(InternetChecksum.add(0, segment, 0, length + 1)),
                InternetChecksum.swapped(InternetChecksum.add(0, segment, 1, length)));
        });
    }

    @Test
    void aReceiverVerifiesDataThatCarriesItsChecksum() {
        qt().withExamples(500).forAll(integers().between(1, 700), longs().all()).checkAssert((words, seed) -> {
            final byte[] data = new byte[words * 2 + 2];
            new SplittableRandom(seed).nextBytes(data);
            data[0] = 0;
            data[1] = 0;
            final MemorySegment segment = MemorySegment.ofArray(data);
            final int checksum = InternetChecksum.compute(segment, 0, data.length);
            segment.set(ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(java.nio.ByteOrder.BIG_ENDIAN), 0, (short) checksum);
            assertTrue(InternetChecksum.verifies(InternetChecksum.add(0, segment, 0, data.length)));
        });
    }

    @Test
    void incrementalUpdateOfAWordMatchesRecomputation() {
        qt().withExamples(2000).forAll(integers().between(1, 200), integers().between(0, 0xFFFF), longs().all())
            .checkAssert((words, newWord, seed) -> {
                final byte[] data = new byte[words * 2];
                final SplittableRandom random = new SplittableRandom(seed);
                random.nextBytes(data);
                final int at = random.nextInt(words) * 2;
                final int before = NaiveChecksum.checksum(data, 0, data.length);
                final int oldWord = ((data[at] & 0xFF) << 8) | (data[at + 1] & 0xFF);
                data[at] = (byte) (newWord >>> 8);
                data[at + 1] = (byte) (int) newWord;
                final int after = NaiveChecksum.checksum(data, 0, data.length);
                assertEquals(equivalent(after), equivalent(InternetChecksum.update16(before, oldWord, newWord)));
            });
    }

    @Test
    void incrementalUpdateToAllZeroWordsGivesTheOnlyChecksumThatVerifies() {
        // An echo request of all zeros but its type (8): checksum ~0x0800 = 0xF7FF. Changing the type to 0 leaves all
        // words zero, whose only valid checksum is ~0 = 0xFFFF; RFC 1624 eqn. 3 as such gives 0x0000.
        assertEquals(0xFFFF, InternetChecksum.update16(0xF7FF, 0x0800, 0x0000));
        // A 32-bit field 0x00001234 alone has checksum ~0x1234 = 0xEDCB; clearing it leaves all zeros again.
        assertEquals(0xFFFF, InternetChecksum.update32(0xEDCB, 0x0000_1234, 0));
    }

    @Test
    void incrementalUpdateOfAnAddressMatchesRecomputation() {
        qt().withExamples(2000).forAll(integers().all(), integers().all(), longs().all())
            .checkAssert((oldAddress, newAddress, seed) -> {
                final byte[] data = new byte[40];
                new SplittableRandom(seed).nextBytes(data);
                final MemorySegment segment = MemorySegment.ofArray(data);
                final ValueLayout.OfInt be = ValueLayout.JAVA_INT_UNALIGNED.withOrder(java.nio.ByteOrder.BIG_ENDIAN);
                segment.set(be, 12, oldAddress);
                final int before = NaiveChecksum.checksum(data, 0, data.length);
                segment.set(be, 12, newAddress);
                final int after = NaiveChecksum.checksum(data, 0, data.length);
                assertEquals(equivalent(after), equivalent(InternetChecksum.update32(before, oldAddress, newAddress)));
            });
    }

    @Test
    void pseudoHeaderSumEqualsSumOfItsTwelveBytes() {
        qt().withExamples(1000).forAll(integers().all(), integers().all(), integers().between(0, 255), integers().between(0, 0xFFFF))
            .checkAssert((source, destination, proto, len) -> {
                final int src = source;
                final int dst = destination;
                final int protocol = proto;
                final int length = len;
                final byte[] pseudo = {
                    (byte) (src >>> 24), (byte) (src >>> 16), (byte) (src >>> 8), (byte) src,
                    (byte) (dst >>> 24), (byte) (dst >>> 16), (byte) (dst >>> 8), (byte) dst,
                    0, (byte) protocol, (byte) (length >>> 8), (byte) length};
                assertEquals(NaiveChecksum.checksum(pseudo, 0, 12),
                    InternetChecksum.finish(InternetChecksum.pseudoHeader(src, dst, protocol, length)));
            });
    }

    @Test
    void computingAChecksumAllocatesNothing() {
        try (Arena arena = Arena.ofConfined()) {
            final MemorySegment frame = arena.allocate(1500);
            final long bytes = Allocations.measure(100_000, 1_000_000, () -> InternetChecksum.compute(frame, 1, 1499));
            assertEquals(0, bytes, "bytes allocated by 1M checksums");
        }
    }

    @Test
    void copyingWithAChecksumAllocatesNothing() {
        try (Arena arena = Arena.ofConfined()) {
            final MemorySegment source = arena.allocate(1500);
            final MemorySegment frame = arena.allocate(1600);
            final long bytes = Allocations.measure(100_000, 1_000_000,
                () -> InternetChecksum.copyAndAdd(0, source, 1, frame, 54, 1448));
            assertEquals(0, bytes, "bytes allocated by 1M copies with checksum");
        }
    }

    /** One's complement has two zeros (0x0000 and 0xFFFF); compare checksums modulo that. */
    private static int equivalent(int checksum) {
        return checksum == 0xFFFF ? 0 : checksum;
    }
}
