package dev.tern.conformance.bench;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
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
 *   tcp-source HOST PORT SECONDS           connect, write for SECONDS, close: bytes=
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
            case "tcp-source" -> tcpSource(args[1], Integer.parseInt(args[2]), Double.parseDouble(args[3]));
            case "udp-echo" -> udpEcho(Integer.parseInt(args[1]), Double.parseDouble(args[2]));
            case "udp-rr" -> udpRoundTrips(args[1], Integer.parseInt(args[2]), Integer.parseInt(args[3]),
                Integer.parseInt(args[4]), Integer.parseInt(args[5]));
            default -> {
                System.err.println("usage: KernelEndpoint tcp-sink|tcp-source|udp-echo|udp-rr ...");
                System.exit(2);
            }
        }
    }

    private static void tcpSink(int port, double seconds) throws IOException {
        try (ServerSocketChannel server = ServerSocketChannel.open()) {
            server.setOption(StandardSocketOptions.SO_REUSEADDR, true);
            server.bind(new InetSocketAddress(port));
            System.out.println("ready");
            System.out.flush();
            watchdog(seconds);
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

    private static void tcpSource(String host, int port, double seconds) throws IOException {
        try (SocketChannel channel = SocketChannel.open(new InetSocketAddress(host, port))) {
            final ByteBuffer buffer = ByteBuffer.allocateDirect(BUFFER);
            final byte[] random = new byte[BUFFER];
            new java.util.SplittableRandom(1).nextBytes(random);
            buffer.put(random).flip();
            final long end = System.nanoTime() + (long) (seconds * 1e9);
            long bytes = 0;
            while (System.nanoTime() - end < 0) {
                bytes += channel.write(buffer.clear());
            }
            channel.shutdownOutput();
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
