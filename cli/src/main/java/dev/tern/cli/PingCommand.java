package dev.tern.cli;

import dev.tern.core.net.Ipv4Address;
import dev.tern.ipv4.Ipv4Layer;
import dev.tern.ipv4.wire.IcmpHeader;
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

    private final PrintStream out;
    private volatile boolean interrupted;

    PingCommand(PrintStream out) {
        this.out = out;
    }

    int run(String[] argv) {
        final Set<String> valueFlags = new HashSet<>(NetworkOptions.VALUE_FLAGS);
        valueFlags.addAll(Set.of("-c", "-s", "-i", "-W"));
        final Arguments args = Arguments.parse("ping", argv, valueFlags, Set.of());
        final String host = args.operands(1, 1, USAGE).getFirst();
        final int destination;
        try {
            destination = Ipv4Address.parse(host);
        } catch (IllegalArgumentException e) {
            throw new UsageException("ping: " + e.getMessage() + " (host names are not resolved; give an address)");
        }
        final int count = args.intValue("-c", Integer.MAX_VALUE, 1, Integer.MAX_VALUE);
        final int size = args.intValue("-s", 56, 0, Pinger.MAX_DATA);
        final long intervalNs = (long) (args.doubleValue("-i", 1.0, 0.001, 3600) * 1e9);
        final long lingerNs = (long) (args.doubleValue("-W", 10.0, 0.001, 3600) * 1e9);
        final NetworkOptions network = NetworkOptions.from(args);

        try (Network net = network.open("ping")) {
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
                public void onError(int reporter, int type, int code, int sequence) {
                    stats.errors++;
                    out.printf("From %s icmp_seq=%d %s%n", Ipv4Address.format(reporter), sequence, describe(type, code));
                }
            });
            out.printf("PING %s (%s) %d(%d) bytes of data.%n", host, host, size, size + 28);
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
            final IdleStrategy idle = new BackoffIdleStrategy(1000, 100, 1_000, 50_000);
            final long startNs = System.nanoTime();
            long nextSendNs = startNs;
            long lastSendNs = startNs;
            int sent = 0;
            try {
                while (!interrupted) {
                    final long now = System.nanoTime();
                    if (sent < count && now - nextSendNs >= 0) {
                        final int result = pinger.send(destination, sent + 1, size, now);
                        sent++;
                        lastSendNs = now;
                        nextSendNs += intervalNs;
                        if (result == Ipv4Layer.ERR_NO_ROUTE) {
                            out.println("ping: connect: Network is unreachable");
                            return 2;
                        }
                        if (result == Ipv4Layer.ERR_MESSAGE_TOO_LONG) {
                            out.println("ping: local error: message too long");
                            return 2;
                        }
                        if (result != Ipv4Layer.OK) {
                            stats.errors++;
                            out.printf("ping: sendmsg: No buffer space available (icmp_seq=%d)%n", sent);
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
                finished.countDown();
                if (!interrupted) {
                    Runtime.getRuntime().removeShutdownHook(hook);
                }
            }
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
