package dev.tern.ipv4.wire;

import dev.tern.core.checksum.InternetChecksum;
import dev.tern.core.testing.Generators;
import dev.tern.core.testing.NaiveChecksum;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;

/**
 * ICMP (RFC 792). The flyweight has no check(): {@link IcmpHeader#complete()} is its length check, and IcmpLayer
 * verifies the checksum over the whole message with {@link InternetChecksum}; these tests hold both to the bytes.
 */
class IcmpHeaderTest {
    /**
     * The ICMP part of {@link Ipv4HeaderTest#ECHO_REQUEST}: echo request, id 0x0b3e, sequence 1, data "tern".
     * Checksum by hand: 0x0800 + 0x0b3e + 0x0001 + 0x7465 + 0x726e = 0xfa12, complemented 0x05ed.
     */
    private static final byte[] ECHO = Arrays.copyOfRange(Ipv4HeaderTest.ECHO_REQUEST, 20, 32);

    private final IcmpHeader header = new IcmpHeader();

    @Test
    void theHandComputedChecksumAgreesWithANaiveReference() {
        final byte[] zeroed = ECHO.clone();
        zeroed[2] = 0;
        zeroed[3] = 0;
        assertEquals(0x05ed, NaiveChecksum.checksum(zeroed, 0, zeroed.length));
        assertTrue(verifies(ECHO));
    }

    @Test
    void readsFieldsOfAHandBuiltEchoRequest() {
        header.wrap(MemorySegment.ofArray(ECHO), 0, ECHO.length);
        assertTrue(header.complete());
        assertEquals(IcmpHeader.ECHO_REQUEST, header.type());
        assertEquals(0, header.code());
        assertEquals(0x05ed, header.checksum());
        assertEquals(0x0b3e, header.identifier());
        assertEquals(1, header.sequence());
        assertEquals(0x0b3e_0001, header.restOfHeader());
        assertFalse(IcmpHeader.isError(header.type()));
    }

    @Test
    void writesEveryFieldOverStaleBytes() {
        final byte[] buffer = new byte[ECHO.length];
        Arrays.fill(buffer, (byte) 0xA5);
        System.arraycopy(ECHO, 8, buffer, 8, 4);
        header.wrap(MemorySegment.ofArray(buffer), 0, buffer.length)
            .type(IcmpHeader.ECHO_REQUEST).code(0).identifier(0x0b3e).sequence(1).checksum(0)
            .checksum(InternetChecksum.compute(MemorySegment.ofArray(buffer), 0, buffer.length));
        assertArrayEquals(ECHO, buffer);
    }

    @Test
    void parsesToReprAndEmitsFromIt() {
        header.wrap(MemorySegment.ofArray(ECHO), 0, ECHO.length);
        final IcmpRepr repr = IcmpRepr.parse(header);
        assertEquals(IcmpRepr.echoRequest(0x0b3e, 1), repr);
        assertEquals(0x0b3e, repr.identifier());
        assertEquals(1, repr.sequence());
        final byte[] buffer = new byte[ECHO.length];
        Arrays.fill(buffer, (byte) 0xA5);
        System.arraycopy(ECHO, 8, buffer, 8, 4);
        repr.emit(header.wrap(MemorySegment.ofArray(buffer), 0, buffer.length));
        header.checksum(InternetChecksum.compute(MemorySegment.ofArray(buffer), 0, buffer.length));
        assertArrayEquals(ECHO, buffer);
    }

    @Test
    void aFragmentationNeededErrorCarriesTheNextHopMtu() {
        final byte[] error = new byte[8];
        header.wrap(MemorySegment.ofArray(error), 0, 8)
            .type(IcmpHeader.DESTINATION_UNREACHABLE).code(IcmpHeader.FRAGMENTATION_NEEDED).restOfHeader(1400);
        assertTrue(IcmpHeader.isError(header.type()));
        assertEquals(1400, header.nextHopMtu());
    }

    @Test
    void reprRoundTripsThroughTheWire() {
        qt().forAll(integers().between(0, 255), integers().between(0, 255), integers().all())
            .check((type, code, rest) -> {
                final IcmpRepr repr = new IcmpRepr(type, code, rest);
                final byte[] buffer = new byte[IcmpHeader.LENGTH];
                Arrays.fill(buffer, (byte) 0xA5);
                repr.emit(header.wrap(MemorySegment.ofArray(buffer), 0, buffer.length));
                return header.complete() && header.checksum() == 0 && IcmpRepr.parse(header).equals(repr);
            });
    }

    @Test
    void truncatedMessagesAreIncompleteAndACorruptOneFailsTheChecksum() {
        for (int length = 0; length < IcmpHeader.LENGTH; length++) {
            assertFalse(header.wrap(MemorySegment.ofArray(ECHO), 0, length).complete(), "length " + length);
        }
        final byte[] corrupt = ECHO.clone();
        corrupt[11] ^= 1;
        assertFalse(verifies(corrupt));
    }

    @Test
    void noAccessorThrowsOnACompleteMessageOfArbitraryBytes() {
        qt().withExamples(2000).forAll(Generators.bytes(0, 20))
            .checkAssert(bytes -> {
                header.wrap(MemorySegment.ofArray(bytes), 0, bytes.length);
                if (header.complete()) {
                    header.type();
                    header.code();
                    header.checksum();
                    header.identifier();
                    header.sequence();
                    header.nextHopMtu();
                    header.restOfHeader();
                }
            });
    }

    private static boolean verifies(byte[] message) {
        return InternetChecksum.verifies(InternetChecksum.add(0, MemorySegment.ofArray(message), 0, message.length));
    }
}
