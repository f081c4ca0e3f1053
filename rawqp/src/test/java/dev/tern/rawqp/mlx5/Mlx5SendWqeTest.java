package dev.tern.rawqp.mlx5;

import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.HexFormat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;

class Mlx5SendWqeTest {
    private static final HexFormat HEX = HexFormat.of();

    /** A SEND WQE for a 1500-byte frame, laid out by hand from the mlx5dv.h structs. */
    private static final String SEND_WQE =
        "0001020a" + "00abcd04" + "00000008" + "00000000"                  // ctrl: idx 0x0102, SEND | qpn 0xabcd, ds 4 | fm_ce_se CQ_UPDATE | imm
        + "00000000" + "c0000000" + "00000000" + "0012" + "1011"           // eth: rsvd0 | cs_flags L3+L4, mss 0 | rsvd2 | inline_hdr_sz 18 | first 2
        + "12131415161718191a1b1c1d1e1f2021"                               //      inline_hdr: the other 16 inline bytes
        + "000005ca" + "11223344" + "00007f0012345678";                    // data: 1482 bytes, lkey, address

    private static MemorySegment inlineBytes(int count) {
        final byte[] bytes = new byte[count];
        for (int i = 0; i < count; i++) {
            bytes[i] = (byte) (0x10 + i);
        }
        return MemorySegment.ofArray(bytes);
    }

    @Test
    void aSendWqeWritesEveryByteOfItsBasicBlockAsTheHeaderLaysItOut() {
        try (Arena arena = Arena.ofConfined()) {
            final MemorySegment queue = arena.allocate(256, 64);
            queue.fill((byte) 0xA5);
            final Mlx5SendWqe wqe = new Mlx5SendWqe().wrap(queue, 64);
            final int ds = Mlx5SendWqe.ds(18, 1);
            wqe.control(0x3_0102, Mlx5SendWqe.OPCODE_SEND, 0xABCD, ds, Mlx5SendWqe.CTRL_CQ_UPDATE);
            assertEquals(2, wqe.ethernet(Mlx5SendWqe.ETH_L3_CSUM | Mlx5SendWqe.ETH_L4_CSUM, 0, inlineBytes(18), 0, 18));
            wqe.data(3, 1500 - 18, 0x11223344, 0x7F00_1234_5678L);
            assertEquals(SEND_WQE, HEX.formatHex(queue.asSlice(64, 64).toArray(ValueLayout.JAVA_BYTE)));
            assertEquals("a5a5a5a5", HEX.formatHex(queue.asSlice(128, 4).toArray(ValueLayout.JAVA_BYTE)), "nothing past the WQE");
        }
    }

    @Test
    void theReadersGiveBackWhatTheWritersPut() {
        try (Arena arena = Arena.ofConfined()) {
            final MemorySegment queue = arena.allocate(256, 64);
            final Mlx5SendWqe wqe = new Mlx5SendWqe().wrap(queue, 0);
            wqe.control(0x3_0102, Mlx5SendWqe.OPCODE_SEND, 0xABCD, 4, Mlx5SendWqe.CTRL_CQ_UPDATE);
            wqe.ethernet(Mlx5SendWqe.ETH_L4_CSUM, 0, inlineBytes(18), 0, 18);
            wqe.data(3, 1482, 0x11223344, 0x7F00_1234_5678L);
            assertEquals(0x0102, wqe.wqeIndex());
            assertEquals(Mlx5SendWqe.OPCODE_SEND, wqe.opcode());
            assertEquals(0, wqe.opcodeModifier());
            assertEquals(0xABCD, wqe.qpn());
            assertEquals(4, wqe.ds());
            assertEquals(Mlx5SendWqe.CTRL_CQ_UPDATE, wqe.fmCeSe());
            assertEquals(Mlx5SendWqe.ETH_L4_CSUM, wqe.checksumFlags());
            assertEquals(18, wqe.inlineHeaderSize());
            assertEquals(1482, wqe.dataByteCount(3));
            assertEquals(0x11223344, wqe.dataLkey(3));
            assertEquals(0x7F00_1234_5678L, wqe.dataAddress(3));
        }
    }

    @Test
    void controlSegmentPacksTheIndexModulo65536WithOpcodeQpnAndDs() {
        try (Arena arena = Arena.ofConfined()) {
            final MemorySegment queue = arena.allocate(64, 64);
            final Mlx5SendWqe wqe = new Mlx5SendWqe().wrap(queue, 0);
            qt().forAll(integers().all(), integers().between(0, 0xFF_FFFF), integers().between(1, 63), integers().between(0, 255))
                .checkAssert((pi, qpn, ds, fmCeSe) -> {
                    wqe.control(pi, Mlx5SendWqe.OPCODE_TSO, qpn, ds, fmCeSe);
                    assertEquals(pi & 0xFFFF, wqe.wqeIndex());
                    assertEquals(Mlx5SendWqe.OPCODE_TSO, wqe.opcode());
                    assertEquals(0, wqe.opcodeModifier());
                    assertEquals(qpn, wqe.qpn());
                    assertEquals(ds, wqe.ds());
                    assertEquals(fmCeSe, wqe.fmCeSe());
                    // Big-endian on the wire: opmod, index high, index low, opcode.
                    assertEquals(pi >>> 8 & 0xFF, queue.get(ValueLayout.JAVA_BYTE, 1) & 0xFF);
                    assertEquals(pi & 0xFF, queue.get(ValueLayout.JAVA_BYTE, 2) & 0xFF);
                });
        }
    }

    @Test
    void dsCountsControlEthernetWithExtraInlineUnitsAndDataSegments() {
        assertEquals(4, Mlx5SendWqe.ds(18, 1), "the usual WQE: one basic block");
        assertEquals(1, Mlx5SendWqe.basicBlocks(4));
        assertEquals(3, Mlx5SendWqe.ds(18, 0), "a fully inlined 18-byte frame");
        assertEquals(5, Mlx5SendWqe.ds(19, 1), "one byte past the segment needs another unit");
        assertEquals(2, Mlx5SendWqe.basicBlocks(5));
        assertEquals(5, Mlx5SendWqe.ds(34, 1));
        assertEquals(6, Mlx5SendWqe.ds(35, 1));
        assertEquals(12, Mlx5SendWqe.ds(144, 1), "the longest TSO header we inline");
        assertEquals(3, Mlx5SendWqe.basicBlocks(12));
    }

    @Test
    void aWqeStartingInTheLastBasicBlockWrapsItsInlineHeadersAndDataSegmentToTheQueueStart() {
        try (Arena arena = Arena.ofConfined()) {
            final MemorySegment queue = arena.allocate(4 * 64, 64);
            queue.fill((byte) 0xA5);
            final int inline = 100;
            final int ds = Mlx5SendWqe.ds(inline, 1);
            assertEquals(10, ds);
            final Mlx5SendWqe wqe = new Mlx5SendWqe().wrap(queue, 3 * 64);
            wqe.control(7, Mlx5SendWqe.OPCODE_TSO, 0x42, ds, 0);
            final int ethernetDs = wqe.ethernet(Mlx5SendWqe.ETH_L3_CSUM | Mlx5SendWqe.ETH_L4_CSUM, 1448, inlineBytes(inline), 0, inline);
            wqe.data(1 + ethernetDs, 9000, 0x99, 0x1000L);
            final MemorySegment copy = MemorySegment.ofArray(new byte[inline]);
            wqe.copyInline(copy, 0, inline);
            assertEquals(HEX.formatHex(inlineBytes(inline).toArray(ValueLayout.JAVA_BYTE)), HEX.formatHex(copy.toArray(ValueLayout.JAVA_BYTE)));
            assertEquals(1448, wqe.mss());
            assertEquals(9000, wqe.dataByteCount(9));
            // The data segment is DS 9 of a WQE that starts at byte 192 of a 256-byte queue: byte (192 + 144) % 256 = 80.
            assertEquals("00002328", HEX.formatHex(queue.asSlice(80, 4).toArray(ValueLayout.JAVA_BYTE)));
            // Inline bytes start at 192 + 16 + 14 = 222; 0..33 fill to the end, 34.. continue at the queue's start.
            assertEquals((byte) (0x10 + 33), queue.get(ValueLayout.JAVA_BYTE, 255));
            assertEquals((byte) (0x10 + 34), queue.get(ValueLayout.JAVA_BYTE, 0));
            assertEquals("a5a5", HEX.formatHex(queue.asSlice(96, 2).toArray(ValueLayout.JAVA_BYTE)), "the WQE ends at byte 96");
        }
    }
}
