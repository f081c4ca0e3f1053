package dev.tern.lab.link;

/**
 * A periodic update on virtual time for a discipline that has no timer of its own (PIE's and DualPI2's T_UPDATE):
 * the first event starts it, and every arrival or departure first runs the updates that fell due since the last,
 * at the instants they were due. Between events nothing changes in the queue, so each catches up exactly.
 */
final class UpdateTimer {
    private final long periodNs;
    private long nextNs;
    private long dueNs;
    private boolean started;

    UpdateTimer(long periodNs) {
        this.periodNs = periodNs;
    }

    /** Whether an update fell due by {@code nowNs}; if so, {@link #dueNs()} says when, and the timer moves on. */
    boolean due(long nowNs) {
        if (!started) {
            started = true;
            nextNs = nowNs + periodNs;
            return false;
        }
        if (nowNs - nextNs < 0) {
            return false;
        }
        dueNs = nextNs;
        nextNs += periodNs;
        return true;
    }

    /** The instant the update {@link #due} last reported fell due. */
    long dueNs() {
        return dueNs;
    }
}
