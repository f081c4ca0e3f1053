package dev.tern.lab.link;

/**
 * The state and control law of one CoDel instance (RFC 8289) over one queue of a {@link SlotQueues}: the plain CoDel
 * discipline runs one, FQ-CoDel one per flow queue (RFC 8290 §4.2). Once the sojourn time has stayed above
 * {@code target} for a whole {@code interval}, it drops (or, for ECN-capable packets with ECN on, marks) one frame and
 * enters the dropping state, where the next drop comes {@code interval / sqrt(count)} later (§3.3's control law),
 * until the sojourn time falls below target.
 */
final class CoDelControl {
    private final FrameSlots slots;
    private final BottleneckStats stats;
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

    CoDelControl(FrameSlots slots, long targetNs, long intervalNs, boolean ecn, int maxPacket, BottleneckStats stats) {
        if (targetNs <= 0 || intervalNs <= 0) {
            throw new IllegalArgumentException("CoDel target and interval must be positive");
        }
        this.slots = slots;
        this.stats = stats;
        this.targetNs = targetNs;
        this.intervalNs = intervalNs;
        this.ecn = ecn;
        this.maxPacket = maxPacket;
    }

    /** The frame queue {@code q} sends at {@code nowNs} after CoDel's drops and marks, or -1 when it is empty. */
    int dequeue(SlotQueues queues, int q, long nowNs) {
        int slot = take(queues, q, nowNs);
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
                slot = take(queues, q, nowNs);
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
                slot = take(queues, q, nowNs);
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
    private int take(SlotQueues queues, int q, long nowNs) {
        okToDrop = false;
        final int slot = queues.peek(q);
        if (slot < 0) {
            above = false;
            return -1;
        }
        queues.pop(q, slots.length(slot));
        final long sojournNs = nowNs - slots.enqueuedNs(slot);
        if (sojournNs < targetNs || queues.bytes(q) <= maxPacket) {
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

    int count() {
        return count;
    }

    boolean dropping() {
        return dropping;
    }
}
