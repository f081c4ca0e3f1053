package dev.tern.conformance.bench;

import java.io.FileDescriptor;
import java.io.FileInputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.nio.channels.FileChannel;
import java.nio.channels.ReadableByteChannel;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.Arrays;
import java.util.Locale;

/**
 * The Linux kernel's end of the veth benchmark: ordinary blocking JDK sockets, run in a network namespace the
 * benchmark made ({@code ip netns exec NS java ... KernelEndpoint MODE ...}). The same program plays the kernel in
 * both comparisons (Tern against the kernel, the kernel against the kernel), so the ratio compares the stacks, not
 * the tools. Every mode is bounded in time; results go to stdout as one line of {@code key=value} words.
 *
 * <pre>
 *   tcp-sink PORT SECONDS                  accept one connection, read until its end: bytes= seconds= gbps=
 *   tcp-window-sink PORT WINDOW MAX_BYTES TIMEOUT
 *                                          accept one connection, read for WINDOW seconds from its first byte (or
 *                                          to its end, or MAX_BYTES), then close, unread data and all (a reset):
 *                                          bytes= seconds= gbps= ended=window|eof|bytes
 *   tcp-source HOST PORT SECONDS [MAX_BYTES]
 *                                          connect, write for SECONDS (at most MAX_BYTES), close: bytes=; a reset
 *                                          by the receiver (a windowed sink) ends it early: bytes= ended=reset
 *   stdin-meter MAX_BYTES WINDOW TIMEOUT   read standard input (a pipe from socat or tern nc) for WINDOW seconds
 *                                          from its first byte, to its end, or MAX_BYTES: bytes= seconds= gbps=
 *                                          ended=window|eof|bytes ("ready" first, once it reads)
 *   tcp-echo PORT SECONDS                  accept one connection (either family), send back what it reads until its
 *                                          end or SECONDS pass: echoed=
 *   udp-echo PORT SECONDS                  send every datagram back to its sender until SECONDS pass: echoed=
 *   udp-rr HOST PORT WARMUP COUNT SIZE     ping-pong SIZE-byte datagrams: p50_us= p99_us= p999_us= lost=
 * </pre>
 * "ready" is printed once a server's socket is bound.
 */
public final class KernelEndpoint {
    private static final int BUFFER = 4 << 20;

    private KernelEndpoint() {
    }

    public static void main(String[] args) throws IOException {
        switch (args.length > 0 ? args[0] : "") {
            case "tcp-sink" -> tcpSink(Integer.parseInt(args[1]), Double.parseDouble(args[2]));
            case "tcp-window-sink" -> tcpWindowSink(Integer.parseInt(args[1]), Double.parseDouble(args[2]),
                Long.parseLong(args[3]), Double.parseDouble(args[4]));
            case "tcp-source" -> tcpSource(args[1], Integer.parseInt(args[2]), Double.parseDouble(args[3]),
                args.length > 4 ? Long.parseLong(args[4]) : Long.MAX_VALUE);
            case "stdin-meter" -> stdinMeter(Long.parseLong(args[1]), Double.parseDouble(args[2]), Double.parseDouble(args[3]));
            case "tcp-echo" -> tcpEcho(Integer.parseInt(args[1]), Double.parseDouble(args[2]));
            case "udp-echo" -> udpEcho(Integer.parseInt(args[1]), Double.parseDouble(args[2]));
            case "udp-rr" -> udpRoundTrips(args[1], Integer.parseInt(args[2]), Integer.parseInt(args[3]),
                Integer.parseInt(args[4]), Integer.parseInt(args[5]));
            default -> {
                System.err.println("usage: KernelEndpoint tcp-sink|tcp-window-sink|tcp-source|stdin-meter|udp-echo|udp-rr ...");
                System.exit(2);
            }
        }
    }

    private static void tcpEcho(int port, double seconds) throws IOException {
        try (ServerSocketChannel server = listening(port, seconds)) {
            try (SocketChannel channel = server.accept()) {
                channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
                final ByteBuffer buffer = ByteBuffer.allocateDirect(BUFFER);
                long echoed = 0;
                int n;
                while ((n = channel.read(buffer.clear())) >= 0) {
                    buffer.flip();
                    while (buffer.hasRemaining()) {
                        channel.write(buffer);
                    }
                    echoed += n;
                }
                System.out.printf(Locale.ROOT, "echoed=%d%n", echoed);
            }
        }
    }

    private static void tcpSink(int port, double seconds) throws IOException {
        try (ServerSocketChannel server = listening(port, seconds)) {
            try (SocketChannel channel = server.accept()) {
                final ByteBuffer buffer = ByteBuffer.allocateDirect(BUFFER);
                long bytes = 0;
                long first = 0;
                long last = 0;
                int n;
                while ((n = channel.read(buffer.clear())) >= 0) {
                    if (n > 0) {
                        last = System.nanoTime();
                        if (first == 0) {
                            first = last;
                        }
                        bytes += n;
                    }
                }
                final double elapsed = (last - first) / 1e9;
                System.out.printf(Locale.ROOT, "bytes=%d seconds=%.3f gbps=%.3f%n", bytes, elapsed,
                    elapsed > 0 ? bytes * 8 / elapsed / 1e9 : 0);
            }
        }
    }

    /**
     * Reads for {@code window} seconds from the first byte: a rate measured over a fixed stretch of the receiver's
     * time, whatever the sender still has queued (under loss a sender's tail can take longer than its run).
     */
    private static void tcpWindowSink(int port, double window, long maxBytes, double timeout) throws IOException {
        try (ServerSocketChannel server = listening(port, timeout)) {
            try (SocketChannel channel = server.accept()) {
                report(meter(channel, ByteBuffer.allocateDirect(BUFFER), maxBytes, window));
            }
        }
    }

    /** Standard input, as {@link #tcpWindowSink} reads a connection: for a pipe from socat or {@code tern nc}. */
    private static void stdinMeter(long maxBytes, double window, double timeout) throws IOException {
        watchdog(timeout);
        System.out.println("ready");
        System.out.flush();
        try (FileChannel in = new FileInputStream(FileDescriptor.in).getChannel()) {
            report(meter(in, ByteBuffer.allocateDirect(BUFFER), maxBytes, window));
        }
    }

    /** What {@link #meter} measured. */
    private record Metered(long bytes, long nanos, String ended) {
    }

    private static Metered meter(ReadableByteChannel channel, ByteBuffer buffer, long maxBytes, double window)
        throws IOException {
        final long windowNs = (long) (window * 1e9);
        long bytes = 0;
        long first = 0;
        long last = 0;
        while (true) {
            final int n = channel.read(buffer.clear().limit((int) Math.min(buffer.capacity(), maxBytes - bytes)));
            if (n < 0) {
                return new Metered(bytes, last - first, "eof");
            }
            if (n > 0) {
                last = System.nanoTime();
                if (first == 0) {
                    first = last;
                }
                bytes += n;
                if (bytes >= maxBytes) {
                    return new Metered(bytes, last - first, "bytes");
                }
                if (last - first >= windowNs) {
                    return new Metered(bytes, last - first, "window");
                }
            }
        }
    }

    private static void report(Metered metered) {
        final double elapsed = metered.nanos() / 1e9;
        System.out.printf(Locale.ROOT, "bytes=%d seconds=%.3f gbps=%.4f ended=%s%n", metered.bytes(), elapsed,
            elapsed > 0 ? metered.bytes() * 8 / elapsed / 1e9 : 0, metered.ended());
        System.out.flush();
    }

    private static void tcpSource(String host, int port, double seconds, long maxBytes) throws IOException {
        watchdog(seconds + 60); // a write blocked on a receiver that neither reads nor resets ends here
        try (SocketChannel channel = SocketChannel.open(new InetSocketAddress(host, port))) {
            final ByteBuffer buffer = ByteBuffer.allocateDirect(BUFFER);
            final byte[] random = new byte[BUFFER];
            new java.util.SplittableRandom(1).nextBytes(random);
            buffer.put(random).flip();
            final long end = System.nanoTime() + (long) (seconds * 1e9);
            long bytes = 0;
            try {
                while (System.nanoTime() - end < 0 && bytes < maxBytes) {
                    bytes += channel.write(buffer.clear().limit((int) Math.min(BUFFER, maxBytes - bytes)));
                }
                channel.shutdownOutput();
            } catch (IOException e) {
                // A windowed receiver closes with our data unread: its reset ends the run, as intended.
                System.out.printf(Locale.ROOT, "bytes=%d ended=reset%n", bytes);
                return;
            }
            System.out.printf(Locale.ROOT, "bytes=%d%n", bytes);
        }
    }

    private static void udpEcho(int port, double seconds) throws IOException {
        try (DatagramChannel channel = DatagramChannel.open()) {
            channel.bind(new InetSocketAddress(port));
            System.out.println("ready");
            System.out.flush();
            watchdog(seconds);
            final ByteBuffer buffer = ByteBuffer.allocateDirect(65536);
            long echoed = 0;
            while (true) {
                final var source = channel.receive(buffer.clear());
                channel.send(buffer.flip(), source);
                if (++echoed % 100_000 == 0) {
                    System.out.printf(Locale.ROOT, "echoed=%d%n", echoed);
                }
            }
        }
    }

    private static void udpRoundTrips(String host, int port, int warmup, int count, int size) throws IOException {
        try (DatagramChannel channel = DatagramChannel.open()) {
            channel.connect(new InetSocketAddress(host, port));
            final ByteBuffer out = ByteBuffer.allocateDirect(size);
            final ByteBuffer in = ByteBuffer.allocateDirect(65536);
            final long[] rtt = new long[count];
            watchdog(60);
            for (int i = -warmup; i < count; i++) {
                final long start = System.nanoTime();
                out.clear().putLong(0, i);
                channel.write(out);
                channel.read(in.clear());
                if (i >= 0) {
                    rtt[i] = System.nanoTime() - start;
                }
            }
            Arrays.sort(rtt);
            System.out.printf(Locale.ROOT, "p50_us=%.2f p99_us=%.2f p999_us=%.2f%n", rtt[count / 2] / 1e3,
                rtt[(int) (count * 0.99)] / 1e3, rtt[(int) (count * 0.999)] / 1e3);
        }
    }

    /** Ends the process after {@code seconds} whatever it is doing: every run is bounded in time. */
    /** A listener on {@code port} (either family), "ready" printed, the process ended after {@code seconds}. */
    private static ServerSocketChannel listening(int port, double seconds) throws IOException {
        final ServerSocketChannel server = ServerSocketChannel.open();
        try {
            server.setOption(StandardSocketOptions.SO_REUSEADDR, true);
            server.bind(new InetSocketAddress(port));
        } catch (IOException e) {
            server.close();
            throw e;
        }
        System.out.println("ready");
        System.out.flush();
        watchdog(seconds);
        return server;
    }

    private static void watchdog(double seconds) {
        Thread.ofPlatform().daemon().start(() -> {
            try {
                Thread.sleep((long) (seconds * 1000));
            } catch (InterruptedException ignored) {
                return;
            }
            System.out.flush();
            Runtime.getRuntime().halt(3);
        });
    }
}
