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

    private StackRunner(NetStack stack, IdleStrategy idleStrategy, ErrorHandler errorHandler) {
        this.runner = new AgentRunner(idleStrategy, errorHandler, null, stack);
    }

    /** Starts a thread named after the stack that polls it until {@link #close()}. */
    public static StackRunner start(NetStack stack, IdleStrategy idleStrategy) {
        final StackRunner runner = new StackRunner(stack, idleStrategy,
            error -> System.err.println("tern: stack " + stack.name() + " failed: " + error));
        AgentRunner.startOnThread(runner.runner);
        return runner;
    }

    @Override
    public void close() {
        runner.close();
    }
}
