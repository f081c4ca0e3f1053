package dev.tern.lab.link;

/**
 * Flow queue CoDel (RFC 8290): frames are hashed by their 5-tuple ({@link FlowHash}) into one of {@code flows}
 * queues, each under its own CoDel ({@link CoDelControl}, marking CE instead of dropping when {@code ecn} is set).
 * A deficit round robin with a byte {@code quantum} serves the queues, first those on the new-flows list (queues that
 * just became active, so a sparse flow's packets go out at once), then those on the old-flows list (§4.2). When the
 * shared limit is reached, the frame at the head of the queue holding the most bytes is dropped (§4.1).
 */
public final class FqCoDel implements QueueDiscipline {
    private static final byte INACTIVE = 0;
    private static final byte NEW = 1;
    private static final byte OLD = 2;

    private final FrameSlots slots;
    private final QueueLimit limit;
    private final BottleneckStats stats;
    private final FlowHash hash;
    private final int quantum;
    private final SlotQueues queues;
    private final CoDelControl[] codel;
    private final int[] deficit;
    private final byte[] list;
    /** The new-flows and old-flows lists, singly linked through {@code nextFlow}. */
    private final int[] nextFlow;
    private int newHead = -1;
    private int newTail = -1;
    private int oldHead = -1;
    private int oldTail = -1;

    public FqCoDel(FrameSlots slots, QueueLimit limit, int flows, int quantum, long targetNs, long intervalNs,
                   boolean ecn, int maxPacket, long seed, BottleneckStats stats) {
        if (flows < 1 || flows > 65536) {
            throw new IllegalArgumentException("FQ-CoDel flows must be between 1 and 65536, got " + flows);
        }
        if (quantum < 1) {
            throw new IllegalArgumentException("FQ-CoDel quantum must be positive, got " + quantum);
        }
        this.slots = slots;
        this.limit = limit;
        this.stats = stats;
        this.hash = new FlowHash(seed);
        this.quantum = quantum;
        this.queues = new SlotQueues(slots.capacity(), flows);
        this.codel = new CoDelControl[flows];
        for (int i = 0; i < flows; i++) {
            codel[i] = new CoDelControl(slots, targetNs, intervalNs, ecn, maxPacket, stats);
        }
        this.deficit = new int[flows];
        this.list = new byte[flows];
        this.nextFlow = new int[flows];
    }

    @Override
    public boolean enqueue(int slot, long nowNs) {
        final int length = slots.length(slot);
        final int flow = flowOf(slot);
        queues.push(flow, slot, length);
        slots.enqueuedNs(slot, nowNs);
        if (list[flow] == INACTIVE) {
            // §4.1: a queue that becomes active joins the new flows with a full quantum.
            list[flow] = NEW;
            deficit[flow] = quantum;
            append(flow, true);
        }
        boolean kept = true;
        while (limit.exceeded(queues.totalSize(), queues.totalBytes())) {
            final int fattest = fattest();
            final int victim = queues.pop(fattest, slots.length(queues.peek(fattest)));
            kept &= victim != slot;
            stats.overflowDrops++;
            slots.release(victim);
        }
        return kept;
    }

    @Override
    public int dequeue(long nowNs) {
        while (true) {
            final boolean fromNew = newHead >= 0;
            final int flow = fromNew ? newHead : oldHead;
            if (flow < 0) {
                return -1;
            }
            if (deficit[flow] <= 0) {
                // §4.2: a queue that spent its quantum gets another and waits at the end of the old flows.
                deficit[flow] += quantum;
                removeHead(fromNew);
                list[flow] = OLD;
                append(flow, false);
                continue;
            }
            final int slot = codel[flow].dequeue(queues, flow, nowNs);
            if (slot < 0) {
                removeHead(fromNew);
                if (fromNew) {
                    // §4.2: an emptied new queue goes to the old flows, so it cannot jump the line again at once.
                    list[flow] = OLD;
                    append(flow, false);
                } else {
                    list[flow] = INACTIVE;
                }
                continue;
            }
            deficit[flow] -= slots.length(slot);
            return slot;
        }
    }

    /** The flow queue a frame belongs in (for tests). */
    public int flowOf(int slot) {
        return Integer.remainderUnsigned(hash.hash(slots.slab(), slots.offset(slot), slots.length(slot)),
            codel.length);
    }

    /** The queue holding the most bytes (§4.1's drop from the fattest flow); the lowest index on a tie. */
    private int fattest() {
        int best = 0;
        long bestBytes = -1;
        for (int i = 0; i < codel.length; i++) {
            if (queues.bytes(i) > bestBytes) {
                bestBytes = queues.bytes(i);
                best = i;
            }
        }
        return best;
    }

    private void append(int flow, boolean toNew) {
        nextFlow[flow] = -1;
        if (toNew) {
            if (newTail < 0) {
                newHead = flow;
            } else {
                nextFlow[newTail] = flow;
            }
            newTail = flow;
        } else {
            if (oldTail < 0) {
                oldHead = flow;
            } else {
                nextFlow[oldTail] = flow;
            }
            oldTail = flow;
        }
    }

    private void removeHead(boolean fromNew) {
        if (fromNew) {
            newHead = nextFlow[newHead];
            if (newHead < 0) {
                newTail = -1;
            }
        } else {
            oldHead = nextFlow[oldHead];
            if (oldHead < 0) {
                oldTail = -1;
            }
        }
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
