package dev.tern.cli;

import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.IdleStrategy;

import java.io.PrintStream;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * {@code tern serve [--echo P] [--discard P] [--udp-echo P] [--http P DIR]}: runs a stack that answers ARP and
 * ping, plus the services asked for, until interrupted.
 */
final class ServeCommand {
    static final String USAGE = "serve [--echo P] [--discard P] [--udp-echo P] [--http P DIR] " + NetworkOptions.USAGE;

    private final PrintStream out;
    private volatile boolean stopping;

    ServeCommand(PrintStream out) {
        this.out = out;
    }

    int run(String[] argv) {
        final Set<String> valueFlags = new HashSet<>(NetworkOptions.VALUE_FLAGS);
        valueFlags.addAll(Set.of("--echo", "--discard", "--udp-echo", "--http"));
        final Arguments args = Arguments.parse("serve", argv, valueFlags, Set.of());
        for (String service : new String[] {"--echo", "--discard", "--http"}) {
            if (args.has(service)) {
                throw new CommandFailure("serve: " + service + " needs TCP, which this build does not have yet");
            }
        }
        args.operands(0, 0, USAGE);
        final int udpEcho = args.intValue("--udp-echo", 0, 1, 65535);
        final NetworkOptions network = NetworkOptions.from(args);
        try (Network net = network.open("serve")) {
            final StringBuilder services = new StringBuilder("ARP and ping");
            if (udpEcho != 0) {
                net.serveUdpEcho(udpEcho);
                services.append(", UDP echo on port ").append(udpEcho);
            }
            out.printf("tern serve: %s on %s, answering %s; Ctrl-C stops%n", network.address, network.describeLink(),
                services);
            out.flush();
            final CountDownLatch finished = new CountDownLatch(1);
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                stopping = true;
                try {
                    finished.await(2, TimeUnit.SECONDS);
                } catch (InterruptedException ignored) {
                    Thread.currentThread().interrupt();
                }
            }));
            final IdleStrategy idle = new BackoffIdleStrategy(1000, 100, 1_000, 100_000);
            try {
                while (!stopping) {
                    idle.idle(net.poll());
                }
            } finally {
                finished.countDown();
            }
        }
        return 0;
    }
}
