package dev.tern.ipv4.wire;

import dev.tern.core.testing.Generators;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.lang.foreign.MemorySegment;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.quicktheories.QuickTheory.qt;

/** Option validation (RFC 791 §3.1) and the octet a Parameter Problem points at. */
class Ipv4OptionsTest {
    private final Ipv4Options options = new Ipv4Options();

    /** A header of 20 zero bytes and then {@code bytes}, padded with End of List to a multiple of 4. */
    private static MemorySegment header(int... bytes) {
        final byte[] header = new byte[Ipv4Header.MIN_LENGTH + ((bytes.length + 3) & ~3)];
        for (int i = 0; i < bytes.length; i++) {
            header[Ipv4Header.MIN_LENGTH + i] = (byte) bytes[i];
        }
        return MemorySegment.ofArray(header);
    }

    private int check(MemorySegment header) {
        return options.wrap(header, 0, (int) header.byteSize()).check();
    }

    static Stream<Arguments> malformed() {
        return Stream.of(
            Arguments.of("length 0", new int[] {7, 0, 4, 0}, Ipv4Options.DROP_BAD_LENGTH, 21),
            Arguments.of("length 1", new int[] {148, 1, 0, 0}, Ipv4Options.DROP_BAD_LENGTH, 21),
            Arguments.of("unknown option of length 1", new int[] {1, 1, 0x99, 1}, Ipv4Options.DROP_BAD_LENGTH, 23),
            Arguments.of("running past the header", new int[] {7, 12, 4, 0}, Ipv4Options.DROP_PAST_HEADER, 21),
            Arguments.of("no room for the length octet", new int[] {1, 1, 1, 7}, Ipv4Options.DROP_PAST_HEADER, 23),
            Arguments.of("record route shorter than 3", new int[] {7, 2, 1, 0}, Ipv4Options.DROP_BAD_LENGTH, 21),
            Arguments.of("record route pointer 3", new int[] {7, 7, 3, 0, 0, 0, 0}, Ipv4Options.DROP_BAD_POINTER, 22),
            Arguments.of("record route pointer mid-address", new int[] {7, 11, 5, 0, 0, 0, 0, 0, 0, 0, 0},
                Ipv4Options.DROP_BAD_POINTER, 22),
            Arguments.of("record route slot cut by its length", new int[] {7, 6, 4, 0, 0, 0},
                Ipv4Options.DROP_BAD_POINTER, 22),
            Arguments.of("loose source route pointer 2", new int[] {131, 7, 2, 0, 0, 0, 0}, Ipv4Options.DROP_BAD_POINTER, 22),
            Arguments.of("strict source route pointer 0", new int[] {137, 7, 0, 0, 0, 0, 0}, Ipv4Options.DROP_BAD_POINTER, 22),
            Arguments.of("timestamp shorter than 4", new int[] {68, 3, 5, 0}, Ipv4Options.DROP_BAD_LENGTH, 21),
            Arguments.of("timestamp pointer 4", new int[] {68, 8, 4, 0, 0, 0, 0, 0}, Ipv4Options.DROP_BAD_POINTER, 22),
            Arguments.of("timestamp pointer mid-pair", new int[] {68, 12, 9, 1, 0, 0, 0, 0, 0, 0, 0, 0},
                Ipv4Options.DROP_BAD_POINTER, 22),
            Arguments.of("timestamp flag 2", new int[] {68, 8, 5, 2, 0, 0, 0, 0}, Ipv4Options.DROP_BAD_TIMESTAMP_FLAG, 23),
            Arguments.of("router alert of length 6", new int[] {148, 6, 0, 0, 0, 0}, Ipv4Options.DROP_BAD_LENGTH, 21),
            Arguments.of("record route twice", new int[] {7, 3, 4, 7, 3, 4}, Ipv4Options.DROP_DUPLICATE, 23),
            Arguments.of("loose then strict source route", new int[] {131, 3, 4, 137, 3, 4}, Ipv4Options.DROP_DUPLICATE, 23));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("malformed")
    void malformedOptionsAreRejectedPointingAtTheOffendingOctet(String what, int[] bytes, int reason, int pointer) {
        assertEquals(Ipv4Options.dropName(reason), Ipv4Options.dropName(check(header(bytes))), what);
        assertEquals(pointer, options.problemPointer(), what);
    }

    static Stream<Arguments> wellFormed() {
        return Stream.of(
            Arguments.of("no operation and end", new int[] {1, 1, 1, 0}),
            Arguments.of("anything after end of list is padding", new int[] {0, 7, 0, 0}),
            Arguments.of("empty record route", new int[] {7, 7, 4, 0, 0, 0, 0}),
            Arguments.of("full record route", new int[] {7, 7, 8, 1, 2, 3, 4}),
            Arguments.of("record route of length 3 (full at once)", new int[] {7, 3, 4}),
            Arguments.of("timestamps only", new int[] {68, 12, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0}),
            Arguments.of("addresses and timestamps, one pair used", new int[] {68, 20, 13, 1, 1, 2, 3, 4, 0, 0, 0, 9,
                0, 0, 0, 0, 0, 0, 0, 0}),
            Arguments.of("full timestamp with its overflow count", new int[] {68, 8, 9, 0xF0, 0, 0, 0, 1}),
            Arguments.of("router alert", new int[] {148, 4, 0, 0}),
            Arguments.of("security option, skipped unread", new int[] {130, 11, 0, 0, 0, 0, 0, 0, 0, 0, 0}),
            Arguments.of("record route then timestamp", new int[] {7, 3, 4, 68, 4, 5, 0}));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("wellFormed")
    void wellFormedOptionsPass(String what, int[] bytes) {
        assertEquals("ok", Ipv4Options.dropName(check(header(bytes))), what);
        assertEquals(0, options.sourceRouteOffset());
    }

    @Test
    void aValidSourceRouteIsReportedForTheLayerToDecide() {
        assertEquals(Ipv4Options.OK, check(header(1, 131, 7, 8, 198, 18, 0, 1)));
        assertEquals(21, options.sourceRouteOffset());
        assertEquals(Ipv4Options.OK, check(header(137, 7, 4, 198, 18, 0, 1)));
        assertEquals(20, options.sourceRouteOffset());
    }

    @Test
    void noAccessorThrowsOverArbitraryOptions() {
        qt().forAll(Generators.bytes(0, 40)).checkAssert(bytes -> {
            final int[] values = new int[bytes.length];
            for (int i = 0; i < bytes.length; i++) {
                values[i] = bytes[i] & 0xFF;
            }
            final int reason = check(header(values));
            assertTrue(reason >= Ipv4Options.OK && reason < Ipv4Options.DROP_NAMES.length);
            if (reason != Ipv4Options.OK) {
                assertTrue(options.problemPointer() >= Ipv4Header.MIN_LENGTH
                    && options.problemPointer() < Ipv4Header.MIN_LENGTH + ((values.length + 3) & ~3), "inside the options");
            }
        });
    }
}
