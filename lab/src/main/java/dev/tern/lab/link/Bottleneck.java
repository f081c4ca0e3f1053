package dev.tern.lab.link;

/**
 * One direction of a bottleneck link: frames arrive, may be lost at random, wait in a queue under a discipline, and
 * leave one at a time at the link's rate, except while an outage silences it. The owner (a router in the lab) hands
 * frames in with {@link #arrive} and takes them out with {@link #depart} at or after {@link #nextDepartureNs(long)}; the
 * propagation delay after the link is the owner's business. Every frame that leaves is folded into a fingerprint.
 * Per frame nothing is allocated. Owned by one thread.
 */
public final class Bottleneck {
    private final FrameSlots slots;
    private final LinkRate rate;
    private final QueueDiscipline discipline;
    private final LossModel loss;
    private final Outages outages;
    private final BottleneckStats stats;
    private final DelayHistogram queueDelay = new DelayHistogram();
    private final Fingerprint fingerprint = new Fingerprint();

    private int inService = -1;
    private long finishNs;
    private long freeAtNs = Long.MIN_VALUE / 4;
    private long lastSojournNs;
    private long sojournTotalNs;
    private long sojournFrames;

    public Bottleneck(FrameSlots slots, LinkRate rate, QueueDiscipline discipline, LossModel loss, Outages outages,
                      BottleneckStats stats) {
        this.slots = slots;
        this.rate = rate;
        this.discipline = discipline;
        this.loss = loss;
        this.outages = outages;
        this.stats = stats;
    }

    /** A frame reaches the queue at {@code nowNs}; the bottleneck owns its slot from here. */
    public void arrive(int slot, long nowNs) {
        stats.arrived++;
        if (loss.lose()) {
            stats.randomLoss++;
            slots.release(slot);
            return;
        }
        discipline.enqueue(slot, nowNs);
    }

    /** When the next frame leaves (or the link may start one), or {@link Long#MAX_VALUE} when idle. */
    public long nextDepartureNs(long nowNs) {
        if (inService >= 0) {
            return finishNs;
        }
        if (discipline.packets() == 0) {
            return Long.MAX_VALUE;
        }
        return outages.sendableAt(Math.max(freeAtNs, nowNs));
    }

    /** A frame that has left the link by {@code nowNs} (its slot passes to the caller), or -1. */
    public int depart(long nowNs) {
        while (true) {
            if (inService >= 0) {
                if (finishNs - nowNs > 0) {
                    return -1;
                }
                final int slot = inService;
                inService = -1;
                freeAtNs = finishNs;
                final int length = slots.length(slot);
                stats.departed++;
                stats.departedBytes += length;
                fingerprint.frame(finishNs, slots.slab(), slots.offset(slot), length);
                return slot;
            }
            if (discipline.packets() == 0) {
                return -1;
            }
            final long startNs = outages.sendableAt(Math.max(freeAtNs, nowNs));
            if (startNs - nowNs > 0) {
                return -1;
            }
            final int slot = discipline.dequeue(nowNs);
            if (slot < 0) {
                return -1;
            }
            lastSojournNs = nowNs - slots.enqueuedNs(slot);
            queueDelay.recordNs(lastSojournNs);
            sojournTotalNs += lastSojournNs;
            sojournFrames++;
            inService = slot;
            finishNs = rate.finishNs(nowNs, slots.length(slot));
        }
    }

    /** The instant the frame {@link #depart} last returned finished on the link. */
    public long lastDepartureNs() {
        return freeAtNs;
    }

    /** The sojourn time of the frame that last went onto the link. */
    public long lastSojournNs() {
        return lastSojournNs;
    }

    /** The sum of the sojourn times of every frame that went onto the link, for means over an interval. */
    public long sojournTotalNs() {
        return sojournTotalNs;
    }

    /** How many frames went onto the link. */
    public long sojournFrames() {
        return sojournFrames;
    }

    public int queuedPackets() {
        return discipline.packets();
    }

    public long queuedBytes() {
        return discipline.bytes();
    }

    public BottleneckStats stats() {
        return stats;
    }

    public DelayHistogram queueDelay() {
        return queueDelay;
    }

    public Fingerprint fingerprint() {
        return fingerprint;
    }

    public LinkRate rate() {
        return rate;
    }

    public Outages outages() {
        return outages;
    }

    public QueueDiscipline discipline() {
        return discipline;
    }
}
