package dev.tern.ipv4.wire;

import dev.tern.core.testing.Generators;
import dev.tern.core.testing.NaiveChecksum;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.HexFormat;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;

class Ipv4HeaderTest {
    /**
     * An ICMP echo request 198.18.0.1 -> 198.18.0.2 (id 0x1c46, DF, TTL 64, 32 bytes in all), built by hand per RFC 791.
     * Header checksum by hand: 0x4500 + 0x0020 + 0x1c46 + 0x4000 + 0x4001 + 0xc612 + 0x0001 + 0xc612 + 0x0002 =
     * 0x26d8e, folded 0x6d90, complemented 0x926f.
     */
    static final byte[] ECHO_REQUEST = HexFormat.of().parseHex(
        "45000020" + "1c464000" + "4001926f" + "c6120001" + "c6120002"
            + "080005ed" + "0b3e0001" + "7465726e");
    private static final int A = 0xC612_0001;
    private static final int B = 0xC612_0002;

    private final Ipv4Header header = new Ipv4Header();

    @Test
    void theHandComputedChecksumAgreesWithANaiveReference() {
        final byte[] zeroed = Arrays.copyOf(ECHO_REQUEST, 20);
        zeroed[10] = 0;
        zeroed[11] = 0;
        assertEquals(0x926f, NaiveChecksum.checksum(zeroed, 0, 20));
    }

    @Test
    void readsFieldsOfAHandBuiltPacket() {
        header.wrap(MemorySegment.ofArray(ECHO_REQUEST), 0, ECHO_REQUEST.length);
        assertEquals(Ipv4Header.OK, header.check(true));
        assertEquals(4, header.version());
        assertEquals(20, header.headerLength());
        assertEquals(0, header.tos());
        assertEquals(32, header.totalLength());
        assertEquals(0x1c46, header.identification());
        assertTrue(header.dontFragment());
        assertFalse(header.moreFragments());
        assertFalse(header.isFragment());
        assertEquals(0, header.fragmentOffset());
        assertEquals(64, header.ttl());
        assertEquals(IpProtocol.ICMP, header.protocol());
        assertEquals(0x926f, header.checksum());
        assertEquals(A, header.source());
        assertEquals(B, header.destination());
    }

    @Test
    void writesEveryFieldOverStaleBytes() {
        final byte[] buffer = new byte[ECHO_REQUEST.length];
        Arrays.fill(buffer, (byte) 0xA5);
        header.wrap(MemorySegment.ofArray(buffer), 0, buffer.length)
            .write(0, 32, 0x1c46, Ipv4Header.FLAG_DONT_FRAGMENT, 64, IpProtocol.ICMP, A, B);
        assertArrayEquals(Arrays.copyOf(ECHO_REQUEST, 20), Arrays.copyOf(buffer, 20));
        assertEquals((byte) 0xA5, buffer[20]);
    }

    @Test
    void parsesToReprAndEmitsFromIt() {
        header.wrap(MemorySegment.ofArray(ECHO_REQUEST), 0, ECHO_REQUEST.length);
        final Ipv4Repr repr = Ipv4Repr.parse(header);
        assertEquals(new Ipv4Repr(A, B, IpProtocol.ICMP, 64, 0, 0x1c46, Ipv4Header.FLAG_DONT_FRAGMENT, 12), repr);
        final byte[] buffer = new byte[20];
        Arrays.fill(buffer, (byte) 0xA5);
        repr.emit(header.wrap(MemorySegment.ofArray(buffer), 0, buffer.length));
        assertArrayEquals(Arrays.copyOf(ECHO_REQUEST, 20), buffer);
    }

    @Test
    void reprRoundTripsThroughTheWire() {
        // QuickTheories takes at most four generators: two ints carry the byte and 16-bit fields.
        qt().forAll(integers().all(), integers().all(), integers().all(), integers().all())
            .check((source, destination, bytes, words) -> {
                final int payload = bytes >>> 24;
                final Ipv4Repr repr = new Ipv4Repr(source, destination, bytes & 0xFF, (bytes >>> 8) & 0xFF,
                    (bytes >>> 16) & 0xFF, words & 0xFFFF, words >>> 16, payload);
                final byte[] buffer = new byte[Ipv4Header.MIN_LENGTH + payload];
                Arrays.fill(buffer, (byte) 0xA5);
                repr.emit(header.wrap(MemorySegment.ofArray(buffer), 0, buffer.length));
                return header.check(true) == Ipv4Header.OK && Ipv4Repr.parse(header).equals(repr);
            });
    }

    @Test
    void trailingBytesBeyondTheTotalLengthAreAllowed() {
        final byte[] padded = Arrays.copyOf(ECHO_REQUEST, 46);
        assertEquals(Ipv4Header.OK, header.wrap(MemorySegment.ofArray(padded), 0, padded.length).check(true));
        assertEquals(32, header.totalLength());
    }

    @Test
    void truncatedHeadersAreTooShort() {
        for (int length = 0; length < 20; length++) {
            assertEquals(Ipv4Header.DROP_TOO_SHORT, header.wrap(MemorySegment.ofArray(ECHO_REQUEST), 0, length).check(true));
        }
    }

    @Test
    void aVersionOtherThanFourIsDropped() {
        final byte[] v6 = ECHO_REQUEST.clone();
        v6[0] = 0x65;
        assertEquals(Ipv4Header.DROP_BAD_VERSION, check(v6, false));
    }

    @Test
    void aHeaderLengthBelowFiveWordsOrBeyondTheBufferIsDropped() {
        for (int ihl = 0; ihl < 5; ihl++) {
            final byte[] bad = ECHO_REQUEST.clone();
            bad[0] = (byte) (0x40 | ihl);
            assertEquals(Ipv4Header.DROP_BAD_HEADER_LENGTH, check(bad, false), "IHL " + ihl);
        }
        final byte[] beyond = ECHO_REQUEST.clone();
        beyond[0] = 0x49; // 36 bytes of header in a 32-byte packet
        assertEquals(Ipv4Header.DROP_BAD_HEADER_LENGTH, check(beyond, false));
    }

    @Test
    void aTotalLengthBeyondTheBufferOrBelowTheHeaderIsDropped() {
        final byte[] longer = ECHO_REQUEST.clone();
        longer[3] = 33;
        assertEquals(Ipv4Header.DROP_BAD_TOTAL_LENGTH, check(longer, false));
        final byte[] shorter = ECHO_REQUEST.clone();
        shorter[3] = 19;
        assertEquals(Ipv4Header.DROP_BAD_TOTAL_LENGTH, check(shorter, false));
        final byte[] withOptions = ECHO_REQUEST.clone();
        withOptions[0] = 0x46;
        withOptions[3] = 22; // header 24 bytes, total 22
        assertEquals(Ipv4Header.DROP_BAD_TOTAL_LENGTH, check(withOptions, false));
    }

    @Test
    void aBadChecksumIsDroppedUnlessTheLinkVerifiedIt() {
        final byte[] corrupt = ECHO_REQUEST.clone();
        corrupt[8] = 63; // TTL changed, checksum not
        assertEquals(Ipv4Header.DROP_BAD_CHECKSUM, check(corrupt, true));
        assertEquals(Ipv4Header.OK, check(corrupt, false));
        assertEquals("bad_checksum", Ipv4Header.dropName(Ipv4Header.DROP_BAD_CHECKSUM));
    }

    @Test
    void noAccessorThrowsAfterACleanCheckOnArbitraryBytes() {
        qt().withExamples(5000).forAll(Generators.bytes(0, 70))
            .checkAssert(bytes -> {
                // Half the inputs get version 4, an IHL of 5..8 and a small total length, so the accepting branch is reached.
                if (bytes.length > 3 && (bytes[1] & 1) == 0) {
                    bytes[0] = (byte) (0x40 | (bytes[0] & 0x07) + 5 - (bytes[0] & 0x04));
                    bytes[2] = 0;
                    bytes[3] = (byte) Math.min(bytes.length, bytes[3] & 0xFF);
                }
                header.wrap(MemorySegment.ofArray(bytes), 0, bytes.length);
                if (header.check(false) == Ipv4Header.OK) {
                    header.version();
                    header.tos();
                    header.identification();
                    header.flagsAndFragmentOffset();
                    header.ttl();
                    header.protocol();
                    header.checksum();
                    header.source();
                    header.destination();
                    assertTrue(header.headerLength() <= header.totalLength());
                    assertTrue(header.totalLength() <= bytes.length);
                }
            });
    }

    private int check(byte[] packet, boolean verifyChecksum) {
        return header.wrap(MemorySegment.ofArray(packet), 0, packet.length).check(verifyChecksum);
    }
}
