package dev.tern.arp.wire;

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

/** ARP for IPv4 over Ethernet (RFC 826). */
class ArpPacketTest {
    /** who-has 198.18.0.2 tell 198.18.0.1 (0a:1b:2c:3d:4e:5f), as Linux sends it, then Ethernet padding. */
    private static final byte[] REQUEST = HexFormat.of().parseHex(
        "0001" + "0800" + "06" + "04" + "0001" + "0a1b2c3d4e5f" + "c6120001" + "000000000000" + "c6120002"
            + "000000000000000000000000000000000000");
    private static final long MAC = 0x0a1b_2c3d_4e5fL;

    private final ArpPacket packet = new ArpPacket();

    @Test
    void readsFieldsOfARequest() {
        packet.wrap(MemorySegment.ofArray(REQUEST), 0, REQUEST.length);
        assertEquals(ArpPacket.OK, packet.check());
        assertEquals(ArpPacket.OPERATION_REQUEST, packet.operation());
        assertEquals(MAC, packet.senderMac());
        assertEquals(0xC612_0001, packet.senderIp());
        assertEquals(0, packet.targetMac());
        assertEquals(0xC612_0002, packet.targetIp());
    }

    @Test
    void writesEveryFieldOverStaleBytes() {
        final byte[] buffer = new byte[ArpPacket.LENGTH + 2];
        Arrays.fill(buffer, (byte) 0xA5);
        packet.wrap(MemorySegment.ofArray(buffer), 0, buffer.length)
            .write(ArpPacket.OPERATION_REQUEST, MAC, 0xC612_0001, 0, 0xC612_0002);
        assertArrayEquals(Arrays.copyOf(REQUEST, ArpPacket.LENGTH), Arrays.copyOf(buffer, ArpPacket.LENGTH));
        assertEquals((byte) 0xA5, buffer[ArpPacket.LENGTH]);
    }

    @Test
    void parsesToReprAndEmitsFromIt() {
        packet.wrap(MemorySegment.ofArray(REQUEST), 0, REQUEST.length);
        final ArpRepr repr = ArpRepr.parse(packet);
        assertEquals(new ArpRepr(ArpPacket.OPERATION_REQUEST, MAC, 0xC612_0001, 0, 0xC612_0002), repr);
        assertFalse(repr.isGratuitous());
        assertEquals("who-has 198.18.0.2 tell 198.18.0.1 (0a:1b:2c:3d:4e:5f)", repr.toString());
        final byte[] buffer = new byte[ArpPacket.LENGTH];
        Arrays.fill(buffer, (byte) 0xA5);
        repr.emit(packet.wrap(MemorySegment.ofArray(buffer), 0, buffer.length));
        assertArrayEquals(Arrays.copyOf(REQUEST, ArpPacket.LENGTH), buffer);
    }

    @Test
    void reprRoundTripsThroughTheWire() {
        qt().forAll(longs().between(0, 0xFFFF_FFFF_FFFFL), integers().all(), longs().between(0, 0xFFFF_FFFF_FFFFL),
                integers().all())
            .check((senderMac, senderIp, targetMac, targetIp) -> {
                final int operation = (senderIp & 1) == 0 ? ArpPacket.OPERATION_REQUEST : ArpPacket.OPERATION_REPLY;
                final ArpRepr repr = new ArpRepr(operation, senderMac, senderIp, targetMac, targetIp);
                final byte[] buffer = new byte[ArpPacket.LENGTH];
                Arrays.fill(buffer, (byte) 0xA5);
                repr.emit(packet.wrap(MemorySegment.ofArray(buffer), 0, buffer.length));
                return packet.check() == ArpPacket.OK && ArpRepr.parse(packet).equals(repr);
            });
    }

    @Test
    void truncatedPacketsAreTooShort() {
        for (int length = 0; length < ArpPacket.LENGTH; length++) {
            assertEquals(ArpPacket.DROP_TOO_SHORT, packet.wrap(MemorySegment.ofArray(REQUEST), 0, length).check(),
                "length " + length);
        }
    }

    @Test
    void otherHardwareOrProtocolTypesAndLengthsAreForeign() {
        for (int[] change : new int[][] {{1, 6}, {2, 0x86}, {4, 8}, {5, 16}}) {
            final byte[] foreign = REQUEST.clone();
            foreign[change[0]] = (byte) change[1];
            assertEquals(ArpPacket.DROP_FOREIGN_PROTOCOL,
                packet.wrap(MemorySegment.ofArray(foreign), 0, foreign.length).check(), "byte " + change[0]);
        }
    }

    @Test
    void anOperationOtherThanRequestOrReplyIsDropped() {
        for (int operation : new int[] {0, 3, 8, 0x0101}) {
            final byte[] bad = REQUEST.clone();
            bad[6] = (byte) (operation >>> 8);
            bad[7] = (byte) operation;
            assertEquals(ArpPacket.DROP_BAD_OPERATION, packet.wrap(MemorySegment.ofArray(bad), 0, bad.length).check());
        }
        assertEquals("bad_operation", ArpPacket.dropName(ArpPacket.DROP_BAD_OPERATION));
    }

    @Test
    void noAccessorThrowsAfterACleanCheckOnArbitraryBytes() {
        qt().withExamples(5000).forAll(Generators.bytes(0, 40))
            .checkAssert(bytes -> {
                if (bytes.length >= 8 && (bytes[7] & 4) == 0) {
                    System.arraycopy(REQUEST, 0, bytes, 0, 6); // reach the length and operation checks often
                }
                packet.wrap(MemorySegment.ofArray(bytes), 0, bytes.length);
                if (packet.check() == ArpPacket.OK) {
                    assertTrue(bytes.length >= ArpPacket.LENGTH);
                    packet.operation();
                    packet.senderMac();
                    packet.senderIp();
                    packet.targetMac();
                    packet.targetIp();
                }
            });
    }
}
