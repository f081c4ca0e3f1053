package dev.tern.cli;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * How a command that runs until interrupted ({@code serve}, {@code nc}) stops on SIGINT or SIGTERM. The first signal
 * starts the JVM's shutdown as the JVM's own handler would (exit status 128 + the signal); a shutdown hook marks the
 * command stopping, then waits until the command has told its peers and closed its stack ({@link #stopped()}), at
 * most the command's linger and a margin, so the JVM does not halt before the resets and FINs have left. A second
 * signal while it waits ends the process at once. SIGKILL cannot be caught: peers then learn of the stop only from
 * their own timeouts or keepalive (docs/COMMANDS.md).
 */
final class StopOnSignal {
    /** {@code --shutdown-linger S} at most: an hour. */
    static final int MAX_LINGER_SECONDS = dev.tern.nio.TernSelectorProvider.MAX_SHUTDOWN_LINGER_SECONDS;
    static final CommandHelp.Option LINGER_HELP = CommandHelp.option("--shutdown-linger S", "on SIGINT or SIGTERM, "
        + "close each connection with a FIN after the data written and wait up to S seconds for it to end, then reset "
        + "what is left; 0: reset every connection at once; a second signal stops at once; 0.." + MAX_LINGER_SECONDS,
        "0");

    /** {@code --shutdown-linger S} in nanoseconds (0 when not given). */
    static long lingerNs(Arguments args) {
        return args.intValue("--shutdown-linger", 0, 0, MAX_LINGER_SECONDS) * 1_000_000_000L;
    }

    /** Beyond the linger: time to reset what is left and close the link. */
    static final long MARGIN_NS = 2_000_000_000L;

    private final CountDownLatch stopped = new CountDownLatch(1);
    private final AtomicBoolean signalled = new AtomicBoolean();
    private volatile boolean requested;

    /** {@code onRequest} runs on the hook's thread when the stop begins (it sets the command's own flag). */
    StopOnSignal(long lingerNs, Runnable onRequest) {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            requested = true;
            onRequest.run();
            try {
                stopped.await(lingerNs + MARGIN_NS, TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "tern-stop"));
        for (String name : new String[] {"INT", "TERM"}) {
            try {
                sun.misc.Signal.handle(new sun.misc.Signal(name), signal -> {
                    final int status = 128 + signal.getNumber();
                    if (signalled.compareAndSet(false, true)) {
                        Thread.ofPlatform().name("tern-stop-signal").start(() -> System.exit(status));
                    } else {
                        Runtime.getRuntime().halt(status);
                    }
                });
            } catch (IllegalArgumentException e) {
                // The signal is not ours to handle here (a JVM started with -Xrs): the JVM's own stop remains.
            }
        }
    }

    /** Whether the stop has begun. */
    boolean requested() {
        return requested;
    }

    /** The command has told its peers and closed its stack: the JVM may end. */
    void stopped() {
        stopped.countDown();
    }
}
