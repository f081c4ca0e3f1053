package dev.tern.stack;

import org.agrona.ErrorHandler;
import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.IdleStrategy;

/**
 * Drives a {@link NetStack} on its own thread with an Agrona {@link IdleStrategy}: busy-spin for the lowest
 * latency, back off or sleep to save a core. Closing the runner stops the thread and closes the stack.
 */
public final class StackRunner implements AutoCloseable {
    private final AgentRunner runner;

    private final NetStack stack;

    private StackRunner(NetStack stack, IdleStrategy idleStrategy, ErrorHandler errorHandler) {
        this.stack = stack;
        this.runner = new AgentRunner(idleStrategy, errorHandler, null, new OwnedAgent(stack));
    }

    /** Marks the runner's thread as the stack's owner before the first poll, so other threads hand work over. */
    private record OwnedAgent(NetStack stack) implements org.agrona.concurrent.Agent {
        @Override
        public void onStart() {
            stack.owner(Thread.currentThread());
        }

        @Override
        public int doWork() {
            return stack.doWork();
        }

        @Override
        public void onClose() {
            stack.owner(null);
            stack.close();
        }

        @Override
        public String roleName() {
            return stack.roleName();
        }
    }

    /**
     * Starts a thread named after the stack that polls it until {@link #close()}; returns once it runs. An
     * exception escaping a turn of the loop is printed to stderr (see the other overload).
     */
    public static StackRunner start(NetStack stack, IdleStrategy idleStrategy) {
        return start(stack, idleStrategy, error -> System.err.println("tern: stack " + stack.name() + " failed: " + error));
    }

    /**
     * Like {@link #start(NetStack, IdleStrategy)}, telling {@code onError} of every exception that escapes a turn
     * of the loop. Such an exception is a bug (bad input is counted and dropped, never thrown); it is also counted
     * as {@code stack.poll_errors}, and the loop goes on with the next turn.
     */
    public static StackRunner start(NetStack stack, IdleStrategy idleStrategy, ErrorHandler onError) {
        final StackRunner runner = new StackRunner(stack, idleStrategy, error -> {
            stack.pollFailed();
            onError.onError(error);
        });
        final Thread thread = AgentRunner.startOnThread(runner.runner);
        stack.owner(thread);
        return runner;
    }

    public NetStack stack() {
        return stack;
    }

    @Override
    public void close() {
        runner.close();
    }
}
