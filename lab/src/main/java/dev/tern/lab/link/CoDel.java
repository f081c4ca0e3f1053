package dev.tern.lab.link;

/**
 * Controlled Delay (RFC 8289): a FIFO that watches each frame's sojourn time at dequeue. Once the sojourn time has
 * stayed above {@code target} for a whole {@code interval}, it drops (or, for ECN-capable packets with ECN on, marks)
 * one frame and enters the dropping state, where the next drop comes {@code interval / sqrt(count)} later (§3.3's
 * control law), until the sojourn time falls below target. A tail-drop bound still caps the buffer.
 */
public final class CoDel implements QueueDiscipline {
    private final FrameSlots slots;
    private final QueueLimit limit;
    private final BottleneckStats stats;
    private final SlotFifo fifo;
    private final long targetNs;
    private final long intervalNs;
    private final boolean ecn;
    /** §4.2's MAXPACKET: a queue holding no more than one frame is never too long. */
    private final int maxPacket;

    private boolean dropping;
    /** When the sojourn time first went above target, plus one interval (§4.3's first_above_time). */
    private boolean above;
    private long firstAboveNs;
    private long dropNextNs;
    private int count;
    private int lastCount;
    /** Set by {@link #take}: whether the frame just taken may be dropped (§4.3's ok_to_drop). */
    private boolean okToDrop;

    public CoDel(FrameSlots slots, QueueLimit limit, long targetNs, long intervalNs, boolean ecn, int maxPacket,
                 BottleneckStats stats) {
        if (targetNs <= 0 || intervalNs <= 0) {
            throw new IllegalArgumentException("CoDel target and interval must be positive");
        }
        this.slots = slots;
        this.limit = limit;
        this.stats = stats;
        this.fifo = new SlotFifo(Math.min(slots.capacity(), limit.maxFrames(60)));
        this.targetNs = targetNs;
        this.intervalNs = intervalNs;
        this.ecn = ecn;
        this.maxPacket = maxPacket;
    }

    @Override
    public boolean enqueue(int slot, long nowNs) {
        final int length = slots.length(slot);
        if (!limit.admits(fifo.size(), fifo.bytes(), length) || !fifo.push(slot, length)) {
            stats.overflowDrops++;
            slots.release(slot);
            return false;
        }
        slots.enqueuedNs(slot, nowNs);
        return true;
    }

    @Override
    public int dequeue(long nowNs) {
        int slot = take(nowNs);
        if (slot < 0) {
            dropping = false;
            return -1;
        }
        if (dropping) {
            if (!okToDrop) {
                dropping = false;
            }
            while (dropping && nowNs - dropNextNs >= 0) {
                count++;
                if (signal(slot)) {
                    dropNextNs = controlLaw(dropNextNs, count);
                    return slot;
                }
                slot = take(nowNs);
                if (slot < 0 || !okToDrop) {
                    dropping = false;
                } else {
                    dropNextNs = controlLaw(dropNextNs, count);
                }
            }
            return slot;
        }
        if (okToDrop) {
            // §4.4: re-entering the dropping state soon after leaving it resumes near the old drop rate.
            final int delta = count - lastCount;
            count = delta > 1 && nowNs - dropNextNs < 16 * intervalNs ? delta : 1;
            dropping = true;
            dropNextNs = controlLaw(nowNs, count);
            lastCount = count;
            if (!signal(slot)) {
                slot = take(nowNs);
            }
        }
        return slot;
    }

    /**
     * Marks an ECN-capable frame CE and keeps it (returns true), or drops it (returns false): RFC 8289 §5's ECN
     * variant signals with the mark what it would otherwise signal with the drop.
     */
    private boolean signal(int slot) {
        final int length = slots.length(slot);
        if (ecn && EcnField.markCe(slots.slab(), slots.offset(slot), length)) {
            stats.aqmMarks++;
            return true;
        }
        stats.aqmDrops++;
        slots.release(slot);
        return false;
    }

    /** Pops the head and decides whether it has waited too long for too long (§4.3's dodequeue). */
    private int take(long nowNs) {
        okToDrop = false;
        final int slot = fifo.peek();
        if (slot < 0) {
            above = false;
            return -1;
        }
        fifo.pop(slots.length(slot));
        final long sojournNs = nowNs - slots.enqueuedNs(slot);
        if (sojournNs < targetNs || fifo.bytes() <= maxPacket) {
            above = false;
        } else if (!above) {
            above = true;
            firstAboveNs = nowNs + intervalNs;
        } else if (nowNs - firstAboveNs >= 0) {
            okToDrop = true;
        }
        return slot;
    }

    private long controlLaw(long fromNs, int n) {
        return fromNs + (long) (intervalNs / Math.sqrt(n));
    }

    /** The frames dropped or marked since the current dropping state began (for tests of the schedule). */
    public int count() {
        return count;
    }

    public boolean dropping() {
        return dropping;
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
