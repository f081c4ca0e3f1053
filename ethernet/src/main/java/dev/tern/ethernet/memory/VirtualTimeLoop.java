package dev.tern.ethernet.memory;

import dev.tern.core.time.Pollable;
import dev.tern.core.time.VirtualClock;

import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;

/**
 * Discrete-event time for participants on one {@link MemoryWire}: poll every participant until none has work at
 * the current instant, then move the {@link VirtualClock} to the next thing that will happen (a frame arriving on
 * the wire, or a participant's timer). Nothing waits in real time, so a 30-second timeout costs microseconds, and
 * the same seed and actions give the same run frame for frame.
 *
 * <p>The engine under {@code stack.sim.Simulation} and the TCP module's test network. Owned by one thread.
 */
public final class VirtualTimeLoop {
    /** Cap on one jump of virtual time, so a run with nothing scheduled still moves on. */
    public static final long MAX_STEP_NS = 1_000_000_000L;
    /** Poll rounds at one instant before the loop gives up on reaching idle (a participant that never settles). */
    private static final int MAX_ROUNDS_PER_INSTANT = 100_000;

    private final VirtualClock clock;
    private final MemoryWire wire;
    private final List<Pollable> participants = new ArrayList<>();
    private final List<Runnable> pollers = new ArrayList<>();

    public VirtualTimeLoop(VirtualClock clock, MemoryWire wire) {
        this.clock = clock;
        this.wire = wire;
    }

    public void add(Pollable participant) {
        participants.add(participant);
    }

    /** Runs {@code poller} after the participants on every poll round (an application pumping data, say). */
    public void onPoll(Runnable poller) {
        pollers.add(poller);
    }

    /** Polls every participant until all are idle at the current instant; returns the work done. */
    public int pollAll() {
        int total = 0;
        for (int round = 0; round < MAX_ROUNDS_PER_INSTANT; round++) {
            int work = 0;
            final long now = clock.nanoTime();
            for (Pollable participant : participants) {
                work += participant.poll(now);
            }
            for (Runnable poller : pollers) {
                poller.run();
            }
            total += work;
            if (work == 0) {
                break;
            }
        }
        return total;
    }

    /** Polls, then moves time to the next event (at most {@link #MAX_STEP_NS} ahead, never past {@code limitNs}). */
    public void step(long limitNs) {
        pollAll();
        long next = wire.nextDeliveryNs();
        for (Pollable participant : participants) {
            next = Math.min(next, participant.pollAt());
        }
        final long now = clock.nanoTime();
        if (next - now <= 0) {
            next = now + 1;
        }
        next = Math.min(next, now + MAX_STEP_NS);
        clock.advanceTo(Math.min(next, limitNs));
    }

    /** Runs until {@code done} holds or {@code maxNs} of virtual time pass; returns whether it held. */
    public boolean runUntil(BooleanSupplier done, long maxNs) {
        final long deadline = clock.nanoTime() + maxNs;
        while (!done.getAsBoolean()) {
            if (clock.nanoTime() - deadline >= 0) {
                return false;
            }
            step(deadline);
        }
        return true;
    }

    /** Runs for {@code durationNs} of virtual time, then polls once more at its end. */
    public void runFor(long durationNs) {
        final long deadline = clock.nanoTime() + durationNs;
        while (clock.nanoTime() - deadline < 0) {
            step(deadline);
        }
        pollAll();
    }
}
