package dev.tern.igmp.wire;

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

/** IGMPv2 (RFC 2236) and IGMPv3 (RFC 3376) messages, built by hand with checksums from a naive reference. */
class IgmpMessageTest {
    /** v2 membership report for 239.1.2.3, max response 10 s: 0x1664 + 0xef01 + 0x0203 = 0x1069, complemented 0xf896. */
    private static final byte[] V2_REPORT = HexFormat.of().parseHex("1664f896ef010203");
    /** v3 group-and-source-specific query for 239.1.2.3, QRV 2, QQIC 125, one source 198.18.0.9. */
    private static final byte[] V3_QUERY = HexFormat.of().parseHex("116434fdef010203027d0001c6120009");
    private static final int GROUP = 0xEF01_0203;

    private final IgmpMessage message = new IgmpMessage();

    @Test
    void theHandBuiltChecksumsAgreeWithANaiveReference() {
        for (byte[] bytes : new byte[][] {V2_REPORT, V3_QUERY}) {
            final byte[] zeroed = bytes.clone();
            zeroed[2] = 0;
            zeroed[3] = 0;
            assertEquals(((bytes[2] & 0xFF) << 8) | (bytes[3] & 0xFF), NaiveChecksum.checksum(zeroed, 0, zeroed.length));
        }
    }

    @Test
    void readsFieldsOfAV2Report() {
        message.wrap(MemorySegment.ofArray(V2_REPORT), 0, V2_REPORT.length);
        assertEquals(IgmpMessage.OK, message.check());
        assertEquals(IgmpMessage.V2_REPORT, message.type());
        assertEquals(100, message.maxResponseCode());
        assertEquals(GROUP, message.group());
        assertFalse(message.isV3Query());
        assertEquals("v2 report", IgmpMessage.typeName(message.type()));
    }

    @Test
    void readsFieldsOfAV3QueryWithASource() {
        message.wrap(MemorySegment.ofArray(V3_QUERY), 0, V3_QUERY.length);
        assertEquals(IgmpMessage.OK, message.check());
        assertTrue(message.isV3Query());
        assertEquals(GROUP, message.group());
        assertEquals(100, message.maxResponseTenths());
        assertEquals(2, message.robustness());
        assertEquals(1, message.querySourceCount());
        assertEquals(0xC612_0009, message.querySource(0));
    }

    @Test
    void aV3MaxResponseCodeAbove127IsFloatingPoint() {
        final byte[] query = V3_QUERY.clone();
        query[1] = (byte) 0x8A; // exponent 0, mantissa 10: (0x10 | 10) << 3 = 208 tenths (RFC 3376 §4.1.1)
        assertEquals(208, message.wrap(MemorySegment.ofArray(query), 0, query.length).maxResponseTenths());
    }

    @Test
    void writesAV2MessageOverStaleBytes() {
        final byte[] buffer = new byte[V2_REPORT.length + 1];
        Arrays.fill(buffer, (byte) 0xA5);
        message.wrap(MemorySegment.ofArray(buffer), 0, buffer.length).writeV2(IgmpMessage.V2_REPORT, 100, GROUP);
        assertArrayEquals(V2_REPORT, Arrays.copyOf(buffer, V2_REPORT.length));
        assertEquals((byte) 0xA5, buffer[V2_REPORT.length]);
    }

    @Test
    void writesAV3ReportOverStaleBytesAndReadsItBack() {
        final byte[] buffer = new byte[8 + 8 + 2 * 4 + 8];
        Arrays.fill(buffer, (byte) 0xA5);
        message.wrap(MemorySegment.ofArray(buffer), 0, buffer.length).startReport();
        int end = message.record(IgmpMessage.FIRST_RECORD_OFFSET, IgmpMessage.MODE_IS_INCLUDE, GROUP,
            new int[] {0xC612_0009, 0xC612_000A});
        end = message.record(end, IgmpMessage.CHANGE_TO_EXCLUDE, 0xEF01_0204, new int[0]);
        message.finishReport(end);
        assertEquals(buffer.length, end);
        final byte[] zeroed = buffer.clone();
        zeroed[2] = 0;
        zeroed[3] = 0;
        assertEquals(NaiveChecksum.checksum(zeroed, 0, end), ((buffer[2] & 0xFF) << 8) | (buffer[3] & 0xFF));
        assertArrayEquals(HexFormat.of().parseHex("22" + "00"), Arrays.copyOf(buffer, 2));
        assertArrayEquals(HexFormat.of().parseHex("00000002" + "01000002" + "ef010203" + "c6120009" + "c612000a"
            + "04000000" + "ef010204"), Arrays.copyOfRange(buffer, 4, end));
        message.wrap(MemorySegment.ofArray(buffer), 0, end);
        assertEquals(IgmpMessage.OK, message.check());
        assertEquals(2, message.recordCount());
        final int second = message.nextRecord(IgmpMessage.FIRST_RECORD_OFFSET);
        assertEquals(IgmpMessage.MODE_IS_INCLUDE, message.recordType(IgmpMessage.FIRST_RECORD_OFFSET));
        assertEquals(0xC612_000A, message.recordSource(IgmpMessage.FIRST_RECORD_OFFSET, 1));
        assertEquals(IgmpMessage.CHANGE_TO_EXCLUDE, message.recordType(second));
        assertEquals(0xEF01_0204, message.recordGroup(second));
        assertEquals(0, message.recordSourceCount(second));
    }

    /** IGMP has no repr record: the round trip goes through the v2 writer and the accessors. */
    @Test
    void v2MessagesRoundTripThroughTheWire() {
        qt().forAll(integers().between(0, 255), integers().between(0, 255), integers().all())
            .check((type, maxResponse, group) -> {
                final byte[] buffer = new byte[IgmpMessage.MIN_LENGTH];
                message.wrap(MemorySegment.ofArray(buffer), 0, buffer.length).writeV2(type, maxResponse, group);
                return message.check() == IgmpMessage.OK && message.type() == type
                    && message.maxResponseCode() == maxResponse && message.group() == group;
            });
    }

    @Test
    void truncatedMessagesAreTooShort() {
        for (int length = 0; length < IgmpMessage.MIN_LENGTH; length++) {
            assertEquals(IgmpMessage.DROP_TOO_SHORT, message.wrap(MemorySegment.ofArray(V2_REPORT), 0, length).check());
        }
    }

    @Test
    void aBadChecksumIsDropped() {
        final byte[] corrupt = V2_REPORT.clone();
        corrupt[7] ^= 1;
        assertEquals(IgmpMessage.DROP_BAD_CHECKSUM,
            message.wrap(MemorySegment.ofArray(corrupt), 0, corrupt.length).check());
    }

    @Test
    void aV3QueryWhoseSourcesRunPastTheMessageIsABadLength() {
        final byte[] lying = V3_QUERY.clone();
        lying[11] = 2; // two sources claimed, one present
        lying[2] = 0;
        lying[3] = 0;
        final int checksum = NaiveChecksum.checksum(lying, 0, lying.length);
        lying[2] = (byte) (checksum >>> 8);
        lying[3] = (byte) checksum;
        assertEquals(IgmpMessage.DROP_BAD_LENGTH, message.wrap(MemorySegment.ofArray(lying), 0, lying.length).check());
    }

    @Test
    void noQueryAccessorThrowsAfterACleanCheckOnArbitraryBytes() {
        qt().withExamples(5000).forAll(Generators.bytes(0, 28))
            .checkAssert(bytes -> {
                if (bytes.length >= 12 && (bytes[1] & 1) == 0) {
                    bytes[0] = IgmpMessage.QUERY;
                    bytes[10] = 0;
                    bytes[11] = (byte) (bytes[11] & 0x07);
                }
                if (bytes.length >= 8) { // a valid checksum, so check() goes past it
                    bytes[2] = 0;
                    bytes[3] = 0;
                    final int checksum = NaiveChecksum.checksum(bytes, 0, bytes.length);
                    bytes[2] = (byte) (checksum >>> 8);
                    bytes[3] = (byte) checksum;
                }
                message.wrap(MemorySegment.ofArray(bytes), 0, bytes.length);
                if (message.check() == IgmpMessage.OK) {
                    message.type();
                    message.maxResponseCode();
                    message.maxResponseTenths();
                    message.group();
                    if (message.isV3Query()) {
                        message.robustness();
                        for (int i = 0; i < message.querySourceCount(); i++) {
                            message.querySource(i);
                        }
                    }
                }
            });
    }
}
