package dev.tern.cli;

import dev.tern.stack.LinkIdleStrategy;
import dev.tern.stack.NetStack;
import dev.tern.stack.TernSocketException;
import dev.tern.tcp.TcpOptions;
import org.agrona.concurrent.IdleStrategy;

import java.io.PrintStream;
import java.util.HashSet;
import java.util.Set;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.IntSupplier;

/**
 * {@code tern serve [--echo P] [--discard P] [--udp-echo P] [--http P DIR] [--cc NAME] [--tcp-trace FILE]
 * [--keepalive-timeout S] [--shards N]}: runs a stack that answers ARP and ping, plus the services asked for, until interrupted. {@code --cc}
 * chooses the congestion control of every accepted connection; {@code --tcp-trace FILE} traces each one's sender into
 * its own file ({@code FILE} numbered: {@code trace-1.csv}, {@code trace-2.csv}, ...). {@code --keepalive-timeout S}
 * closes an HTTP connection that waits S seconds for a request (0: every response closes). {@code --shards N} serves from
 * N shards, each on a thread of its own with its own copy of every service (one per core by default on AF_PACKET).
 */
final class ServeCommand {
    static final int MAX_KEEPALIVE_SECONDS = 86_400;
    private static final int MIN_BUFFER = dev.tern.tcp.TcpConfig.MIN_BUFFER;
    private static final int MAX_BUFFER = dev.tern.tcp.TcpConfig.MAX_BUFFER;
    static final String USAGE = "serve [--echo P] [--discard P] [--udp-echo P] [--http P DIR] [--keepalive-timeout S] "
        + "[--request-timeout S] [--shutdown-linger S] [--max-per-source N] [--ecn MODE] "
        + TcpCommandOptions.USAGE + " [--shards N] " + NetworkOptions.USAGE;
    static final CommandHelp HELP = new CommandHelp("serve", "[--echo P] [--discard P] [--udp-echo P] [--http P DIR] "
        + "[--keepalive-timeout S] [--request-timeout S] [--shutdown-linger S] [--max-per-source N] [--ecn MODE] [--cc NAME] [--tcp-trace FILE] [--shards N] [link flags]", "a stack answering ARP, ping and the services asked for",
        "Runs a Tern stack that answers ARP and ping, plus the services asked for, until interrupted (Ctrl-C).",
        java.util.List.of(
            CommandHelp.option("--echo P", "TCP echo (RFC 862) on port P", "off"),
            CommandHelp.option("--discard P", "TCP discard (RFC 863) on port P", "off"),
            CommandHelp.option("--udp-echo P", "UDP echo on port P", "off"),
            CommandHelp.option("--http P DIR", "HTTP/1.1 GET and HEAD of the files under DIR on port P "
                + "(persistent connections, pipelining)", "off"),
            CommandHelp.option("--keepalive-timeout S", "close an HTTP connection that waits S seconds for a request, "
                + "with a FIN (counted as http.conn.idle_timeouts); 0: close after each response; 0.."
                + MAX_KEEPALIVE_SECONDS, HttpFileService.DEFAULT_KEEPALIVE_SECONDS + " (as nginx)"),
            CommandHelp.option("--request-timeout S", "an HTTP request's head must be whole S seconds after its first "
                + "byte, and its body S seconds after the head, however the bytes trickle in; else 408 and close "
                + "(counted as http.conn.header_timeouts, http.conn.body_timeouts); 1.." + MAX_KEEPALIVE_SECONDS,
                HttpFileService.HEADER_TIMEOUT_SECONDS + " (as nginx's client_header_timeout)"),
            StopOnSignal.LINGER_HELP,
            CommandHelp.option("--max-per-source N", "connections one source address may hold in each TCP service "
                + "(echo, discard, HTTP), per shard; one more is reset as it is accepted (counted as "
                + "serve.conn.source_limit); 1.." + dev.tern.tcp.TcpConfig.MAX_CONNECTIONS, "no limit"),
            NetworkOptions.ECN_HELP,
            CommandHelp.option("--cc NAME", "congestion control of every accepted connection: cubic, "
                + "newreno, none, dctcp (RFC 8257, ECN on), bbr (BBRv3), a name a jar on the class path offers (TERN_CLASSPATH), or a class name",
                "cubic"),
            CommandHelp.option("--tcp-trace FILE", "trace each accepted connection's sender to its own CSV file, "
                + "numbered (trace.csv gives trace-1.csv, trace-2.csv, ...)", "none"),
            NetworkOptions.MAX_CONNECTIONS_HELP,
            CommandHelp.option("--buffer-size B", "send and receive buffer of every accepted connection, in bytes: a "
                + "power of two, " + MIN_BUFFER + ".." + MAX_BUFFER + " (rings are mapped on use; an idle HTTP "
                + "connection gives them back)",
                "HTTP 131072; echo and discard 4 MiB"),
            NetworkOptions.MEMORY_LIMIT_HELP,
            CommandHelp.option("--shards N", "serve from N stacks sharing the address, a thread each; the link steers "
                + "each flow to one (afpacket: a fanout group; memory: the wire); 1..256", "one per core on afpacket, "
                + "else 1")),
        true, java.util.List.of("./tern serve --echo 7 --udp-echo 7 --http 8080 /tmp/www --link afpacket:tern0 "
            + "--ip 198.18.0.2/24"));

    private final PrintStream out;
    private volatile boolean stopping;

    ServeCommand(PrintStream out) {
        this.out = out;
    }

    private static int parsePort(String text, String flag) {
        try {
            final int port = Integer.parseInt(text);
            if (port >= 1 && port <= 65535) {
                return port;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new UsageException("serve: " + flag + " port must be 1..65535, got '" + text + "'");
    }

    /** {@code service} with at most {@code maxPerSource} connections per source; 0: no limit. */
    private static TcpService limited(TcpService service, int maxPerSource) {
        return maxPerSource > 0 ? service.limitPerSource(maxPerSource) : service;
    }

    int run(String[] argv) throws TernSocketException {
        // --http takes two values (PORT DIR): take it out before the generic parser sees the rest.
        final java.util.List<String> rest = new java.util.ArrayList<>(java.util.List.of(argv));
        int httpPort = 0;
        java.nio.file.Path httpRoot = null;
        final int http = rest.indexOf("--http");
        if (http >= 0) {
            if (rest.size() < http + 3) {
                throw new UsageException("serve: --http needs a port and a directory: --http PORT DIR");
            }
            httpPort = parsePort(rest.get(http + 1), "--http");
            httpRoot = java.nio.file.Path.of(rest.get(http + 2));
            if (!java.nio.file.Files.isDirectory(httpRoot)) {
                throw new UsageException("serve: --http: " + httpRoot + " is not a directory");
            }
            rest.subList(http, http + 3).clear();
        }
        final Set<String> valueFlags = new HashSet<>(NetworkOptions.VALUE_FLAGS);
        valueFlags.addAll(Set.of("--echo", "--discard", "--udp-echo", "--shards", "--keepalive-timeout", "--request-timeout",
            "--shutdown-linger",
            "--max-per-source", "--max-connections", "--buffer-size", "--memory-limit", "--ecn"));
        valueFlags.addAll(TcpCommandOptions.VALUE_FLAGS);
        final Arguments args = Arguments.parse("serve", rest.toArray(String[]::new), valueFlags, Set.of());
        args.operands(0, 0, USAGE);
        final TcpCommandOptions tcp = TcpCommandOptions.from("serve", args);
        final int udpEcho = args.intValue("--udp-echo", 0, 1, 65535);
        final int echo = args.intValue("--echo", 0, 1, 65535);
        final int discard = args.intValue("--discard", 0, 1, 65535);
        final int keepAliveSeconds = args.intValue("--keepalive-timeout", HttpFileService.DEFAULT_KEEPALIVE_SECONDS, 0,
            MAX_KEEPALIVE_SECONDS);
        if (args.has("--keepalive-timeout") && httpPort == 0) {
            throw new UsageException("serve: --keepalive-timeout is for --http, which is not given");
        }
        final int requestSeconds = args.intValue("--request-timeout", HttpFileService.HEADER_TIMEOUT_SECONDS, 1,
            MAX_KEEPALIVE_SECONDS);
        if (args.has("--request-timeout") && httpPort == 0) {
            throw new UsageException("serve: --request-timeout is for --http, which is not given");
        }
        final long lingerNs = StopOnSignal.lingerNs(args);
        final int maxPerSource = args.intValue("--max-per-source", 0, 1, dev.tern.tcp.TcpConfig.MAX_CONNECTIONS);
        if (args.has("--max-per-source") && echo == 0 && discard == 0 && httpPort == 0) {
            throw new UsageException("serve: --max-per-source is for --echo, --discard and --http, none of which is given");
        }
        final int bufferSize = NetworkOptions.bufferSize("serve", args);
        final NetworkOptions network = NetworkOptions.from(args).maxConnections(NetworkOptions.maxConnections(args))
            .memoryLimit(NetworkOptions.memoryLimit("serve", args)).ecn(NetworkOptions.ecn("serve", args));
        final int shards = network.shards("serve", args);
        final StopOnSignal stop = new StopOnSignal(lingerNs, () -> stopping = true);
        try (Network net = network.open("serve", shards); ConnectionTraces traces = tcp.traces(true)) {
            final TcpOptions options = bufferSize == 0 ? tcp.apply(TcpOptions.DEFAULT)
                : tcp.apply(TcpOptions.DEFAULT.withBuffers(bufferSize, bufferSize));
            // Echo and discard are bulk services: nc's 4 MiB buffers, so a window is not what limits a transfer
            // (Linux autotunes its receive buffer up to 6 MiB). Rings grow with use, so an idle connection pays
            // nothing for it. HTTP keeps the default: many short connections.
            final TcpOptions bulk = bufferSize == 0 ? tcp.apply(NcCommand.TCP_BUFFERS) : options;
            final StringBuilder services = new StringBuilder("ARP and ping");
            if (udpEcho != 0) {
                net.serveUdpEcho(udpEcho);
                services.append(", UDP echo on port ").append(udpEcho)
                    .append(net.stack.ipv6() != null ? " (IPv4 and IPv6)" : "");
            }
            if (echo != 0) {
                net.serveOnEveryShard(shard -> limited(new TcpService.Echo(shard, echo, bulk, traces), maxPerSource));
                services.append(", TCP echo on port ").append(echo);
            }
            if (discard != 0) {
                net.serveOnEveryShard(shard -> limited(new TcpService.Discard(shard, discard, bulk, traces), maxPerSource));
                services.append(", TCP discard on port ").append(discard);
            }
            if (httpPort != 0) {
                final java.nio.file.Path root = httpRoot;
                final int port = httpPort;
                net.serveOnEveryShard(shard -> limited(new HttpFileService(shard, port, root, keepAliveSeconds,
                    requestSeconds, options, traces), maxPerSource));
                services.append(", HTTP on port ").append(httpPort).append(" from ").append(httpRoot)
                    .append(keepAliveSeconds > 0 ? " (idle connections closed after " + keepAliveSeconds + " s)"
                        : " (a connection per request)");
            }
            out.printf("tern serve: %s on %s, answering %s; Ctrl-C stops%n", network.address, network.describeLink(),
                services);
            if (net.shardCount() > 1) {
                out.printf("tern serve: %d shards, a thread each; the link steers each TCP and UDP flow to one "
                    + "(ARP, ping and multicast: shard 0)%n", net.shardCount());
            }
            out.flush();
            final java.util.List<Thread> shardThreads = new java.util.ArrayList<>();
            for (int k = 1; k < net.shardCount(); k++) {
                final int shard = k;
                shardThreads.add(startShard(k, net.shards.get(k).name(), net.shardCount(), () -> runShard(net, shard)));
            }
            try {
                runShard(net, 0);
            } catch (Error e) {
                shardStopped(0, net.shards.get(0).name(), net.shardCount(), e);
            } finally {
                stopping = true;
                for (Thread thread : shardThreads) {
                    try {
                        thread.join(2_000);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
            }
            if (stop.requested()) {
                tellPeers(net, lingerNs);
            }
        } finally {
            stop.stopped();
        }
        if (shardStopped != null) {
            throw new CommandFailure(shardStopped);
        }
        return 0;
    }

    /**
     * The command is stopping (its shard threads have ended; this thread polls the shards now): with a linger, every
     * listener stops and every connection gets a FIN after its data, and the shards run until each connection has
     * ended or the linger is over; then every connection a peer still knows of is reset, so that no peer is left
     * half-open. One line on stderr says what was done.
     */
    private void tellPeers(Network net, long lingerNs) {
        int finished = 0;
        if (lingerNs > 0) {
            for (NetStack shard : net.shards) {
                finished += shard.shutdown();
            }
            final long deadlineNs = System.nanoTime() + lingerNs;
            while (!net.shards.stream().allMatch(NetStack::connectionsEnded) && System.nanoTime() - deadlineNs < 0) {
                int work = 0;
                for (NetStack shard : net.shards) {
                    work += shard.doWork();
                }
                if (work == 0) {
                    java.util.concurrent.locks.LockSupport.parkNanos(100_000);
                }
            }
        }
        int reset = 0;
        for (NetStack shard : net.shards) {
            reset += shard.resetConnections();
        }
        if (finished + reset > 0) {
            System.err.println("tern: serve: stopping: " + (lingerNs > 0 ? finished + " connection(s) closed with a "
                + "FIN, " : "") + reset + " connection(s) reset");
        }
    }

    /**
     * Why a shard's loop ended before the command was stopped (null while every shard runs). Its flows would go
     * unanswered while the process answers ping on shard 0, a partial outage nobody would notice; so the command
     * stops every shard and fails with this line (exit 1), and a supervisor restarts it whole.
     */
    private volatile String shardStopped;

    /** Shard {@code k}'s loop on a thread of its own; an Error that ends it stops the command ({@link #shardStopped}). */
    Thread startShard(int k, String name, int shards, Runnable loop) {
        return Thread.ofPlatform().name("tern-serve-shard-" + k)
            .uncaughtExceptionHandler((thread, error) -> shardStopped(k, name, shards, error))
            .start(loop);
    }

    private void shardStopped(int k, String name, int shards, Throwable error) {
        if (shardStopped == null) {
            shardStopped = "serve: shard " + k + " of " + shards + " (" + name + ") stopped: " + error
                + "; its flows would go unanswered, so every shard stops";
        }
        stopping = true;
    }

    /** Whether the command has been told to stop, or a shard stopped it; for tests. */
    boolean stopping() {
        return stopping;
    }

    /** The line the command fails with because a shard stopped, or null; for tests. */
    String shardStopped() {
        return shardStopped;
    }

    /**
     * Polls shard {@code k} and its services until stopped. A turn that throws (a bug: bad input is counted, never
     * thrown) is counted as the shard's {@code stack.poll_errors} and named on stderr once, with the shard; the shard
     * goes on with its next turn, as a {@code StackRunner} does, so the flows steered to it are not left unserved,
     * and the other shards are not touched. With one shard the command fails instead.
     */
    private void runShard(Network net, int k) {
        // Sleeps in poll(2) on the shard's link when idle (a memory link: Agrona's backoff), see LinkIdleStrategy.
        final NetStack shard = net.shards.get(k);
        final boolean[] said = {false};
        // tern stat shows each shard's liveness: 1 while its loop runs, 0 once it has ended, however it ended.
        final org.agrona.concurrent.status.AtomicCounter running = shard.counters().counter("stack.running");
        running.setRelease(1);
        try {
            pollUntilStopped(() -> net.pollShard(k), new LinkIdleStrategy(shard), () -> stopping, error -> {
                if (net.shardCount() == 1) {
                    throw error;
                }
                shard.pollFailed();
                if (!said[0]) {
                    said[0] = true;
                    System.err.println("tern: serve: shard " + k + " of " + net.shardCount() + " (" + shard.name()
                        + ") failed: " + error + "; counted as stack.poll_errors, it goes on, and so do the other shards");
                }
            });
        } finally {
            running.setRelease(0);
        }
    }

    /**
     * A shard's loop: turns until {@code stopping}, each turn's work to {@code idle}; a turn that throws goes to
     * {@code failed} (which may rethrow to end the loop) and the loop goes on.
     */
    static void pollUntilStopped(IntSupplier turn, IdleStrategy idle, BooleanSupplier stopping,
                                 Consumer<RuntimeException> failed) {
        while (!stopping.getAsBoolean()) {
            try {
                idle.idle(turn.getAsInt());
            } catch (RuntimeException e) {
                failed.accept(e);
            }
        }
    }
}
