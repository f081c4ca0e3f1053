package dev.tern.conformance.bench;

import dev.tern.afpacket.AfPacketLink;
import dev.tern.afpacket.AfPacketOptions;
import dev.tern.testkit.netns.BackgroundCommand;
import dev.tern.testkit.netns.NetnsHarness;
import dev.tern.testkit.netns.NetworkNamespace;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.DatagramChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The small-packet rate one stack answers (goal: the kernel's rate): 64-byte UDP datagrams echoed by {@code tern serve
 * --udp-echo 7 --shards 1} against two kernel echo servers on the kernel's end: a Java {@link DatagramChannel} loop
 * (receive then send back, two system calls a datagram; keys {@code ..._kernel...}) and, where gcc builds it, a C loop
 * that takes up to 64 datagrams per recvmmsg and sends them back with one sendmmsg ({@code udp_echo_mmsg.c}; keys
 * {@code ..._kernel_mmsg...}, ratios {@code ..._ratio_mmsg}), all driven the same two ways in the same round,
 * offloads on:
 * <ul>
 *   <li>by a client on a kernel socket: a Java {@link DatagramChannel} in the peer's namespace keeping
 *   {@value #WINDOW} datagrams in flight for {@code seconds} (a reply lets the next one go; after 20 ms without any
 *   reply the window is counted lost and opened again), after {@link #WARM_UP_SECONDS} of the same load not counted.
 *   Keys: {@code udp_echo_rate_{tern,kernel}} (echoes per second), {@code udp_echo_ratio} (median of per-round
 *   ratios), {@code udp_echo_lost_{tern,kernel}}. This client is itself the bottleneck on two cores: its thread
 *   spends a system call on every datagram each way and runs at a full core, while Tern's shard had a third of a core
 *   to spare (perf, 2026-11-29), so the ratio says how cheap each server makes the client's calls;</li>
 *   <li>by a flood ({@link FrameFloodGenerator#datagrams}: 64-byte datagrams built once, sent from an AF_PACKET link
 *   on the peer's end in batches, from 16,384 source ports) at each rate of {@link #FLOOD_RATES} (0: as fast as it
 *   goes) for {@code seconds}, after {@link #FLOOD_WARM_UP_SECONDS} unpaced and not counted, counting the echoes
 *   that come back on the same link between batches: how many the server answers when the load is not the limit.
 *   Keys per step ({@code 100k}, ..., {@code unpaced}): {@code udp_flood_echo_rate_{tern,kernel}_STEP},
 *   {@code udp_flood_sent_rate_{tern,kernel}_STEP}; the best step: {@code udp_flood_echo_rate_{tern,kernel}},
 *   {@code udp_flood_echo_ratio} (median of per-round ratios of the best steps).</li>
 * </ul>
 */
final class UdpRateBenchmark {
    static final int WINDOW = 64;
    /**
     * Each server is driven this long before the measurement, not counted: a freshly started {@code tern serve} runs
     * interpreted and C1 code for its first seconds (the HTTP benchmark saw 15-25 s to full speed on two cores).
     */
    private static final double WARM_UP_SECONDS = Double.parseDouble(System.getProperty("tern.bench.udp.warmup", "10"));
    /** The flood's steps in datagrams per second; 0 is as fast as the generator goes. */
    static final List<Long> FLOOD_RATES = List.of(100_000L, 200_000L, 300_000L, 0L);
    /** After the socket client's warm-up: the flood's own paths (a full ring, drops) before they are measured. */
    private static final double FLOOD_WARM_UP_SECONDS = 3;
    private static final int PORT = 7;
    private static final int SIZE = 64;
    /** The counting ring: 64 blocks of 256 KiB, as the SYN-rate benchmark's, so that echoes are not lost uncounted. */
    private static final AfPacketOptions FLOOD_LINK = AfPacketOptions.defaults().rxBlocks(256 * 1024, 64).txFrameCount(1024);

    private final double seconds;
    private final int rounds;
    private final Path tern;
    private final Path root;

    UdpRateBenchmark(double seconds, int rounds, Path root) {
        this.seconds = seconds;
        this.rounds = rounds;
        this.root = root;
        this.tern = root.resolve("tern");
        if (!Files.isExecutable(tern)) {
            throw new IllegalStateException("no tern launcher at " + tern + " (run through conformance/bench-veth.sh)");
        }
    }

    /** Echoes per second and datagrams lost. */
    record Figures(double rate, long lost) {
    }

    /** One flood step: datagrams per second the link took, echoes per second counted, echoes its ring lost. */
    record FloodStep(double sentRate, double echoRate, long ringDrops) {
    }

    /** What one server did under both loads in a round. */
    record Round(Figures client, Map<Long, FloodStep> flood) {
        double bestFloodRate() {
            return flood.values().stream().mapToDouble(FloodStep::echoRate).max().orElse(0);
        }
    }

    void run(Map<String, Double> results) throws Exception {
        final Map<String, List<Double>> samples = new LinkedHashMap<>();
        final Path work = Files.createTempDirectory("tern-udp-rate");
        try (NetnsHarness kernels = NetnsHarness.create(); NetnsHarness net = NetnsHarness.create()) {
            final Path mmsgServer = compileMmsgServer(work);
            kernels.ternExec(Duration.ofSeconds(10), "ip", "address", "add", NetnsHarness.TERN_ADDRESS + "/24",
                "dev", NetnsHarness.TERN_INTERFACE).orThrow();
            for (int round = 0; round < rounds; round++) {
                System.err.printf(Locale.ROOT, "UDP echo rate, round %d of %d ...%n", round + 1, rounds);
                final Map<String, Round> servers = new LinkedHashMap<>();
                servers.put("kernel", kernelEcho(kernels));
                if (mmsgServer != null) {
                    servers.put("kernel_mmsg", kernelMmsgEcho(kernels, mmsgServer));
                }
                servers.put("tern", ternEcho(net));
                servers.forEach((name, figures) -> {
                    System.err.printf(Locale.ROOT, "  %-12s socket client %,9.0f echoes/s (%d lost); flood:", name,
                        figures.client.rate, figures.client.lost);
                    add(samples, "udp_echo_rate_" + name, figures.client.rate);
                    add(samples, "udp_echo_lost_" + name, figures.client.lost);
                    for (long rate : FLOOD_RATES) {
                        final String step = SynRateBenchmark.stepKey(rate);
                        final FloodStep f = figures.flood.get(rate);
                        System.err.printf(Locale.ROOT, " %s sent %,.0f/s echoed %,.0f/s (ring drops %d);", step,
                            f.sentRate, f.echoRate, f.ringDrops);
                        add(samples, "udp_flood_echo_rate_" + name + "_" + step, f.echoRate);
                        add(samples, "udp_flood_sent_rate_" + name + "_" + step, f.sentRate);
                    }
                    System.err.println();
                    add(samples, "udp_flood_echo_rate_" + name, figures.bestFloodRate());
                });
                final Round ternEcho = servers.get("tern");
                for (String kernel : List.of("kernel", "kernel_mmsg")) {
                    final Round k = servers.get(kernel);
                    if (k != null) {
                        final String suffix = kernel.substring("kernel".length());
                        add(samples, "udp_echo_ratio" + suffix, ternEcho.client.rate / k.client.rate);
                        add(samples, "udp_flood_echo_ratio" + suffix, ternEcho.bestFloodRate() / k.bestFloodRate());
                    }
                }
            }
        } finally {
            VethBenchmark.deleteTree(work);
        }
        samples.forEach((key, values) -> {
            results.put(key, VethBenchmark.median(values));
            System.err.printf("  %-40s %s%n", key, values.stream().map(v -> String.format(Locale.ROOT, "%.2f", v)).toList());
        });
    }

    private Round ternEcho(NetnsHarness net) throws IOException {
        try (CommandCounters counters = CommandCounters.create();
             BackgroundCommand serve = net.startInTern(counters.command(tern.toString(), "serve", "--udp-echo",
                 Integer.toString(PORT), "--shards", "1", "--link", "afpacket:" + NetnsHarness.TERN_INTERFACE, "--ip",
                 NetnsHarness.TERN_ADDRESS + "/24"))) {
            final Figures client = drive(net.peerNamespace(), serve);
            final Map<String, Long> before = counters.read();
            final Map<Long, FloodStep> flood = flood(net);
            System.err.println("  Tern's counters over the flood: " + CommandCounters.growth(before, counters.read(),
                List.of("link.rx.kernel_drops", "link.rx.frames", "link.tx.frames", "udp.rx.", "udp.drop.", "stack.shed.")));
            return new Round(client, flood);
        }
    }

    /**
     * Builds the kernel's recvmmsg/sendmmsg echo server ({@code conformance/src/main/c/udp_echo_mmsg.c}) into
     * {@code work} with gcc; null, saying why, when there is no gcc or the build fails (the Java loop still runs).
     */
    private Path compileMmsgServer(Path work) {
        final Path source = root.resolve("conformance/src/main/c/udp_echo_mmsg.c");
        final Path binary = work.resolve("udp_echo_mmsg");
        try {
            final Process gcc = new ProcessBuilder("gcc", "-O2", "-o", binary.toString(), source.toString())
                .redirectErrorStream(true).start();
            final String output = new String(gcc.getInputStream().readAllBytes());
            if (gcc.waitFor() == 0) {
                return binary;
            }
            System.err.println("UDP echo rate: the kernel's recvmmsg echo server did not build (" + output.strip()
                + "); measuring the Java loop only");
        } catch (IOException e) {
            System.err.println("UDP echo rate: no gcc (Debian package gcc) for the kernel's recvmmsg echo server ("
                + e.getMessage() + "); measuring the Java loop only");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return null;
    }

    /** The kernel with its batched calls: the C server in the kernel pair's Tern-side namespace, both loads. */
    private Round kernelMmsgEcho(NetnsHarness kernels, Path server) throws Exception {
        try (BackgroundCommand echo = kernels.startInTern(server.toString(), NetnsHarness.TERN_ADDRESS,
                 Integer.toString(PORT))) {
            return kernelLoads(kernels, echo, "the recvmmsg server");
        }
    }

    /**
     * Both loads against the kernel echo server listening on the kernel pair now ({@code server}: its command, or
     * null for the Java loop in this process); the kernel's UDP counters over the flood are printed.
     */
    private Round kernelLoads(NetnsHarness kernels, BackgroundCommand server, String which) throws IOException {
        final Figures client = drive(kernels.peerNamespace(), server);
        final Map<String, Long> before = SynRateBenchmark.kernelNetstat(kernels.ternNamespace(), "Udp");
        final Map<Long, FloodStep> flood = flood(kernels);
        System.err.println("  the kernel's counters over the flood (" + which + "): " + CommandCounters.growth(before,
            SynRateBenchmark.kernelNetstat(kernels.ternNamespace(), "Udp"), List.of("Udp.")));
        return new Round(client, flood);
    }

    private Round kernelEcho(NetnsHarness kernels) throws Exception {
        final DatagramChannel server = kernels.ternNamespace().call(() -> open(new InetSocketAddress(NetnsHarness.TERN_ADDRESS, PORT)));
        final Thread echo = Thread.ofPlatform().name("udp-echo-kernel").start(() -> {
            final ByteBuffer buffer = ByteBuffer.allocateDirect(2048);
            try (server) {
                while (true) {
                    final SocketAddress from = server.receive(buffer.clear());
                    server.send(buffer.flip(), from);
                }
            } catch (ClosedChannelException e) {
                // the measurement is over
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
        try {
            return kernelLoads(kernels, null, "the Java loop");
        } finally {
            server.close();
            echo.join(5_000);
        }
    }

    /**
     * The flood's steps against the echo server across {@code pair}, after {@value #FLOOD_WARM_UP_SECONDS} s unpaced
     * not counted. The generator's link is opened on peer0 inside the peer's namespace and closed after.
     */
    private Map<Long, FloodStep> flood(NetnsHarness pair) {
        final Map<Long, FloodStep> steps = new LinkedHashMap<>();
        try (AfPacketLink link = pair.openPeerLink(AfPacketLink::open, FLOOD_LINK);
             FrameFloodGenerator generator = FrameFloodGenerator.datagrams(pair.peerMac(), NetnsHarness.PEER_IPV4,
                 pair.ternMac(), NetnsHarness.TERN_IPV4, PORT, FrameFloodGenerator.DEFAULT_FRAMES, SIZE)) {
            floodStep(link, generator, 0, FLOOD_WARM_UP_SECONDS);
            for (long rate : FLOOD_RATES) {
                steps.put(rate, floodStep(link, generator, rate, seconds));
            }
        }
        return steps;
    }

    private static FloodStep floodStep(AfPacketLink link, FrameFloodGenerator generator, long rate, double seconds) {
        final FrameFloodGenerator.DatagramCounter echoes = new FrameFloodGenerator.DatagramCounter(NetnsHarness.TERN_IPV4, PORT);
        final long dropsBefore = link.stats().kernelDrops();
        final long maxFrames = (long) ((rate == 0 ? 5_000_000 : rate) * seconds) + 1;
        final FrameFloodGenerator.Result sent = generator.run(link, rate, maxFrames, (long) (seconds * 1e9), echoes);
        final double echoRate = echoes.count() * 1e9 / sent.elapsedNs();
        // Echoes still on their way are read and dropped, so that the next step starts from none.
        FrameFloodGenerator.receiveFor(link, FrameFloodGenerator.IGNORE, 100_000_000L);
        return new FloodStep(sent.framesPerSecond(), echoRate, link.stats().kernelDrops() - dropsBefore);
    }


    private static DatagramChannel open(InetSocketAddress bind) {
        try {
            final DatagramChannel channel = DatagramChannel.open();
            if (bind != null) {
                channel.bind(bind);
            }
            return channel;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The client: waits until the echo answers, then keeps WINDOW datagrams in flight for the measurement. */
    private Figures drive(NetworkNamespace peer, BackgroundCommand server) throws IOException {
        try (DatagramChannel client = peer.call(() -> open(null))) {
            client.connect(new InetSocketAddress(NetnsHarness.TERN_ADDRESS, PORT));
            client.configureBlocking(false);
            final ByteBuffer out = ByteBuffer.allocateDirect(SIZE);
            final ByteBuffer in = ByteBuffer.allocateDirect(2048);
            final long ready = System.nanoTime() + 30_000_000_000L;
            boolean answered = false;
            while (!answered) {
                if (System.nanoTime() - ready > 0 || server != null && !server.isAlive()) {
                    throw new IllegalStateException("the echo server did not answer within 30 s"
                        + (server == null ? "" : ": " + server.stderr().strip()));
                }
                try {
                    client.write(out.clear());
                    VethBenchmark.sleep(50);
                    while (client.read(in.clear()) > 0) {
                        answered = true;
                    }
                } catch (java.net.PortUnreachableException e) {
                    // the server has not bound its port yet: its kernel answered with an ICMP port unreachable
                }
            }
            keepWindowFull(client, out, in, WARM_UP_SECONDS);
            return keepWindowFull(client, out, in, seconds);
        }
    }

    /**
     * Keeps {@value #WINDOW} datagrams in flight for {@code seconds}; the echoes per second and datagrams lost. Echoes
     * still on their way when it ends are read and dropped (50 ms), so that a following call starts from none.
     */
    private static Figures keepWindowFull(DatagramChannel client, ByteBuffer out, ByteBuffer in, double seconds)
        throws IOException {
        final long start = System.nanoTime();
        final long end = start + (long) (seconds * 1e9);
        long received = 0;
        long lost = 0;
        int inFlight = 0;
        long lastReplyNs = start;
        long now;
        while ((now = System.nanoTime()) - end < 0) {
            while (inFlight < WINDOW && client.write(out.clear()) > 0) {
                inFlight++;
            }
            int n;
            while ((n = client.read(in.clear())) > 0) {
                received++;
                inFlight--;
                lastReplyNs = now;
            }
            if (n < 0) {
                break;
            }
            if (inFlight > 0 && now - lastReplyNs > 20_000_000L) {
                lost += inFlight;
                inFlight = 0;
                lastReplyNs = now;
            }
        }
        final double rate = received / ((System.nanoTime() - start) / 1e9);
        VethBenchmark.sleep(50);
        while (client.read(in.clear()) > 0) {
            // an echo of this call's window, late
        }
        return new Figures(rate, lost);
    }

    private static void add(Map<String, List<Double>> samples, String key, double value) {
        samples.computeIfAbsent(key, x -> new ArrayList<>()).add(value);
    }
}
