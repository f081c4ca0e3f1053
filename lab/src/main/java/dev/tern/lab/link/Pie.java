package dev.tern.lab.link;

import java.util.SplittableRandom;

/**
 * Proportional Integral controller Enhanced (RFC 8033): a FIFO that drops (or marks CE) arriving frames at random
 * with a probability it updates every {@code tUpdate} from the queue delay, {@code alpha} times its distance from
 * {@code target} plus {@code beta} times its change since the last update, both scaled down while the probability
 * is small (§4.2's auto-tuning). The queue delay is the sojourn time of the frame last dequeued, by timestamps
 * (§4.3 allows them in place of §5.2's departure-rate estimate), and zero when the queue is empty. A burst allowance
 * lets a fresh burst through untouched (§4.4). An ECN-capable frame is marked instead of dropped while the
 * probability is at most {@code markThreshold} (§5.1). Updates fall due on virtual time and are caught up at the
 * next arrival or departure, since no timer runs between them.
 */
public final class Pie implements QueueDiscipline {
    /** §4.1: below two full frames the queue is too short to drop from. */
    private static final int MEAN_PACKET = 1514;

    private final FrameSlots slots;
    private final QueueLimit limit;
    private final BottleneckStats stats;
    private final SlotFifo fifo;
    private final SplittableRandom random;
    private final long targetNs;
    private final long tUpdateNs;
    private final UpdateTimer timer;
    private final double alpha;
    private final double beta;
    private final long maxBurstNs;
    private final boolean ecn;
    private final double markThreshold;

    private double dropProb;
    private long qdelayNs;
    private long qdelayOldNs;
    private long burstAllowanceNs;

    public Pie(FrameSlots slots, QueueLimit limit, long targetNs, long tUpdateNs, double alpha, double beta,
               long maxBurstNs, boolean ecn, double markThreshold, long seed, BottleneckStats stats) {
        if (targetNs <= 0 || tUpdateNs <= 0 || maxBurstNs < 0 || !(alpha >= 0) || !(beta >= 0)
            || !(markThreshold >= 0 && markThreshold <= 1)) {
            throw new IllegalArgumentException("PIE needs a positive target and update interval, alpha and beta not"
                + " negative, a burst not negative and a mark threshold between 0 and 1");
        }
        this.slots = slots;
        this.limit = limit;
        this.stats = stats;
        this.fifo = new SlotFifo(Math.min(slots.capacity(), limit.maxFrames(60)));
        this.random = new SplittableRandom(seed);
        this.targetNs = targetNs;
        this.tUpdateNs = tUpdateNs;
        this.timer = new UpdateTimer(tUpdateNs);
        this.alpha = alpha;
        this.beta = beta;
        this.maxBurstNs = maxBurstNs;
        this.ecn = ecn;
        this.markThreshold = markThreshold;
        this.burstAllowanceNs = maxBurstNs;
    }

    @Override
    public boolean enqueue(int slot, long nowNs) {
        catchUp(nowNs);
        final int length = slots.length(slot);
        if (!limit.admits(fifo.size(), fifo.bytes(), length)) {
            stats.overflowDrops++;
            slots.release(slot);
            return false;
        }
        final boolean signal = dropEarly();
        if (signal && !(ecn && dropProb <= markThreshold
            && EcnField.markCe(slots.slab(), slots.offset(slot), length))) {
            stats.aqmDrops++;
            slots.release(slot);
            return false;
        }
        if (!fifo.push(slot, length)) {
            stats.overflowDrops++;
            slots.release(slot);
            return false;
        }
        if (signal) {
            stats.aqmMarks++;
        }
        slots.enqueuedNs(slot, nowNs);
        return true;
    }

    /** §4.1: whether this arrival is dropped (or marked), at random with the current probability. */
    private boolean dropEarly() {
        if (burstAllowanceNs > 0) {
            return false;
        }
        if (qdelayOldNs < targetNs / 2 && dropProb < 0.2) {
            return false;
        }
        if (fifo.bytes() < 2L * MEAN_PACKET) {
            return false;
        }
        return random.nextDouble() < dropProb;
    }

    @Override
    public int dequeue(long nowNs) {
        catchUp(nowNs);
        final int slot = fifo.peek();
        if (slot < 0) {
            return -1;
        }
        fifo.pop(slots.length(slot));
        qdelayNs = fifo.size() == 0 ? 0 : nowNs - slots.enqueuedNs(slot);
        return slot;
    }

    private void catchUp(long nowNs) {
        while (timer.due(nowNs)) {
            update();
        }
    }

    /** §4.2 and §4.4: one update of the drop probability from the queue delay, and of the burst allowance. */
    private void update() {
        final double qdelay = qdelayNs / 1e9;
        final double qdelayOld = qdelayOldNs / 1e9;
        double p = alpha * (qdelay - targetNs / 1e9) + beta * (qdelay - qdelayOld);
        p *= scale(dropProb);
        // §5.5: above 10 % the probability climbs at most 2 % an update, so one burst cannot push it to drop all.
        if (dropProb >= 0.1 && p > 0.02) {
            p = 0.02;
        }
        dropProb += p;
        if (qdelayNs == 0 && qdelayOldNs == 0) {
            // §4.2: with no queue for two updates the probability decays.
            dropProb *= 0.98;
        }
        dropProb = Math.clamp(dropProb, 0.0, 1.0);
        burstAllowanceNs = Math.max(0, burstAllowanceNs - tUpdateNs);
        if (dropProb == 0 && qdelayNs < targetNs / 2 && qdelayOldNs < targetNs / 2) {
            burstAllowanceNs = maxBurstNs;
        }
        qdelayOldNs = qdelayNs;
    }

    /** §4.2's auto-tuning: the smaller the probability, the smaller each step, so that it settles where it is small. */
    private static double scale(double probability) {
        if (probability < 0.000001) {
            return 1.0 / 2048;
        }
        if (probability < 0.00001) {
            return 1.0 / 512;
        }
        if (probability < 0.0001) {
            return 1.0 / 128;
        }
        if (probability < 0.001) {
            return 1.0 / 32;
        }
        if (probability < 0.01) {
            return 1.0 / 8;
        }
        if (probability < 0.1) {
            return 1.0 / 2;
        }
        return 1;
    }

    /** The drop probability now (for tests and the report). */
    public double dropProbability() {
        return dropProb;
    }

    public long burstAllowanceNs() {
        return burstAllowanceNs;
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
