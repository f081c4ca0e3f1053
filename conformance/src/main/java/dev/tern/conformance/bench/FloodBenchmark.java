package dev.tern.conformance.bench;

import dev.tern.afpacket.netns.BackgroundCommand;
import dev.tern.afpacket.netns.Commands;
import dev.tern.afpacket.netns.EthtoolOffloads;
import dev.tern.afpacket.netns.NetnsHarness;
import dev.tern.afpacket.netns.NetworkNamespace;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * An established TCP transfer under a SYN flood (issue 15 item 5): how much of its rate it keeps and its longest
 * stall, Tern against the kernel in the same run, offloads on.
 *
 * <pre>
 *   kernel -> Tern:  [p] Java sender  ---> tern serve --discard 9 [t]     (kernel: a Java discard server in [t])
 *   Tern -> kernel:  [p] Java receiver <--- head -c N /dev/zero | tern nc  (kernel: a Java sender in [t])
 *   flood:           [p] hping3 -S -p 9 --flood 198.18.0.2, from the peer's own address (the kernel there answers
 *                    each SYN-ACK with a RST, so every SYN costs the flooded host a SYN, a SYN-ACK and a RST)
 * </pre>
 * One connection per measurement: {@code seconds} without the flood, then the flood starts and, 0.3 s later,
 * {@code seconds} under it. The peer's Java end measures bytes and the longest time between two of its reads or
 * writes returning (a stall). Every load is bounded in time (and the Tern sender in bytes); hping3 and the commands
 * are ended by PID. Keys: {@code flood_kept_WAY} (rate under the flood over the rate before it, Tern),
 * {@code flood_kept_kernel_WAY}, {@code flood_stall_s_WAY}, {@code flood_stall_s_kernel_WAY}, {@code flood_gbps_*}.
 */
final class FloodBenchmark {
    private static final int DISCARD_PORT = 9;
    private static final int SINK_PORT = 5001;
    private static final long TERN_SEND_LIMIT = 64L << 30;

    private final double seconds;
    private final int rounds;
    private final Path tern;

    FloodBenchmark(double seconds, int rounds, Path root) {
        this.seconds = seconds;
        this.rounds = rounds;
        this.tern = root.resolve("tern");
        if (!Files.isExecutable(tern)) {
            throw new IllegalStateException("no tern launcher at " + tern + " (run through conformance/bench-veth.sh)");
        }
    }

    /** Rate before and under the flood (Gbit/s), and the longest stall under it (s). */
    record Figures(double quietGbps, double floodGbps, double stallSeconds) {
    }

    void run(Map<String, Double> results) throws Exception {
        final String hping = Commands.require("hping3", "hping3");
        final NetnsHarness.Options options = new NetnsHarness.Options(1500, EthtoolOffloads.ALL_ON, EthtoolOffloads.ALL_ON);
        final Map<String, List<Double>> samples = new LinkedHashMap<>();
        try (NetnsHarness kernels = NetnsHarness.create(options); NetnsHarness net = NetnsHarness.create(options)) {
            kernels.ternExec(java.time.Duration.ofSeconds(10), "ip", "address", "add", NetnsHarness.TERN_ADDRESS + "/24",
                "dev", NetnsHarness.TERN_INTERFACE).orThrow();
            for (int round = 0; round < rounds; round++) {
                System.err.printf(Locale.ROOT, "SYN flood: round %d of %d ...%n", round + 1, rounds);
                record("kernel_to_tern", kernelToKernelDiscard(kernels, hping), kernelToTern(net, hping), samples);
                record("tern_to_kernel", kernelSender(kernels, hping), ternToKernel(net, hping), samples);
            }
        }
        samples.forEach((key, values) -> {
            results.put(key, VethBenchmark.median(values));
            System.err.printf("  %-40s %s%n", key, values.stream().map(v -> String.format(Locale.ROOT, "%.2f", v)).toList());
        });
    }

    private static void record(String way, Figures kernel, Figures tern, Map<String, List<Double>> samples) {
        System.err.printf(Locale.ROOT, "  %s: kernel %.2f -> %.2f Gbit/s (stall %.2f s), Tern %.2f -> %.2f Gbit/s (stall %.2f s)%n",
            way, kernel.quietGbps, kernel.floodGbps, kernel.stallSeconds, tern.quietGbps, tern.floodGbps, tern.stallSeconds);
        add(samples, "flood_gbps_quiet_kernel_" + way, kernel.quietGbps);
        add(samples, "flood_gbps_flood_kernel_" + way, kernel.floodGbps);
        add(samples, "flood_gbps_quiet_" + way, tern.quietGbps);
        add(samples, "flood_gbps_flood_" + way, tern.floodGbps);
        add(samples, "flood_kept_kernel_" + way, kernel.floodGbps / kernel.quietGbps);
        add(samples, "flood_kept_" + way, tern.floodGbps / tern.quietGbps);
        add(samples, "flood_stall_s_kernel_" + way, kernel.stallSeconds);
        add(samples, "flood_stall_s_" + way, tern.stallSeconds);
        add(samples, "flood_ratio_" + way, (tern.floodGbps / tern.quietGbps) / (kernel.floodGbps / kernel.quietGbps));
    }

    /** kernel -> Tern: the Java sender in the peer's namespace into {@code tern serve --discard}. */
    private Figures kernelToTern(NetnsHarness net, String hping) throws Exception {
        try (BackgroundCommand serve = net.startInTern(tern.toString(), "serve", "--discard", Integer.toString(DISCARD_PORT),
                 "--link", "afpacket:" + NetnsHarness.TERN_INTERFACE, "--ip", NetnsHarness.TERN_ADDRESS + "/24")) {
            final SocketChannel channel = connectFromPeer(net.peerNamespace(), NetnsHarness.TERN_ADDRESS, DISCARD_PORT, serve);
            return sendAndMeasure(net, hping, channel);
        }
    }

    /** The kernel's figures for kernel -> Tern: the same sender into a Java discard server on the kernel's end. */
    private Figures kernelToKernelDiscard(NetnsHarness kernels, String hping) throws Exception {
        final ServerSocketChannel server = listen(kernels.ternNamespace(), NetnsHarness.TERN_ADDRESS, DISCARD_PORT);
        final Thread discard = Thread.ofPlatform().name("flood-discard").start(() -> {
            try (server; SocketChannel accepted = server.accept()) {
                final ByteBuffer buffer = ByteBuffer.allocateDirect(256 << 10);
                while (accepted.read(buffer.clear()) >= 0) {
                    // discard
                }
            } catch (IOException e) {
                // the sender closed or the benchmark ended: either way the discard is over
            }
        });
        try {
            final SocketChannel channel = connectFromPeer(kernels.peerNamespace(), NetnsHarness.TERN_ADDRESS, DISCARD_PORT, null);
            return sendAndMeasure(kernels, hping, channel);
        } finally {
            server.close();
            discard.join(10_000);
        }
    }

    /** Tern -> kernel: {@code tern nc} sends zeros to a Java receiver in the peer's namespace. */
    private Figures ternToKernel(NetnsHarness net, String hping) throws Exception {
        final ServerSocketChannel server = listen(net.peerNamespace(), NetnsHarness.PEER_ADDRESS, SINK_PORT);
        try (server; BackgroundCommand sender = net.startInTern("sh", "-c", "head -c " + TERN_SEND_LIMIT + " /dev/zero | "
                 + tern + " nc --link afpacket:" + NetnsHarness.TERN_INTERFACE + " --ip " + NetnsHarness.TERN_ADDRESS
                 + "/24 " + NetnsHarness.PEER_ADDRESS + " " + SINK_PORT)) {
            return receiveAndMeasure(net, hping, accept(server, sender));
        }
    }

    /** The kernel's figures for Tern -> kernel: a Java sender on the kernel's end to the same receiver. */
    private Figures kernelSender(NetnsHarness kernels, String hping) throws Exception {
        final ServerSocketChannel server = listen(kernels.peerNamespace(), NetnsHarness.PEER_ADDRESS, SINK_PORT);
        final SocketChannel sending = kernels.ternNamespace().call(FloodBenchmark::openChannel);
        final Thread sender = Thread.ofPlatform().name("flood-sender").start(() -> {
            try (sending) {
                sending.connect(new InetSocketAddress(NetnsHarness.PEER_ADDRESS, SINK_PORT));
                final ByteBuffer zeros = ByteBuffer.allocateDirect(256 << 10);
                final long deadline = System.nanoTime() + (long) ((2 * seconds + 20) * 1e9);
                while (System.nanoTime() - deadline < 0) {
                    sending.write(zeros.clear());
                }
            } catch (IOException e) {
                // the receiver closed: the measurement is over
            }
        });
        try (server) {
            return receiveAndMeasure(kernels, hping, accept(server, null));
        } finally {
            sending.close();
            sender.join(10_000);
        }
    }

    private Figures sendAndMeasure(NetnsHarness pair, String hping, SocketChannel channel) throws IOException {
        try (channel) {
            final ByteBuffer zeros = ByteBuffer.allocateDirect(256 << 10);
            final Phase quiet = new Phase(seconds);
            while (!quiet.over()) {
                quiet.moved(channel.write(zeros.clear()));
            }
            try (BackgroundCommand flood = flood(pair, hping)) {
                final Phase settle = new Phase(0.3);
                while (!settle.over()) {
                    channel.write(zeros.clear());
                }
                final Phase flooded = new Phase(seconds);
                while (!flooded.over()) {
                    flooded.moved(channel.write(zeros.clear()));
                }
                return new Figures(quiet.gbps(), flooded.gbps(), flooded.longestGapSeconds());
            }
        }
    }

    private Figures receiveAndMeasure(NetnsHarness pair, String hping, SocketChannel channel) throws IOException {
        try (channel) {
            final ByteBuffer buffer = ByteBuffer.allocateDirect(256 << 10);
            final Phase quiet = new Phase(seconds);
            while (!quiet.over()) {
                quiet.moved(read(channel, buffer));
            }
            try (BackgroundCommand flood = flood(pair, hping)) {
                final Phase settle = new Phase(0.3);
                while (!settle.over()) {
                    read(channel, buffer);
                }
                final Phase flooded = new Phase(seconds);
                while (!flooded.over()) {
                    flooded.moved(read(channel, buffer));
                }
                return new Figures(quiet.gbps(), flooded.gbps(), flooded.longestGapSeconds());
            }
        }
    }

    private static int read(SocketChannel channel, ByteBuffer buffer) throws IOException {
        final int n = channel.read(buffer.clear());
        if (n < 0) {
            throw new IOException("the sender closed the connection during the measurement");
        }
        return n;
    }

    /** hping3 flooding SYNs at the flooded end's discard port from the peer, at the rate it can. */
    private static BackgroundCommand flood(NetnsHarness pair, String hping) {
        return pair.startInPeer(hping, "-q", "-S", "-p", Integer.toString(DISCARD_PORT), "--flood", NetnsHarness.TERN_ADDRESS);
    }

    /** One timed phase of a transfer: bytes moved and the longest time between two calls that moved bytes. */
    private static final class Phase {
        private final long startNs = System.nanoTime();
        private final long endNs;
        private long lastNs = startNs;
        private long longestGapNs;
        private long bytes;

        Phase(double seconds) {
            endNs = startNs + (long) (seconds * 1e9);
        }

        boolean over() {
            return System.nanoTime() - endNs >= 0;
        }

        void moved(int count) {
            final long now = System.nanoTime();
            if (count > 0) {
                longestGapNs = Math.max(longestGapNs, now - lastNs);
                lastNs = now;
                bytes += count;
            }
        }

        double gbps() {
            return bytes * 8 / ((endNs - startNs) / 1e9) / 1e9;
        }

        double longestGapSeconds() {
            return Math.max(longestGapNs, endNs - lastNs) / 1e9;
        }
    }

    private static SocketChannel openChannel() {
        try {
            return SocketChannel.open();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static ServerSocketChannel listen(NetworkNamespace namespace, String address, int port) {
        return namespace.call(() -> {
            try {
                final ServerSocketChannel server = ServerSocketChannel.open();
                server.bind(new InetSocketAddress(address, port));
                return server;
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
    }

    /** Connects from {@code namespace} (the socket is made there), trying for up to 30 s while a server starts. */
    private static SocketChannel connectFromPeer(NetworkNamespace namespace, String address, int port,
                                                 BackgroundCommand server) throws IOException {
        final long deadline = System.nanoTime() + 30_000_000_000L;
        while (true) {
            final SocketChannel channel = namespace.call(FloodBenchmark::openChannel);
            try {
                channel.connect(new InetSocketAddress(address, port));
                return channel;
            } catch (IOException e) {
                channel.close();
                if (System.nanoTime() - deadline > 0 || server != null && !server.isAlive()) {
                    throw new IOException("cannot connect to " + address + ":" + port + (server == null ? ""
                        : " (tern serve: " + server.stderr().strip() + ")"), e);
                }
                VethBenchmark.sleep(200);
            }
        }
    }

    /** Accepts the sender's connection within 30 s. */
    private static SocketChannel accept(ServerSocketChannel server, BackgroundCommand sender) throws IOException {
        server.configureBlocking(false);
        final long deadline = System.nanoTime() + 30_000_000_000L;
        SocketChannel accepted;
        while ((accepted = server.accept()) == null) {
            if (System.nanoTime() - deadline > 0 || sender != null && !sender.isAlive()) {
                throw new IOException("no connection from the sender within 30 s" + (sender == null ? ""
                    : " (tern nc: " + sender.stderr().strip() + ")"));
            }
            VethBenchmark.sleep(20);
        }
        accepted.configureBlocking(true);
        return accepted;
    }

    private static void add(Map<String, List<Double>> samples, String key, double value) {
        samples.computeIfAbsent(key, x -> new ArrayList<>()).add(value);
    }
}
