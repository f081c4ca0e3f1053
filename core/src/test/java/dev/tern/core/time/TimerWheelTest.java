package dev.tern.core.time;

import dev.tern.core.testing.Allocations;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.longs;

class TimerWheelTest {
    private static final long MS = 1_000_000L;

    @Test
    void firesATimerOnceItsDeadlinePassesAndNotBefore() {
        final TimerWheel timers = new TimerWheel(0);
        timers.schedule(10 * MS, 42);
        final List<Long> fired = new ArrayList<>();
        assertEquals(0, timers.poll(9 * MS, (payload, now) -> fired.add(payload), 100));
        assertEquals(1, timers.poll(10 * MS + TimerWheel.TICK_NS, (payload, now) -> fired.add(payload), 100));
        assertEquals(List.of(42L), fired);
        assertEquals(0, timers.size());
    }

    @Test
    void firesATimerPolledExactlyAtItsDeadline() {
        final TimerWheel timers = new TimerWheel(0);
        timers.schedule(2_000 * MS, 9);
        final List<Long> fired = new ArrayList<>();
        timers.poll(2_000 * MS, (payload, now) -> fired.add(payload), 100);
        assertEquals(List.of(9L), fired);
    }

    @Test
    void catchesUpWhenVirtualTimeJumpsManyTicks() {
        final TimerWheel timers = new TimerWheel(0);
        timers.schedule(30_000 * MS, 1);
        timers.schedule(5 * MS, 2);
        final List<Long> fired = new ArrayList<>();
        timers.poll(60_000 * MS, (payload, now) -> fired.add(payload), 100);
        assertEquals(List.of(2L, 1L), fired);
    }

    @Test
    void cancelledAndRescheduledTimersBehave() {
        final TimerWheel timers = new TimerWheel(0);
        final long a = timers.schedule(10 * MS, 1);
        final long b = timers.schedule(10 * MS, 2);
        assertTrue(timers.cancel(a));
        assertFalse(timers.cancel(a));
        final long moved = timers.reschedule(b, 50 * MS);
        assertEquals(50 * MS, timers.deadline(moved));
        final List<Long> fired = new ArrayList<>();
        timers.poll(20 * MS, (payload, now) -> fired.add(payload), 100);
        assertTrue(fired.isEmpty());
        timers.poll(52 * MS, (payload, now) -> fired.add(payload), 100);
        assertEquals(List.of(2L), fired);
        assertEquals(Long.MAX_VALUE, timers.earliestDeadline());
    }

    @Test
    void earliestDeadlineScansAllTimers() {
        final TimerWheel timers = new TimerWheel(0);
        timers.schedule(5_000 * MS, 1);
        timers.schedule(7 * MS, 2);
        timers.schedule(3_000_000 * MS, 3);
        assertEquals(7 * MS, timers.earliestDeadline());
    }

    /**
     * With many timers pending (a timer per connection at 100,000 connections), keeping the earliest bound exact
     * reads the spokes of the next ticks, not every timer each time one fires: the slots read stay a small multiple of
     * the timers fired (reading the whole wheel per firing poll would read about 2,000 spokes' worth per tick).
     */
    @Test
    void manyPendingTimersFireInOrderWithoutReadingTheWholeWheelEachTime() {
        final TimerWheel timers = new TimerWheel(0);
        final SplittableRandom random = new SplittableRandom(16);
        final int count = 20_000;
        for (int i = 0; i < count; i++) {
            timers.schedule(MS + random.nextLong(2_000 * MS), i);
        }
        final long[] fired = {0};
        for (long t = 0; t <= 2_002 * MS; t += MS / 2) {
            timers.poll(t, (payload, nowNs) -> fired[0]++, Integer.MAX_VALUE);
        }
        assertEquals(count, fired[0]);
        assertEquals(0, timers.size());
        assertTrue(timers.slotsScanned < 20L * count, "slots read: " + timers.slotsScanned);
    }

    /**
     * Random schedule/cancel/reschedule/advance sequences against a sorted-map model: after every advance, exactly
     * the timers the model says are due have fired, none twice, none early.
     */
    @Test
    void agreesWithSortedMapModel() {
        qt().withExamples(300).forAll(longs().all(), integers().between(1, 400)).checkAssert((seed, steps) -> {
            final SplittableRandom random = new SplittableRandom(seed);
            final TimerWheel timers = new TimerWheel(0);
            final TreeMap<Long, Long> model = new TreeMap<>(); // payload -> deadline
            final Map<Long, Long> ids = new HashMap<>();         // payload -> timer id
            long now = 0;
            long nextPayload = 0;
            for (int step = 0; step < steps; step++) {
                final int op = random.nextInt(10);
                if (op < 4) {
                    final long deadline = now + randomDelay(random);
                    final long payload = nextPayload++;
                    ids.put(payload, timers.schedule(deadline, payload));
                    model.put(payload, deadline);
                } else if (op < 6 && !model.isEmpty()) {
                    final long payload = pick(random, model);
                    assertTrue(timers.cancel(ids.remove(payload)));
                    model.remove(payload);
                } else if (op < 7 && !model.isEmpty()) {
                    final long payload = pick(random, model);
                    final long deadline = now + randomDelay(random);
                    ids.put(payload, timers.reschedule(ids.get(payload), deadline));
                    model.put(payload, deadline);
                } else {
                    now += randomDelay(random);
                    final long at = now;
                    final List<Long> fired = new ArrayList<>();
                    timers.poll(at, (payload, nowNs) -> fired.add(payload), Integer.MAX_VALUE);
                    final List<Long> due = new ArrayList<>();
                    model.forEach((payload, deadline) -> {
                        if (deadline <= at) {
                            due.add(payload);
                        }
                    });
                    for (long payload : fired) {
                        assertTrue(due.contains(payload),
                            "timer " + payload + " fired early at " + at + ", deadline " + model.get(payload));
                        model.remove(payload);
                        ids.remove(payload);
                    }
                    for (long payload : due) {
                        assertTrue(fired.contains(payload), "timer " + payload + " overdue at " + at);
                    }
                }
                assertEquals(model.size(), timers.size());
            }
        });
    }

    @Test
    void aPollStoppedByItsLimitLeavesTheRestForTheNextPollAtTheSameInstant() {
        final TimerWheel timers = new TimerWheel(0);
        for (int i = 0; i < 5; i++) {
            timers.schedule(3 * MS + i, i);
        }
        final List<Long> fired = new ArrayList<>();
        assertEquals(0, timers.poll(2 * MS, (payload, nowNs) -> fired.add(payload), 2));
        assertEquals(2, timers.poll(4 * MS, (payload, nowNs) -> fired.add(payload), 2));
        assertEquals(2, timers.poll(4 * MS, (payload, nowNs) -> fired.add(payload), 2));
        assertEquals(1, timers.poll(4 * MS, (payload, nowNs) -> fired.add(payload), 2));
        assertEquals(List.of(0L, 1L, 2L, 3L, 4L), fired.stream().sorted().toList());
    }

    @Test
    void aTimerMovedEarlierOrScheduledByAHandlerIsNotSkippedByTheEarliestBound() {
        final TimerWheel timers = new TimerWheel(0);
        final long late = timers.schedule(500 * MS, 1);
        timers.schedule(100 * MS, 2);
        final List<Long> fired = new ArrayList<>();
        final TimerWheel.Handler handler = (payload, nowNs) -> {
            fired.add(payload);
            if (payload == 2) {
                timers.schedule(nowNs + 10 * MS, 3); // a handler re-arming, as TCP's do
            }
        };
        assertEquals(0, timers.poll(50 * MS, handler, 100));
        timers.reschedule(late, 60 * MS); // earlier than every bound the wheel knew
        assertEquals(0, timers.poll(59 * MS, handler, 100));
        assertEquals(1, timers.poll(60 * MS, handler, 100));
        assertEquals(1, timers.poll(100 * MS, handler, 100));
        assertEquals(0, timers.poll(109 * MS, handler, 100));
        assertEquals(1, timers.poll(110 * MS, handler, 100));
        assertEquals(List.of(1L, 2L, 3L), fired);
        assertEquals(0, timers.size());
    }

    @Test
    void aCancelledEarliestTimerLeavesOnlyALowBoundThatTheNextTimerStillHonours() {
        final TimerWheel timers = new TimerWheel(0);
        final long early = timers.schedule(10 * MS, 1);
        timers.schedule(20 * MS, 2);
        timers.cancel(early);
        final List<Long> fired = new ArrayList<>();
        for (long t = 0; t <= 30 * MS; t += MS / 4) {
            timers.poll(t, (payload, nowNs) -> {
                fired.add(payload);
                assertTrue(nowNs >= 20 * MS && nowNs < 20 * MS + MS / 4, "fired on time: " + nowNs);
            }, 100);
        }
        assertEquals(List.of(2L), fired);
    }

    @Test
    void schedulingAndCancellingAllocateNothing() {
        final TimerWheel timers = new TimerWheel(0);
        final long[] ids = new long[64];
        final long[] now = {0};
        final TimerWheel.Handler ignore = (payload, nowNs) -> { };
        final long bytes = Allocations.measure(20_000, 1_000_000, () -> {
            for (int i = 0; i < ids.length; i++) {
                ids[i] = timers.schedule(now[0] + (i + 1) * MS, i);
            }
            for (int i = 0; i < ids.length; i += 2) {
                timers.cancel(ids[i]);
            }
            now[0] += 200 * MS;
            timers.poll(now[0], ignore, 1000);
        });
        assertEquals(0, bytes);
    }

    private static long randomDelay(SplittableRandom random) {
        return switch (random.nextInt(4)) {
            case 0 -> random.nextLong(2 * MS);
            case 1 -> random.nextLong(200 * MS);
            case 2 -> random.nextLong(5_000 * MS);
            default -> random.nextLong(120_000 * MS);
        };
    }

    private static long pick(SplittableRandom random, TreeMap<Long, Long> model) {
        final int skip = random.nextInt(model.size());
        return model.keySet().stream().skip(skip).findFirst().orElseThrow();
    }
}
