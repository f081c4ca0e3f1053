package dev.tern.script;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Locale;
import java.util.function.LongToIntFunction;

/**
 * The bytes a script's data carries, and their comparison. Packetdrill has no syntax for payload content: its
 * application writes zeros, its injected packets carry zeros, and it compares each byte an expected packet carries
 * with the script packet's (zeros). Tern's runner compares every byte too, but against a pattern that is a function
 * of where the byte sits, so that a byte sent from the wrong place in the stream (a retransmission or a split segment
 * copied from the wrong offset) fails as well as a changed one:
 *
 * <ul>
 *   <li>TCP: the byte at sequence number {@code s} (on the wire) is {@code 'a' + s mod 26} when Tern's application
 *       writes it and {@code 'A' + s mod 26} when the remote sends it; {@code read} compares what it returns with the
 *       remote's bytes at the sequence numbers they came from;</li>
 *   <li>UDP: byte {@code i} of a datagram is {@code 'a' + i mod 26} from Tern's application, {@code 'A' + i mod 26}
 *       from the remote.</li>
 * </ul>
 *
 * <p>Stateless.
 */
final class ScriptPayload {
    private ScriptPayload() {
    }

    /** The byte Tern's application writes at TCP sequence number {@code seq} (on the wire). */
    static int tern(long seq) {
        return 'a' + (int) Long.remainderUnsigned(seq & 0xFFFF_FFFFL, 26);
    }

    /** The byte the remote sends at TCP sequence number {@code seq} (on the wire). */
    static int remote(long seq) {
        return 'A' + (int) Long.remainderUnsigned(seq & 0xFFFF_FFFFL, 26);
    }

    /** Byte {@code index} of a datagram from Tern's application. */
    static int ternDatagram(long index) {
        return 'a' + (int) (index % 26);
    }

    /** Byte {@code index} of a datagram from the remote. */
    static int remoteDatagram(long index) {
        return 'A' + (int) (index % 26);
    }

    /** Fills {@code length} bytes at {@code offset} with {@code expected} of {@code first}, {@code first + 1}, .... */
    static void fill(MemorySegment data, long offset, int length, long first, LongToIntFunction expected) {
        for (int i = 0; i < length; i++) {
            data.set(ValueLayout.JAVA_BYTE, offset + i, (byte) expected.applyAsInt(first + i));
        }
    }

    /**
     * The index of the first of {@code length} bytes at {@code offset} that is not {@code expected} of its position
     * ({@code first + i}), or -1 when all match.
     */
    static int firstDifference(MemorySegment data, long offset, int length, long first, LongToIntFunction expected) {
        for (int i = 0; i < length; i++) {
            if ((data.get(ValueLayout.JAVA_BYTE, offset + i) & 0xFF) != (expected.applyAsInt(first + i) & 0xFF)) {
                return i;
            }
        }
        return -1;
    }

    /** "is 0x41 'A', not 0x61 'a'": byte {@code index} of the data against {@code expected} of its position. */
    static String difference(MemorySegment data, long offset, int index, long first, LongToIntFunction expected) {
        return "is " + show(data.get(ValueLayout.JAVA_BYTE, offset + index) & 0xFF) + ", not "
            + show(expected.applyAsInt(first + index) & 0xFF);
    }

    private static String show(int b) {
        final String hex = String.format(Locale.ROOT, "0x%02x", b);
        return b >= 0x20 && b < 0x7F ? hex + " '" + (char) b + "'" : hex;
    }
}
