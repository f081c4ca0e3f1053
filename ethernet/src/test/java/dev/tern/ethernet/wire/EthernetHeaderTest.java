package dev.tern.ethernet.wire;

import dev.tern.core.testing.Generators;
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
import static org.quicktheories.generators.SourceDSL.longs;

class EthernetHeaderTest {
    /** An ARP request as captured from Linux: who-has 198.18.0.2 tell 198.18.0.1. */
    private static final byte[] ARP_REQUEST = HexFormat.of().parseHex(
        "ffffffffffff" + "0a1b2c3d4e5f" + "0806"
            + "0001080006040001" + "0a1b2c3d4e5f" + "c6120001" + "000000000000" + "c6120002"
            + "000000000000000000000000000000000000");
    /** The same header with an 802.1Q tag, VID 100, PCP 5. */
    private static final byte[] TAGGED = HexFormat.of().parseHex(
        "020000000002" + "020000000001" + "8100" + "a064" + "0800" + "4500001c");

    private final EthernetHeader header = new EthernetHeader();

    @Test
    void readsFieldsOfACapturedFrame() {
        header.wrap(MemorySegment.ofArray(ARP_REQUEST), 0, ARP_REQUEST.length);
        assertEquals(EthernetHeader.OK, header.check());
        assertEquals(MacAddress.BROADCAST, header.destination());
        assertEquals(0x0a1b_2c3d_4e5fL, header.source());
        assertEquals(EtherType.ARP, header.etherType());
        assertFalse(header.hasVlanTag());
        assertEquals(-1, header.vlanTci());
        assertEquals(14, header.headerLength());
    }

    @Test
    void readsAVlanTag() {
        header.wrap(MemorySegment.ofArray(TAGGED), 0, TAGGED.length);
        assertEquals(EthernetHeader.OK, header.check());
        assertTrue(header.hasVlanTag());
        assertEquals(0xa064, header.vlanTci());
        assertEquals(100, header.vlanTci() & 0xFFF);
        assertEquals(EtherType.IPV4, header.etherType());
        assertEquals(18, header.headerLength());
    }

    @Test
    void writesEveryFieldOverStaleBytes() {
        final byte[] buffer = new byte[ARP_REQUEST.length];
        Arrays.fill(buffer, (byte) 0xA5);
        header.wrap(MemorySegment.ofArray(buffer), 0, buffer.length)
            .destination(MacAddress.BROADCAST).source(0x0a1b_2c3d_4e5fL).etherType(EtherType.ARP);
        assertArrayEquals(Arrays.copyOf(ARP_REQUEST, 14), Arrays.copyOf(buffer, 14));
        assertEquals((byte) 0xA5, buffer[14]);
    }

    @Test
    void parsesToReprAndEmitsFromIt() {
        header.wrap(MemorySegment.ofArray(TAGGED), 0, TAGGED.length);
        final EthernetRepr repr = EthernetRepr.parse(header);
        assertEquals(new EthernetRepr(0x0200_0000_0002L, 0x0200_0000_0001L, EtherType.IPV4, 0xa064), repr);
        final byte[] buffer = new byte[18];
        Arrays.fill(buffer, (byte) 0xA5);
        repr.emit(header.wrap(MemorySegment.ofArray(buffer), 0, buffer.length));
        assertArrayEquals(Arrays.copyOf(TAGGED, 18), buffer);
    }

    @Test
    void reprRoundTripsThroughTheWire() {
        qt().forAll(longs().between(0, 0xFFFF_FFFF_FFFFL), longs().between(0, 0xFFFF_FFFF_FFFFL),
                integers().between(EtherType.MIN_TYPE, 0xFFFF), integers().between(-1, 0xFFFF))
            .assuming((d, s, type, tci) -> type != EtherType.VLAN)
            .check((destination, source, type, tci) -> {
                final EthernetRepr repr = new EthernetRepr(destination, source, type, tci);
                final byte[] buffer = new byte[repr.headerLength()];
                repr.emit(header.wrap(MemorySegment.ofArray(buffer), 0, buffer.length));
                return header.check() == EthernetHeader.OK && EthernetRepr.parse(header).equals(repr);
            });
    }

    @Test
    void truncatedAndLengthFramesAreDropReasonsNotExceptions() {
        header.wrap(MemorySegment.ofArray(ARP_REQUEST), 0, 13);
        assertEquals(EthernetHeader.DROP_TOO_SHORT, header.check());
        header.wrap(MemorySegment.ofArray(TAGGED), 0, 17);
        assertEquals(EthernetHeader.DROP_TOO_SHORT, header.check());
        final byte[] ieee8023 = ARP_REQUEST.clone();
        ieee8023[12] = 0x00;
        ieee8023[13] = 0x2e;
        header.wrap(MemorySegment.ofArray(ieee8023), 0, ieee8023.length);
        assertEquals(EthernetHeader.DROP_NOT_ETHERNET_II, header.check());
    }

    @Test
    void noAccessorThrowsAfterACleanCheckOnArbitraryBytes() {
        qt().withExamples(5000).forAll(Generators.bytes(0, 40))
            .checkAssert(frame -> {
                header.wrap(MemorySegment.ofArray(frame), 0, frame.length);
                if (header.check() == EthernetHeader.OK) {
                    header.destination();
                    header.source();
                    header.etherType();
                    header.vlanTci();
                    assertTrue(header.headerLength() <= frame.length);
                }
            });
    }
}
