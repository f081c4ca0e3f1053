package dev.tern.rawqp.mlx5;

import dev.tern.core.memory.BigEndian;
import dev.tern.rawqp.ffm.CAbi;

import java.lang.foreign.MemorySegment;

/**
 * {@code struct mlx5_wqe_data_seg} (16 bytes, big-endian): a pointer into registered memory. Send WQEs end with one
 * (the frame after its inline headers); receive WQEs are a list of them, ended by an entry with
 * {@link #INVALID_LKEY} when the WQE has room for more than it uses.
 *
 * <pre>
 *   0            4      8                  16
 *   +------------+------+------------------+
 *   | byte_count | lkey | addr (64)        |
 *   +------------+------+------------------+
 * </pre>
 * Stateless.
 */
public final class Mlx5DataSegment {
    @CAbi("sizeof(struct mlx5_wqe_data_seg)")
    public static final int SIZE = 16;
    @CAbi(value = "offsetof(struct mlx5_wqe_data_seg, byte_count)", width = 4)
    static final int BYTE_COUNT_OFFSET = 0;
    @CAbi(value = "offsetof(struct mlx5_wqe_data_seg, lkey)", width = 4)
    static final int LKEY_OFFSET = 4;
    @CAbi(value = "offsetof(struct mlx5_wqe_data_seg, addr)", width = 8)
    static final int ADDR_OFFSET = 8;
    /** The lkey that ends a receive WQE's scatter list early. */
    @CAbi("MLX5_INVALID_LKEY")
    public static final int INVALID_LKEY = 0x100;

    private Mlx5DataSegment() {
    }

    public static void write(MemorySegment segment, long offset, int byteCount, int lkey, long address) {
        BigEndian.i32(segment, offset + BYTE_COUNT_OFFSET, byteCount);
        BigEndian.i32(segment, offset + LKEY_OFFSET, lkey);
        BigEndian.i64(segment, offset + ADDR_OFFSET, address);
    }

    public static int byteCount(MemorySegment segment, long offset) {
        return BigEndian.i32(segment, offset + BYTE_COUNT_OFFSET);
    }

    public static int lkey(MemorySegment segment, long offset) {
        return BigEndian.i32(segment, offset + LKEY_OFFSET);
    }

    public static long address(MemorySegment segment, long offset) {
        return BigEndian.i64(segment, offset + ADDR_OFFSET);
    }
}
