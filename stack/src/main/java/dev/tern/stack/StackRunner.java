package dev.tern.stack;

import org.agrona.ErrorHandler;
import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.IdleStrategy;

/**
 * Drives a {@link NetStack} on its own thread with an Agrona {@link IdleStrategy}: busy-spin for the lowest
 * latency, back off or sleep to save a core. An application thread that waits on one of the stack's sockets polls
 * the stack itself meanwhile, and the runner stays out (see {@link NetStack}); with an idle strategy that parks, the
 * runner then leaves its core to the application. Closing the runner stops the thread and closes the stack.
 */
public final class StackRunner implements AutoCloseable {
    private final AgentRunner runner;

    private final NetStack stack;

    private StackRunner(NetStack stack, IdleStrategy idleStrategy, ErrorHandler errorHandler) {
        this.stack = stack;
        this.runner = new AgentRunner(idleStrategy, errorHandler, null,
            new OwnedAgent(stack, stack.counters().counter("stack.running")));
    }

    /**
     * Polls the stack, taking it for each turn and giving it back after, and staying out while an application
     * thread waiting on a socket polls it itself (it then reports no work, so the idle strategy idles).
     * {@code running} is the stack's liveness for {@code tern stat}: 1 while the loop runs, 0 once it ended.
     */
    private record OwnedAgent(NetStack stack, org.agrona.concurrent.status.AtomicCounter running)
        implements org.agrona.concurrent.Agent {
        @Override
        public void onStart() {
            running.setRelease(1);
        }

        @Override
        public int doWork() {
            if (!stack.tryTakeForRunner()) {
                return 0;
            }
            try {
                return stack.doWork();
            } finally {
                stack.giveBack();
            }
        }

        @Override
        public void onClose() {
            running.setRelease(0);
            stack.takeForClose();
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
     * of the loop (the runner's, or one an application thread took while waiting on a socket). Such an exception
     * is a bug (bad input is counted and dropped, never thrown); it is also counted as {@code stack.poll_errors},
     * and the loop goes on with the next turn.
     */
    public static StackRunner start(NetStack stack, IdleStrategy idleStrategy, ErrorHandler onError) {
        return start(stack, idleStrategy, onError, null);
    }

    /**
     * Like {@link #start(NetStack, IdleStrategy, ErrorHandler)}, on a thread made by {@code threads} (null: a plain
     * thread). The nio module's provider runs its stack on a daemon thread, so that a program whose {@code main}
     * returns exits as it would with the JDK's provider, which has no thread of its own.
     */
    public static StackRunner start(NetStack stack, IdleStrategy idleStrategy, ErrorHandler onError,
                                    java.util.concurrent.ThreadFactory threads) {
        final ErrorHandler countingHandler = error -> {
            stack.pollFailed();
            onError.onError(error);
        };
        final StackRunner runner = new StackRunner(stack, idleStrategy, countingHandler);
        stack.runnerDriven(countingHandler);
        if (threads == null) {
            AgentRunner.startOnThread(runner.runner);
        } else {
            AgentRunner.startOnThread(runner.runner, threads);
        }
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
