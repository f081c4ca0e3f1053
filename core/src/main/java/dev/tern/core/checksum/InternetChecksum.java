package dev.tern.core.checksum;

import dev.tern.core.memory.BigEndian;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * The Internet checksum (RFC 1071): the 16-bit one's complement of the one's complement sum of 16-bit words.
 *
 * <p>A sum is carried unfolded in a {@code long} so that pieces (pseudo-header, header, payload) can be added
 * before one final fold. RFC 1071 §2(B) and §2(C) allow summing in wider words and in either byte order as long
 * as the carries are folded back at the end; we read 64 bits at a time and add the two 32-bit halves, which cannot
 * overflow a long for any frame (each step adds less than 2^33). Headers are read in network order; payloads in
 * little-endian order (the native order of x86 and ARM, so no byte swap per load), their folded sum swapped once at
 * the end.
 *
 * <p>Rule for chaining: a partial sum may be continued only after a piece of even length, because the next piece's
 * bytes must keep their position (high or low) within the 16-bit words.
 *
 * <p>Stateless and thread-safe.
 */
public final class InternetChecksum {
    // Little-endian is the native order of x86 and ARM: loads and stores need no byte swap there.
    private static final ValueLayout.OfLong LE_LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfInt LE_INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfShort LE_SHORT = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    /**
     * From this length on, pieces are summed in little-endian order in an int counted loop, which C2 compiles about
     * twice as fast per byte as the loop over long positions (measured on x86 with JDK 25, 1448 bytes: 92 ns against
     * 180 ns), presumably because there it drops the bounds checks and unrolls. Its setup costs more than a header's
     * whole sum, though (1.3x to 1.5x slower at 20 to 64 bytes); the two meet between 128 and 256 bytes.
     */
    private static final int LONG_PIECE = 256;

    private InternetChecksum() {
    }

    /** Adds {@code length} bytes at {@code offset} to an unfolded sum. An odd last byte is padded with zero (RFC 1071 §4.1). */
    public static long add(long sum, MemorySegment segment, long offset, int length) {
        return length < LONG_PIECE ? addShortPiece(sum, segment, offset, length)
            : addLongPiece(sum, segment, offset, length);
    }

    /**
     * Copies {@code length} bytes from {@code source} to {@code destination} (the ranges must not overlap) and adds
     * them to an unfolded sum: the folded result equals that of {@link #add} over the copy, an odd last byte padded
     * the same way. A long piece (a payload copied into a frame) is summed in the same pass as it is copied; a short
     * one is copied in bulk and summed after, which costs less there. Measured at 1448 bytes, the one pass is about
     * as fast as a bulk copy followed by {@link #add} (CopyChecksumBenchmark in cli): since {@code add} got its int
     * counted loop, the second pass over bytes still in the L1 cache costs little.
     *
     * <p>The bytes are moved as they are, 8 at a time, in little-endian order, so that on x86 and ARM neither the
     * load nor the store swaps bytes. Summed that way, every 16-bit word has its two bytes swapped; RFC 1071 §2(B)
     * says the one's complement sum of swapped words is the swapped sum, so the little-endian sum is folded to 16
     * bits and swapped once at the end, and the result then chains with big-endian sums like any other.
     */
    public static long copyAndAdd(long sum, MemorySegment source, long sourceOffset, MemorySegment destination,
                                  long destinationOffset, int length) {
        if (length < LONG_PIECE) {
            MemorySegment.copy(source, sourceOffset, destination, destinationOffset, length);
            return addShortPiece(sum, source, sourceOffset, length);
        }
        final int blocks = length & ~15;
        final long acc = addBlocks(source, sourceOffset, destination, destinationOffset, blocks);
        final int rest = length - blocks;
        MemorySegment.copy(source, sourceOffset + blocks, destination, destinationOffset + blocks, rest);
        return sum + swapped(addTail(acc, source, sourceOffset + blocks, rest));
    }

    /** {@link #add} for a short piece (a header): network-order loads over long positions, no final swap. */
    private static long addShortPiece(long sum, MemorySegment segment, long offset, int length) {
        long position = offset;
        final long end = offset + length;
        long acc0 = sum;
        long acc1 = 0;
        while (end - position >= 16) {
            final long a = segment.get(BigEndian.LONG, position);
            final long b = segment.get(BigEndian.LONG, position + 8);
            acc0 += (a >>> 32) + (a & 0xFFFF_FFFFL);
            acc1 += (b >>> 32) + (b & 0xFFFF_FFFFL);
            position += 16;
        }
        if (end - position >= 8) {
            final long a = segment.get(BigEndian.LONG, position);
            acc0 += (a >>> 32) + (a & 0xFFFF_FFFFL);
            position += 8;
        }
        if (end - position >= 4) {
            acc1 += Integer.toUnsignedLong(segment.get(BigEndian.INT, position));
            position += 4;
        }
        if (end - position >= 2) {
            acc0 += Short.toUnsignedInt(segment.get(BigEndian.SHORT, position));
            position += 2;
        }
        if (end - position == 1) {
            acc1 += Byte.toUnsignedInt(segment.get(BigEndian.BYTE, position)) << 8;
        }
        return acc0 + acc1;
    }

    /** {@link #add} for a long piece (a payload): little-endian loads in an int counted loop, one swap at the end. */
    private static long addLongPiece(long sum, MemorySegment segment, long offset, int length) {
        final int blocks = length & ~15;
        final long acc = addBlocks(segment, offset, null, 0, blocks);
        return sum + swapped(addTail(acc, segment, offset + blocks, length - blocks));
    }

    /**
     * The little-endian sum of {@code blocks} bytes (a multiple of 16), also copied to {@code destination} unless it
     * is null. Once inlined into a caller the null test should be a constant that C2 folds away; not checked in the
     * generated code, but the timings of add and copyAndAdd did not change when their two loops became this one.
     */
    private static long addBlocks(MemorySegment source, long sourceOffset, MemorySegment destination,
                                  long destinationOffset, int blocks) {
        long acc0 = 0;
        long acc1 = 0;
        for (int i = 0; i < blocks; i += 16) {
            final long a = source.get(LE_LONG, sourceOffset + i);
            final long b = source.get(LE_LONG, sourceOffset + i + 8);
            if (destination != null) {
                destination.set(LE_LONG, destinationOffset + i, a);
                destination.set(LE_LONG, destinationOffset + i + 8, b);
            }
            acc0 += (a >>> 32) + (a & 0xFFFF_FFFFL);
            acc1 += (b >>> 32) + (b & 0xFFFF_FFFFL);
        }
        return acc0 + acc1;
    }

    /** Adds the last 0 to 15 bytes of a piece, read little-endian, to a little-endian sum. */
    private static long addTail(long acc, MemorySegment segment, long offset, int length) {
        long acc0 = acc;
        long acc1 = 0;
        int i = 0;
        if (length >= 8) {
            final long a = segment.get(LE_LONG, offset);
            acc0 += (a >>> 32) + (a & 0xFFFF_FFFFL);
            i = 8;
        }
        if (length - i >= 4) {
            acc1 += Integer.toUnsignedLong(segment.get(LE_INT, offset + i));
            i += 4;
        }
        if (length - i >= 2) {
            acc0 += Short.toUnsignedInt(segment.get(LE_SHORT, offset + i));
            i += 2;
        }
        if (length - i == 1) {
            // The odd byte is the first of its word, which little-endian order reads as the low byte.
            acc1 += Byte.toUnsignedInt(segment.get(ValueLayout.JAVA_BYTE, offset + i));
        }
        return acc0 + acc1;
    }

    /**
     * An unfolded sum folded to 16 bits with its two bytes swapped: by RFC 1071 §2(B), the sum of the same bytes
     * one position further (for a piece that starts at an odd offset of the checksummed data) or read in the other
     * byte order. Both one's complement zeros (0x0000, 0xFFFF) map to themselves, so added to other sums it folds
     * exactly as the bytes themselves would there.
     */
    public static int swapped(long sum) {
        final int folded = fold(sum);
        return (folded >>> 8) | (folded & 0xFF) << 8;
    }

    /** Adds a 16-bit word to an unfolded sum. */
    public static long add16(long sum, int word) {
        return sum + (word & 0xFFFF);
    }

    /** Adds a 32-bit value (an IPv4 address) as two 16-bit words. */
    public static long add32(long sum, int value) {
        return sum + (value >>> 16) + (value & 0xFFFF);
    }

    /** The unfolded sum of the IPv4 pseudo-header for TCP and UDP (RFC 793 §3.1, RFC 768): src, dst, zero+protocol, length. */
    public static long pseudoHeader(int sourceAddress, int destinationAddress, int protocol, int transportLength) {
        return add32(add32(0, sourceAddress), destinationAddress) + (protocol & 0xFF) + (transportLength & 0xFFFF);
    }

    /** Folds the carries of an unfolded sum into 16 bits (end-around carry). */
    public static int fold(long sum) {
        long s = (sum & 0xFFFF_FFFFL) + (sum >>> 32);
        s = (s & 0xFFFF_FFFFL) + (s >>> 32);
        s = (s & 0xFFFF) + (s >>> 16);
        s = (s & 0xFFFF) + (s >>> 16);
        return (int) s;
    }

    /** The checksum field value for an unfolded sum computed with the field set to zero. */
    public static int finish(long sum) {
        return ~fold(sum) & 0xFFFF;
    }

    /** The checksum of {@code length} bytes: what goes in the field when the field itself was zero. */
    public static int compute(MemorySegment segment, long offset, int length) {
        return finish(add(0, segment, offset, length));
    }

    /** True when the bytes, checksum field included, sum to all ones: the receiver's check (RFC 1071 §1(4)). */
    public static boolean verifies(long sumIncludingChecksumField) {
        return fold(sumIncludingChecksumField) == 0xFFFF;
    }

    /**
     * Incremental update when one 16-bit word changes from {@code oldWord} to {@code newWord}, per RFC 1624 eqn. 3:
     * {@code HC' = ~(~HC + ~m + m')}.
     *
     * <p>The sum of non-zero terms is never +0, so the formula gives 0x0000 when the words now sum to zero. 0xFFFF is
     * returned instead: it verifies in both cases (when the words sum to -0, 0x0000 and 0xFFFF both do; when every
     * word is zero, only 0xFFFF does), as a full recomputation ({@link #finish}) would give.
     */
    public static int update16(int checksum, int oldWord, int newWord) {
        final long sum = (~checksum & 0xFFFF) + (~oldWord & 0xFFFF) + (newWord & 0xFFFF);
        return nonZero(~fold(sum) & 0xFFFF);
    }

    private static int nonZero(int checksum) {
        return checksum == 0 ? 0xFFFF : checksum;
    }

    /** Incremental update for a 32-bit field (an address) as two 16-bit words (RFC 1624); never 0x0000, as {@link #update16}. */
    public static int update32(int checksum, int oldValue, int newValue) {
        final long sum = (~checksum & 0xFFFF)
            + (~oldValue >>> 16 & 0xFFFF) + (~oldValue & 0xFFFF)
            + (newValue >>> 16) + (newValue & 0xFFFF);
        return nonZero(~fold(sum) & 0xFFFF);
    }
}
