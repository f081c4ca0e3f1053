package dev.tern.tcp.wire;

import dev.tern.core.net.Ipv4Address;
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
import static org.quicktheories.generators.SourceDSL.booleans;
import static org.quicktheories.generators.SourceDSL.integers;

/** The TCP header flyweight and its value form: a sample SYN, write over stale bytes, parse, emit, round trips. */
class TcpHeaderTest {
    private static final int SOURCE = Ipv4Address.parse("198.18.0.1");
    private static final int DESTINATION = Ipv4Address.parse("198.18.0.2");
    /** A SYN as Linux sends it: 50000 > 80, seq 0x12345678, win 64240, mss 1460, sackOK, TS 123456:0, nop, wscale 7. */
    private static final byte[] SYN = HexFormat.of().parseHex(
        "c35000501234567800000000a002faf0b2580000020405b40402080a0001e2400000000001030307");

    private static TcpHeader wrap(byte[] bytes) {
        return new TcpHeader().wrap(MemorySegment.ofArray(bytes), 0, bytes.length);
    }

    @Test
    void readsEveryFieldOfACapturedSyn() {
        final TcpHeader header = wrap(SYN);
        assertEquals(TcpHeader.OK, header.check());
        assertEquals(50000, header.sourcePort());
        assertEquals(80, header.destinationPort());
        assertEquals(0x12345678, header.sequence());
        assertEquals(0, header.acknowledgment());
        assertEquals(40, header.dataOffset());
        assertEquals(TcpFlags.SYN, header.flags());
        assertEquals(64240, header.window());
        assertEquals(0xb258, header.checksum());
        assertTrue(header.checksumValid(SOURCE, DESTINATION));
        final TcpOptionFields options = new TcpOptionFields();
        assertTrue(options.parse(header));
        assertEquals(1460, options.mss());
        assertTrue(options.sackPermitted());
        assertTrue(options.hasTimestamp());
        assertEquals(123456, options.tsVal());
        assertEquals(7, options.windowScale());
    }

    @Test
    void writesEveryFieldOverStaleBytes() {
        final byte[] buffer = new byte[SYN.length];
        Arrays.fill(buffer, (byte) 0xA5);
        final TcpHeader header = wrap(buffer);
        header.write(50000, 80, 0x12345678, 0, 40, TcpFlags.SYN, 64240);
        header.optionByte(0, 2).optionByte(1, 4).option16(2, 1460).optionByte(4, 4).optionByte(5, 2).optionByte(6, 8)
            .optionByte(7, 10).option32(8, 123456).option32(12, 0).optionByte(16, 1).optionByte(17, 3)
            .optionByte(18, 3).optionByte(19, 7);
        TcpRepr.fillChecksum(header, SOURCE, DESTINATION, buffer.length);
        assertArrayEquals(SYN, buffer);
    }

    @Test
    void parsesTheSynIntoAReprAndEmitsTheSameBytes() {
        final TcpRepr repr = TcpRepr.parse(wrap(SYN), SYN.length);
        assertEquals(new TcpRepr(50000, 80, 0x12345678, 0, TcpFlags.SYN, 64240, 1460, 7, true, true, 123456, 0,
            new int[0], 0), repr);
        assertEquals("50000 > 80 [S] seq 305419896 win 64240 <mss 1460,sackOK,TS 123456:0,wscale 7> len 0",
            repr.toString());
        final byte[] buffer = new byte[SYN.length];
        Arrays.fill(buffer, (byte) 0xA5);
        repr.emit(wrap(buffer));
        TcpRepr.fillChecksum(wrap(buffer), SOURCE, DESTINATION, buffer.length);
        assertArrayEquals(SYN, buffer);
    }

    @Test
    void checkRejectsShortHeadersAndLyingDataOffsets() {
        assertEquals(TcpHeader.DROP_TOO_SHORT, wrap(new byte[19]).check());
        final byte[] bad = SYN.clone();
        bad[12] = (byte) 0x40;
        assertEquals(TcpHeader.DROP_BAD_DATA_OFFSET, wrap(bad).check());
        bad[12] = (byte) 0xF0;
        assertEquals(TcpHeader.DROP_BAD_DATA_OFFSET, wrap(bad).check());
    }

    @Test
    void emittedReprsParseBackToThemselves() {
        qt().forAll(integers().between(0, 65535), integers().all(), integers().between(0, 255),
                integers().between(0, 4))
            .checkAssert((port, seq, flags, sackBlocks) -> {
                final boolean timestamp = (seq & 1) != 0;
                final int blocks = timestamp ? Math.min(sackBlocks, 3) : sackBlocks;
                final int[] sack = new int[2 * blocks];
                for (int i = 0; i < sack.length; i++) {
                    sack[i] = seq * 31 + i;
                }
                final TcpRepr repr = new TcpRepr(port, 65535 - port, seq, ~seq, flags, port, -1, -1, false, timestamp,
                    seq ^ 0x5555, seq + 9, sack, 0);
                final byte[] buffer = new byte[repr.headerLength()];
                Arrays.fill(buffer, (byte) 0xA5);
                repr.emit(wrap(buffer));
                final TcpHeader header = wrap(buffer);
                assertEquals(TcpHeader.OK, header.check());
                assertEquals(repr, TcpRepr.parse(header, buffer.length));
            });
    }

    @Test
    void synOptionsRoundTrip() {
        qt().forAll(integers().between(0, 65535), integers().between(0, 14), booleans().all(), booleans().all())
            .checkAssert((mss, scale, sackOk, timestamp) -> {
                final TcpRepr repr = new TcpRepr(1, 2, 3, 4, TcpFlags.SYN, 5, mss, scale, sackOk, timestamp, 6, 7,
                    new int[0], 0);
                final byte[] buffer = new byte[repr.headerLength()];
                repr.emit(wrap(buffer));
                assertEquals(repr, TcpRepr.parse(wrap(buffer), buffer.length));
            });
    }

    @Test
    void noAccessorThrowsAfterACleanCheckOnArbitraryBytes() {
        qt().forAll(Generators.bytes(0, 80)).checkAssert(bytes -> {
            final TcpHeader header = wrap(bytes);
            if (header.check() != TcpHeader.OK) {
                return;
            }
            header.sourcePort();
            header.destinationPort();
            header.sequence();
            header.acknowledgment();
            header.flags();
            header.window();
            header.checksum();
            header.urgentPointer();
            final TcpOptionFields options = new TcpOptionFields();
            options.parse(header);
            assertTrue(options.sackCount() <= TcpOption.MAX_SACK_BLOCKS);
            assertFalse(options.windowScale() > TcpOption.MAX_WINDOW_SCALE);
        });
    }
}
