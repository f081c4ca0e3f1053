package dev.tern.rawqp.mlx5;

import dev.tern.core.memory.BigEndian;
import dev.tern.rawqp.ffm.CAbi;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * One mlx5 send WQE for a raw Ethernet frame, written and read in place in the send queue buffer
 * ({@code <infiniband/mlx5dv.h>}: {@code mlx5_wqe_ctrl_seg}, {@code mlx5_wqe_eth_seg}, {@code mlx5_wqe_data_seg};
 * all fields big-endian).
 *
 * <p>The SQ is a power-of-two array of 64-byte basic blocks (WQEBB). A WQE is a run of 16-byte "DS" units that
 * starts on a basic block and may take several, wrapping from the end of the buffer to its start; every DS offset
 * here is therefore taken modulo the buffer size. The layout this class writes:
 *
 * <pre>
 *  DS 0   control segment (16)
 *         0               4                  8    9        11       12
 *         +---------------+------------------+----+--------+--------+-----+
 *         |opmod|idx16|op | qpn (24) | ds (8)|sig | dci=0  |fm_ce_se| imm |
 *         +---------------+------------------+----+--------+--------+-----+
 *  DS 1-2 Ethernet segment (32, then 16 more per extra 16 inline bytes)
 *         0       4        5   6     8       12             14
 *         +-------+--------+---+-----+-------+--------------+--------------------------------+
 *         | rsvd0 |cs_flags|rsv| mss | rsvd2 | inline_hdr_sz| inline headers (18 here, more  |
 *         +-------+--------+---+-----+-------+--------------+  continue in the next DS units)|
 *  DS k   data segment (16): byte_count (BE32) | lkey (BE32) | addr (BE64), the rest of the frame
 * </pre>
 * The data segment is {@link Mlx5DataSegment}. ds counts every DS of the WQE; the WQE takes {@code ceil(ds / 4)} basic blocks.
 *
 * <p>Emission writes every byte of every segment it uses (reserved fields and inline padding are zeroed),
 * because the SQ holds stale WQEs from the previous lap. Owned by the link's shard thread; re-wrapped per WQE.
 */
public final class Mlx5SendWqe {
    @CAbi("MLX5_SEND_WQE_BB")
    public static final int BASIC_BLOCK_SIZE = 64;
    @CAbi("MLX5_SEND_WQE_SHIFT")
    public static final int BASIC_BLOCK_SHIFT = 6;
    /** One DS unit ("octoword"): the header has no name for it; every segment is a multiple, the control segment exactly one. */
    @CAbi("sizeof(struct mlx5_wqe_ctrl_seg)")
    public static final int DS_SIZE = 16;
    public static final int DS_PER_BASIC_BLOCK = BASIC_BLOCK_SIZE / DS_SIZE;

    @CAbi("MLX5_OPCODE_NOP")
    public static final int OPCODE_NOP = 0x00;
    @CAbi("MLX5_OPCODE_SEND")
    public static final int OPCODE_SEND = 0x0a;
    @CAbi("MLX5_OPCODE_TSO")
    public static final int OPCODE_TSO = 0x0e;
    /** fm_ce_se: ask for a CQE when this WQE completes (completion moderation leaves it off on most WQEs). */
    @CAbi("MLX5_WQE_CTRL_CQ_UPDATE")
    public static final int CTRL_CQ_UPDATE = 0x08;
    /** cs_flags: the NIC computes the IPv4 header checksum. */
    @CAbi("MLX5_ETH_WQE_L3_CSUM")
    public static final int ETH_L3_CSUM = 0x40;
    /** cs_flags: the NIC computes the TCP/UDP checksum. */
    @CAbi("MLX5_ETH_WQE_L4_CSUM")
    public static final int ETH_L4_CSUM = 0x80;

    @CAbi("sizeof(struct mlx5_wqe_ctrl_seg)")
    public static final int CTRL_SIZE = 16;
    @CAbi(value = "offsetof(struct mlx5_wqe_ctrl_seg, opmod_idx_opcode)", width = 4)
    static final int CTRL_OPMOD_IDX_OPCODE_OFFSET = 0;
    @CAbi(value = "offsetof(struct mlx5_wqe_ctrl_seg, qpn_ds)", width = 4)
    static final int CTRL_QPN_DS_OFFSET = 4;
    @CAbi(value = "offsetof(struct mlx5_wqe_ctrl_seg, signature)", width = 1)
    static final int CTRL_SIGNATURE_OFFSET = 8;
    @CAbi(value = "offsetof(struct mlx5_wqe_ctrl_seg, dci_stream_channel_id)", width = 2)
    static final int CTRL_DCI_STREAM_CHANNEL_ID_OFFSET = 9;
    @CAbi(value = "offsetof(struct mlx5_wqe_ctrl_seg, fm_ce_se)", width = 1)
    static final int CTRL_FM_CE_SE_OFFSET = 11;
    @CAbi(value = "offsetof(struct mlx5_wqe_ctrl_seg, imm)", width = 4)
    static final int CTRL_IMM_OFFSET = 12;

    @CAbi("sizeof(struct mlx5_wqe_eth_seg)")
    public static final int ETH_SIZE = 32;
    @CAbi(value = "offsetof(struct mlx5_wqe_eth_seg, rsvd0)", width = 4)
    static final int ETH_RSVD0_OFFSET = 0;
    @CAbi(value = "offsetof(struct mlx5_wqe_eth_seg, cs_flags)", width = 1)
    static final int ETH_CS_FLAGS_OFFSET = 4;
    @CAbi(value = "offsetof(struct mlx5_wqe_eth_seg, rsvd1)", width = 1)
    static final int ETH_RSVD1_OFFSET = 5;
    @CAbi(value = "offsetof(struct mlx5_wqe_eth_seg, mss)", width = 2)
    static final int ETH_MSS_OFFSET = 6;
    @CAbi(value = "offsetof(struct mlx5_wqe_eth_seg, rsvd2)", width = 4)
    static final int ETH_RSVD2_OFFSET = 8;
    @CAbi(value = "offsetof(struct mlx5_wqe_eth_seg, inline_hdr_sz)", width = 2)
    static final int ETH_INLINE_HDR_SZ_OFFSET = 12;
    @CAbi("offsetof(struct mlx5_wqe_eth_seg, inline_hdr_start)")
    static final int ETH_INLINE_HDR_START_OFFSET = 14;
    /**
     * Inline bytes that fit inside the 32-byte Ethernet segment ({@code inline_hdr_start[2]} + {@code inline_hdr[16]}).
     * Also the L2 minimum libmlx5 inlines ({@code MLX5_ETH_L2_INLINE_HEADER_SIZE}) on devices whose inline mode is
     * L2; the minimum is not visible through DV, so we always inline at least this much (rawqp.md §2.2).
     */
    @CAbi("sizeof(((struct mlx5_wqe_eth_seg *) 0)->inline_hdr_start) + sizeof(((struct mlx5_wqe_eth_seg *) 0)->inline_hdr)")
    public static final int MIN_INLINE_HEADER_SIZE = 18;

    /** DS index of the Ethernet segment: right after the control segment. */
    public static final int ETH_DS = 1;
    /** Where the inline headers start, counted from the WQE's first byte. */
    static final int INLINE_START = ETH_DS * DS_SIZE + ETH_INLINE_HDR_START_OFFSET;
    /** The doorbell carries the control segment's first 8 bytes exactly as they lie in memory. */
    private static final ValueLayout.OfLong NATIVE_LONG = ValueLayout.JAVA_LONG;

    private MemorySegment queue;
    private long queueMask;
    private long start;

    /** Points at the WQE that begins at byte {@code start} of a send queue of {@code queue.byteSize()} (a power of two) bytes. */
    public Mlx5SendWqe wrap(MemorySegment queue, long start) {
        this.queue = queue;
        this.queueMask = queue.byteSize() - 1;
        this.start = start;
        return this;
    }

    /** DS units the Ethernet segment takes with {@code inlineLength} inline bytes: 2, plus one per further 16 bytes. */
    public static int ethernetDs(int inlineLength) {
        final int beyond = inlineLength - MIN_INLINE_HEADER_SIZE;
        return ETH_SIZE / DS_SIZE + (beyond <= 0 ? 0 : (beyond + DS_SIZE - 1) / DS_SIZE);
    }

    /** ds of a WQE: control + Ethernet (with inline) + {@code dataSegments}. */
    public static int ds(int inlineLength, int dataSegments) {
        return CTRL_SIZE / DS_SIZE + ethernetDs(inlineLength) + dataSegments;
    }

    /** Basic blocks a WQE of {@code ds} units takes. */
    public static int basicBlocks(int ds) {
        return (ds + DS_PER_BASIC_BLOCK - 1) / DS_PER_BASIC_BLOCK;
    }

    private long at(int dsIndex, int offset) {
        return (start + (long) dsIndex * DS_SIZE + offset) & queueMask;
    }

    /**
     * Writes the control segment ({@code mlx5dv_set_ctrl_seg} with opmod 0, signature 0, imm 0).
     *
     * @param wqeIndex the producer index in basic blocks; its low 16 bits go into the WQE and come back as the
     *                 CQE's {@code wqe_counter}
     */
    public Mlx5SendWqe control(int wqeIndex, int opcode, int qpn, int ds, int fmCeSe) {
        BigEndian.i32(queue, at(0, CTRL_OPMOD_IDX_OPCODE_OFFSET), (wqeIndex & 0xFFFF) << 8 | (opcode & 0xFF));
        BigEndian.i32(queue, at(0, CTRL_QPN_DS_OFFSET), qpn << 8 | (ds & 0xFF));
        // signature (8), dci_stream_channel_id (9-10) zero, fm_ce_se (11): one big-endian word covers all three.
        BigEndian.i32(queue, at(0, CTRL_SIGNATURE_OFFSET), fmCeSe & 0xFF);
        BigEndian.i32(queue, at(0, CTRL_IMM_OFFSET), 0);
        return this;
    }

    /**
     * Writes the Ethernet segment ({@code mlx5dv_set_eth_seg}) with {@code inlineLength} bytes of the frame copied
     * from {@code frame} at {@code frameOffset}, and zeroes the padding up to the segment's last DS.
     *
     * @param csFlags {@link #ETH_L3_CSUM} and/or {@link #ETH_L4_CSUM}
     * @param mss     TCP payload bytes per segment for a TSO WQE, 0 otherwise (the header says it must be 0 then)
     * @return the number of DS units the segment took
     */
    public int ethernet(int csFlags, int mss, MemorySegment frame, long frameOffset, int inlineLength) {
        BigEndian.i32(queue, at(ETH_DS, ETH_RSVD0_OFFSET), 0);
        // cs_flags (4), rsvd1 (5), mss (6-7) as one big-endian word.
        BigEndian.i32(queue, at(ETH_DS, ETH_CS_FLAGS_OFFSET), (csFlags & 0xFF) << 24 | (mss & 0xFFFF));
        BigEndian.i32(queue, at(ETH_DS, ETH_RSVD2_OFFSET), 0);
        BigEndian.u16(queue, at(ETH_DS, ETH_INLINE_HDR_SZ_OFFSET), inlineLength);
        copyIn(frame, frameOffset, INLINE_START, inlineLength);
        final int ethDs = ethernetDs(inlineLength);
        final int end = (ETH_DS + ethDs) * DS_SIZE;
        final int padding = end - (INLINE_START + inlineLength);
        // The padding lies inside one basic block (it ends on a DS boundary, and for the 18-byte minimum it is empty),
        // and the queue wraps only between basic blocks, so it is one contiguous run.
        final long pad = at(0, INLINE_START + inlineLength);
        for (int i = 0; i < padding; i++) {
            queue.set(ValueLayout.JAVA_BYTE, pad + i, (byte) 0);
        }
        return ethDs;
    }

    /** Writes a data segment ({@code mlx5dv_set_data_seg}) as DS unit {@code dsIndex}. */
    public Mlx5SendWqe data(int dsIndex, int byteCount, int lkey, long address) {
        Mlx5DataSegment.write(queue, at(dsIndex, 0), byteCount, lkey, address);
        return this;
    }

    /** Copies {@code length} bytes to WQE-relative {@code wqeOffset}, splitting where the queue wraps. */
    private void copyIn(MemorySegment source, long sourceOffset, int wqeOffset, int length) {
        final long target = at(0, wqeOffset);
        final int first = (int) Math.min(length, queue.byteSize() - target);
        MemorySegment.copy(source, sourceOffset, queue, target, first);
        if (first < length) {
            MemorySegment.copy(source, sourceOffset + first, queue, 0, length - first);
        }
    }

    /** The control segment's first 8 bytes as they lie in memory: the value the doorbell register receives. */
    public long controlQword() {
        return queue.get(NATIVE_LONG, start);
    }

    // Readers: used by tests and the ring model (the device's side), never by the link's data path.

    public int opcode() {
        return BigEndian.i32(queue, at(0, CTRL_OPMOD_IDX_OPCODE_OFFSET)) & 0xFF;
    }

    public int opcodeModifier() {
        return BigEndian.i32(queue, at(0, CTRL_OPMOD_IDX_OPCODE_OFFSET)) >>> 24;
    }

    public int wqeIndex() {
        return BigEndian.i32(queue, at(0, CTRL_OPMOD_IDX_OPCODE_OFFSET)) >>> 8 & 0xFFFF;
    }

    public int qpn() {
        return BigEndian.i32(queue, at(0, CTRL_QPN_DS_OFFSET)) >>> 8;
    }

    public int ds() {
        return BigEndian.i32(queue, at(0, CTRL_QPN_DS_OFFSET)) & 0xFF;
    }

    public int fmCeSe() {
        return BigEndian.u8(queue, at(0, CTRL_FM_CE_SE_OFFSET));
    }

    public int checksumFlags() {
        return BigEndian.u8(queue, at(ETH_DS, ETH_CS_FLAGS_OFFSET));
    }

    public int mss() {
        return BigEndian.u16(queue, at(ETH_DS, ETH_MSS_OFFSET));
    }

    public int inlineHeaderSize() {
        return BigEndian.u16(queue, at(ETH_DS, ETH_INLINE_HDR_SZ_OFFSET));
    }

    /** Copies the inline headers (up to {@code length} bytes) out of the WQE, following the wrap. */
    public void copyInline(MemorySegment target, long targetOffset, int length) {
        final long source = at(0, INLINE_START);
        final int first = (int) Math.min(length, queue.byteSize() - source);
        MemorySegment.copy(queue, source, target, targetOffset, first);
        if (first < length) {
            MemorySegment.copy(queue, 0, target, targetOffset + first, length - first);
        }
    }

    public int dataByteCount(int dsIndex) {
        return Mlx5DataSegment.byteCount(queue, at(dsIndex, 0));
    }

    public int dataLkey(int dsIndex) {
        return Mlx5DataSegment.lkey(queue, at(dsIndex, 0));
    }

    public long dataAddress(int dsIndex) {
        return Mlx5DataSegment.address(queue, at(dsIndex, 0));
    }
}
