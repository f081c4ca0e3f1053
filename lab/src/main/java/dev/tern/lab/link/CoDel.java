package dev.tern.lab.link;

/**
 * Controlled Delay (RFC 8289): one FIFO under one {@link CoDelControl}, which watches each frame's sojourn time at
 * dequeue and drops or marks on the control law's schedule. A tail-drop bound still caps the buffer.
 */
public final class CoDel implements QueueDiscipline {
    private final FrameSlots slots;
    private final QueueLimit limit;
    private final BottleneckStats stats;
    private final SlotQueues queue;
    private final CoDelControl control;

    public CoDel(FrameSlots slots, QueueLimit limit, long targetNs, long intervalNs, boolean ecn, int maxPacket,
                 BottleneckStats stats) {
        this.control = new CoDelControl(slots, targetNs, intervalNs, ecn, maxPacket, stats);
        this.slots = slots;
        this.limit = limit;
        this.stats = stats;
        this.queue = new SlotQueues(slots.capacity(), 1);
    }

    @Override
    public boolean enqueue(int slot, long nowNs) {
        final int length = slots.length(slot);
        if (!limit.admits(queue.size(0), queue.bytes(0), length)) {
            stats.overflowDrops++;
            slots.release(slot);
            return false;
        }
        queue.push(0, slot, length);
        slots.enqueuedNs(slot, nowNs);
        return true;
    }

    @Override
    public int dequeue(long nowNs) {
        return control.dequeue(queue, 0, nowNs);
    }

    /** The frames dropped or marked since the current dropping state began (for tests of the schedule). */
    public int count() {
        return control.count();
    }

    public boolean dropping() {
        return control.dropping();
    }

    @Override
    public int packets() {
        return queue.size(0);
    }

    @Override
    public long bytes() {
        return queue.bytes(0);
    }
}
