package dev.tern.udp.wire;

import dev.tern.core.checksum.InternetChecksum;
import dev.tern.core.testing.Generators;
import dev.tern.core.testing.NaiveChecksum;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.HexFormat;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;

/** UDP (RFC 768). The checksum covers a pseudo-header, so check() leaves it to UdpLayer; these tests verify it apart. */
class UdpHeaderTest {
    /**
     * 198.18.0.1:40000 -> 198.18.0.2:7, data "tern", built by hand. Checksum over the pseudo-header (0xc612 0x0001
     * 0xc612 0x0002 0x0011 0x000c) and the datagram (0x9c40 0x0007 0x000c 0x0000 0x7465 0x726e), from a naive
     * reference: 0xf092.
     */
    private static final byte[] DATAGRAM = HexFormat.of().parseHex("9c40" + "0007" + "000c" + "f092" + "7465726e");
    private static final byte[] PSEUDO_HEADER = HexFormat.of().parseHex("c6120001" + "c6120002" + "0011" + "000c");

    private final UdpHeader header = new UdpHeader();

    @Test
    void theChecksumAgreesWithANaiveReferenceAndTheStacksPseudoHeaderSum() {
        final byte[] zeroed = DATAGRAM.clone();
        zeroed[6] = 0;
        zeroed[7] = 0;
        final byte[] both = new byte[PSEUDO_HEADER.length + zeroed.length];
        System.arraycopy(PSEUDO_HEADER, 0, both, 0, PSEUDO_HEADER.length);
        System.arraycopy(zeroed, 0, both, PSEUDO_HEADER.length, zeroed.length);
        assertEquals(0xf092, NaiveChecksum.checksum(both, 0, both.length));
        final long sum = InternetChecksum.pseudoHeader(0xC612_0001, 0xC612_0002, 17, DATAGRAM.length);
        assertTrue(InternetChecksum.verifies(InternetChecksum.add(sum, MemorySegment.ofArray(DATAGRAM), 0, DATAGRAM.length)));
    }

    @Test
    void readsFieldsOfAHandBuiltDatagram() {
        header.wrap(MemorySegment.ofArray(DATAGRAM), 0, DATAGRAM.length);
        assertEquals(UdpHeader.OK, header.check());
        assertEquals(40000, header.sourcePort());
        assertEquals(7, header.destinationPort());
        assertEquals(12, header.length());
        assertEquals(0xf092, header.checksum());
    }

    @Test
    void writesEveryFieldOverStaleBytes() {
        final byte[] buffer = new byte[DATAGRAM.length];
        Arrays.fill(buffer, (byte) 0xA5);
        header.wrap(MemorySegment.ofArray(buffer), 0, buffer.length)
            .sourcePort(40000).destinationPort(7).length(12).checksum(0xf092);
        assertArrayEquals(Arrays.copyOf(DATAGRAM, 8), Arrays.copyOf(buffer, 8));
        assertEquals((byte) 0xA5, buffer[8]);
    }

    @Test
    void parsesToReprAndEmitsFromIt() {
        header.wrap(MemorySegment.ofArray(DATAGRAM), 0, DATAGRAM.length);
        final UdpRepr repr = UdpRepr.parse(header);
        assertEquals(new UdpRepr(40000, 7, 4), repr);
        final byte[] buffer = new byte[8];
        Arrays.fill(buffer, (byte) 0xA5);
        repr.emit(header.wrap(MemorySegment.ofArray(buffer), 0, buffer.length));
        assertArrayEquals(HexFormat.of().parseHex("9c400007000c0000"), buffer, "emit leaves the checksum zero (none)");
    }

    @Test
    void reprRoundTripsThroughTheWire() {
        qt().forAll(integers().between(0, 0xFFFF), integers().between(0, 0xFFFF), integers().between(0, 600))
            .check((source, destination, payload) -> {
                final UdpRepr repr = new UdpRepr(source, destination, payload);
                final byte[] buffer = new byte[UdpHeader.LENGTH + payload];
                Arrays.fill(buffer, (byte) 0xA5);
                repr.emit(header.wrap(MemorySegment.ofArray(buffer), 0, buffer.length));
                return header.check() == UdpHeader.OK && UdpRepr.parse(header).equals(repr);
            });
    }

    @Test
    void truncatedDatagramsAndLyingLengthsAreDropReasonsNotExceptions() {
        for (int length = 0; length < UdpHeader.LENGTH; length++) {
            assertEquals(UdpHeader.DROP_TOO_SHORT, header.wrap(MemorySegment.ofArray(DATAGRAM), 0, length).check());
        }
        final byte[] beyond = DATAGRAM.clone();
        beyond[5] = 13;
        assertEquals(UdpHeader.DROP_BAD_LENGTH, header.wrap(MemorySegment.ofArray(beyond), 0, beyond.length).check());
        final byte[] belowHeader = DATAGRAM.clone();
        belowHeader[5] = 7;
        assertEquals(UdpHeader.DROP_BAD_LENGTH,
            header.wrap(MemorySegment.ofArray(belowHeader), 0, belowHeader.length).check());
        final byte[] padded = Arrays.copyOf(DATAGRAM, 20);
        assertEquals(UdpHeader.OK, header.wrap(MemorySegment.ofArray(padded), 0, padded.length).check());
    }

    @Test
    void noAccessorThrowsAfterACleanCheckOnArbitraryBytes() {
        qt().withExamples(5000).forAll(Generators.bytes(0, 24))
            .checkAssert(bytes -> {
                if (bytes.length > 5 && (bytes[0] & 1) == 0) {
                    bytes[4] = 0;
                    bytes[5] = (byte) Math.min(bytes.length, bytes[5] & 0x1F);
                }
                header.wrap(MemorySegment.ofArray(bytes), 0, bytes.length);
                if (header.check() == UdpHeader.OK) {
                    header.sourcePort();
                    header.destinationPort();
                    header.checksum();
                    assertTrue(header.length() >= UdpHeader.LENGTH && header.length() <= bytes.length);
                }
            });
    }
}
