package dev.tern.cli;

import dev.tern.core.io.SocketError;
import dev.tern.core.net.Ipv4Address;
import dev.tern.stack.TcpConnection;
import dev.tern.stack.TcpListener;
import dev.tern.stack.TernSocketException;
import dev.tern.stack.UdpSocket;
import dev.tern.tcp.TcpOptions;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.IdleStrategy;

import java.io.FileDescriptor;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.ReadableByteChannel;
import java.nio.channels.WritableByteChannel;
import java.util.HashSet;
import java.util.Set;

/**
 * {@code tern nc [-u] [-l] [--join GROUP] [-w SECONDS] [HOST] PORT}: netcat over a Tern stack, with OpenBSD
 * netcat's habits: stdin goes to the peer, what the peer sends goes to stdout.
 *
 * <p>TCP (the default): a client connects to HOST:PORT, a listener ({@code -l PORT}) accepts one connection;
 * the end of stdin half-closes (shutdownOutput) and the command exits when the peer closes its side. {@code -w}
 * bounds the client's connect and the connection's idle time, as netcat's: a peer that does not answer within
 * SECONDS, or a connection on which no byte moved either way for SECONDS, gets one line on stderr and exit status 1
 * (without {@code -w} the connect lasts as long as TCP retries its SYN, and a connection may idle for ever). As
 * OpenBSD netcat's, a listener waits for its connection as long as it takes.
 *
 * <p>UDP ({@code -u}): each chunk read from stdin is one datagram. A client sends to HOST:PORT and, once stdin
 * ends, waits {@code -w} seconds (default 1) for replies, then exits. A listener ({@code -l PORT}) prints every
 * datagram, optionally from a multicast group it joined ({@code --join}), and sends stdin to whoever sent last;
 * it runs until interrupted.
 *
 * <p>As fast as the stack: the link is opened as the veth benchmark opens it (see {@link NetworkOptions}: the vnet
 * header, so TCP hands the kernel 64 KiB segments to cut or pass to the NIC whole), a TCP connection gets 4 MiB
 * buffers each way (as the benchmark's), and stdin and stdout move in 256 KiB blocks through reusable direct
 * buffers on threads of their own ({@link StreamPump}): the stack's thread copies a block into the send ring, and
 * received TCP bytes straight from the link's frames into a block (zero-copy receive, {@link StdoutSink}: the receive
 * ring holds only what arrives while every block waits for stdout), and never waits on the terminal or the pipe.
 */
final class NcCommand {
    static final String USAGE = "nc [-u] [-l] [--join GROUP] [-w SECONDS] [--shutdown-linger S] [--ecn MODE] "
        + TcpCommandOptions.USAGE + " "
        + NetworkOptions.USAGE + " [HOST] PORT";
    static final CommandHelp HELP = new CommandHelp("nc", "[-u] [-l] [--join GROUP] [-w SECONDS] [--ecn MODE] [--cc NAME] "
        + "[--tcp-trace FILE] [link flags] [HOST] PORT", "netcat over Tern: stdin to the peer, the peer to stdout",
        "Netcat over a Tern stack, with OpenBSD netcat's habits: a client connects to HOST PORT, sends stdin, "
            + "half-closes when stdin ends and exits when the peer closes; a listener (-l PORT) accepts one "
            + "connection, of either family when the stack has IPv6 (--ip6). HOST may be an IPv6 address (TCP or UDP, "
            + "with --ip6); a UDP listener (-u -l) takes both families with --ip6 and answers whoever sent last. "
            + "With -u each read of stdin is one UDP datagram.",
        java.util.List.of(
            CommandHelp.option("-u", "UDP instead of TCP", "TCP"),
            CommandHelp.option("-l", "listen on PORT (TCP: for one connection; UDP: until interrupted)",
                "connect to HOST PORT"),
            CommandHelp.option("--join GROUP", "with -u -l: also receive from this multicast group (IPv4, or IPv6 "
                + "with --ip6: reported by MLDv2)", "none"),
            CommandHelp.option("-w SECONDS", "TCP: give up a connect, and close a connection idle both ways, after "
                + "SECONDS (one line on stderr, exit 1); a listener waits for its connection as long as it takes. "
                + "UDP client: wait this long for replies after stdin ends", "TCP: no limit; UDP: 1"),
            StopOnSignal.LINGER_HELP,
            NetworkOptions.ECN_HELP,
            CommandHelp.option("--cc NAME", "TCP congestion control: cubic, newreno, none, dctcp (RFC 8257, ECN on), bbr (BBRv3), a name a jar "
                + "on the class path offers (TERN_CLASSPATH), or a class name", "cubic"),
            CommandHelp.option("--tcp-trace FILE", "write the connection's sender trace as CSV (./tern plot draws it)",
                "none")),
        true, java.util.List.of("echo hi | ./tern nc 198.18.0.1 7", "echo hi | ./tern nc -u -w 0.5 198.18.0.1 7",
            "./tern nc -w 5 198.18.0.1 9 < file"));
    /** TCP send and receive buffers: what the veth benchmark gives its connections. */
    static final TcpOptions TCP_BUFFERS = TcpOptions.DEFAULT.withBuffers(4 << 20, 4 << 20);
    /** stdin and stdout move in blocks of this size, this many in flight each way (TCP). */
    static final int TCP_BLOCK = 256 << 10;
    static final int TCP_BLOCKS = 4;
    /** UDP: one read of stdin is one datagram, as before (8 KiB, as OpenBSD netcat's 16 KiB order); replies whole. */
    private static final int UDP_READ = 8192;
    private static final int UDP_DATAGRAM = 65536;
    private static final int UDP_BLOCKS = 16;

    private final InputStream in;
    private final PrintStream out;
    private final PrintStream err;
    private volatile boolean interrupted;
    /** {@code --shutdown-linger}: how long an interrupted TCP connection may take to close with a FIN. */
    private long lingerNs;

    NcCommand(InputStream in, PrintStream out, PrintStream err) {
        this.in = in;
        this.out = out;
        this.err = err;
    }

    int run(String[] argv) throws IOException {
        final Set<String> valueFlags = new HashSet<>(NetworkOptions.VALUE_FLAGS);
        valueFlags.addAll(Set.of("--join", "-w", "--shutdown-linger", "--ecn"));
        valueFlags.addAll(TcpCommandOptions.VALUE_FLAGS);
        final Arguments args = Arguments.parse("nc", argv, valueFlags, Set.of("-u", "-l"));
        final TcpCommandOptions tcp = TcpCommandOptions.from("nc", args);
        final boolean listen = args.has("-l");
        final java.util.List<String> operands = listen ? args.operands(1, 1, USAGE) : args.operands(2, 2, USAGE);
        final int port = parsePort(operands.getLast());
        final dev.tern.core.net.Ipv6Address host6 = listen || !operands.getFirst().contains(":") ? null
            : parseIpv6(operands.getFirst());
        final int host = listen || host6 != null ? 0 : parseAddress(operands.getFirst(), "HOST");
        final String joinText = args.has("--join") ? args.value("--join", null) : null;
        final dev.tern.core.net.Ipv6Address group6 = joinText != null && joinText.contains(":") ? parseIpv6(joinText)
            : null;
        final int group = joinText != null && group6 == null ? parseAddress(joinText, "--join") : 0;
        if (group != 0 && !Ipv4Address.isMulticast(group)) {
            throw new UsageException("nc: --join wants a multicast group (224.0.0.0/4), got " + Ipv4Address.format(group));
        }
        if (group6 != null && !dev.tern.core.net.Ipv6Address.isMulticast(group6.high())) {
            throw new UsageException("nc: --join wants a multicast group (ff00::/8), got " + group6);
        }
        if (joinText != null && !listen) {
            throw new UsageException("nc: --join is for a listener (-l)");
        }
        final double waitSeconds = args.doubleValue("-w", 1.0, 0, 3600);
        final NetworkOptions network = NetworkOptions.from(args).ecn(NetworkOptions.ecn("nc", args));
        final boolean stackIpv6 = network.ipv6();
        if ((host6 != null || group6 != null) && !stackIpv6) {
            throw new UsageException("nc: " + (host6 != null ? host6 : group6) + " is an IPv6 address: give this stack"
                + " IPv6 with --ip6 ADDR/N (or --ip6 auto)");
        }

        lingerNs = StopOnSignal.lingerNs(args);
        if (!args.has("-u")) {
            if (joinText != null) {
                throw new UsageException("nc: --join needs UDP (-u)");
            }
            final StopOnSignal stop = new StopOnSignal(lingerNs, () -> interrupted = true);
            try {
                return runTcp(network, tcp, listen, host, host6, port, args.has("-w") ? waitSeconds : 0);
            } finally {
                stop.stopped();
            }
        }
        if (tcp.congestionControl() != null || tcp.trace() != null) {
            throw new UsageException("nc: --cc and --tcp-trace are for TCP, not with -u");
        }
        if (lingerNs > 0) {
            throw new UsageException("nc: --shutdown-linger is for TCP, not with -u");
        }
        final StopOnSignal stop = new StopOnSignal(0, () -> interrupted = true);
        try {
            return runUdp(network, listen, host, host6, port, group, group6, stackIpv6,
                (long) (waitSeconds * 1e9));
        } finally {
            stop.stopped();
        }
    }

    /**
     * UDP: every read of stdin is one datagram (to HOST:PORT, or as a listener to whoever sent last); every datagram
     * received goes to stdout whole. A listener on a stack with IPv6 has a socket per family on the port (Tern's UDP
     * sockets are of one family, as Linux's with IPV6_V6ONLY), and answers on the last sender's.
     */
    private int runUdp(NetworkOptions network, boolean listen, int host, dev.tern.core.net.Ipv6Address host6, int port,
                       int group, dev.tern.core.net.Ipv6Address group6, boolean stackIpv6, long lingerNs)
        throws IOException {
        try (Network net = network.forDatagrams().open("nc")) {
            if (host6 != null || listen && stackIpv6) {
                awaitIpv6Addresses(net);
            }
            final UdpSocket socket = host6 != null ? net.stack.openUdp6() : net.stack.openUdp();
            final UdpSocket socket6 = listen && stackIpv6 ? net.stack.openUdp6() : null;
            if (host6 != null) {
                socket.connect(host6, port);
            } else if (listen) {
                socket.reuseAddress(true);
                socket.bind(port);
                if (group != 0) {
                    socket.join(group);
                }
                if (socket6 != null) {
                    socket6.reuseAddress(true);
                    socket6.bind(dev.tern.core.net.Ipv6Address.UNSPECIFIED, port);
                    if (group6 != null) {
                        socket6.join(group6);
                    }
                }
            } else {
                socket.connect(host, port);
            }
            final StreamPump input = StreamPump.reading(standardInput(), UDP_READ, UDP_BLOCKS, "tern-nc-stdin");
            final StreamPump output = StreamPump.writing(standardOutput(), UDP_DATAGRAM, UDP_BLOCKS, "tern-nc-stdout");
            // Zero-copy receive: each datagram goes from the link's frame straight into the stdout block.
            final DatagramSink receiving = new DatagramSink(output);
            socket.receiveHandler(receiving);
            if (socket6 != null) {
                socket6.receiveHandler(receiving);
            }
            final IdleStrategy idle = idleStrategy();
            int replyAddress = 0;
            int replyPort = 0;
            long inputEndedNs = 0;
            int status = 0;
            try {
                while (!interrupted) {
                    int work = net.poll();
                    StreamPump.Block chunk;
                    while ((chunk = input.next()) != null) {
                        final ByteBuffer b = chunk.buffer;
                        final boolean queued = !listen ? socket.send(chunk.segment, b.position(), b.remaining())
                            : replyPort == 0 || (receiving.lastIpv6
                                ? socket6.sendTo6(receiving.lastHigh, receiving.lastLow, replyPort, chunk.segment,
                                    b.position(), b.remaining())
                                : socket.sendTo(replyAddress, replyPort, chunk.segment, b.position(), b.remaining()));
                        if (!queued) {
                            break;
                        }
                        input.release(chunk);
                        work++;
                    }
                    if (chunk == null && !listen && inputEndedNs == 0 && input.ended()) {
                        inputEndedNs = System.nanoTime();
                    }
                    try {
                        // A block that stalled the sink has gone out: the queued datagrams are offered again. A poll
                        // that took nothing hands the block being filled to stdout, so a lone datagram is not held
                        // back (a burst is packed into one block, one write(2)).
                        if (receiving.stalled && output.hasFreeBlock()) {
                            receiving.stalled = false;
                            socket.resumeReceive();
                            if (socket6 != null) {
                                socket6.resumeReceive();
                            }
                            work++;
                        }
                        if (receiving.takeMoved()) {
                            work++;
                            replyAddress = receiving.lastAddress;
                            replyPort = receiving.lastPort;
                        } else {
                            receiving.handOver();
                        }
                        socket.checkError();
                        if (socket6 != null) {
                            socket6.checkError();
                        }
                    } catch (TernSocketException e) {
                        err.println("tern: nc: " + e.getMessage());
                        if (!listen) {
                            status = 1;
                            break;
                        }
                    }
                    if (output.failure() != null) {
                        err.println("tern: nc: standard output: " + output.failure().getMessage());
                        status = 1;
                        break;
                    }
                    if (inputEndedNs != 0 && System.nanoTime() - inputEndedNs > lingerNs) {
                        break;
                    }
                    idle.idle(work);
                }
            } finally {
                socket.close();
                if (socket6 != null) {
                    socket6.close();
                }
                receiving.handOver();
                finish(output);
            }
            return status;
        }
    }

    /**
     * Zero-copy receive for {@code nc -u}: each datagram is copied once, from the link's frame into the stdout block
     * being filled (packed while they fit; a datagram longer than a block is cut to it, as a receive into it would).
     * With no block free it declines, and the socket keeps the datagram for {@code resumeReceive}. Stack thread, which
     * is the command's own here.
     */
    private static final class DatagramSink extends StdoutBlocks implements UdpSocket.ReceiveHandler {
        int lastAddress;
        int lastPort;
        /** The last datagram came to the IPv6 socket, from ({@link #lastHigh}, {@link #lastLow}). */
        boolean lastIpv6;
        long lastHigh;
        long lastLow;

        DatagramSink(StreamPump output) {
            super(output);
        }

        @Override
        public boolean onDatagram(UdpSocket socket, int sourceAddress, int sourcePort, MemorySegment data, long offset,
                                  int length) {
            if (block != null && block.buffer.remaining() < length && block.buffer.position() > 0) {
                output.submit(block);
                block = null;
            }
            if (block == null && (block = output.claim()) == null) {
                stalled = true;
                return false;
            }
            final ByteBuffer b = block.buffer;
            final int n = Math.min(length, b.remaining());
            MemorySegment.copy(data, offset, block.segment, b.position(), n);
            b.position(b.position() + n);
            lastAddress = sourceAddress;
            lastPort = sourcePort;
            lastIpv6 = socket.ipv6();
            if (lastIpv6) {
                lastHigh = socket.offeredSourceHigh();
                lastLow = socket.offeredSourceLow();
            }
            moved = true;
            return true;
        }
    }

    /**
     * TCP: one connection (the one we open, or the first we accept). stdin goes to the peer and its end
     * half-closes (shutdownOutput); what the peer sends goes to stdout; when the peer closes, we exit.
     * {@code waitSeconds} &gt; 0 bounds a client's connect and the time the connection may pass without a byte moving
     * either way (-w).
     */
    private int runTcp(NetworkOptions network, TcpCommandOptions tcp, boolean listen, int host,
                       dev.tern.core.net.Ipv6Address host6, int port, double waitSeconds) throws IOException {
        final String hostText = host6 != null ? host6.toString() : Ipv4Address.format(host);
        try (Network net = network.open("nc"); ConnectionTraces traces = tcp.traces(false)) {
            final TcpOptions options = tcp.apply(TCP_BUFFERS);
            final TcpListener listener = listen ? net.stack.listen(port, 1, options) : null;
            if (host6 != null) {
                awaitIpv6Addresses(net);
            }
            TcpConnection connection = listen ? null : host6 != null ? net.stack.connect(host6, port, 0, options)
                : net.stack.connect(host, port, 0, options);
            if (connection != null) {
                traces.attach(connection);
            }
            final long waitNs = (long) (waitSeconds * 1e9);
            final long connectDeadlineNs = System.nanoTime() + waitNs;
            long lastActivityNs = 0; // when a byte last moved either way; 0 until connected
            final StreamPump output = StreamPump.writing(standardOutput(), TCP_BLOCK, TCP_BLOCKS, "tern-nc-stdout");
            final IdleStrategy idle = idleStrategy();
            StreamPump input = null; // stdin is read once connected, as OpenBSD nc does
            final StdoutSink receiving = new StdoutSink(output);
            boolean outputShut = false;
            boolean peerClosed = false;
            int status = 0;
            try {
                while (!interrupted && !peerClosed) {
                    int work = net.poll();
                    if (connection == null) {
                        connection = listener.accept();
                        if (connection == null) {
                            idle.idle(work);
                            continue;
                        }
                        listener.close(); // like OpenBSD nc -l: one connection
                        traces.attach(connection);
                    }
                    if (connection.isEnded() && connection.error() != SocketError.NONE) {
                        err.println("tern: nc: " + (listen ? "connection" : "connect to " + hostText
                            + " port " + port) + ": " + SocketError.describe(connection.error()));
                        status = 1;
                        break;
                    }
                    if (!connection.isConnected() && !connection.isEnded()) {
                        if (!listen && waitNs > 0 && System.nanoTime() - connectDeadlineNs > 0) {
                            err.println("tern: nc: connect to " + hostText + " port " + port
                                + ": timed out after " + seconds(waitSeconds) + " s (-w)");
                            status = 1;
                            break;
                        }
                        idle.idle(work);
                        continue;
                    }
                    if (input == null) {
                        input = StreamPump.reading(standardInput(), TCP_BLOCK, TCP_BLOCKS, "tern-nc-stdin");
                        lastActivityNs = System.nanoTime();
                        connection.receiveHandler(receiving);
                    }
                    int moved = 0;
                    if (!outputShut) {
                        moved += send(connection, input);
                        if (input.ended()) {
                            connection.shutdownOutput();
                            outputShut = true;
                        }
                    }
                    if (receiving.stalled) {
                        // Every block was waiting for stdout: offer what the ring kept once one may be free.
                        receiving.stalled = false;
                        connection.resumeReceive();
                    }
                    if (receiving.takeMoved()) {
                        moved++;
                    }
                    if (output.idle()) {
                        // Nothing more now and stdout waits for us: hand over what came, at once. While the pump still
                        // writes earlier blocks the block goes on filling, so a fast stream costs fewer, larger writes.
                        receiving.handOver();
                    }
                    // The peer closed its side and everything it sent was taken: we are done, as OpenBSD nc with -N.
                    peerClosed = connection.isEndOfStream();
                    if (output.failure() != null) {
                        err.println("tern: nc: standard output: " + output.failure().getMessage());
                        status = 1;
                        break;
                    }
                    final long now = System.nanoTime();
                    if (moved > 0) {
                        lastActivityNs = now;
                    } else if (waitNs > 0 && !peerClosed && now - lastActivityNs > waitNs) {
                        err.println("tern: nc: no data either way for " + seconds(waitSeconds)
                            + " s (-w): closing the connection");
                        status = 1;
                        break;
                    }
                    idle.idle(work + moved);
                }
            } catch (TernSocketException e) {
                err.println("tern: nc: " + e.getMessage());
                status = 1;
            } finally {
                receiving.handOver();
                if (connection != null) {
                    traces.detach(connection);
                    connection.close();
                    // Let the FIN (or RST) leave before the stack goes away, and the close finish if it can: up to
                    // the linger when interrupted with one. Closing the stack resets a connection left unfinished.
                    final long deadlineNs = System.nanoTime() + (interrupted ? lingerNs : 0);
                    final dev.tern.tcp.TcpLayer layer = net.stack.tcp();
                    for (int i = 0; layer.connectionCount() > layer.timeWaitCount()
                        && (i < 100 || System.nanoTime() - deadlineNs < 0); i++) {
                        if (net.poll() == 0 && i >= 100) {
                            java.util.concurrent.locks.LockSupport.parkNanos(100_000);
                        }
                    }
                }
                finish(output);
            }
            return status;
        }
    }

    /**
     * The connection's receive handler (zero-copy receive): copies the bytes the stack offers, in the link's frame,
     * into output blocks, so each received byte is copied once in Java (frame to block) instead of twice (frame to the
     * receive ring, ring to block). With every block waiting for stdout it takes what fits and marks itself
     * {@link #stalled}; the stack keeps the rest in the ring and offers it again, first, on
     * {@link TcpConnection#resumeReceive()}. Runs on the command's thread, which owns the stack.
     */
    private static final class StdoutSink extends StdoutBlocks implements TcpConnection.ReceiveHandler {
        StdoutSink(StreamPump output) {
            super(output);
        }

        @Override
        public int onReceive(TcpConnection connection, MemorySegment data, long offset, int length) {
            int done = 0;
            while (done < length) {
                if (block == null && (block = output.claim()) == null) {
                    stalled = true;
                    break;
                }
                final ByteBuffer b = block.buffer;
                final int n = Math.min(length - done, b.remaining());
                MemorySegment.copy(data, offset + done, block.segment, b.position(), n);
                b.position(b.position() + n);
                done += n;
                if (!b.hasRemaining()) {
                    output.submit(block);
                    block = null;
                }
            }
            moved |= done > 0;
            return done;
        }
    }

    /**
     * What both zero-copy sinks share: the stdout block being filled, whether anything moved since the owner last
     * asked, and whether a sink stopped for want of a free block.
     */
    private abstract static class StdoutBlocks {
        final StreamPump output;
        StreamPump.Block block;
        boolean moved;
        boolean stalled;

        StdoutBlocks(StreamPump output) {
            this.output = output;
        }

        /** Whether bytes were taken since the last call. */
        boolean takeMoved() {
            final boolean result = moved;
            moved = false;
            return result;
        }

        /** Submits the block being filled, if it holds anything. */
        void handOver() {
            if (block != null && block.buffer.position() > 0) {
                output.submit(block);
                block = null;
            }
        }
    }

    /** Copies whole blocks of stdin into the send ring while it has room; returns how many copies were made. */
    private static int send(TcpConnection connection, StreamPump input) throws TernSocketException {
        int work = 0;
        StreamPump.Block block;
        while ((block = input.next()) != null) {
            final ByteBuffer b = block.buffer;
            final int n = connection.write(block.segment, b.position(), b.remaining());
            if (n == 0) {
                break;
            }
            b.position(b.position() + n);
            work++;
            if (!b.hasRemaining()) {
                input.release(block);
            }
        }
        return work;
    }

    /** Waits until what was received has reached stdout. */
    private void finish(StreamPump output) {
        try {
            output.finish();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Spin, yield, then park from 1 us up to 100 us (the veth benchmark's runner): the stack is polled often enough
     * that frames wait in the ring for at most about 100 us after a quiet spell.
     */
    private static IdleStrategy idleStrategy() {
        return new BackoffIdleStrategy(100, 10, 1_000, 100_000);
    }

    /**
     * The process's standard input as a channel on its file descriptor (reads straight into a block's memory), or,
     * for an input given to the command (tests), a channel over that stream.
     */
    private ReadableByteChannel standardInput() {
        return in == System.in ? new FileInputStream(FileDescriptor.in).getChannel() : Channels.newChannel(in);
    }

    /** The process's standard output as a channel on its file descriptor, or a channel over the stream given. */
    private WritableByteChannel standardOutput() {
        if (out == System.out) {
            out.flush();
            return new FileOutputStream(FileDescriptor.out).getChannel();
        }
        return Channels.newChannel(out);
    }

    private static String seconds(double value) {
        return value == Math.rint(value) ? Long.toString((long) value) : Double.toString(value);
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

    private static dev.tern.core.net.Ipv6Address parseIpv6(String text) {
        try {
            return dev.tern.core.net.Ipv6Address.parse(text);
        } catch (IllegalArgumentException e) {
            throw new UsageException("nc: HOST: " + e.getMessage());
        }
    }

    /**
     * Duplicate address detection holds a new address back for about a second (RFC 4862 §5.4): a connect before it
     * ends would have no source. Polls the stack until every address is settled, 5 s at most.
     */
    private void awaitIpv6Addresses(Network net) {
        final long deadline = System.nanoTime() + 5_000_000_000L;
        final IdleStrategy idle = idleStrategy();
        while (!interrupted && !net.stack.ipv6().addresses().settled() && System.nanoTime() - deadline < 0) {
            idle.idle(net.poll());
        }
    }

    private static int parseAddress(String text, String what) {
        try {
            return Ipv4Address.parse(text);
        } catch (IllegalArgumentException e) {
            throw new UsageException("nc: " + what + ": " + e.getMessage());
        }
    }
}
