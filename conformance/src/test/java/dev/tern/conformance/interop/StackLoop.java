package dev.tern.conformance.interop;

import dev.tern.stack.NetStack;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;

/**
 * Polls one {@link NetStack} on a thread of its own, as an embedder would, and runs a test's calls on that thread
 * (a stack is single-threaded: pings are sent and neighbour caches read from the loop, never from the test thread).
 * When a poll finds nothing to do the loop waits in {@code idle} (for AF_PACKET, {@code awaitFrames(1)}), so it
 * does not spin a core of the shared build machine.
 *
 * <p>Anything thrown out of {@code poll} stops the loop and fails the test at {@link #close()}: the stack promises
 * that nothing escapes its poll loop.
 */
final class StackLoop implements AutoCloseable {
    private static final long CALL_TIMEOUT_MS = 10_000;

    private final NetStack stack;
    private final Runnable idle;
    private final ConcurrentLinkedQueue<Runnable> tasks = new ConcurrentLinkedQueue<>();
    private final Thread thread;
    private volatile boolean running = true;
    private volatile Throwable failure;

    StackLoop(NetStack stack, Runnable idle) {
        this.stack = stack;
        this.idle = idle;
        this.thread = Thread.ofPlatform().name("tern-" + stack.name()).daemon().start(this::run);
    }

    private void run() {
        try {
            while (running) {
                Runnable task;
                while ((task = tasks.poll()) != null) {
                    task.run();
                }
                if (stack.doWork() == 0 && tasks.isEmpty()) {
                    idle.run();
                }
            }
        } catch (Throwable e) {
            failure = e;
        }
    }

    /** Runs {@code call} on the loop's thread and returns its result (waits at most 10 s). */
    <T> T call(Function<NetStack, T> call) {
        if (failure != null) {
            throw new AssertionError("the stack's poll loop died", failure);
        }
        final CompletableFuture<T> result = new CompletableFuture<>();
        tasks.add(() -> {
            try {
                result.complete(call.apply(stack));
            } catch (RuntimeException | Error e) {
                result.completeExceptionally(e);
            }
        });
        try {
            return result.get(CALL_TIMEOUT_MS, TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            throw new AssertionError("call on the stack's thread failed: " + e.getCause(), e.getCause());
        } catch (TimeoutException e) {
            throw new AssertionError("the stack's thread did not run a call within " + CALL_TIMEOUT_MS + " ms"
                + (failure == null ? "" : "; its loop died: " + failure), failure);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        }
    }

    /** Stops the loop; fails if anything was thrown out of {@code poll}. */
    @Override
    public void close() {
        running = false;
        try {
            thread.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (thread.isAlive()) {
            throw new AssertionError("the stack's poll loop did not stop within 5 s");
        }
        if (failure != null) {
            throw new AssertionError("an exception escaped the stack's poll loop: " + failure, failure);
        }
    }
}
