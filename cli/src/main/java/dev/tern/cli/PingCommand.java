package dev.tern.cli;

import dev.tern.core.net.Ipv4Address;
import dev.tern.core.net.Ipv6Address;
import dev.tern.ipv4.Ipv4Layer;
import dev.tern.ipv4.wire.IcmpHeader;
import dev.tern.ipv6.Ipv6Layer;
import dev.tern.stack.Pinger;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.IdleStrategy;

import java.io.PrintStream;
import java.util.BitSet;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * {@code tern ping [-c N] [-s SIZE] [-i SECONDS] [-W SECONDS] HOST}: ICMP echo over a Tern stack, printed as
 * ping(8) prints it. Exit status as ping(8): 0 when a reply came, 1 when none did, 2 on other errors.
 */
final class PingCommand {
    static final String USAGE = "ping [-c COUNT] [-s SIZE] [-i SECONDS] [-W SECONDS] " + NetworkOptions.USAGE + " HOST";
    static final CommandHelp HELP = new CommandHelp("ping", "[-c COUNT] [-s SIZE] [-i SECONDS] [-W SECONDS] "
        + "[link flags] HOST", "ICMP echo to HOST, printed as ping(8) prints it",
        "Sends ICMP echo requests to HOST (an IPv4 address, or an IPv6 one with --ip6; names are not resolved) and prints each reply and the "
            + "statistics as ping(8) does; Ctrl-C stops it early. Exit status as ping(8): 0 when at least one reply "
            + "came back, 1 when none did, 2 on any other error.",
        java.util.List.of(
            CommandHelp.option("-c COUNT", "stop after COUNT requests", "until interrupted"),
            CommandHelp.option("-s SIZE", "data bytes per request, 0..65507 (above the MTU they are fragmented)", "56"),
            CommandHelp.option("-i SECONDS", "time between requests, at least 0.001", "1"),
            CommandHelp.option("-W SECONDS", "after the last request, how long to wait for replies", "10")),
        true, java.util.List.of("./tern ping -c 3 198.18.0.1", "./tern ping -c 2 -s 8000 198.18.0.1"));

    private final PrintStream out;
    private final PrintStream err;
    private volatile boolean interrupted;

    PingCommand(PrintStream out, PrintStream err) {
        this.out = out;
        this.err = err;
    }

    /** IPv6's send results in the IPv4 layer's terms the loop reports on. */
    private static int ipv4Status(int ipv6Result) {
        return switch (ipv6Result) {
            case Ipv6Layer.OK -> Ipv4Layer.OK;
            case Ipv6Layer.ERR_NO_ROUTE, Ipv6Layer.ERR_NO_SOURCE -> Ipv4Layer.ERR_NO_ROUTE;
            case Ipv6Layer.ERR_MESSAGE_TOO_LONG -> Ipv4Layer.ERR_MESSAGE_TOO_LONG;
            default -> Ipv4Layer.ERR_NO_BUFFER;
        };
    }

    int run(String[] argv) {
        final Set<String> valueFlags = new HashSet<>(NetworkOptions.VALUE_FLAGS);
        valueFlags.addAll(Set.of("-c", "-s", "-i", "-W"));
        final Arguments args = Arguments.parse("ping", argv, valueFlags, Set.of());
        final String host = args.operands(1, 1, USAGE).getFirst();
        final boolean v6 = host.indexOf(':') >= 0;
        final int destination;
        final Ipv6Address destination6;
        try {
            destination = v6 ? 0 : Ipv4Address.parse(host);
            destination6 = v6 ? Ipv6Address.parse(host) : null;
        } catch (IllegalArgumentException e) {
            throw new UsageException("ping: " + e.getMessage() + " (host names are not resolved; give an address)");
        }
        final int count = args.intValue("-c", Integer.MAX_VALUE, 1, Integer.MAX_VALUE);
        final int size = args.intValue("-s", 56, 0, Pinger.MAX_DATA);
        final long intervalNs = (long) (args.doubleValue("-i", 1.0, 0.001, 3600) * 1e9);
        final long lingerNs = (long) (args.doubleValue("-W", 10.0, 0.001, 3600) * 1e9);
        final NetworkOptions network = NetworkOptions.from(args);
        if (v6 && network.ipv6Addresses.isEmpty() && !network.slaac) {
            throw new UsageException("ping: " + host + " is an IPv6 address: give this stack IPv6 with --ip6 ADDR/N "
                + "(or --ip6 auto)");
        }

        try (Network net = network.forDatagrams().open("ping")) {
            final Pinger pinger = net.stack.pinger();
            final Stats stats = new Stats();
            pinger.listener(new Pinger.Listener() {
                @Override
                public void onReply(int source, int sequence, int dataLength, int ttl, long roundTripNs, boolean intact) {
                    final boolean duplicate = stats.seen.get(sequence);
                    stats.seen.set(sequence);
                    stats.reply(roundTripNs, duplicate);
                    out.printf("%d bytes from %s: icmp_seq=%d ttl=%d time=%s ms%s%s%n", dataLength + IcmpHeader.LENGTH,
                        Ipv4Address.format(source), sequence, ttl, millis(roundTripNs), duplicate ? " (DUP!)" : "",
                        intact ? "" : " (wrong data)");
                    if (!intact) {
                        stats.corrupted++;
                    }
                }

                @Override
                public void onReply6(long sourceHigh, long sourceLow, int sequence, int dataLength, int hopLimit,
                                     long roundTripNs, boolean intact) {
                    final boolean duplicate = stats.seen.get(sequence);
                    stats.seen.set(sequence);
                    stats.reply(roundTripNs, duplicate);
                    out.printf("%d bytes from %s: icmp_seq=%d ttl=%d time=%s ms%s%s%n", dataLength + IcmpHeader.LENGTH,
                        Ipv6Address.format(sourceHigh, sourceLow), sequence, hopLimit, millis(roundTripNs),
                        duplicate ? " (DUP!)" : "", intact ? "" : " (wrong data)");
                    if (!intact) {
                        stats.corrupted++;
                    }
                }

                @Override
                public void onError(int reporter, int type, int code, int sequence) {
                    stats.errors++;
                    out.printf("From %s icmp_seq=%d %s%n", Ipv4Address.format(reporter), sequence, describe(type, code));
                }
            });
            if (v6) {
                // Linux's ping for IPv6 prints no total size, and waits, as it, for the address to leave DAD.
                out.printf("PING %s (%s) %d data bytes%n", host, destination6, size);
                final long settleBy = System.nanoTime() + 3_000_000_000L;
                while (!net.stack.ipv6().addresses().settled() && System.nanoTime() - settleBy < 0) {
                    net.poll();
                    Thread.onSpinWait();
                }
            } else {
                out.printf("PING %s (%s) %d(%d) bytes of data.%n", host, host, size, size + 28);
            }
            final CountDownLatch finished = new CountDownLatch(1);
            final Thread hook = new Thread(() -> {
                interrupted = true;
                try {
                    finished.await(2, TimeUnit.SECONDS);
                } catch (InterruptedException ignored) {
                    Thread.currentThread().interrupt();
                }
            });
            Runtime.getRuntime().addShutdownHook(hook);
            // Ctrl-C ends the run as ping(8)'s does: statistics, then the status of the replies (0 if any came),
            // not the JVM's 130 for a shutdown by SIGINT. A second Ctrl-C goes to the JVM's own handler.
            final InterruptHandler onInterrupt = new InterruptHandler(() -> interrupted = true);
            final IdleStrategy idle = new BackoffIdleStrategy(1000, 100, 1_000, 50_000);
            final long startNs = System.nanoTime();
            long nextSendNs = startNs;
            long lastSendNs = startNs;
            int sent = 0;
            try {
                while (!interrupted) {
                    final long now = System.nanoTime();
                    if (sent < count && now - nextSendNs >= 0) {
                        final int result = v6 ? ipv4Status(pinger.send6(destination6.high(), destination6.low(), sent + 1,
                            size, now)) : pinger.send(destination, sent + 1, size, now);
                        sent++;
                        lastSendNs = now;
                        nextSendNs += intervalNs;
                        if (result == Ipv4Layer.ERR_NO_ROUTE) {
                            out.flush();
                            err.println("ping: connect: Network is unreachable");
                            return 2;
                        }
                        if (result == Ipv4Layer.ERR_MESSAGE_TOO_LONG) {
                            out.flush();
                            err.println("ping: local error: message too long");
                            return 2;
                        }
                        if (result != Ipv4Layer.OK) {
                            stats.errors++;
                            out.flush();
                            err.printf("ping: sendmsg: No buffer space available (icmp_seq=%d)%n", sent);
                        }
                    }
                    final int work = net.poll();
                    if (sent == count && (stats.received + stats.errors >= sent || now - lastSendNs > lingerNs)) {
                        break;
                    }
                    idle.idle(work);
                }
                final long elapsedMs = (System.nanoTime() - startNs) / 1_000_000;
                out.printf("%n--- %s ping statistics ---%n", host);
                out.printf("%d packets transmitted, %d received, %s%d%% packet loss, time %dms%n", sent, stats.received,
                    stats.errors > 0 ? "+" + stats.errors + " errors, " : "",
                    sent == 0 ? 0 : (int) Math.round(100.0 * (sent - stats.received) / sent), elapsedMs);
                if (stats.received > 0) {
                    out.printf("rtt min/avg/max/mdev = %s/%s/%s/%s ms%n", millis(stats.minNs), millis(stats.averageNs()),
                        millis(stats.maxNs), millis(stats.deviationNs()));
                }
                return stats.received > 0 && stats.corrupted == 0 ? 0 : 1;
            } finally {
                onInterrupt.close();
                finished.countDown();
                if (!interrupted) {
                    Runtime.getRuntime().removeShutdownHook(hook);
                }
            }
        }
    }

    /**
     * While open, SIGINT runs {@code action} instead of shutting the JVM down; the first signal restores the JVM's
     * handler, so a second Ctrl-C still ends a command that does not stop. Where the signal cannot be handled (a
     * JVM run with -Xrs), Ctrl-C shuts down as before.
     */
    @SuppressWarnings("restriction")
    static final class InterruptHandler implements AutoCloseable {
        private static final sun.misc.Signal INT = new sun.misc.Signal("INT");
        private final sun.misc.SignalHandler previous;

        InterruptHandler(Runnable action) {
            sun.misc.SignalHandler installed;
            final sun.misc.SignalHandler[] before = new sun.misc.SignalHandler[1];
            try {
                installed = sun.misc.Signal.handle(INT, signal -> {
                    restore(before[0]);
                    action.run();
                });
            } catch (IllegalArgumentException e) {
                installed = null;
            }
            before[0] = installed;
            previous = installed;
        }

        private static void restore(sun.misc.SignalHandler handler) {
            if (handler != null) {
                try {
                    sun.misc.Signal.handle(INT, handler);
                } catch (IllegalArgumentException ignored) {
                    // nothing to restore to
                }
            }
        }

        @Override
        public void close() {
            restore(previous);
        }
    }

    static String describe(int type, int code) {
        if (type == IcmpHeader.DESTINATION_UNREACHABLE) {
            return switch (code) {
                case IcmpHeader.NET_UNREACHABLE -> "Destination Net Unreachable";
                case IcmpHeader.HOST_UNREACHABLE -> "Destination Host Unreachable";
                case IcmpHeader.PROTOCOL_UNREACHABLE -> "Destination Protocol Unreachable";
                case IcmpHeader.PORT_UNREACHABLE -> "Destination Port Unreachable";
                case IcmpHeader.FRAGMENTATION_NEEDED -> "Frag needed and DF set";
                default -> "Destination Unreachable, code " + code;
            };
        }
        if (type == IcmpHeader.TIME_EXCEEDED) {
            return code == 0 ? "Time to live exceeded" : "Frag reassembly time exceeded";
        }
        return "ICMP type " + type + " code " + code;
    }

    private static String millis(long nanos) {
        final double ms = nanos / 1e6;
        return ms < 10 ? String.format("%.3f", ms) : ms < 100 ? String.format("%.2f", ms) : String.format("%.1f", ms);
    }

    /** Round-trip statistics as ping(8) reports them. */
    private static final class Stats {
        final BitSet seen = new BitSet(65536);
        int received;
        int errors;
        int corrupted;
        long minNs = Long.MAX_VALUE;
        long maxNs;
        double sum;
        double sumSquares;

        void reply(long rttNs, boolean duplicate) {
            if (duplicate) {
                return;
            }
            received++;
            minNs = Math.min(minNs, rttNs);
            maxNs = Math.max(maxNs, rttNs);
            sum += rttNs;
            sumSquares += (double) rttNs * rttNs;
        }

        long averageNs() {
            return (long) (sum / received);
        }

        long deviationNs() {
            final double mean = sum / received;
            return (long) Math.sqrt(Math.max(0, sumSquares / received - mean * mean));
        }
    }
}
