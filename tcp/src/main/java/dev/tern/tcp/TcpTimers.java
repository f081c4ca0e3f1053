package dev.tern.tcp;

import dev.tern.core.time.Timers;

import static dev.tern.tcp.TcpControlBlocks.F_ALLOCATED;
import static dev.tern.tcp.TcpControlBlocks.T_ARMED;
import static dev.tern.tcp.TcpControlBlocks.T_DELAYED_ACK;
import static dev.tern.tcp.TcpControlBlocks.T_KEEPALIVE;
import static dev.tern.tcp.TcpControlBlocks.T_PACE;
import static dev.tern.tcp.TcpControlBlocks.T_SENDER;
import static dev.tern.tcp.TcpControlBlocks.T_STATE;

/**
 * The timers of every connection (RFC 9293 §3.8: retransmission, persist, keepalive, TIME-WAIT; RFC 8985's tail loss
 * probe and reordering timers; delayed ACK, the pacer and the FIN-WAIT-2 timeout), with one wheel timer per
 * connection. The sender's timers share one deadline ({@code T_SENDER}, its kind in the row), as Linux's do.
 *
 * <p>Each kind keeps its deadline in the connection's row and a bit in {@code timers}; the wheel timer is armed at
 * or before the earliest of them. Moving a deadline later (the RTO restarted by every ACK) costs nothing: the wheel
 * timer fires early, finds nothing due, and is armed again for what is left. Only moving the earliest deadline
 * sooner touches the wheel. This keeps per-segment work to a few stores, as Linux's lazy timer rearming does.
 *
 * <p>The wheel payload is {@code generation << 20 | slot}, so a timer of a slot's earlier incarnation is ignored.
 * What a deadline does when it comes is {@link TcpTimeouts}' business; this class only keeps the deadlines.
 *
 * <p>Owned by the shard thread; not thread-safe.
 */
final class TcpTimers {
    private static final long SLOT_MASK = (1 << 20) - 1;

    private final TcpControlBlocks tcb;
    private final Timers timers;
    private final int owner;

    /** {@code owner}: the wheel's handle of whoever hands the fired payloads to {@link TcpTimeouts}. */
    TcpTimers(TcpControlBlocks tcb, Timers timers, int owner) {
        this.tcb = tcb;
        this.timers = timers;
        this.owner = owner;
    }

    boolean armed(int c, int kind) {
        return (tcb.timers(c) & kind) != 0;
    }

    /**
     * Sets the deadline of one kind and makes sure the wheel timer fires by then. The switch is exhaustive (no
     * default): a new {@link TimerKind} without its deadline field and bit does not compile.
     */
    void arm(int c, TimerKind kind, long deadlineNs) {
        final int bit = switch (kind) {
            case SENDER -> {
                tcb.senderTimerNs(c, deadlineNs);
                yield T_SENDER;
            }
            case DELAYED_ACK -> {
                tcb.delayedAckDeadlineNs(c, deadlineNs);
                yield T_DELAYED_ACK;
            }
            case KEEPALIVE -> {
                tcb.keepaliveDeadlineNs(c, deadlineNs);
                yield T_KEEPALIVE;
            }
            case STATE -> {
                tcb.stateDeadlineNs(c, deadlineNs);
                yield T_STATE;
            }
            case PACE -> {
                tcb.nextSendNs(c, deadlineNs);
                yield T_PACE;
            }
        };
        tcb.timers(c, tcb.timers(c) | bit);
        ensure(c, deadlineNs);
    }

    void disarm(int c, int kind) {
        tcb.timers(c, tcb.timers(c) & ~kind);
    }

    /** Stops everything (the row is about to be freed or reused). */
    void cancelAll(int c) {
        if ((tcb.timers(c) & T_ARMED) != 0) {
            timers.cancel(tcb.timerId(c));
        }
        tcb.timers(c, 0);
    }

    private void ensure(int c, long deadlineNs) {
        final int bits = tcb.timers(c);
        if ((bits & T_ARMED) != 0) {
            if (tcb.timerAtNs(c) - deadlineNs <= 0) {
                return;
            }
            final long moved = timers.reschedule(tcb.timerId(c), deadlineNs);
            if (moved >= 0) {
                tcb.timerId(c, moved);
                tcb.timerAtNs(c, deadlineNs);
                return;
            }
        }
        // Not armed (inside the fired timer's handlers, say): the wheel timer goes at the earliest deadline of every
        // kind armed, not this one's, or a kind armed before with an earlier deadline would wait for this one.
        final long at = earliest(c, bits, deadlineNs);
        tcb.timerId(c, timers.schedule(owner, at, ((long) tcb.generation(c) << 20) | c));
        tcb.timerAtNs(c, at);
        tcb.timers(c, bits | T_ARMED);
    }

    /** The earliest of {@code deadlineNs} and the deadlines of the kinds in {@code bits}. */
    private long earliest(int c, int bits, long deadlineNs) {
        long earliest = deadlineNs;
        if ((bits & T_SENDER) != 0 && tcb.senderTimerNs(c) - earliest < 0) {
            earliest = tcb.senderTimerNs(c);
        }
        if ((bits & T_DELAYED_ACK) != 0 && tcb.delayedAckDeadlineNs(c) - earliest < 0) {
            earliest = tcb.delayedAckDeadlineNs(c);
        }
        if ((bits & T_KEEPALIVE) != 0 && tcb.keepaliveDeadlineNs(c) - earliest < 0) {
            earliest = tcb.keepaliveDeadlineNs(c);
        }
        if ((bits & T_STATE) != 0 && tcb.stateDeadlineNs(c) - earliest < 0) {
            earliest = tcb.stateDeadlineNs(c);
        }
        if ((bits & T_PACE) != 0 && tcb.nextSendNs(c) - earliest < 0) {
            earliest = tcb.nextSendNs(c);
        }
        return earliest;
    }

    /** The row a fired wheel timer is for, its wheel timer now unarmed; -1 for one of an earlier connection. */
    int fired(long payload) {
        final int c = (int) (payload & SLOT_MASK);
        final int generation = (int) (payload >>> 20);
        if (c >= tcb.capacity() || !tcb.hasFlag(c, F_ALLOCATED) || tcb.generation(c) != generation) {
            return -1;
        }
        tcb.timers(c, tcb.timers(c) & ~T_ARMED);
        return c;
    }

    /** Whether the row still holds the connection of {@code generation} (a handler may have freed it). */
    boolean alive(int c, int generation) {
        return tcb.hasFlag(c, F_ALLOCATED) && tcb.generation(c) == generation;
    }

    /** True (and the kind cleared) when that kind is active and its deadline has come. */
    boolean due(int c, int kind, long deadlineNs, long nowNs) {
        if ((tcb.timers(c) & kind) == 0 || deadlineNs - nowNs > 0) {
            return false;
        }
        tcb.timers(c, tcb.timers(c) & ~kind);
        return true;
    }

    /** Arms the wheel timer for the earliest deadline still active, if the handlers did not already. */
    void rearm(int c) {
        final int bits = tcb.timers(c);
        if ((bits & T_ARMED) != 0) {
            return;
        }
        if ((bits & (T_SENDER | T_DELAYED_ACK | T_KEEPALIVE | T_STATE | T_PACE)) != 0) {
            ensure(c, earliest(c, bits, Long.MAX_VALUE));
        }
    }
}
