package dev.tern.lab.link;

import java.util.SplittableRandom;

/**
 * The DualQ Coupled AQM with PI2 (RFC 9332): ECT(1) and CE frames (with {@code anyEct}, every ECN-capable frame, as
 * Linux's {@code any_ect} for DCTCP) wait in the L4S queue, the rest in the classic queue, under one shared limit.
 * Every {@code tUpdate} a PI controller moves the base probability p' by {@code alpha} times the classic queue's
 * delay (its head's sojourn) above {@code target} plus {@code beta} times its change (§2.4, Appendix A.1). The
 * classic queue drops, or marks ECT packets, with p' squared; the L4S queue marks with the larger of the coupled
 * probability {@code k * p'} and its own native ramp on its sojourn time, from {@code minTh} over {@code range}
 * (a step when the range is 0), never while it holds no more than {@code thLen} frames. A time-shifted FIFO
 * schedules the two: the L4S head goes first unless the classic head has waited {@code tShift} longer (§4.2.2).
 * Overload (Appendix A.2): once the coupled probability saturates, L4S frames are also dropped with p' squared, and
 * once the classic probability reaches its maximum (1 / k squared) classic frames are dropped, not marked.
 * Updates fall due on virtual time and are caught up at the next arrival or departure.
 */
public final class DualPi2 implements QueueDiscipline {
    static final int CLASSIC = 0;
    static final int L4S = 1;

    private final FrameSlots slots;
    private final QueueLimit limit;
    private final BottleneckStats stats;
    private final SlotQueues queues;
    private final SplittableRandom random;
    private final long targetNs;
    private final UpdateTimer timer;
    private final double alpha;
    private final double beta;
    private final double k;
    private final long minThNs;
    private final long rangeNs;
    private final int thLen;
    private final long tShiftNs;
    private final boolean anyEct;
    private final double pClassicMax;

    private double pBase;
    private double pCoupled;
    private double pClassic;
    private long prevQueueNs;
    private final long[] dequeued = new long[2];

    public DualPi2(FrameSlots slots, QueueLimit limit, long targetNs, long tUpdateNs, double alpha, double beta,
                   double k, long minThNs, long rangeNs, int thLen, long tShiftNs, boolean anyEct, long seed,
                   BottleneckStats stats) {
        if (targetNs <= 0 || tUpdateNs <= 0 || !(alpha >= 0) || !(beta >= 0) || !(k > 0) || minThNs < 0
            || rangeNs < 0 || thLen < 0 || tShiftNs < 0) {
            throw new IllegalArgumentException("DualPI2 needs a positive target, update interval and coupling, and"
                + " no negative gain, threshold, range or time shift");
        }
        this.slots = slots;
        this.limit = limit;
        this.stats = stats;
        this.queues = new SlotQueues(slots.capacity(), 2);
        this.random = new SplittableRandom(seed);
        this.targetNs = targetNs;
        this.timer = new UpdateTimer(tUpdateNs);
        this.alpha = alpha;
        this.beta = beta;
        this.k = k;
        this.minThNs = minThNs;
        this.rangeNs = rangeNs;
        this.thLen = thLen;
        this.tShiftNs = tShiftNs;
        this.anyEct = anyEct;
        this.pClassicMax = Math.min(1 / (k * k), 1);
    }

    @Override
    public boolean enqueue(int slot, long nowNs) {
        catchUp(nowNs);
        final int length = slots.length(slot);
        if (!limit.admits(queues.totalSize(), queues.totalBytes(), length)) {
            stats.overflowDrops++;
            slots.release(slot);
            return false;
        }
        queues.push(classify(slot), slot, length);
        slots.enqueuedNs(slot, nowNs);
        return true;
    }

    /** §2.3: the ECN field's low bit (ECT(1) or CE) picks the L4S queue. */
    int classify(int slot) {
        final int ecn = EcnField.codepoint(slots.slab(), slots.offset(slot), slots.length(slot));
        return (ecn & 1) == 1 || anyEct && ecn != EcnField.NOT_ECT ? L4S : CLASSIC;
    }

    @Override
    public int dequeue(long nowNs) {
        catchUp(nowNs);
        while (queues.totalSize() > 0) {
            final int queue = schedule();
            final int sizeBefore = queues.size(queue);
            final int slot = queues.pop(queue, slots.length(queues.peek(queue)));
            final long sojournNs = nowNs - slots.enqueuedNs(slot);
            if (queue == L4S ? !l4sSignal(slot, sojournNs, sizeBefore) : !classicSignal(slot)) {
                continue;
            }
            dequeued[queue]++;
            return slot;
        }
        return -1;
    }

    /** The time-shifted FIFO: the queue whose head arrived first, the classic head's time moved back by tShift. */
    private int schedule() {
        final int l4s = queues.peek(L4S);
        final int classic = queues.peek(CLASSIC);
        if (l4s < 0) {
            return CLASSIC;
        }
        if (classic < 0) {
            return L4S;
        }
        return slots.enqueuedNs(l4s) - slots.enqueuedNs(classic) <= tShiftNs ? L4S : CLASSIC;
    }

    /** Marks an L4S frame (Appendix A.2); false when it was dropped under overload instead. */
    private boolean l4sSignal(int slot, long sojournNs, int queued) {
        if (pCoupled < 1) {
            final double nativeProbability = queued > thLen ? ramp(sojournNs) : 0;
            if (random.nextDouble() < Math.max(nativeProbability, pCoupled)) {
                mark(slot);
            }
            return true;
        }
        if (random.nextDouble() < pClassic) {
            drop(slot);
            return false;
        }
        if (random.nextDouble() < pCoupled) {
            mark(slot);
        }
        return true;
    }

    /** Drops or marks a classic frame with p' squared; false when it was dropped. */
    private boolean classicSignal(int slot) {
        if (!(random.nextDouble() < pClassic)) {
            return true;
        }
        final int ecn = EcnField.codepoint(slots.slab(), slots.offset(slot), slots.length(slot));
        if (ecn == EcnField.NOT_ECT || pClassic >= pClassicMax) {
            drop(slot);
            return false;
        }
        mark(slot);
        return true;
    }

    /** The native L4S AQM (Appendix A.1's laqm): 0 below minTh, rising to 1 over the range, a step if it is 0. */
    double ramp(long sojournNs) {
        if (sojournNs >= minThNs + rangeNs) {
            return 1;
        }
        if (sojournNs > minThNs) {
            return (double) (sojournNs - minThNs) / rangeNs;
        }
        return 0;
    }

    private void mark(int slot) {
        if (EcnField.markCe(slots.slab(), slots.offset(slot), slots.length(slot))) {
            stats.aqmMarks++;
        }
    }

    private void drop(int slot) {
        stats.aqmDrops++;
        slots.release(slot);
    }

    private void catchUp(long nowNs) {
        while (timer.due(nowNs)) {
            update(timer.dueNs());
        }
    }

    /** Appendix A.1's dualpi2_update at {@code atNs}: nothing has arrived or left since, so the heads are as then. */
    private void update(long atNs) {
        final int head = queues.peek(CLASSIC);
        final long queueNs = head < 0 ? 0 : atNs - slots.enqueuedNs(head);
        pBase += alpha * (queueNs - targetNs) / 1e9 + beta * (queueNs - prevQueueNs) / 1e9;
        pBase = Math.clamp(pBase, 0.0, 1.0);
        pCoupled = Math.min(k * pBase, 1);
        pClassic = pBase * pBase;
        prevQueueNs = queueNs;
    }

    /** The base probability p' (for tests and the report). */
    public double baseProbability() {
        return pBase;
    }

    public double coupledProbability() {
        return pCoupled;
    }

    public double classicProbability() {
        return pClassic;
    }

    /** Frames sent from the classic ({@link #CLASSIC}) or the L4S ({@link #L4S}) queue. */
    public long dequeued(int queue) {
        return dequeued[queue];
    }

    @Override
    public int packets() {
        return queues.totalSize();
    }

    @Override
    public long bytes() {
        return queues.totalBytes();
    }
}
