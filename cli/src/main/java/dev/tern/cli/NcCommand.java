package dev.tern.cli;

import dev.tern.core.net.Ipv4Address;
import dev.tern.stack.TcpConnection;
import dev.tern.stack.TcpListener;
import dev.tern.stack.TernSocketException;
import dev.tern.stack.UdpSocket;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.IdleStrategy;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * {@code tern nc [-u] [-l] [--join GROUP] [-w SECONDS] [HOST] PORT}: netcat over a Tern stack, with OpenBSD
 * netcat's habits: stdin goes to the peer, what the peer sends goes to stdout.
 *
 * <p>TCP (the default): a client connects to HOST:PORT, a listener ({@code -l PORT}) accepts one connection;
 * the end of stdin half-closes (shutdownOutput) and the command exits when the peer closes its side.
 *
 * <p>UDP ({@code -u}): each chunk read from stdin is one datagram. A client sends to HOST:PORT and, once stdin
 * ends, waits {@code -w} seconds (default 1) for replies, then exits. A listener ({@code -l PORT}) prints every
 * datagram, optionally from a multicast group it joined ({@code --join}), and sends stdin to whoever sent last;
 * it runs until interrupted.
 */
final class NcCommand {
    static final String USAGE = "nc [-u] [-l] [--join GROUP] [-w SECONDS] " + NetworkOptions.USAGE + " [HOST] PORT";

    private final InputStream in;
    private final PrintStream out;
    private final PrintStream err;
    private volatile boolean interrupted;

    NcCommand(InputStream in, PrintStream out, PrintStream err) {
        this.in = in;
        this.out = out;
        this.err = err;
    }

    int run(String[] argv) throws IOException {
        final Set<String> valueFlags = new HashSet<>(NetworkOptions.VALUE_FLAGS);
        valueFlags.addAll(Set.of("--join", "-w"));
        final Arguments args = Arguments.parse("nc", argv, valueFlags, Set.of("-u", "-l"));
        final boolean listen = args.has("-l");
        final java.util.List<String> operands = listen ? args.operands(1, 1, USAGE) : args.operands(2, 2, USAGE);
        final int port = parsePort(operands.getLast());
        final int host = listen ? 0 : parseAddress(operands.getFirst(), "HOST");
        final int group = args.has("--join") ? parseAddress(args.value("--join", null), "--join") : 0;
        if (group != 0 && !Ipv4Address.isMulticast(group)) {
            throw new UsageException("nc: --join wants a multicast group (224.0.0.0/4), got " + Ipv4Address.format(group));
        }
        if (group != 0 && !listen) {
            throw new UsageException("nc: --join is for a listener (-l)");
        }
        final long lingerNs = (long) (args.doubleValue("-w", 1.0, 0, 3600) * 1e9);
        final NetworkOptions network = NetworkOptions.from(args);
        if (!args.has("-u")) {
            if (group != 0) {
                throw new UsageException("nc: --join needs UDP (-u)");
            }
            return runTcp(network, listen, host, port);
        }
        try (Network net = network.open("nc"); Arena arena = Arena.ofConfined()) {
            final MemorySegment buffer = arena.allocate(65536);
            final UdpSocket socket = net.stack.openUdp();
            if (listen) {
                socket.reuseAddress(true);
                socket.bind(port);
                if (group != 0) {
                    socket.join(group);
                }
            } else {
                socket.connect(host, port);
            }
            final ConcurrentLinkedQueue<byte[]> input = new ConcurrentLinkedQueue<>();
            final Thread reader = startReader(input);
            Runtime.getRuntime().addShutdownHook(new Thread(() -> interrupted = true));
            final IdleStrategy idle = new BackoffIdleStrategy(100, 10, 10_000, 1_000_000);
            int replyAddress = 0;
            int replyPort = 0;
            long inputEndedNs = 0;
            while (!interrupted) {
                int work = net.poll();
                for (byte[] chunk; (chunk = input.peek()) != null; ) {
                    if (chunk.length == 0) {
                        input.poll();
                        if (!listen) {
                            inputEndedNs = System.nanoTime();
                        }
                        continue;
                    }
                    final boolean queued = listen
                        ? replyPort == 0 || socket.sendTo(replyAddress, replyPort, MemorySegment.ofArray(chunk), 0, chunk.length)
                        : socket.send(MemorySegment.ofArray(chunk), 0, chunk.length);
                    if (!queued) {
                        break;
                    }
                    input.poll();
                    work++;
                }
                int length;
                try {
                    while ((length = socket.receive(buffer, 0, (int) buffer.byteSize())) >= 0) {
                        out.write(buffer.asSlice(0, length).toArray(ValueLayout.JAVA_BYTE));
                        out.flush();
                        replyAddress = socket.lastSourceAddress();
                        replyPort = socket.lastSourcePort();
                        work++;
                    }
                } catch (TernSocketException e) {
                    err.println("tern: nc: " + e.getMessage());
                    if (!listen) {
                        return 1;
                    }
                }
                if (inputEndedNs != 0 && System.nanoTime() - inputEndedNs > lingerNs) {
                    break;
                }
                idle.idle(work);
            }
            reader.interrupt();
            socket.close();
        }
        return 0;
    }

    /**
     * TCP: one connection (the one we open, or the first we accept). stdin goes to the peer and its end
     * half-closes (shutdownOutput); what the peer sends goes to stdout; when the peer closes, we exit.
     */
    private int runTcp(NetworkOptions network, boolean listen, int host, int port) throws IOException {
        try (Network net = network.open("nc"); Arena arena = Arena.ofConfined()) {
            final MemorySegment buffer = arena.allocate(65536);
            final TcpListener listener = listen ? net.stack.listen(port, 1) : null;
            TcpConnection connection = listen ? null : net.stack.connect(host, port);
            final ConcurrentLinkedQueue<byte[]> input = new ConcurrentLinkedQueue<>();
            final Thread reader = startReader(input);
            Runtime.getRuntime().addShutdownHook(new Thread(() -> interrupted = true));
            final IdleStrategy idle = new BackoffIdleStrategy(100, 10, 10_000, 1_000_000);
            byte[] pending = null;
            int pendingOffset = 0;
            boolean inputEnded = false;
            try {
                while (!interrupted) {
                    int work = net.poll();
                    if (connection == null) {
                        connection = listener.accept();
                        if (connection == null) {
                            idle.idle(work);
                            continue;
                        }
                        listener.close(); // like OpenBSD nc -l: one connection
                    }
                    if (connection.isEnded() && connection.error() != dev.tern.core.io.SocketError.NONE) {
                        err.println("tern: nc: " + (listen ? "connection" : "connect to "
                            + Ipv4Address.format(host) + " port " + port) + ": "
                            + dev.tern.core.io.SocketError.describe(connection.error()));
                        return 1;
                    }
                    if (connection.isConnected()) {
                        while (!inputEnded) {
                            if (pending == null) {
                                pending = input.poll();
                                pendingOffset = 0;
                                if (pending == null) {
                                    break;
                                }
                                if (pending.length == 0) {
                                    inputEnded = true;
                                    pending = null;
                                    connection.shutdownOutput();
                                    break;
                                }
                            }
                            final int n = connection.write(MemorySegment.ofArray(pending), pendingOffset,
                                pending.length - pendingOffset);
                            if (n == 0) {
                                break;
                            }
                            pendingOffset += n;
                            work++;
                            if (pendingOffset == pending.length) {
                                pending = null;
                            }
                        }
                    }
                    final int n = connection.read(buffer, 0, (int) buffer.byteSize());
                    if (n > 0) {
                        out.write(buffer.asSlice(0, n).toArray(ValueLayout.JAVA_BYTE));
                        out.flush();
                        work++;
                    } else if (n < 0) {
                        break; // the peer closed its side: we are done, as OpenBSD nc with -N
                    }
                    idle.idle(work);
                }
            } catch (TernSocketException e) {
                err.println("tern: nc: " + e.getMessage());
                return 1;
            } finally {
                reader.interrupt();
                if (connection != null) {
                    connection.close();
                    for (int i = 0; i < 100; i++) {
                        net.poll(); // let the FIN (or RST) leave before the stacks go away
                    }
                }
            }
        }
        return 0;
    }

    /** Reads stdin on its own thread (it blocks); an empty array marks the end. */
    private Thread startReader(ConcurrentLinkedQueue<byte[]> input) {
        final Thread reader = new Thread(() -> {
            final byte[] chunk = new byte[8192];
            try {
                int n;
                while ((n = in.read(chunk)) > 0) {
                    input.add(java.util.Arrays.copyOf(chunk, n));
                }
            } catch (IOException e) {
                // stdin closed under us: same as its end
            }
            input.add(new byte[0]);
        }, "tern-nc-stdin");
        reader.setDaemon(true);
        reader.start();
        return reader;
    }

    private static int parsePort(String text) {
        try {
            final int port = Integer.parseInt(text);
            if (port >= 1 && port <= 65535) {
                return port;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new UsageException("nc: PORT must be 1..65535, got '" + text + "'");
    }

    private static int parseAddress(String text, String what) {
        try {
            return Ipv4Address.parse(text);
        } catch (IllegalArgumentException e) {
            throw new UsageException("nc: " + what + ": " + e.getMessage());
        }
    }
}
