package dev.tern.core.time;

/**
 * The timers of one stack shard, shared by its layers: one {@link TimerWheel}, with each timer tagged by the layer
 * that owns it so that expiry reaches that layer's handler.
 *
 * <p>A layer registers once ({@link #register}) and schedules timers carrying a 48-bit value of its own (a table
 * index plus a timer kind, say). The payload stored in the wheel is {@code owner << 48 | value}.
 *
 * <p>Owned by the shard thread; not thread-safe.
 */
public final class Timers {
    private static final int VALUE_BITS = 48;
    private static final long VALUE_MASK = (1L << VALUE_BITS) - 1;
    private static final int MAX_OWNERS = 127;

    private final TimerWheel wheel;
    private final TimerWheel.Handler[] owners = new TimerWheel.Handler[MAX_OWNERS + 1];
    private int ownerCount;
    private final TimerWheel.Handler dispatch = this::dispatch;

    public Timers(long startNs) {
        this.wheel = new TimerWheel(startNs);
    }

    /** Registers a layer's expiry handler; returns the owner id its timers carry. Cold path. */
    public int register(TimerWheel.Handler handler) {
        if (ownerCount == MAX_OWNERS) {
            throw new IllegalStateException("too many timer owners");
        }
        owners[ownerCount] = handler;
        return ownerCount++;
    }

    /** Schedules a timer for {@code owner} at {@code deadlineNs}; {@code value} (0..2^48-1) comes back on expiry. */
    public long schedule(int owner, long deadlineNs, long value) {
        if ((value & ~VALUE_MASK) != 0) {
            throw new IllegalArgumentException("timer value out of range: " + value);
        }
        return wheel.schedule(deadlineNs, ((long) owner << VALUE_BITS) | value);
    }

    public boolean cancel(long timerId) {
        return wheel.cancel(timerId);
    }

    /** Moves a pending timer; returns its new id, or -1 if it was not pending. */
    public long reschedule(long timerId, long deadlineNs) {
        return wheel.reschedule(timerId, deadlineNs);
    }

    public long deadline(long timerId) {
        return wheel.deadline(timerId);
    }

    public int size() {
        return wheel.size();
    }

    /** Fires due timers (at most {@code limit}); returns how many. */
    public int poll(long nowNs, int limit) {
        return wheel.poll(nowNs, dispatch, limit);
    }

    /** Earliest pending deadline, or {@link Long#MAX_VALUE}; scans, so for simulations only. */
    public long earliestDeadline() {
        return wheel.earliestDeadline();
    }

    private void dispatch(long payload, long nowNs) {
        owners[(int) (payload >>> VALUE_BITS)].onTimer(payload & VALUE_MASK, nowNs);
    }
}
