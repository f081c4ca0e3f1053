package dev.tern.core.time;

import org.agrona.DeadlineTimerWheel;
import org.agrona.collections.Long2LongHashMap;

import java.util.concurrent.TimeUnit;

/**
 * The timers of one stack shard: Agrona's {@link DeadlineTimerWheel} plus a payload per timer.
 *
 * <p>Schedule, cancel and reschedule are O(1) and allocate nothing in steady state (the wheel and the payload map
 * grow only when a spoke or the map runs out of room). The payload is a non-negative {@code long} the owner packs
 * as it likes (say, layer, object index and timer kind); it is handed back when the timer fires.
 *
 * <p>Two things Agrona's wheel leaves to its user are handled here. It moves one tick per {@code poll}, so
 * {@link #poll} loops until the wheel has caught up with {@code nowNs} (a virtual clock may jump many ticks at
 * once); and with no timers pending, the wheel is re-based to {@code nowNs} instead of walking the idle ticks.
 *
 * <p>The wheel scans the current tick's spoke on every poll, which the poll loop would otherwise pay on every turn
 * (a fifth of the CPU time in a TCP bulk profile over veth). So the wheel also keeps a lower bound on the earliest
 * pending deadline: scheduling lowers it, cancelling leaves it (still a bound, only perhaps too low), and a poll
 * before both that bound and the end of the current tick returns at once, since nothing can be due. When a poll
 * reaches the bound, the bound is made exact again by reading the spokes of the next ticks until one holds a timer
 * (not every timer: see {@link #scanEarliest}): that happens about once per timer
 * that fires or was moved away, not once per poll.
 *
 * <p>A timer id is reused once its timer fired or was cancelled: an owner forgets an id when its timer fires.
 *
 * <p>Owned by the shard thread; not thread-safe.
 */
public final class TimerWheel {
    /** Called for each timer that fires, with the payload given at scheduling. */
    @FunctionalInterface
    public interface Handler {
        void onTimer(long payload, long nowNs);
    }

    /** ~1.05 ms ticks: the granularity of every protocol timer (Linux TCP runs on 1-4 ms jiffies). */
    public static final long TICK_NS = 1L << 20;
    private static final int TICK_SHIFT = 20;
    private static final int TICKS_PER_WHEEL = 1024;
    private static final long NO_PAYLOAD = -1;

    private final DeadlineTimerWheel wheel;
    private final Long2LongHashMap payloads = new Long2LongHashMap(256, 0.6f, NO_PAYLOAD);
    private final DeadlineTimerWheel.TimerHandler expiry = this::onExpiry;
    private Handler handler;
    /** No pending deadline is earlier than this (it may be lower than the true earliest; see the class comment). */
    private long earliestBoundNs = Long.MAX_VALUE;
    /**
     * Whether {@link #earliestBoundNs} is the exact earliest deadline: true after a scan, kept by scheduling (the
     * minimum of the exact earliest and a new deadline is exact), lost by cancelling and by firing. A simulation asks
     * {@link #earliestDeadline} of every stack between events; without this each ask read the spokes again, and
     * when every timer was a wheel's turn away, every timer.
     */
    private boolean boundExact = true;
    /** Above every slot index a timer id ever had: the slots of a spoke that may hold a timer. */
    private int spokeSlots;
    /** Slots looked at by {@link #scanEarliest} so far (for tests: the cost of keeping the bound exact). */
    long slotsScanned;

    public TimerWheel(long startNs) {
        wheel = new DeadlineTimerWheel(TimeUnit.NANOSECONDS, startNs, TICK_NS, TICKS_PER_WHEEL);
    }

    /** Schedules a timer at {@code deadlineNs} carrying {@code payload} (>= 0); returns its id. */
    public long schedule(long deadlineNs, long payload) {
        if (payload < 0) {
            throw new IllegalArgumentException("timer payload must be >= 0: " + payload);
        }
        final long timerId = wheel.scheduleTimer(deadlineNs);
        payloads.put(timerId, payload);
        lowerBound(deadlineNs);
        noteSlot(timerId);
        return timerId;
    }

    /** Cancels a pending timer; returns false when it already fired or was cancelled. */
    public boolean cancel(long timerId) {
        if (payloads.remove(timerId) == NO_PAYLOAD) {
            return false;
        }
        keepExactUnlessEarliest(wheel.deadline(timerId));
        return wheel.cancelTimer(timerId);
    }

    /** Moves a pending timer to a new deadline, keeping its payload; returns the new id, or -1 if it was not pending. */
    public long reschedule(long timerId, long deadlineNs) {
        final long payload = payloads.remove(timerId);
        if (payload == NO_PAYLOAD) {
            return -1;
        }
        keepExactUnlessEarliest(wheel.deadline(timerId));
        wheel.cancelTimer(timerId);
        final long newId = wheel.scheduleTimer(deadlineNs);
        payloads.put(newId, payload);
        lowerBound(deadlineNs);
        noteSlot(newId);
        return newId;
    }

    /** Deadline of a pending timer, or {@link Long#MAX_VALUE} if it is not pending. */
    public long deadline(long timerId) {
        return payloads.containsKey(timerId) ? wheel.deadline(timerId) : Long.MAX_VALUE;
    }

    public int size() {
        return payloads.size();
    }

    /**
     * Fires every timer due at {@code nowNs} (at most {@code limit}), in tick order; returns how many fired.
     * Timers due within the same tick fire in no particular order.
     */
    public int poll(long nowNs, Handler handler, int limit) {
        if (wheel.timerCount() == 0) {
            rebaseWhenIdle(nowNs);
            return 0;
        }
        if (nowNs < earliestBoundNs && nowNs < wheel.currentTickTime()) {
            return 0; // nothing is due yet, and the wheel need not move to a new tick
        }
        final boolean boundReached = nowNs >= earliestBoundNs;
        this.handler = handler;
        int fired = 0;
        long tickEnd;
        // Agrona's poll scans the current tick's spoke, then moves to the next tick if that one has begun. Keep
        // going while it moves: the tick it moved to has begun (its start <= nowNs) and has not been scanned yet.
        do {
            tickEnd = wheel.currentTickTime();
            fired += wheel.poll(nowNs, expiry, limit - fired);
        } while (fired < limit && wheel.timerCount() > 0 && wheel.currentTickTime() != tickEnd);
        this.handler = null;
        if (wheel.timerCount() == 0) {
            rebaseWhenIdle(nowNs);
            earliestBoundNs = Long.MAX_VALUE;
            boundExact = true;
        } else if (fired == limit) {
            earliestBoundNs = nowNs; // more may be due: the next poll must look
            boundExact = false;
        } else if (boundReached) {
            earliestBoundNs = scanEarliest();
            boundExact = true;
        } else if (fired > 0) {
            boundExact = false;
        }
        return fired;
    }

    /** Removing a timer later than the exact earliest leaves it exact; removing the earliest may not. */
    private void keepExactUnlessEarliest(long removedDeadlineNs) {
        if (removedDeadlineNs <= earliestBoundNs) {
            boundExact = false;
        }
    }

    private void lowerBound(long deadlineNs) {
        if (deadlineNs < earliestBoundNs) {
            earliestBoundNs = deadlineNs;
        }
    }

    /**
     * The earliest pending deadline, or {@link Long#MAX_VALUE} with no timer pending. Reads the spokes of the next
     * ticks until one holds a timer ({@link #scanEarliest}): for simulations deciding how far to jump virtual time,
     * not for the per-packet path.
     */
    public long earliestDeadline() {
        if (!boundExact) {
            earliestBoundNs = scanEarliest();
            boundExact = true;
        }
        return earliestBoundNs;
    }

    private void noteSlot(long timerId) {
        final int slot = (int) timerId; // Agrona's timer id: spoke << 32 | slot in the spoke
        if (slot >= spokeSlots) {
            spokeSlots = slot + 1;
        }
    }

    /**
     * The earliest pending deadline, looked for tick by tick from the current one: the first tick whose spoke holds
     * a timer of this round (deadline before the tick's end) holds the earliest. Typically a few spokes are read
     * (each {@code spokeSlots} slots, what Agrona's own poll reads per tick), not the whole wheel: with 100,000
     * connections' timers pending, reading all of them every time one fired made timers O(n) each. Only when no tick
     * of this round holds a timer (all are a wheel's turn or more away) is every timer read.
     */
    private long scanEarliest() {
        if (wheel.timerCount() == 0) {
            return Long.MAX_VALUE;
        }
        final long tickStart = wheel.currentTickTime() - TICK_NS;
        final int currentSpoke = (int) ((tickStart - wheel.startTime()) >> TICK_SHIFT) & (TICKS_PER_WHEEL - 1);
        for (int k = 0; k < TICKS_PER_WHEEL; k++) {
            final long tickEnd = tickStart + (k + 1) * TICK_NS;
            final long spoke = (currentSpoke + k) & (TICKS_PER_WHEEL - 1);
            long found = Long.MAX_VALUE;
            for (int i = 0; i < spokeSlots; i++) {
                final long deadline = wheel.deadline(spoke << 32 | i); // NULL_DEADLINE (Long.MAX_VALUE) when empty
                if (deadline < tickEnd && deadline < found) {
                    found = deadline;
                }
            }
            slotsScanned += spokeSlots;
            if (found != Long.MAX_VALUE) {
                return found;
            }
        }
        earliest = Long.MAX_VALUE;
        wheel.forEach(earliestFinder);
        slotsScanned += (long) TICKS_PER_WHEEL * spokeSlots;
        return earliest;
    }

    private long earliest;
    private final DeadlineTimerWheel.TimerConsumer earliestFinder = (deadline, timerId) -> {
        if (deadline < earliest) {
            earliest = deadline;
        }
    };

    private void rebaseWhenIdle(long nowNs) {
        if (nowNs - wheel.currentTickTime() >= 0) {
            wheel.resetStartTime(nowNs);
        }
    }

    private boolean onExpiry(TimeUnit unit, long nowNs, long timerId) {
        final long payload = payloads.remove(timerId);
        handler.onTimer(payload, nowNs);
        return true;
    }
}
