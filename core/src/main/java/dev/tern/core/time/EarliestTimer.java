package dev.tern.core.time;

/**
 * One wheel timer kept at the earliest of the deadlines asked for: a table of entries with deadlines of their own
 * (a neighbour cache's) arms it for each new deadline, and it moves only when the new one is sooner. When it fires
 * the owner calls {@link #fired()}, scans its table and arms it again for the next deadline.
 *
 * <p>Owned by the shard thread; not thread-safe.
 */
public final class EarliestTimer {
    private final Timers timers;
    private final int owner;
    private final long value;
    private long timer = -1;
    private long deadlineNs = Long.MAX_VALUE;

    /** A timer of {@code owner}'s that carries {@code value} when it fires. */
    public EarliestTimer(Timers timers, int owner, long value) {
        this.timers = timers;
        this.owner = owner;
        this.value = value;
    }

    /** Fires at {@code deadline} unless it is already armed for an earlier one. */
    public void arm(long deadline) {
        if (timer >= 0 && deadline - deadlineNs >= 0) {
            return;
        }
        if (timer >= 0) {
            timers.cancel(timer);
        }
        timer = timers.schedule(owner, deadline, value);
        deadlineNs = deadline;
    }

    /** It fired: no longer armed. */
    public void fired() {
        timer = -1;
        deadlineNs = Long.MAX_VALUE;
    }
}
