package dev.tern.core.testing;

import java.lang.management.ManagementFactory;
import java.util.HashMap;
import java.util.Map;

/**
 * Measures bytes allocated on the heap by the stack's threads ({@code com.sun.management.ThreadMXBean}), for the
 * zero-allocation tests every layer has: warm up, then assert that a million more operations allocate nothing.
 *
 * <p>The stack's threads are the calling thread and every live thread whose name starts with {@value #STACK_THREADS}
 * (a {@code StackRunner}'s, a shard's, a link's helper): a stack driven by a runner allocates on the runner's thread,
 * which the calling thread's count alone would miss.
 */
public final class Allocations {
    /** The prefix of the names of the threads a Tern stack runs on ({@code NetStack.roleName()}). */
    public static final String STACK_THREADS = "tern-";
    /** Warm-up windows at most, after the warm-up runs, before the measured one: see {@link #measure}. */
    static final int MAX_SETTLING_WINDOWS = 5;

    private static final com.sun.management.ThreadMXBean THREADS =
        (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

    private Allocations() {
    }

    /**
     * Opens a window: {@link Window#close} returns the bytes the stack's threads allocated between the two calls
     * (threads started meanwhile count from zero; one that ended takes its count with it).
     */
    public static Window open() {
        return new Window();
    }

    /**
     * Runs {@code body} {@code warmup} times, then in windows of {@code measured} runs until one allocates nothing on
     * the stack's threads (at most {@value #MAX_SETTLING_WINDOWS}: a JIT compilation that finishes during a window can
     * leave a one-off allocation in it), then measures one more window of {@code measured} runs, whole, and returns
     * what it allocated. When that window allocates, it is run once more and the second's bytes are returned, the
     * first's printed: a deoptimisation (a branch the warm-up never took, taken at last) makes HotSpot put back on the
     * heap the objects C2 had scalar-replaced in the frames it leaves, and run them interpreted until C2 compiles them
     * again, a one-off of a few hundred bytes, seen in whole-module runs on a loaded machine. An allocation per run
     * allocates in both windows and fails the caller's assertion.
     */
    public static long measure(int warmup, int measured, Runnable body) {
        for (int i = 0; i < warmup; i++) {
            body.run();
        }
        for (int window = 0; window < MAX_SETTLING_WINDOWS; window++) {
            if (window(measured, body) == 0) {
                break;
            }
        }
        final long first = window(measured, body);
        if (first == 0) {
            return 0;
        }
        final long second = window(measured, body);
        System.out.println("a measured window of " + measured + " runs allocated " + first
            + " bytes; the one after it " + second);
        return second;
    }

    /**
     * Judges a measured window over a path the kernel drives half of (a link's rings): {@code window} runs
     * {@code operations} operations once, after the warm-up and the settling windows. There the kernel can take the
     * path down a branch the warm-up never took (a full ring, a late wake-up, a block retired by its timer); HotSpot
     * then deoptimizes the compiled method, and until C2 compiles it again it runs in the interpreter, which makes
     * the objects C2 had scalar-replaced: a one-off of a few hundred bytes, on the calling thread. So a window that
     * allocates is run once more. An allocation per operation, per burst or per any event that recurs allocates in
     * both windows, and one byte per thousand operations in either fails too; a one-off is in one window only, and
     * is printed. Returns the failure's text, or null when nothing is allocated per operation.
     */
    public static String recurringAllocation(long operations, Runnable window) {
        final long bound = Math.max(1, operations / 1000);
        final Window first = open();
        window.run();
        final long firstBytes = first.close();
        if (firstBytes == 0) {
            return null;
        }
        final String firstThreads = first.byThread();
        if (firstBytes >= bound) {
            return firstBytes + " bytes allocated over " + operations + " operations, by thread: " + firstThreads;
        }
        final Window second = open();
        window.run();
        final long secondBytes = second.close();
        if (secondBytes != 0) {
            return "allocated in two windows of " + operations + " operations running: " + firstBytes + " bytes (by thread: "
                + firstThreads + "), then " + secondBytes + " (by thread: " + second.byThread() + ")";
        }
        System.out.println("a one-off allocation of " + firstBytes + " bytes (by thread: " + firstThreads
            + ") over " + operations + " operations; the next window allocated nothing");
        return null;
    }

    /**
     * One window, read into locals only: no object is made between the two readings of the calling thread. (With a
     * {@link Window} here, C2 once compiled the window with the Window's own 24 bytes allocated after the opening
     * reading, and every zero-allocation test that ran long enough saw 24 bytes.)
     */
    private static long window(int runs, Runnable body) {
        final Map<Long, Long> others = otherStackThreads();
        final long self = THREADS.getCurrentThreadAllocatedBytes();
        for (int i = 0; i < runs; i++) {
            body.run();
        }
        final long selfNow = THREADS.getCurrentThreadAllocatedBytes();
        return selfNow - self + othersSince(others);
    }

    /** What the other stack threads allocated since {@code before} was read. */
    private static long othersSince(Map<Long, Long> before) {
        long sum = 0;
        for (Map.Entry<Long, Long> other : otherStackThreads().entrySet()) {
            sum += other.getValue() - before.getOrDefault(other.getKey(), 0L);
        }
        return sum;
    }

    /** A measuring window over the stack's threads, opened by {@link #open}. */
    public static final class Window {
        private final Map<Long, Long> others;
        private final long self;
        private long selfAllocated;
        private Map<Long, Long> othersAtClose = Map.of();

        private Window() {
            // The calling thread is read after the enumeration here and before it in close(), so that the
            // enumeration's own allocation is never in the window.
            this.others = otherStackThreads();
            this.self = THREADS.getCurrentThreadAllocatedBytes();
        }

        /** The bytes allocated since the window opened. */
        public long close() {
            final long selfNow = THREADS.getCurrentThreadAllocatedBytes();
            othersAtClose = otherStackThreads();
            selfAllocated = selfNow - self;
            long sum = selfAllocated;
            for (Map.Entry<Long, Long> other : othersAtClose.entrySet()) {
                sum += other.getValue() - others.getOrDefault(other.getKey(), 0L);
            }
            return sum;
        }

        /**
         * After {@link #close}, which threads allocated in the window and how much, for a failure's message: a
         * one-off shows where it was (the calling thread, a stack's runner, a thread another test left running).
         */
        public String byThread() {
            final StringBuilder text = new StringBuilder(Thread.currentThread().getName()).append(' ').append(selfAllocated);
            for (Map.Entry<Long, Long> other : othersAtClose.entrySet()) {
                final long bytes = other.getValue() - others.getOrDefault(other.getKey(), 0L);
                if (bytes != 0) {
                    text.append(", ").append(threadName(other.getKey())).append(' ').append(bytes);
                }
            }
            return text.toString();
        }
    }

    private static String threadName(long id) {
        for (Thread thread : Thread.getAllStackTraces().keySet()) {
            if (thread.threadId() == id) {
                return thread.getName();
            }
        }
        return "thread " + id + " (ended)";
    }

    /** Each live stack thread but the calling one, by id, with its count. */
    private static Map<Long, Long> otherStackThreads() {
        final long selfId = Thread.currentThread().threadId();
        final Map<Long, Long> counts = new HashMap<>();
        for (Thread thread : Thread.getAllStackTraces().keySet()) {
            if (thread.threadId() != selfId && thread.getName().startsWith(STACK_THREADS)) {
                final long bytes = THREADS.getThreadAllocatedBytes(thread.threadId());
                if (bytes >= 0) {
                    counts.put(thread.threadId(), bytes);
                }
            }
        }
        return counts;
    }
}
