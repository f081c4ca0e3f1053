package dev.tern.conformance.bench;

import dev.tern.afpacket.AfPacketLink;
import dev.tern.afpacket.AfPacketOptions;
import dev.tern.testkit.netns.BackgroundCommand;
import dev.tern.testkit.netns.Commands;
import dev.tern.testkit.netns.EthtoolOffloads;
import dev.tern.testkit.netns.NetnsHarness;
import dev.tern.testkit.netns.NetworkNamespace;

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
import java.util.concurrent.atomic.AtomicReference;

/**
 * An established TCP transfer under a SYN flood (which must not starve it): how much of its rate it keeps and its longest
 * stall, Tern against the kernel in the same run, offloads on.
 *
 * <pre>
 *   kernel -> Tern:  [p] Java sender  ---> tern serve --discard 9 [t]     (kernel: a Java discard server in [t])
 *   Tern -> kernel:  [p] Java receiver <--- head -c N /dev/zero | tern nc  (kernel: a Java sender in [t])
 *   flood:           [p] SYNs to 198.18.0.2:9 from the peer's own address (the kernel there answers each SYN-ACK
 *                    with a RST, so every SYN costs the flooded host a SYN, a SYN-ACK and a RST): the Java
 *                    {@link FrameFloodGenerator} on an AF_PACKET link on peer0 (default), at {@code --flood-rate}
 *                    frames/s or as fast as it goes; or hping3 -S --flood
 * </pre>
 * One connection per measurement: {@code seconds} without the flood, then the flood starts and, 0.3 s later,
 * {@code seconds} under it. The peer's Java end measures bytes and the longest time between two of its reads or
 * writes returning (a stall). Every load is bounded in time (the Tern sender in bytes, the Java flood in frames); hping3
 * and the commands are ended by PID. Keys: {@code flood_kept_WAY} (rate under the flood over the rate before it,
 * Tern), {@code flood_kept_kernel_WAY}, {@code flood_stall_s_WAY}, {@code flood_stall_s_kernel_WAY},
 * {@code flood_gbps_*}, {@code flood_syn_rate[_kernel]_WAY} (SYNs/s the Java flood sent, frames its link took),
 * {@code flood_tern_{syn_pressure_drops,shed_episodes,kernel_drops}_WAY} (Tern's counters
 * {@code tcp.drop.syn_pressure}, {@code stack.shed.episodes} and {@code link.rx.kernel_drops} over the flooded phase).
 */
final class FloodBenchmark {
    private static final int DISCARD_PORT = 9;
    private static final int SINK_PORT = 5001;
    private static final long TERN_SEND_LIMIT = 64L << 30;
    /** The flood's link sends; what it receives (the whole transfer, on peer0) is dropped in a ring kept small. */
    private static final AfPacketOptions FLOOD_LINK = AfPacketOptions.defaults().rxBlocks(4096, 2).txFrameCount(1024);
    /** Tern's counters printed after each flooded phase, and the three kept as keys. */
    static final List<String> SHED_COUNTERS = List.of("stack.shed.", "tcp.drop.syn_pressure", "tcp.rx.unanswered_pressure",
        "tcp.syncookies.", "tcp.conn.passive_opens", "tcp.listen.", "link.rx.kernel_drops", "link.rx.frames");

    /** Which SYN flood: the Java generator at {@code rate} frames/s (0: as fast as it goes), or hping3 --flood. */
    record FloodSource(boolean hping3, long rate) {
        static final FloodSource DEFAULT = new FloodSource(false, 0);

        String describe() {
            return hping3 ? "hping3 --flood" : rate == 0 ? "Java, unpaced" : String.format(Locale.ROOT, "Java, %,d SYNs/s", rate);
        }
    }

    private final double seconds;
    private final int rounds;
    private final Path tern;
    private final FloodSource source;
    /** Tern's link: AF_PACKET, or ({@code --flood-link afxdp}) AF_XDP, whose XDP program sheds the SYNs. */
    private final boolean afxdp;
    private final String link;

    FloodBenchmark(double seconds, int rounds, Path root, FloodSource source, boolean afxdp) {
        this.seconds = seconds;
        this.rounds = rounds;
        this.source = source;
        this.afxdp = afxdp;
        this.link = (afxdp ? "afxdp:" : "afpacket:") + NetnsHarness.TERN_INTERFACE;
        this.tern = root.resolve("tern");
        if (!Files.isExecutable(tern)) {
            throw new IllegalStateException("no tern launcher at " + tern + " (run through conformance/bench-veth.sh)");
        }
    }

    /**
     * Rate before and under the flood (Gbit/s), the longest stall under it (s), the flood's rate (SYNs/s, NaN for
     * hping3) and how Tern's {@link #SHED_COUNTERS} grew under it (empty for the kernel).
     */
    record Figures(double quietGbps, double floodGbps, double stallSeconds, double synRate, Map<String, Long> counters) {
    }

    void run(Map<String, Double> results) throws Exception {
        final String hping = source.hping3 ? Commands.require("hping3", "hping3") : null;
        System.err.println("SYN flood: " + source.describe() + ", Tern on " + link);
        // AF_XDP carries no checksum status, so the peer must send full checksums (tx off, and so no TSO): both pairs
        // alike, so that the kernel's figures compare.
        final EthtoolOffloads peer = afxdp ? new EthtoolOffloads(false, true, false, true, false) : EthtoolOffloads.ALL_ON;
        final NetnsHarness.Options options = new NetnsHarness.Options(1500, EthtoolOffloads.ALL_ON, peer);
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
        results.put("flood_link_afxdp", afxdp ? 1.0 : 0.0);
        samples.forEach((key, values) -> {
            results.put(key, VethBenchmark.median(values));
            System.err.printf("  %-40s %s%n", key, values.stream().map(v -> String.format(Locale.ROOT, "%.2f", v)).toList());
        });
    }

    private static void record(String way, Figures kernel, Figures tern, Map<String, List<Double>> samples) {
        System.err.printf(Locale.ROOT, "  %s: kernel %.2f -> %.2f Gbit/s (stall %.2f s, flood %.0f SYNs/s), Tern %.2f -> %.2f"
                + " Gbit/s (stall %.2f s, flood %.0f SYNs/s)%n    Tern's counters under the flood: %s%n", way,
            kernel.quietGbps, kernel.floodGbps, kernel.stallSeconds, kernel.synRate, tern.quietGbps, tern.floodGbps,
            tern.stallSeconds, tern.synRate, tern.counters);
        add(samples, "flood_syn_rate_kernel_" + way, kernel.synRate);
        add(samples, "flood_syn_rate_" + way, tern.synRate);
        add(samples, "flood_tern_syn_pressure_drops_" + way, tern.counters.getOrDefault("tcp.drop.syn_pressure", 0L));
        add(samples, "flood_tern_shed_episodes_" + way, tern.counters.getOrDefault("stack.shed.episodes", 0L));
        add(samples, "flood_tern_kernel_drops_" + way, tern.counters.getOrDefault("link.rx.kernel_drops", 0L));
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
        try (CommandCounters counters = CommandCounters.create();
             BackgroundCommand serve = net.startInTern(counters.command(tern.toString(), "serve", "--discard",
                 Integer.toString(DISCARD_PORT), "--link", link, "--ip",
                 NetnsHarness.TERN_ADDRESS + "/24"))) {
            final SocketChannel channel = connectFromPeer(net.peerNamespace(), NetnsHarness.TERN_ADDRESS, DISCARD_PORT, serve);
            return sendAndMeasure(net, hping, channel, counters);
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
            return sendAndMeasure(kernels, hping, channel, null);
        } finally {
            server.close();
            discard.join(10_000);
        }
    }

    /** Tern -> kernel: {@code tern nc} sends zeros to a Java receiver in the peer's namespace. */
    private Figures ternToKernel(NetnsHarness net, String hping) throws Exception {
        final ServerSocketChannel server = listen(net.peerNamespace(), NetnsHarness.PEER_ADDRESS, SINK_PORT);
        try (server; CommandCounters counters = CommandCounters.create();
             BackgroundCommand sender = net.startInTern(counters.command("sh", "-c", "head -c " + TERN_SEND_LIMIT
                 + " /dev/zero | " + tern + " nc --link " + link + " --ip "
                 + NetnsHarness.TERN_ADDRESS + "/24 " + NetnsHarness.PEER_ADDRESS + " " + SINK_PORT))) {
            return receiveAndMeasure(net, hping, accept(server, sender), counters);
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
            return receiveAndMeasure(kernels, hping, accept(server, null), null);
        } finally {
            sending.close();
            sender.join(10_000);
        }
    }

    /** One way of moving bytes on the peer's end of the connection: a write or a read; returns the bytes moved. */
    private interface Transfer {
        int move(SocketChannel channel, ByteBuffer buffer) throws IOException;
    }

    private Figures sendAndMeasure(NetnsHarness pair, String hping, SocketChannel channel, CommandCounters counters)
        throws IOException {
        return measure(pair, hping, channel, counters, (c, buffer) -> c.write(buffer.clear()));
    }

    private Figures receiveAndMeasure(NetnsHarness pair, String hping, SocketChannel channel, CommandCounters counters)
        throws IOException {
        return measure(pair, hping, channel, counters, FloodBenchmark::read);
    }

    /**
     * {@code seconds} of {@code transfer} before the flood, 0.3 s to settle, {@code seconds} under it; Tern's counters
     * ({@code counters}, null for the kernel) are read when the flood starts and before it ends.
     */
    private Figures measure(NetnsHarness pair, String hping, SocketChannel channel, CommandCounters counters,
                            Transfer transfer) throws IOException {
        try (channel) {
            final ByteBuffer buffer = ByteBuffer.allocateDirect(256 << 10);
            final Phase quiet = new Phase(seconds);
            while (!quiet.over()) {
                quiet.moved(transfer.move(channel, buffer));
            }
            final Map<String, Long> before = counters == null ? Map.of() : counters.read();
            try (Flood flood = flood(pair, hping)) {
                final Phase settle = new Phase(0.3);
                while (!settle.over()) {
                    transfer.move(channel, buffer);
                }
                final Phase flooded = new Phase(seconds);
                while (!flooded.over()) {
                    flooded.moved(transfer.move(channel, buffer));
                }
                final Map<String, Long> grown = counters == null ? Map.of()
                    : CommandCounters.growth(before, counters.read(), SHED_COUNTERS);
                return new Figures(quiet.gbps(), flooded.gbps(), flooded.longestGapSeconds(), flood.stop(), grown);
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

    /** A SYN flood at the flooded end's discard port from the peer's namespace, running until stopped. */
    private interface Flood extends AutoCloseable {
        /** Ends the flood (again: nothing); returns the SYNs per second it sent, NaN where that is not known. */
        double stop();

        @Override
        default void close() {
            stop();
        }
    }

    private Flood flood(NetnsHarness pair, String hping) {
        if (source.hping3) {
            // hping3 -q says nothing of its rate; ended by PID.
            final BackgroundCommand command = pair.startInPeer(hping, "-q", "-S", "-p", Integer.toString(DISCARD_PORT),
                "--flood", NetnsHarness.TERN_ADDRESS);
            return () -> {
                command.close();
                return Double.NaN;
            };
        }
        return javaFlood(pair, DISCARD_PORT, source.rate, seconds + 10);
    }

    /**
     * The Java flood, on a thread of its own: an AF_PACKET link opened on peer0 inside the peer's namespace, sending
     * {@link FrameFloodGenerator}'s SYNs from the peer's address to Tern's end's MAC and address. Bounded by
     * {@code maxSeconds} and by {@code maxSeconds} at the rate asked (at 5,000,000/s unpaced) in frames.
     */
    private static Flood javaFlood(NetnsHarness pair, int port, long rate, double maxSeconds) {
        final AfPacketLink link = pair.openPeerLink(AfPacketLink::open, FLOOD_LINK);
        final FrameFloodGenerator generator = FrameFloodGenerator.syns(pair.peerMac(), NetnsHarness.PEER_IPV4, pair.ternMac(),
            NetnsHarness.TERN_IPV4, port, FrameFloodGenerator.DEFAULT_FRAMES, 15);
        final long maxFrames = (long) ((rate == 0 ? 5_000_000 : rate) * maxSeconds);
        final AtomicReference<FrameFloodGenerator.Result> result = new AtomicReference<>();
        final Thread thread = Thread.ofPlatform().name("syn-flood").start(() ->
            result.set(generator.run(link, rate, maxFrames, (long) (maxSeconds * 1e9), null)));
        return new Flood() {
            private boolean stopped;

            @Override
            public double stop() {
                if (!stopped) {
                    stopped = true;
                    generator.stop();
                    try {
                        thread.join((long) (maxSeconds * 1000) + 10_000);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    if (thread.isAlive()) {
                        throw new IllegalStateException("the SYN flood's thread did not stop");
                    }
                    link.close();
                    generator.close();
                }
                return result.get() == null ? Double.NaN : result.get().framesPerSecond();
            }
        };
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
        return listen(namespace, address, port, 0);
    }

    /** A kernel listener made in {@code namespace}; {@code backlog} 0 is the JDK's default (50). */
    static ServerSocketChannel listen(NetworkNamespace namespace, String address, int port, int backlog) {
        return namespace.call(() -> {
            try {
                final ServerSocketChannel server = ServerSocketChannel.open();
                server.bind(new InetSocketAddress(address, port), backlog);
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
