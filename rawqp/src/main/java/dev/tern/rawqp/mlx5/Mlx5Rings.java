package dev.tern.rawqp.mlx5;

import java.lang.foreign.MemorySegment;

/**
 * The memory a raw-packet QP's data path works on: what {@code mlx5dv_init_obj} reports for the QP and its two CQs,
 * as segments of the right size. On hardware these are libmlx5's buffers and the device's BlueFlame register; in
 * tests the ring model allocates them and plays the device.
 *
 * @param qpn                the QP number, written into every send WQE's control segment
 * @param sendQueue          {@code sq.buf}: {@code sendWqeCount} basic blocks of 64 bytes
 * @param sendWqeCount       {@code sq.wqe_cnt}, a power of two
 * @param receiveQueue       {@code rq.buf}: {@code receiveWqeCount} WQEs of {@code receiveStride} bytes
 * @param receiveWqeCount    {@code rq.wqe_cnt}, a power of two
 * @param receiveStride      {@code rq.stride}: bytes per receive WQE (16 per scatter entry), a power of two
 * @param doorbellRecord     {@code dbrec}: two big-endian 32-bit counters, [0] receive, [1] send
 * @param blueFlame          {@code bf.reg}: 8 bytes of the device's doorbell (BlueFlame) register page
 * @param sendCompletions    the CQ that send WQEs complete to
 * @param receiveCompletions the CQ that received frames complete to
 */
public record Mlx5Rings(int qpn, MemorySegment sendQueue, int sendWqeCount, MemorySegment receiveQueue, int receiveWqeCount,
                        int receiveStride, MemorySegment doorbellRecord, MemorySegment blueFlame, Cq sendCompletions,
                        Cq receiveCompletions) {

    /**
     * One CQ: {@code cqeCount} entries of {@code cqeSize} (64 or 128) bytes, and its doorbell record (the first
     * 32-bit word is the consumer index software reports).
     */
    public record Cq(MemorySegment buffer, int cqeCount, int cqeSize, MemorySegment doorbellRecord) {
        public Cq {
            requirePowerOfTwo("cqe_cnt", cqeCount);
            if (cqeSize != 64 && cqeSize != 128) {
                throw new IllegalArgumentException("cqe_size must be 64 or 128, got " + cqeSize);
            }
            requireSize("CQ buffer", buffer, (long) cqeCount * cqeSize);
            requireSize("CQ doorbell record", doorbellRecord, 4);
        }
    }

    public Mlx5Rings {
        requirePowerOfTwo("sq.wqe_cnt", sendWqeCount);
        requirePowerOfTwo("rq.wqe_cnt", receiveWqeCount);
        requirePowerOfTwo("rq.stride", receiveStride);
        if (receiveStride < Mlx5DataSegment.SIZE) {
            throw new IllegalArgumentException("rq.stride " + receiveStride + " is smaller than one data segment");
        }
        requireSize("send queue", sendQueue, (long) sendWqeCount * Mlx5SendWqe.BASIC_BLOCK_SIZE);
        requireSize("receive queue", receiveQueue, (long) receiveWqeCount * receiveStride);
        requireSize("QP doorbell record", doorbellRecord, 8);
        requireSize("BlueFlame register", blueFlame, 8);
    }

    private static void requirePowerOfTwo(String what, int value) {
        if (value <= 0 || Integer.bitCount(value) != 1) {
            throw new IllegalArgumentException(what + " must be a power of two, got " + value);
        }
    }

    private static void requireSize(String what, MemorySegment segment, long size) {
        if (segment.byteSize() != size) {
            throw new IllegalArgumentException(what + " is " + segment.byteSize() + " bytes, expected " + size);
        }
    }
}
