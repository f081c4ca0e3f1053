package dev.tern.core.testing;

import org.junit.jupiter.api.Test;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The measurement behind every zero-allocation test counts the stack's threads, not the caller's alone. */
class AllocationsTest {
    private static volatile Object sink;

    /**
     * The bytes a window counts while a thread named {@code threadName} allocates 1,000 arrays of 1 KiB in it; the
     * thread lives until the window has closed (an ended thread takes its count with it). Run twice, the first time
     * to load what the calling thread's waiting needs.
     */
    private static long windowWhile(String threadName) throws InterruptedException {
        once(threadName);
        return once(threadName);
    }

    private static long once(String threadName) throws InterruptedException {
        final CountDownLatch go = new CountDownLatch(1);
        final CountDownLatch allocated = new CountDownLatch(1);
        final CountDownLatch end = new CountDownLatch(1);
        final Thread thread = Thread.ofPlatform().name(threadName).start(() -> {
            try {
                go.await();
                for (int i = 0; i < 1000; i++) {
                    sink = new byte[1024];
                }
                allocated.countDown();
                end.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        final Allocations.Window window = Allocations.open();
        go.countDown();
        assertTrue(allocated.await(10, TimeUnit.SECONDS));
        final long bytes = window.close();
        end.countDown();
        thread.join();
        return bytes;
    }

    @Test
    void aStackThreadsAllocationIsInTheWindow() throws InterruptedException {
        final long bytes = windowWhile(Allocations.STACK_THREADS + "runner");
        assertTrue(bytes >= 1000 * 1024, "a runner's 1 MB counted: " + bytes);
    }

    @Test
    void aFailureCanSayWhichThreadAllocated() throws InterruptedException {
        final CountDownLatch allocated = new CountDownLatch(1);
        final CountDownLatch end = new CountDownLatch(1);
        final Allocations.Window window = Allocations.open();
        final Thread thread = Thread.ofPlatform().name(Allocations.STACK_THREADS + "leaked").start(() -> {
            for (int i = 0; i < 1000; i++) {
                sink = new byte[1024];
            }
            allocated.countDown();
            try {
                end.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        assertTrue(allocated.await(10, TimeUnit.SECONDS));
        assertTrue(window.close() >= 1000 * 1024);
        final String byThread = window.byThread();
        end.countDown();
        thread.join();
        assertTrue(byThread.startsWith(Thread.currentThread().getName() + " "), byThread);
        assertTrue(byThread.contains(", " + Allocations.STACK_THREADS + "leaked "), byThread);
    }

    @Test
    void anotherThreadsAllocationIsNot() throws InterruptedException {
        final long bytes = windowWhile("surefire-ping");
        assertTrue(bytes < 64 * 1024, "a thread of the test runner's not counted: " + bytes);
    }

    @Test
    void aWindowOfNothingIsZeroThoughReadingTheThreadsAllocates() {
        assertEquals(0, Allocations.measure(1000, 1000, () -> { }));
    }

    @Test
    void measureRunsAMeasuredWindowThatAllocatedOnceMore() {
        final int[] calls = {0};
        assertEquals(0, Allocations.measure(0, 1, () -> {
            if (++calls[0] == 2) {                                   // the measured window, after one settling window
                sink = new byte[100];
            }
        }));
        assertEquals(3, calls[0], "settling, measured, measured again");
        assertTrue(Allocations.measure(0, 1, () -> sink = new byte[100]) > 0, "an allocation in every window fails");
    }

    @Test
    void aOneOffInAMeasuredWindowIsNotAnAllocationPerOperation() {
        final int[] runs = {0};
        final String verdict = Allocations.recurringAllocation(1_000_000, () -> {
            if (runs[0]++ == 0) {
                sink = new byte[100];
            }
        });
        assertNull(verdict, verdict);
        assertEquals(2, runs[0], "the window that allocated was run again");
    }

    @Test
    void anAllocationInEveryWindowFails() {
        final String verdict = Allocations.recurringAllocation(1_000_000, () -> sink = new byte[100]);
        assertTrue(verdict != null && verdict.startsWith("allocated in two windows"), String.valueOf(verdict));
    }

    @Test
    void anAllocationOfAByteInAThousandOperationsFailsInOneWindow() {
        final int[] runs = {0};
        final String verdict = Allocations.recurringAllocation(100_000, () -> {
            runs[0]++;
            sink = new byte[200];
        });
        assertTrue(verdict != null && verdict.contains("bytes allocated over 100000 operations"), String.valueOf(verdict));
        assertEquals(1, runs[0], "no second window");
    }
}
