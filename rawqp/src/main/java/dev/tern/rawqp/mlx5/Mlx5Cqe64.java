package dev.tern.rawqp.mlx5;

import dev.tern.core.memory.BigEndian;
import dev.tern.rawqp.ffm.CAbi;

import java.lang.foreign.MemorySegment;

/**
 * One 64-byte mlx5 completion queue entry ({@code struct mlx5_cqe64}, and the error view {@code struct mlx5_err_cqe}
 * of the same bytes), read in place in the CQ buffer; big-endian.
 *
 * <pre>
 *   0                        28         29              30        32                 44        48          56             60          62    63
 *   +-- ... (unused here) ---+----------+---------------+---------+-- ... -----------+---------+-- ... -----+--------------+-----------+-----+--------+
 *   |                        |hds_ip_ext|l4_hdr_type_etc|vlan_info|                  |byte_cnt |  timestamp  | sop_drop_qpn |wqe_counter| sig | op_own |
 *   +------------------------+----------+---------------+---------+------------------+---------+-------------+--------------+-----------+-----+--------+
 *   error CQE: vendor_err_synd @54, syndrome @55
 *   op_own: opcode (bits 7-4) | format (3-2) | solicited (1) | owner (0)
 * </pre>
 *
 * <p>Ownership: entry {@code ci & (cqe_cnt - 1)} belongs to software when its opcode is not
 * {@link #OPCODE_INVALID} and its owner bit equals the pass parity {@code (ci & cqe_cnt) != 0} (rdma-core
 * {@code get_sw_cqe}); {@link CompletionQueue} checks that with an acquire read of {@code op_own} before anything
 * else here is read.
 *
 * <p>Writers exist for the tests and the ring model, which play the device. Owned by one thread; re-wrapped per entry.
 */
public final class Mlx5Cqe64 {
    @CAbi("sizeof(struct mlx5_cqe64)")
    public static final int SIZE = 64;
    @CAbi(value = "offsetof(struct mlx5_cqe64, hds_ip_ext)", width = 1)
    static final int HDS_IP_EXT_OFFSET = 28;
    @CAbi(value = "offsetof(struct mlx5_cqe64, l4_hdr_type_etc)", width = 1)
    static final int L4_HDR_TYPE_ETC_OFFSET = 29;
    @CAbi(value = "offsetof(struct mlx5_cqe64, byte_cnt)", width = 4)
    static final int BYTE_CNT_OFFSET = 44;
    @CAbi(value = "offsetof(struct mlx5_cqe64, sop_drop_qpn)", width = 4)
    static final int SOP_DROP_QPN_OFFSET = 56;
    @CAbi(value = "offsetof(struct mlx5_cqe64, wqe_counter)", width = 2)
    static final int WQE_COUNTER_OFFSET = 60;
    @CAbi(value = "offsetof(struct mlx5_cqe64, op_own)", width = 1)
    public static final int OP_OWN_OFFSET = 63;
    @CAbi(value = "offsetof(struct mlx5_err_cqe, vendor_err_synd)", width = 1)
    static final int VENDOR_ERR_SYND_OFFSET = 54;
    @CAbi(value = "offsetof(struct mlx5_err_cqe, syndrome)", width = 1)
    static final int SYNDROME_OFFSET = 55;
    @CAbi(value = "offsetof(struct mlx5_err_cqe, wqe_counter)", width = 2)
    static final int ERR_WQE_COUNTER_OFFSET = 60;

    /** A send WQE that asked for a CQE completed. */
    @CAbi("MLX5_CQE_REQ")
    public static final int OPCODE_REQ = 0x0;
    /** A frame arrived in the receive queue. */
    @CAbi("MLX5_CQE_RESP_SEND")
    public static final int OPCODE_RESP_SEND = 0x2;
    @CAbi("MLX5_CQE_REQ_ERR")
    public static final int OPCODE_REQ_ERR = 0xd;
    @CAbi("MLX5_CQE_RESP_ERR")
    public static final int OPCODE_RESP_ERR = 0xe;
    /** What libmlx5 writes into every entry of a new CQ: never software's. */
    @CAbi("MLX5_CQE_INVALID")
    public static final int OPCODE_INVALID = 0xf;
    @CAbi("MLX5_CQE_OWNER_MASK")
    public static final int OWNER_MASK = 1;

    @CAbi("MLX5_CQE_L2_OK")
    public static final int L2_OK = 1;
    @CAbi("MLX5_CQE_L3_OK")
    public static final int L3_OK = 2;
    @CAbi("MLX5_CQE_L4_OK")
    public static final int L4_OK = 4;
    @CAbi("MLX5_CQE_L3_HDR_TYPE_NONE")
    public static final int L3_HDR_TYPE_NONE = 0;
    @CAbi("MLX5_CQE_L3_HDR_TYPE_IPV6")
    public static final int L3_HDR_TYPE_IPV6 = 1;
    @CAbi("MLX5_CQE_L3_HDR_TYPE_IPV4")
    public static final int L3_HDR_TYPE_IPV4 = 2;

    @CAbi("MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR")
    public static final int SYNDROME_LOCAL_LENGTH_ERR = 0x1;
    @CAbi("MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR")
    public static final int SYNDROME_LOCAL_QP_OP_ERR = 0x2;
    @CAbi("MLX5_CQE_SYNDROME_LOCAL_PROT_ERR")
    public static final int SYNDROME_LOCAL_PROT_ERR = 0x4;
    @CAbi("MLX5_CQE_SYNDROME_WR_FLUSH_ERR")
    public static final int SYNDROME_WR_FLUSH_ERR = 0x5;

    private MemorySegment segment;
    private long base;

    /** Points at the 64-byte CQE at {@code base} (for 128-byte entries, the second half: see {@link CompletionQueue}). */
    public Mlx5Cqe64 wrap(MemorySegment segment, long base) {
        this.segment = segment;
        this.base = base;
        return this;
    }

    public int opOwn() {
        return BigEndian.u8(segment, base + OP_OWN_OFFSET);
    }

    /** {@code mlx5dv_get_cqe_opcode}: {@code op_own >> 4}. */
    public int opcode() {
        return opOwn() >>> 4;
    }

    /** {@code mlx5dv_get_cqe_owner}. */
    public int owner() {
        return opOwn() & OWNER_MASK;
    }

    /** {@code mlx5dv_get_cqe_format}: 0 for a plain CQE; 3 would be a compressed block, which we never ask for. */
    public int format() {
        return opOwn() >>> 2 & 0x3;
    }

    /** Bytes received (receive CQE). */
    public int byteCount() {
        return BigEndian.i32(segment, base + BYTE_CNT_OFFSET);
    }

    /** Send CQE: the index (low 16 bits, in basic blocks) of the WQE that asked for it. Receive CQE: the RQ WQE counter. */
    public int wqeCounter() {
        return BigEndian.u16(segment, base + WQE_COUNTER_OFFSET);
    }

    public int hdsIpExt() {
        return BigEndian.u8(segment, base + HDS_IP_EXT_OFFSET);
    }

    /** {@code (l4_hdr_type_etc >> 2) & 3}, as rdma-core's {@code get_cqe_l3_hdr_type} reads it. */
    public int l3HeaderType() {
        return BigEndian.u8(segment, base + L4_HDR_TYPE_ETC_OFFSET) >>> 2 & 0x3;
    }

    /**
     * IPv4 header and TCP/UDP checksums both verified, the rule of rdma-core's {@code get_csum_ok} (cq.c):
     * {@code L3_OK} and {@code L4_OK} set, and the L3 header is IPv4.
     */
    public boolean ipv4ChecksumsOk() {
        return (hdsIpExt() & (L3_OK | L4_OK)) == (L3_OK | L4_OK) && l3HeaderType() == L3_HDR_TYPE_IPV4;
    }

    /** Error CQE: the syndrome ({@link #SYNDROME_LOCAL_LENGTH_ERR}, ...). */
    public int syndrome() {
        return BigEndian.u8(segment, base + SYNDROME_OFFSET);
    }

    /** Error CQE: {@code wqe_counter} of the WQE that failed (same place as in a good CQE; the ABI test checks both views). */
    public int errorWqeCounter() {
        return BigEndian.u16(segment, base + ERR_WQE_COUNTER_OFFSET);
    }

    public int vendorSyndrome() {
        return BigEndian.u8(segment, base + VENDOR_ERR_SYND_OFFSET);
    }

    /** The 24-bit flow tag a steering rule may attach (low bits of {@code sop_drop_qpn}). */
    public int flowTag() {
        return BigEndian.i32(segment, base + SOP_DROP_QPN_OFFSET) & 0xFF_FFFF;
    }

    // Writers, for the device side in tests and the ring model. They write every field a reader above uses.

    /** Zeroes the entry except {@code op_own}, which the device writes last. */
    public Mlx5Cqe64 clearBody() {
        for (int offset = 0; offset < OP_OWN_OFFSET - 7; offset += 8) {
            BigEndian.i64(segment, base + offset, 0);
        }
        for (int offset = OP_OWN_OFFSET - 7; offset < OP_OWN_OFFSET; offset++) {
            BigEndian.u8(segment, base + offset, 0);
        }
        return this;
    }

    public Mlx5Cqe64 byteCount(int value) {
        BigEndian.i32(segment, base + BYTE_CNT_OFFSET, value);
        return this;
    }

    public Mlx5Cqe64 wqeCounter(int value) {
        BigEndian.u16(segment, base + WQE_COUNTER_OFFSET, value);
        return this;
    }

    public Mlx5Cqe64 checksumStatus(int hdsIpExt, int l3HeaderType) {
        BigEndian.u8(segment, base + HDS_IP_EXT_OFFSET, hdsIpExt);
        BigEndian.u8(segment, base + L4_HDR_TYPE_ETC_OFFSET, (l3HeaderType & 0x3) << 2);
        return this;
    }

    public Mlx5Cqe64 syndrome(int syndrome, int vendorSyndrome) {
        BigEndian.u8(segment, base + SYNDROME_OFFSET, syndrome);
        BigEndian.u8(segment, base + VENDOR_ERR_SYND_OFFSET, vendorSyndrome);
        return this;
    }

    /** {@code op_own = opcode << 4 | owner}, a plain store; the model publishes it with release semantics itself. */
    public Mlx5Cqe64 opOwn(int opcode, int owner) {
        BigEndian.u8(segment, base + OP_OWN_OFFSET, opcode << 4 | owner & OWNER_MASK);
        return this;
    }
}
