package dev.tern.lab.link;

/**
 * First in, first out, dropping what does not fit. With a marking threshold it sets CE on ECN-capable packets that
 * arrive while the queue holds at least that much, the step marking DCTCP is built for (RFC 8257 §3.1), and still
 * drops only on overflow.
 */
public final class DropTail implements QueueDiscipline {
    private final FrameSlots slots;
    private final QueueLimit limit;
    private final QueueLimit markThreshold;
    private final BottleneckStats stats;
    private final SlotFifo fifo;

    /** {@code markThreshold} may be null: no marking. */
    public DropTail(FrameSlots slots, QueueLimit limit, QueueLimit markThreshold, BottleneckStats stats) {
        this.slots = slots;
        this.limit = limit;
        this.markThreshold = markThreshold;
        this.stats = stats;
        this.fifo = new SlotFifo(Math.min(slots.capacity(), limit.maxFrames(60)));
    }

    @Override
    public boolean enqueue(int slot, long nowNs) {
        final int length = slots.length(slot);
        if (!limit.admits(fifo.size(), fifo.bytes(), length) || !fifo.push(slot, length)) {
            stats.overflowDrops++;
            slots.release(slot);
            return false;
        }
        if (markThreshold != null && markThreshold.reached(fifo.size() - 1, fifo.bytes() - length)
            && EcnField.markCe(slots.slab(), slots.offset(slot), length)) {
            stats.thresholdMarks++;
        }
        slots.enqueuedNs(slot, nowNs);
        return true;
    }

    @Override
    public int dequeue(long nowNs) {
        final int slot = fifo.peek();
        return slot < 0 ? -1 : fifo.pop(slots.length(slot));
    }

    @Override
    public int packets() {
        return fifo.size();
    }

    @Override
    public long bytes() {
        return fifo.bytes();
    }
}
