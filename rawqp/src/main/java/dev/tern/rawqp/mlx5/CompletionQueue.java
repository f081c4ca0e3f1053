package dev.tern.rawqp.mlx5;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * The software side of one mlx5 completion queue: finds entries the device has written, in order, and reports the
 * consumer index back through the CQ's doorbell record.
 *
 * <pre>
 *   buffer: cqeCount entries of cqeSize bytes (64, or 128 with the mlx5_cqe64 in the second half)
 *   +----------+----------+-----+------------------+
 *   | entry 0  | entry 1  | ... | entry cqeCount-1 |     entry(ci) = buffer + (ci & (cqeCount-1)) * cqeSize
 *   +----------+----------+-----+------------------+
 *   doorbell record word 0 (big-endian): ci & 0xffffff, so the device knows which entries it may overwrite
 * </pre>
 *
 * <p>The device writes a CQE's body, then its {@code op_own} byte, with the owner bit set to the parity of the pass
 * it is on. Entry {@code ci} is ours when its opcode is not INVALID and its owner bit equals
 * {@code (ci & cqeCount) != 0}; on the next lap the same bit means "old". Libmlx5 fills a new CQ with INVALID
 * opcodes, so the first lap needs no special case.
 *
 * <p>Owned by the link's shard thread; not thread-safe. Allocation-free.
 */
public final class CompletionQueue {
    private static final VarHandle OP_OWN = ValueLayout.JAVA_BYTE.varHandle();
    private static final VarHandle DOORBELL_RECORD = ValueLayout.JAVA_INT.withOrder(ByteOrder.BIG_ENDIAN).varHandle();
    /** The consumer index field of the CQ doorbell record is 24 bits wide. */
    private static final int CONSUMER_INDEX_MASK = 0xFF_FFFF;

    private final MemorySegment buffer;
    private final int cqeCount;
    private final int cqeSize;
    private final long cqe64Offset;
    private final MemorySegment doorbellRecord;
    private final Mlx5Cqe64 cqe = new Mlx5Cqe64();
    private int consumerIndex;

    public CompletionQueue(Mlx5Rings.Cq cq) {
        this(cq, 0);
    }

    /** A CQ whose consumer index starts at {@code consumerIndex}: 0 on hardware; tests start near a wrap. */
    public CompletionQueue(Mlx5Rings.Cq cq, int consumerIndex) {
        this.buffer = cq.buffer();
        this.cqeCount = cq.cqeCount();
        this.cqeSize = cq.cqeSize();
        // rdma-core get_cqe(): with 128-byte CQEs the mlx5_cqe64 is the second half of each entry.
        this.cqe64Offset = cqeSize == 128 ? 64 : 0;
        this.doorbellRecord = cq.doorbellRecord();
        this.consumerIndex = consumerIndex;
    }

    /**
     * The entry at the consumer index if the device has completed it, else null. The owner byte is read with
     * acquire semantics before anything else: rdma-core follows the ownership check with
     * {@code udma_from_device_barrier()} so that no field of the CQE is read before the device finished writing
     * it (rawqp.md §2.4); {@code getAcquire} gives that order in Java.
     */
    public Mlx5Cqe64 poll() {
        final long entry = (long) (consumerIndex & (cqeCount - 1)) * cqeSize + cqe64Offset;
        final int opOwn = (byte) OP_OWN.getAcquire(buffer, entry + Mlx5Cqe64.OP_OWN_OFFSET) & 0xFF;
        final boolean ownerBit = (opOwn & Mlx5Cqe64.OWNER_MASK) != 0;
        final boolean lapParity = (consumerIndex & cqeCount) != 0;
        if (opOwn >>> 4 == Mlx5Cqe64.OPCODE_INVALID || ownerBit != lapParity) {
            return null;
        }
        return cqe.wrap(buffer, entry);
    }

    /** Moves past the entry {@link #poll()} returned. */
    public void consume() {
        consumerIndex++;
    }

    /**
     * Tells the device how far we have read, once per batch. Release ordering keeps the reads of the consumed CQEs
     * before the store that lets the device overwrite them (rdma-core {@code update_cons_index}).
     */
    public void publishConsumerIndex() {
        DOORBELL_RECORD.setRelease(doorbellRecord, 0L, consumerIndex & CONSUMER_INDEX_MASK);
    }

    public int consumerIndex() {
        return consumerIndex;
    }

    public int cqeCount() {
        return cqeCount;
    }
}
