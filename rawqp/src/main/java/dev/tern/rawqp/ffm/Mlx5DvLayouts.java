package dev.tern.rawqp.ffm;

/**
 * Offsets, sizes and constants of the mlx5 direct-verbs structs ({@code <infiniband/mlx5dv.h>}) that
 * {@link Mlx5Dv} exchanges with libmlx5. The send/receive/completion formats themselves (WQE segments, CQE64) are
 * in {@code dev.tern.rawqp.mlx5}; all are checked by {@code AbiTest}.
 */
public final class Mlx5DvLayouts {
    @CAbi("MLX5DV_OBJ_QP")
    public static final int MLX5DV_OBJ_QP = 1;
    @CAbi("MLX5DV_OBJ_CQ")
    public static final int MLX5DV_OBJ_CQ = 2;
    /** Index (in 32-bit words) of the receive counter in the QP's doorbell record. */
    @CAbi("MLX5_RCV_DBR")
    public static final int MLX5_RCV_DBR = 0;
    /** Index (in 32-bit words) of the send counter in the QP's doorbell record. */
    @CAbi("MLX5_SND_DBR")
    public static final int MLX5_SND_DBR = 1;

    private Mlx5DvLayouts() {
    }

    /**
     * {@code struct mlx5dv_obj} (112 bytes): pairs of {@code in} (the verbs object) and {@code out} (the DV struct
     * to fill) for each object type requested in {@code mlx5dv_init_obj}'s mask.
     */
    public static final class Mlx5DvObj {
        @CAbi("sizeof(struct mlx5dv_obj)")
        public static final int SIZE = 112;
        @CAbi(value = "offsetof(struct mlx5dv_obj, qp.in)", width = 8)
        public static final int QP_IN_OFFSET = 0;
        @CAbi(value = "offsetof(struct mlx5dv_obj, qp.out)", width = 8)
        public static final int QP_OUT_OFFSET = 8;
        @CAbi(value = "offsetof(struct mlx5dv_obj, cq.in)", width = 8)
        public static final int CQ_IN_OFFSET = 16;
        @CAbi(value = "offsetof(struct mlx5dv_obj, cq.out)", width = 8)
        public static final int CQ_OUT_OFFSET = 24;

        private Mlx5DvObj() {
        }
    }

    /**
     * {@code struct mlx5dv_qp} (96 bytes): where libmlx5 put the QP's rings.
     *
     * <pre>
     *   0       8       16          20         24      32          36         40      48
     *   +-------+-------+-----------+----------+-------+-----------+----------+-------+---------+ ...
     *   | dbrec | sq.buf| sq.wqe_cnt| sq.stride| rq.buf| rq.wqe_cnt| rq.stride| bf.reg| bf.size |
     *   +-------+-------+-----------+----------+-------+-----------+----------+-------+---------+
     *   dbrec -> __be32[2]: [MLX5_RCV_DBR] receive counter, [MLX5_SND_DBR] send counter
     * </pre>
     */
    public static final class Mlx5DvQp {
        @CAbi("sizeof(struct mlx5dv_qp)")
        public static final int SIZE = 96;
        @CAbi(value = "offsetof(struct mlx5dv_qp, dbrec)", width = 8)
        public static final int DBREC_OFFSET = 0;
        @CAbi(value = "offsetof(struct mlx5dv_qp, sq.buf)", width = 8)
        public static final int SQ_BUF_OFFSET = 8;
        @CAbi(value = "offsetof(struct mlx5dv_qp, sq.wqe_cnt)", width = 4)
        public static final int SQ_WQE_CNT_OFFSET = 16;
        @CAbi(value = "offsetof(struct mlx5dv_qp, sq.stride)", width = 4)
        public static final int SQ_STRIDE_OFFSET = 20;
        @CAbi(value = "offsetof(struct mlx5dv_qp, rq.buf)", width = 8)
        public static final int RQ_BUF_OFFSET = 24;
        @CAbi(value = "offsetof(struct mlx5dv_qp, rq.wqe_cnt)", width = 4)
        public static final int RQ_WQE_CNT_OFFSET = 32;
        @CAbi(value = "offsetof(struct mlx5dv_qp, rq.stride)", width = 4)
        public static final int RQ_STRIDE_OFFSET = 36;
        @CAbi(value = "offsetof(struct mlx5dv_qp, bf.reg)", width = 8)
        public static final int BF_REG_OFFSET = 40;
        @CAbi(value = "offsetof(struct mlx5dv_qp, bf.size)", width = 4)
        public static final int BF_SIZE_OFFSET = 48;
        @CAbi(value = "offsetof(struct mlx5dv_qp, comp_mask)", width = 8)
        public static final int COMP_MASK_OFFSET = 56;

        private Mlx5DvQp() {
        }
    }

    /** {@code struct mlx5dv_cq} (48 bytes): the CQE ring, its size and the consumer-index doorbell record. */
    public static final class Mlx5DvCq {
        @CAbi("sizeof(struct mlx5dv_cq)")
        public static final int SIZE = 48;
        @CAbi(value = "offsetof(struct mlx5dv_cq, buf)", width = 8)
        public static final int BUF_OFFSET = 0;
        @CAbi(value = "offsetof(struct mlx5dv_cq, dbrec)", width = 8)
        public static final int DBREC_OFFSET = 8;
        @CAbi(value = "offsetof(struct mlx5dv_cq, cqe_cnt)", width = 4)
        public static final int CQE_CNT_OFFSET = 16;
        @CAbi(value = "offsetof(struct mlx5dv_cq, cqe_size)", width = 4)
        public static final int CQE_SIZE_OFFSET = 20;
        @CAbi(value = "offsetof(struct mlx5dv_cq, cqn)", width = 4)
        public static final int CQN_OFFSET = 32;

        private Mlx5DvCq() {
        }
    }

    /** {@code struct mlx5dv_qp_init_attr} (40 bytes), the DV extension argument of {@code mlx5dv_create_qp}; we pass it zeroed. */
    public static final class Mlx5DvQpInitAttr {
        @CAbi("sizeof(struct mlx5dv_qp_init_attr)")
        public static final int SIZE = 40;

        private Mlx5DvQpInitAttr() {
        }
    }
}
