package dev.tern.conformance.bench;

import dev.tern.afpacket.AfPacketLink;
import dev.tern.afpacket.AfPacketOptions;
import dev.tern.afxdp.AfXdpLink;
import dev.tern.afxdp.AfXdpOptions;
import dev.tern.ethernet.link.Link;
import dev.tern.stack.LinkIdleStrategy;
import dev.tern.stack.NetStack;
import dev.tern.stack.SelectableSocket;
import dev.tern.stack.StackRunner;
import dev.tern.stack.TcpConnection;
import dev.tern.stack.TcpListener;
import dev.tern.stack.TernSocketException;
import dev.tern.stack.UdpSocket;
import dev.tern.tcp.EcnMode;
import dev.tern.tcp.TcpConfig;
import dev.tern.tcp.TcpOptions;
import dev.tern.testkit.netns.BackgroundCommand;
import dev.tern.testkit.netns.CommandResult;
import dev.tern.testkit.netns.Commands;
import dev.tern.testkit.netns.EthtoolOffloads;
import dev.tern.testkit.netns.NetnsHarness;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.BusySpinIdleStrategy;
import org.agrona.concurrent.IdleStrategy;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The veth benchmark (goals: the kernel's TCP throughput, round trips 10x lower than the kernel's): Tern against the Linux kernel versus the kernel against itself, side by side in one
 * run, over veth pairs set up the same way (MTU 1500; offloads on, then off, the same on both ends), as ratios.
 *
 * <pre>
 *   pair 1 (Tern<->kernel):   [ns p] peer0 198.18.0.1 (kernel) <== veth ==> tern0 (no kernel address) [ns t]
 *                                                                            AfPacketLink + NetStack 198.18.0.2
 *   pair 2 (kernel<->kernel): [ns p] peer0 198.18.0.1 (kernel) <== veth ==> tern0 198.18.0.2 (kernel) [ns t]
 * </pre>
 * Both pairs come from {@link NetnsHarness} with the same options; the second gets a kernel address on its "tern"
 * end, so that kernel<->kernel crosses exactly the same kind of link. The kernel's programs are the same in both
 * comparisons ({@link KernelEndpoint}: blocking JDK sockets, run in the namespaces with {@code ip netns exec}); iperf3
 * and sockperf, when installed, measure pair 2 as well, as a cross-check of those programs.
 *
 * <p>Measured, each for {@code --seconds} after a warm-up (TCP bulk in {@code --rounds} interleaved rounds, medians):
 * <ul>
 *   <li>TCP bulk, one connection, each way: Tern sends to the kernel's sink, the kernel's source sends to Tern, and
 *       the kernel to the kernel; Gbit/s of payload at the receiver. Tern uses 4 MiB buffers
 *       ({@code TcpOptions.DEFAULT.withBuffers(4 << 20, 4 << 20)}); the kernel its defaults (autotuning). Tern's link
 *       has the vnet header in both settings, so its TCP hands the link segments of up to 64 KiB, as the kernel's TCP
 *       does its device layer; with offloads off the kernel segments both stacks' packets in software before they
 *       cross (see {@code BulkMode}); a third run without the vnet header shows Tern segmenting in Java.</li>
 *   <li>UDP round trips of 64-byte datagrams, one at a time: Tern's client against the kernel's echo server, the
 *       kernel's client against Tern's echo socket, and the kernel's client against the kernel's echo server; the
 *       client's p50 and p99 in microseconds.</li>
 * </ul>
 * Tern's stack runs on a {@link StackRunner} with a {@link BackoffIdleStrategy} (spin, yield, then park up to 100 us;
 * {@code --idle spin} for a {@link BusySpinIdleStrategy}); the benchmark's own thread is the application, waiting in
 * the sockets' blocking calls (which poll the stack themselves between the runner's turns, see {@code NetStack}), or
 * the application's thread owns the stack ("own thread"). Nothing is pinned. The kernel's TCP congestion control is
 * the machine's default unless {@code --congestion-control} names one (set in the benchmark's namespaces only).
 *
 * <p>Needs root (namespaces, AF_PACKET). Prints a table, then one JSON object on its last line. Not a test: timing
 * on a shared 2-core machine is noisy; the numbers are what one run measured.
 */
public final class VethBenchmark {
    private static final int SINK_PORT = 5001;
    private static final int SOURCE_PORT = 5002;
    private static final int ECHO_PORT = 7;
    private static final int DATAGRAM = 64;
    /** Key suffix of the bulk runs whose link has no vnet header (Tern segments and checksums in Java). */
    private static final String NO_VNET = "_no_vnet";
    private static final String AFXDP = "_afxdp";
    private static final String HELD = "_held";
    /** Key of the AF_XDP round trips with busy polling, and its SO_BUSY_POLL time. */
    private static final String BUSY_POLL = "_busy_poll";
    private static final int AFXDP_BUSY_POLL_US = 50;
    private static final String ZERO_COPY = "_zero_copy";
    /** The least warm-up of each TCP bulk mode before its first measured round (see {@code bulkRounds}). */
    private static final double BULK_WARM_UP_SECONDS = 3;
    static final TcpOptions BULK_BUFFERS = TcpOptions.DEFAULT.withBuffers(4 << 20, 4 << 20);
    static final Pattern GBPS = Pattern.compile("gbps=([0-9.]+)");
    private static final Pattern P50 = Pattern.compile("p50_us=([0-9.]+)");
    private static final Pattern P99 = Pattern.compile("p99_us=([0-9.]+)");

    private final double seconds;
    private final int roundTrips;
    private final boolean frameRing;
    /**
     * "all", or the one measurement to make: "tcp" (bulk both ways), "tcp-tern-to-kernel", "tcp-kernel-to-tern",
     * "udp-rr", "tcp-loss" ({@link LossyBulk}), "nc" ({@link NcBenchmark}).
     */
    private final String only;
    /** Loss levels in percent for the lossy measurements. */
    private final List<Double> lossLevels;
    /** CE marking levels in percent for {@code tcp-ce} (ECN on every end); empty: not measured. */
    private List<Double> ceLevels = List.of();
    /** Tern's TCP settings for the stacks {@link #withStack} builds; null: the defaults. */
    private TcpConfig ternTcp;
    /** Tern's congestion control in the lossy and marked measurements ({@code --tern-cc}); null: Tern's default. */
    private String ternCongestionControl;
    /** Bytes and window (seconds) of each {@code tern nc} transfer. */
    private final long ncBytes;
    private final double ncSeconds;
    private final int httpRequests;
    /** The kernel's TCP congestion control in every namespace made, or null for the machine's default. */
    private final String congestionControl;
    /** How a runner idles: backoff, spin or link ({@link #runnerIdle}). */
    private final String idle;
    /** TCP bulk rounds (medians reported). */
    private final int rounds;
    /** The SYN flood of {@code --only flood}. */
    private final FloodBenchmark.FloodSource floodSource;
    /** SYNs per second of each {@code --only syn-rate} step, 0 for as fast as the generator goes. */
    private final List<Long> synRates;
    private final Map<String, Double> results = new LinkedHashMap<>();
    private String congestionControlInUse = "?";
    private String lossCongestionControl;

    private VethBenchmark(double seconds, int roundTrips, boolean frameRing, String only, String congestionControl,
                          String idle, int rounds, List<Double> lossLevels, long ncBytes, double ncSeconds,
                          int httpRequests, FloodBenchmark.FloodSource floodSource, List<Long> synRates) {
        this.only = only;
        this.floodSource = floodSource;
        this.synRates = synRates;
        this.lossLevels = lossLevels;
        this.ncBytes = ncBytes;
        this.ncSeconds = ncSeconds;
        this.httpRequests = httpRequests;
        this.rounds = rounds;
        this.congestionControl = congestionControl;
        this.idle = idle;
        this.seconds = seconds;
        this.roundTrips = roundTrips;
        this.frameRing = frameRing;
    }

    public static void main(String[] args) throws Exception {
        double seconds = 3;
        int roundTrips = 100_000;
        boolean frameRing = true;
        String only = "all";
        String congestionControl = null;
        String idle = "backoff";
        int rounds = 3;
        List<Double> lossLevels = List.of(0.0, 0.1, 1.0, 5.0);
        List<Double> ceLevels = List.of();
        String ternCc = null;
        long ncBytes = 128L << 20;
        double ncSeconds = 20;
        int httpRequests = 40_000;
        long floodRate = FloodBenchmark.FloodSource.DEFAULT.rate();
        boolean hping3 = FloodBenchmark.FloodSource.DEFAULT.hping3();
        boolean floodOverAfXdp = false;
        List<Long> synRates = SynRateBenchmark.DEFAULT_RATES;
        final List<Boolean> settings = new ArrayList<>(List.of(true, false));
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--seconds" -> seconds = Double.parseDouble(args[++i]);
                case "--round-trips" -> roundTrips = Integer.parseInt(args[++i]);
                case "--offloads" -> {
                    final String which = args[++i];
                    settings.clear();
                    if (!which.equals("off")) {
                        settings.add(true);
                    }
                    if (!which.equals("on")) {
                        settings.add(false);
                    }
                }
                case "--rx-ring" -> frameRing = args[++i].equals("frame");
                case "--only" -> only = args[++i];
                case "--congestion-control" -> congestionControl = args[++i];
                case "--idle" -> {
                    idle = args[++i];
                    if (!List.of("backoff", "spin", "link").contains(idle)) {
                        throw new IllegalArgumentException("--idle wants backoff, spin or link, got '" + idle + "'");
                    }
                }
                case "--rounds" -> rounds = Math.max(1, Integer.parseInt(args[++i]));
                case "--loss" -> lossLevels = LossyPairs.parseLevels(args[++i]);
                case "--ce-marks" -> ceLevels = LossyPairs.parseLevels(args[++i]);
                case "--tern-cc" -> ternCc = args[++i];
                case "--nc-mib" -> ncBytes = Math.max(1, Long.parseLong(args[++i])) << 20;
                case "--nc-seconds" -> ncSeconds = Double.parseDouble(args[++i]);
                case "--http-requests" -> httpRequests = Math.max(1, Integer.parseInt(args[++i]));
                case "--flood-rate" -> floodRate = Math.max(0, Long.parseLong(args[++i]));
                case "--flood-generator" -> {
                    final String generator = args[++i];
                    if (!generator.equals("java") && !generator.equals("hping3")) {
                        usage();
                    }
                    hping3 = generator.equals("hping3");
                }
                case "--flood-link" -> {
                    final String link = args[++i];
                    if (!link.equals("afpacket") && !link.equals("afxdp")) {
                        usage();
                    }
                    floodOverAfXdp = link.equals("afxdp");
                }
                case "--syn-rates" -> synRates = SynRateBenchmark.parseRates(args[++i]);
                default -> usage();
            }
        }
        if (!ONLY.contains(only)) {
            usage();
        }
        final String missing = NetnsHarness.unavailableReason().orElse(null);
        if (missing != null) {
            System.err.println("veth benchmark: " + missing);
            System.exit(1);
        }
        final VethBenchmark benchmark = new VethBenchmark(seconds, roundTrips, frameRing, only, congestionControl, idle,
            rounds, lossLevels, ncBytes, ncSeconds, httpRequests, new FloodBenchmark.FloodSource(hping3, floodRate), synRates);
        if (benchmark.wantsBulk("tcp-tern-to-kernel") || benchmark.wantsBulk("tcp-kernel-to-tern") || benchmark.wants("udp-rr")) {
            for (boolean offloads : settings) {
                benchmark.run(offloads);
            }
        } else {
            settings.clear();
        }
        benchmark.ceLevels = ceLevels;
        benchmark.ternCongestionControl = ternCc;
        if (benchmark.wants("tcp-loss") || benchmark.wants("nc") || benchmark.wants("http")) {
            benchmark.lossy();
        }
        if (benchmark.wants("tcp-ce") && !ceLevels.isEmpty()) {
            benchmark.marked();
        }
        final Path root = ternRoot();
        if (benchmark.wants("multicast")) {
            new MulticastBenchmark(benchmark.rounds, root).run(benchmark.results);
        }
        if (benchmark.wants("udp-rate")) {
            new UdpRateBenchmark(benchmark.seconds, benchmark.rounds, root).run(benchmark.results);
        }
        if (benchmark.wants("flood")) {
            new FloodBenchmark(benchmark.seconds, benchmark.rounds, root, benchmark.floodSource, floodOverAfXdp).run(benchmark.results);
        }
        if (benchmark.wants("syn-rate")) {
            new SynRateBenchmark(benchmark.seconds, benchmark.synRates, root).run(benchmark.results);
        }
        if (benchmark.wants("ipv6")) {
            new Ipv6Benchmark(benchmark.seconds, benchmark.rounds).run(benchmark.results);
        }
        benchmark.print(settings);
    }

    private static final List<String> ONLY = List.of("all", "tcp", "tcp-tern-to-kernel", "tcp-kernel-to-tern", "udp-rr",
        "tcp-loss", "tcp-ce", "nc", "http", "multicast", "flood", "udp-rate", "syn-rate", "ipv6");

    private static void usage() {
        System.err.println("usage: VethBenchmark [--seconds N] [--rounds N] [--round-trips N] [--offloads on|off|both]"
            + " [--rx-ring frame|block] [--only " + String.join("|", ONLY) + "]"
            + " [--congestion-control NAME] [--idle backoff|spin|link] [--loss P,P,...] [--ce-marks P,P,...] [--tern-cc NAME] [--nc-mib N] [--nc-seconds N]"
            + " [--http-requests N] [--flood-rate N] [--flood-generator java|hping3] [--flood-link afpacket|afxdp] [--syn-rates N,N,...]");
        System.exit(2);
    }

    /**
     * The lossy measurements: {@link LossyBulk} (TCP through the stack's API) and {@link NcBenchmark} ({@code tern nc}
     * against socat), on one {@link LossyPairs}, offloads off, the kernel's senders on CUBIC unless
     * {@code --congestion-control} names another.
     */
    private void lossy() throws Exception {
        lossCongestionControl = congestionControl != null ? congestionControl : "cubic";
        try (LossyPairs pairs = LossyPairs.create(lossCongestionControl)) {
            if (wants("tcp-loss")) {
                ternTcp = ternConfig().build();
                try {
                    new LossyBulk(this, pairs, lossLevels, seconds, rounds).run(results);
                } finally {
                    ternTcp = null;
                }
            }
            final Path root = ternRoot();
            if (wants("nc")) {
                new NcBenchmark(pairs, lossLevels, rounds, ncBytes, ncSeconds, root, ternCongestionControl, false)
                    .run(results);
            }
            if (wants("http")) {
                if (Commands.find("nginx").isPresent() && Commands.find("ab").isPresent()) {
                    new HttpBenchmark(pairs, rounds, httpRequests, root).run(results);
                } else {
                    System.err.println("HTTP: skipped, needs nginx and ab (Debian packages nginx, apache2-utils)");
                }
            }
        }
    }

    /**
     * TCP bulk through CE marks ({@link LossyBulk} on {@link LossyPairs} with ECN on every end, the kernel's
     * {@code tcp_ecn=1} and Tern's {@code EcnMode.ON}), no loss: Tern against the kernel pair under the same marks.
     */
    private void marked() throws Exception {
        lossCongestionControl = congestionControl != null ? congestionControl : "cubic";
        try (LossyPairs pairs = LossyPairs.create(lossCongestionControl)) {
            pairs.ecn();
            ternTcp = ternConfig().ecn(EcnMode.ON).build();
            try {
                new LossyBulk(this, pairs, ceLevels, seconds, rounds, true).run(results);
            } finally {
                ternTcp = null;
            }
            if (wants("nc") || only.equals("tcp-ce")) {
                // tern nc --ecn on where users meet ECN, through the same marks.
                new NcBenchmark(pairs, ceLevels, rounds, ncBytes, ncSeconds,
                    ternRoot(), ternCongestionControl, true).run(results);
            }
        }
    }

    /** The repository the benchmark runs from ({@code -Dtern.root}, set by bench-veth.sh): where ./tern is. */
    private static Path ternRoot() {
        return Path.of(System.getProperty("tern.root", "")).toAbsolutePath();
    }

    /** Tern's settings for the lossy and marked measurements: its default, or {@code --tern-cc}'s control. */
    private TcpConfig.Builder ternConfig() {
        final TcpConfig.Builder tcp = TcpConfig.builder();
        return ternCongestionControl == null ? tcp : tcp.congestionControl(ternCongestionControl);
    }

    private void run(boolean offloads) throws Exception {
        final String suffix = offloads ? "_offloads_on" : "_offloads_off";
        final EthtoolOffloads ethtool = offloads ? EthtoolOffloads.ALL_ON : EthtoolOffloads.ALL_OFF;
        final NetnsHarness.Options options = new NetnsHarness.Options(1500, ethtool, ethtool);
        try (NetnsHarness kernels = NetnsHarness.create(options); NetnsHarness net = NetnsHarness.create(options)) {
            kernels.ternExec(Duration.ofSeconds(10), "ip", "address", "add", NetnsHarness.TERN_ADDRESS + "/24", "dev",
                NetnsHarness.TERN_INTERFACE).orThrow();
            applyCongestionControl(kernels);
            applyCongestionControl(net);
            if (wantsBulk("tcp-tern-to-kernel") || wantsBulk("tcp-kernel-to-tern")) {
                bulkRounds(kernels, net, offloads, suffix);
            }
            if (wants("udp-rr")) {
                System.err.printf("offloads %s: UDP round trips ...%n", offloads ? "on" : "off");
                final double[] rr = kernelRoundTrips(kernels);
                results.put("udp_rr_p50_us_kernel" + suffix, rr[0]);
                results.put("udp_rr_p99_us_kernel" + suffix, rr[1]);
                for (Threading threading : Threading.values()) {
                    final String key = threading.key + suffix;
                    withStack(net, true, threading, key, stack -> { // the vnet header, as in BulkMode
                        final double[] client = ternClientRoundTrips(net, stack, threading == Threading.RUNNER_SPIN);
                        results.put("udp_rr_p50_us_tern_client" + key, client[0]);
                        results.put("udp_rr_p99_us_tern_client" + key, client[1]);
                        results.put("udp_rr_lost_tern_client" + key, client[2]);
                        final double[] server = ternServerRoundTrips(net, stack, threading == Threading.RUNNER_SPIN);
                        results.put("udp_rr_p50_us_tern_server" + key, server[0]);
                        results.put("udp_rr_p99_us_tern_server" + key, server[1]);
                    });
                }
                if (!offloads) {
                    // AF_XDP (copy mode on veth, no checksum metadata: offloads off only), the application spinning;
                    // then again with busy polling (the link's recvfrom runs the queue's NAPI poll on Tern's thread).
                    for (int busyPollUs : new int[] {0, AFXDP_BUSY_POLL_US}) {
                        final String key = Threading.RUNNER_SPIN.key + AFXDP + (busyPollUs > 0 ? BUSY_POLL : "") + suffix;
                        withStack(net, false, true, busyPollUs, Threading.RUNNER_SPIN, key, stack -> {
                            final double[] client = ternClientRoundTrips(net, stack, true);
                            results.put("udp_rr_p50_us_tern_client" + key, client[0]);
                            results.put("udp_rr_p99_us_tern_client" + key, client[1]);
                            results.put("udp_rr_lost_tern_client" + key, client[2]);
                            final double[] server = ternServerRoundTrips(net, stack, true);
                            results.put("udp_rr_p50_us_tern_server" + key, server[0]);
                            results.put("udp_rr_p99_us_tern_server" + key, server[1]);
                        });
                    }
                }
            }
            if (only.equals("all")) {
                crossCheck(kernels, suffix);
            }
        }
        for (Threading threading : Threading.values()) {
            final String key = threading.key + suffix;
            for (String p : List.of("p50", "p99")) {
                for (String role : List.of("client", "server")) {
                    ratio("udp_rr_" + p + "_ratio_tern_" + role + key, get("udp_rr_" + p + "_us_tern_" + role + key),
                        get("udp_rr_" + p + "_us_kernel" + suffix));
                }
            }
        }
    }

    /**
     * TCP bulk in {@code --rounds} rounds: each round measures kernel->kernel, then Tern each way in each threading
     * mode, one after the other, so that the machine's drift (the kernel's own figure moves by 20% between runs on
     * the shared build machine) reaches every figure alike; the results are the medians over the rounds, and the
     * ratios are medians over ratios taken within a round. The first round warms each mode up first, for
     * {@link #BULK_WARM_UP_SECONDS} or {@code --seconds}, whichever is longer: with a third of {@code --seconds} (1 s
     * at the usual 3) the first mode measured, kernel->Tern on a runner, came out lowest in the first round in nine
     * runs of nine (0.54-0.92 of the kernel, against 0.81-1.14 in the rounds after; 2026-11-28 and 29), the JIT
     * still compiling its path.
     */
    private void bulkRounds(NetnsHarness kernels, NetnsHarness net, boolean offloads, String suffix) throws Exception {
        final Map<String, List<Double>> samples = new LinkedHashMap<>();
        for (int round = 0; round < rounds; round++) {
            System.err.printf("offloads %s: TCP bulk, round %d of %d ...%n", offloads ? "on" : "off", round + 1, rounds);
            final double kernel = kernelBulk(kernels);
            samples.computeIfAbsent("tcp_bulk_gbps_kernel" + suffix, k -> new ArrayList<>()).add(kernel);
            final boolean warmUp = round == 0;
            for (BulkMode mode : BulkMode.forSetting(offloads)) {
                final String key = mode.key() + suffix;
                withStack(net, mode.vnetHeader(), mode.afxdp(), mode.threading(), key, stack -> {
                    for (String way : List.of("tern_to_kernel", "kernel_to_tern")) {
                        if (!wantsBulk("tcp-" + way.replace('_', '-')) || mode.zeroCopy() && way.equals("tern_to_kernel")) {
                            continue;
                        }
                        final boolean out = way.equals("tern_to_kernel");
                        if (warmUp) {
                            bulk(net, stack, out, mode.receive(), Math.max(BULK_WARM_UP_SECONDS, seconds));
                        }
                        final long copiedBefore = stack.counters().value("tcp.rx.copied_bytes");
                        final long receivedBefore = stack.counters().value("tcp.rx.bytes");
                        final double gbps = bulk(net, stack, out, mode.receive(), seconds);
                        samples.computeIfAbsent("tcp_bulk_gbps_" + way + key, k -> new ArrayList<>()).add(gbps);
                        samples.computeIfAbsent("tcp_bulk_ratio_" + way + key, k -> new ArrayList<>()).add(gbps / kernel);
                        if (!out && mode.receive() == Receive.HELD) {
                            samples.computeIfAbsent("tcp_rx_held_share_" + way + key, k -> new ArrayList<>()).add(heldShare);
                        }
                        if (!out) {
                            // The stack's own copies of each received byte (frame -> receive ring), from its counters;
                            // the application's copy out of the ring (read) or out of the frame (the handler) is one
                            // more in both modes.
                            final double copies = (double) (stack.counters().value("tcp.rx.copied_bytes") - copiedBefore)
                                / (stack.counters().value("tcp.rx.bytes") - receivedBefore);
                            samples.computeIfAbsent("tcp_rx_stack_copies_per_byte_" + way + key, k -> new ArrayList<>())
                                .add(copies);
                        }
                    }
                });
            }
        }
        // Zero-copy receive against the copying read, in the same round, the same link and the same threading.
        for (Threading threading : List.of(Threading.RUNNER, Threading.OWN_THREAD)) {
            roundRatios(samples, "tcp_bulk_gbps_kernel_to_tern" + threading.key + ZERO_COPY + suffix,
                "tcp_bulk_gbps_kernel_to_tern" + threading.key + suffix,
                "tcp_bulk_ratio_zero_copy_to_read_kernel_to_tern" + threading.key + suffix);
        }
        // Held frames against the copying read, both on AF_XDP, in the same round.
        roundRatios(samples, "tcp_bulk_gbps_kernel_to_tern" + Threading.RUNNER.key + AFXDP + HELD + suffix,
            "tcp_bulk_gbps_kernel_to_tern" + Threading.RUNNER.key + AFXDP + suffix,
            "tcp_bulk_ratio_held_to_read_kernel_to_tern_afxdp" + suffix);
        // AF_XDP against AF_PACKET in the same round and the same terms (Tern segments and checksums in Java).
        for (String way : List.of("tern_to_kernel", "kernel_to_tern")) {
            roundRatios(samples, "tcp_bulk_gbps_" + way + Threading.RUNNER.key + AFXDP + suffix,
                "tcp_bulk_gbps_" + way + Threading.RUNNER.key + NO_VNET + suffix,
                "tcp_bulk_ratio_afxdp_to_afpacket_" + way + suffix);
        }
        samples.forEach((key, values) -> {
            results.put(key, median(values));
            System.err.printf("  %-50s %s%n", key, values.stream().map(v -> String.format(Locale.ROOT, "%.2f", v)).toList());
        });
    }

    /**
     * The ratio of two modes' samples within each round ({@code numerator} over {@code denominator}), as {@code ratio}'s
     * samples; nothing when either mode did not run.
     */
    private static void roundRatios(Map<String, List<Double>> samples, String numerator, String denominator, String ratio) {
        final List<Double> top = samples.get(numerator);
        final List<Double> bottom = samples.get(denominator);
        if (top != null && bottom != null) {
            final List<Double> ratios = new ArrayList<>();
            for (int i = 0; i < Math.min(top.size(), bottom.size()); i++) {
                ratios.add(top.get(i) / bottom.get(i));
            }
            samples.put(ratio, ratios);
        }
    }

    private double bulk(NetnsHarness net, NetStack stack, boolean ternSends, Receive receive, double duration)
        throws Exception {
        return ternSends ? ternToKernel(net, stack, duration) : kernelToTern(net, stack, receive, duration);
    }

    static double median(List<Double> values) {
        final double[] sorted = values.stream().mapToDouble(Double::doubleValue).sorted().toArray();
        final int n = sorted.length;
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }

    interface StackWork {
        void run(NetStack stack) throws Exception;
    }

    /** A fresh stack on Tern's end, driven as {@code threading} says, for {@code work}; closed after. */
    void withStack(NetnsHarness net, boolean vnetHeader, Threading threading, String key, StackWork work) throws Exception {
        withStack(net, vnetHeader, false, threading, key, work);
    }

    /** {@link #withStack}, on the AF_XDP link (steering frames for Tern's address) when {@code afxdp}. */
    void withStack(NetnsHarness net, boolean vnetHeader, boolean afxdp, Threading threading, String key, StackWork work) throws Exception {
        withStack(net, vnetHeader, afxdp, 0, threading, key, work);
    }

    /** {@link #withStack}; on AF_XDP with busy polling of {@code busyPollUs} (0: none, see {@link AfXdpOptions#busyPollUs}). */
    void withStack(NetnsHarness net, boolean vnetHeader, boolean afxdp, int busyPollUs, Threading threading, String key,
                   StackWork work) throws Exception {
        final Link link = afxdp
            ? net.ternNamespace().call(() -> AfXdpLink.open(NetnsHarness.TERN_INTERFACE,
                AfXdpOptions.forAddress(NetnsHarness.TERN_IPV4).busyPollUs(busyPollUs)))
            : net.openTernLink(AfPacketLink::open, linkOptions(vnetHeader));
        final NetStack.Builder builder = NetStack.builder().name("veth-bench").link(link)
            .address(NetnsHarness.TERN_ADDRESS + "/24").countersInMemory();
        if (ternTcp != null) {
            builder.tcp(ternTcp);
        }
        final NetStack stack = builder.build();
        final StackRunner runner = threading == Threading.OWN_THREAD ? null
            : StackRunner.start(stack, runnerIdle(stack));
        try {
            work.run(stack);
            if ("1".equals(System.getenv("TERN_BENCH_COUNTERS"))) {
                printCounters(stack, key);
            }
            final long errors = stack.counters().value("stack.internal_errors");
            if (errors != 0) {
                throw new IllegalStateException("stack.internal_errors = " + errors, stack.ethernet().firstInternalError());
            }
        } finally {
            if (runner != null) {
                runner.close();
            }
            stack.close();
        }
    }

    /**
     * Sets {@code --congestion-control} for the kernel's connections across a pair (the subnet route's congctl in the
     * pair's namespaces, {@link NetnsHarness#kernelCongestionControl}: nothing outside them changes), and notes which
     * one the kernel's senders use (else the namespace's default, which is the host's).
     */
    private void applyCongestionControl(NetnsHarness net) {
        if (congestionControl != null) {
            net.kernelCongestionControl(congestionControl);
            congestionControlInUse = congestionControl;
        } else {
            congestionControlInUse = net.peerExec(Duration.ofSeconds(10), "sysctl", "-n", "net.ipv4.tcp_congestion_control")
                .orThrow().stdout().strip();
        }
    }

    /**
     * How a runner idles: Agrona's backoff (spin, yield, park up to 100 µs; the default), a busy spin, or
     * {@link LinkIdleStrategy} (sleeping in poll(2) on the link, as {@code tern serve}'s shards do; {@code --idle link}).
     */
    private IdleStrategy runnerIdle(NetStack stack) {
        return switch (idle) {
            case "link" -> new LinkIdleStrategy(stack);
            case "spin" -> new BusySpinIdleStrategy();
            default -> new BackoffIdleStrategy(100, 10, 1_000, 100_000);
        };
    }

    /** TERN_BENCH_COUNTERS=1: the stack's non-zero counters after a threading mode's measurements (diagnosis). */
    private static void printCounters(NetStack stack, String key) {
        System.err.printf("counters after %s:%n", key);
        stack.counters().reader().forEach((value, id, label) -> {
            if (value != 0) {
                System.err.printf("  %-40s %d%n", label, value);
            }
        });
    }

    private boolean wants(String measurement) {
        return only.equals("all") || only.equals(measurement);
    }

    /** Bulk without loss, {@code way} "tcp-tern-to-kernel" or "tcp-kernel-to-tern". */
    private boolean wantsBulk(String way) {
        return wants("tcp") || wants(way);
    }

    private void ratio(String key, double tern, double kernel) {
        if (Double.isFinite(tern) && Double.isFinite(kernel)) {
            results.put(key, tern / kernel);
        }
    }

    /**
     * Who runs Tern's stack and how the application waits. {@code RUNNER}: a {@link StackRunner} busy-spins on the
     * stack; the application (this thread) waits in the blocking calls, which park until the stack signals (the
     * embedding an application uses). {@code RUNNER_SPIN}: the same, but the application spins on the non-blocking
     * calls (round trips only). {@code OWN_THREAD}: no runner; this thread is the stack's owner and its blocking
     * calls poll the stack while they wait (as the {@code tern} command runs): one thread in all.
     */
    enum Threading {
        RUNNER(""), RUNNER_SPIN("_app_spins"), OWN_THREAD("_one_thread");

        final String key;

        Threading(String key) {
            this.key = key;
        }
    }

    /**
     * One way of running Tern for TCP bulk. In both settings Tern's link has the vnet header, so TCP hands it segments
     * of up to 64 KiB with checksum requests, as the kernel's TCP hands its device layer GSO packets (always, since
     * Linux 4.19, whatever the device's offloads): with offloads on they cross the veth whole, as the kernel's do; with
     * offloads off the kernel cuts and checksums them in software before they cross, as it does its own. With offloads
     * off Tern also runs once without the vnet header ({@code _no_vnet}): it then cuts MSS-sized frames and computes
     * every checksum itself, in Java, and the kernel sends each frame as it is.
     */
    private record BulkMode(Threading threading, boolean vnetHeader, boolean afxdp, Receive receive) {
        BulkMode(Threading threading, boolean vnetHeader) {
            this(threading, vnetHeader, false, Receive.READ);
        }

        BulkMode(Threading threading, boolean vnetHeader, boolean afxdp) {
            this(threading, vnetHeader, afxdp, Receive.READ);
        }

        /** Whether the application takes the bytes through a receive handler (kernel->Tern only). */
        boolean zeroCopy() {
            return receive != Receive.READ;
        }

        /**
         * With offloads off, also Tern on the AF_XDP link ({@code _afxdp}: copy mode on veth, no offloads, so Tern cuts
         * and checksums every frame itself, as with AF_PACKET without the vnet header, the mode it is compared with).
         */
        static List<BulkMode> forSetting(boolean offloads) {
            // Kernel->Tern also through a receive handler ({@code _zero_copy}): the same link and threading,
            // the application taking the bytes in the frame instead of reading them out of the connection's ring.
            final List<BulkMode> modes = new ArrayList<>(List.of(new BulkMode(Threading.RUNNER, true),
                new BulkMode(Threading.OWN_THREAD, true), new BulkMode(Threading.RUNNER, true, false, Receive.HANDLER),
                new BulkMode(Threading.OWN_THREAD, true, false, Receive.HANDLER)));
            if (!offloads) {
                modes.add(new BulkMode(Threading.RUNNER, false));
                modes.add(new BulkMode(Threading.RUNNER, false, true));
                // Held frames ({@code _afxdp_held}): AF_XDP lends its UMEM chunks, AF_PACKET does not.
                modes.add(new BulkMode(Threading.RUNNER, false, true, Receive.HELD));
            }
            return modes;
        }

        /** The results' key part for this mode (before the offload setting's suffix). */
        String key() {
            return threading.key + (afxdp ? AFXDP : vnetHeader ? "" : NO_VNET)
                + (receive == Receive.HANDLER ? ZERO_COPY : receive == Receive.HELD ? HELD : "");
        }
    }

    /**
     * How the application takes kernel->Tern bytes: the copying read; a receive handler copying them out of the frame
     * on the stack's thread ({@code _zero_copy}); or a handler holding the frames and handing the views to the
     * application's thread, which copies them out and releases them ({@code _held}).
     */
    enum Receive {
        READ, HANDLER, HELD
    }

    private AfPacketOptions linkOptions(boolean vnetHeader) {
        // The frame ring: the configuration the tern command opens (AfPacketOptions.throughput()).
        return frameRing ? AfPacketOptions.throughput().vnetHeader(vnetHeader)
            : AfPacketOptions.defaults().vnetHeader(vnetHeader).rxBlocks(1 << 20, 64);
    }

    // ---------------------------------------------------------------------------------------------- kernel<->kernel

    private double kernelBulk(NetnsHarness kernels) {
        final BackgroundCommand sink = endpointInPeer(kernels, "tcp-sink", Integer.toString(SINK_PORT), watchdog(seconds));
        final CommandResult source = kernels.ternExec(Duration.ofSeconds((long) seconds + 30),
            endpoint("tcp-source", NetnsHarness.PEER_ADDRESS, Integer.toString(SINK_PORT), Double.toString(seconds)));
        source.orThrow();
        sink.awaitExit(Duration.ofSeconds(30));
        return value(GBPS, sink.stdout(), "kernel sink");
    }

    private double[] kernelRoundTrips(NetnsHarness kernels) {
        final BackgroundCommand echo = endpointInPeer(kernels, "udp-echo", Integer.toString(ECHO_PORT), watchdog(60));
        try {
            final CommandResult client = kernels.ternExec(Duration.ofSeconds(90), endpoint("udp-rr", NetnsHarness.PEER_ADDRESS,
                Integer.toString(ECHO_PORT), Integer.toString(roundTrips / 5), Integer.toString(roundTrips),
                Integer.toString(DATAGRAM)));
            client.orThrow();
            return new double[] {value(P50, client.stdout(), "kernel client"), value(P99, client.stdout(), "kernel client")};
        } finally {
            echo.stop();
        }
    }

    /** iperf3 and sockperf on the kernel pair, when installed: the same measurements by the usual tools. */
    private void crossCheck(NetnsHarness kernels, String suffix) {
        if (Commands.find("iperf3").isPresent()) {
            final BackgroundCommand server = kernels.startInPeer("iperf3", "-s", "-1", "-p", "5201");
            sleep(500);
            final CommandResult client = kernels.ternExec(Duration.ofSeconds((long) seconds + 30), "iperf3", "-c",
                NetnsHarness.PEER_ADDRESS, "-p", "5201", "-t", Integer.toString((int) Math.ceil(seconds)), "-f", "g");
            server.stop();
            final Matcher receiver = Pattern.compile("([0-9.]+) Gbits/sec\\s+receiver").matcher(client.stdout());
            if (receiver.find()) {
                results.put("tcp_bulk_gbps_iperf3_kernel" + suffix, Double.parseDouble(receiver.group(1)));
            }
        }
        if (Commands.find("sockperf").isPresent()) {
            final BackgroundCommand server = kernels.startInPeer("sockperf", "sr", "-i", NetnsHarness.PEER_ADDRESS, "-p", "11111");
            sleep(500);
            final CommandResult client = kernels.ternExec(Duration.ofSeconds(60), "sockperf", "pp", "-i",
                NetnsHarness.PEER_ADDRESS, "-p", "11111", "-m", Integer.toString(DATAGRAM), "-t", Integer.toString((int) Math.ceil(seconds)));
            server.stop();
            // sockperf reports half the round trip ("latency"); doubled here to compare with the others.
            final Matcher p50 = Pattern.compile("percentile 50.000 =\\s+([0-9.]+)").matcher(client.stdout() + client.stderr());
            final Matcher p99 = Pattern.compile("percentile 99.000 =\\s+([0-9.]+)").matcher(client.stdout() + client.stderr());
            if (p50.find() && p99.find()) {
                results.put("udp_rr_p50_us_sockperf_kernel" + suffix, 2 * Double.parseDouble(p50.group(1)));
                results.put("udp_rr_p99_us_sockperf_kernel" + suffix, 2 * Double.parseDouble(p99.group(1)));
            }
        }
    }

    // ---------------------------------------------------------------------------------------------- Tern<->kernel

    /** Tern writes for {@code duration} seconds to the kernel's sink; the sink's rate. */
    private double ternToKernel(NetnsHarness net, NetStack stack, double duration) throws TernSocketException {
        final BackgroundCommand sink = endpointInPeer(net, "tcp-sink", Integer.toString(SINK_PORT), watchdog(duration));
        try (Arena arena = Arena.ofConfined()) {
            final MemorySegment data = randomData(arena, 8 << 20);
            final TcpConnection connection = stack.connect(NetnsHarness.PEER_IPV4, SINK_PORT, 0, BULK_BUFFERS);
            connection.awaitConnected(5_000_000_000L);
            final long end = System.nanoTime() + (long) (duration * 1e9);
            long offset = 0;
            while (System.nanoTime() - end < 0) {
                final int written = connection.write(data, offset, 1 << 20, 100_000_000L);
                offset = (offset + written) % (7 << 20);
            }
            connection.close();
        }
        awaitExit(sink, stack, "the kernel's sink");
        return value(GBPS, sink.stdout(), "kernel sink");
    }

    /**
     * The kernel's source writes to Tern for {@code duration} seconds; Tern's rate, first byte to last, the
     * application taking the bytes as {@code receive} says (each way copies every byte into the application's own 1 MiB
     * buffer, so all end with the bytes in the application's memory).
     */
    private double kernelToTern(NetnsHarness net, NetStack stack, Receive receive, double duration) throws Exception {
        try (TcpListener listener = stack.listen(SOURCE_PORT, 4, BULK_BUFFERS); Arena arena = Arena.ofShared()) {
            final BackgroundCommand source = net.startInPeer(endpoint("tcp-source", NetnsHarness.TERN_ADDRESS,
                Integer.toString(SOURCE_PORT), Double.toString(duration)));
            final TcpConnection connection = listener.accept(10_000_000_000L);
            if (connection == null) {
                throw new IllegalStateException("the kernel's source did not connect: " + source.stdout() + source.stderr());
            }
            final long deadline = System.nanoTime() + (long) ((duration + 20) * 1e9);
            final double gbps = switch (receive) {
                case READ -> readAll(connection, arena, deadline);
                case HANDLER -> takeThroughHandler(connection, arena, deadline);
                case HELD -> takeHeld(connection, stack, arena, deadline);
            };
            connection.close();
            awaitExit(source, stack, "the kernel's source");
            return gbps;
        }
    }

    /** The copying read into a 1 MiB buffer until the end of stream; Gbit/s from the first byte to the last. */
    private static double readAll(TcpConnection connection, Arena arena, long deadline) throws TernSocketException {
        return readFor(connection, arena, deadline, Long.MAX_VALUE, Long.MAX_VALUE);
    }

    /**
     * The copying read into a 1 MiB buffer until the end of stream, the deadline, {@code maxBytes} or {@code windowNs}
     * after the first byte, whichever comes first; Gbit/s from the first byte to the last (0 if fewer than two reads).
     */
    static double readFor(TcpConnection connection, Arena arena, long deadline, long maxBytes, long windowNs)
        throws TernSocketException {
        final MemorySegment buffer = arena.allocate(1 << 20);
        long bytes = 0;
        long first = 0;
        long last = 0;
        while (System.nanoTime() - deadline < 0 && bytes < maxBytes && (first == 0 || last - first < windowNs)) {
            final int n = connection.read(buffer, 0, 1 << 20, 100_000_000L);
            if (n < 0) {
                break;
            }
            if (n > 0) {
                last = System.nanoTime();
                if (first == 0) {
                    first = last;
                }
                bytes += n;
            }
        }
        return last == first ? 0 : bytes * 8 / ((last - first) / 1e9) / 1e9;
    }

    /** Zero-copy receive: a handler copying what it is offered out of the frame; waits for the end of stream. */
    private static double takeThroughHandler(TcpConnection connection, Arena arena, long deadline) throws TernSocketException {
        final CopyingSink sink = new CopyingSink(arena.allocate(1 << 20));
        connection.receiveHandler(sink);
        while (!connection.isEndOfStream() && !connection.isEnded() && System.nanoTime() - deadline < 0) {
            connection.awaitReady(SelectableSocket.READ, System.nanoTime() + 100_000_000L);
        }
        return sink.copied().gbps(CopiedBytes.NONE);
    }

    /**
     * Held frames: the handler, on the stack's thread, holds each offer ({@link TcpConnection#holdReceived}) and
     * hands its view to the application's thread through {@link HeldViews}; that thread copies the bytes into its
     * own 1 MiB buffer, as the read does, and releases the frame ({@link NetStack#releaseHeld}). An offer the link
     * will not lend (its lending limit) or that finds the hand-over full is copied by the handler at once.
     */
    private double takeHeld(TcpConnection connection, NetStack stack, Arena arena, long deadline) throws TernSocketException {
        final HeldViews views = new HeldViews(arena.allocate(1 << 20), 4096);
        final CopyingSink refusedSink = new CopyingSink(arena.allocate(1 << 20));
        connection.receiveHandler((c, data, offset, length) -> {
            if (views.hasRoom()) {
                final long hold = c.holdReceived();
                if (hold >= 0) {
                    views.offer(hold, data, offset, length);
                    return length;
                }
            }
            return refusedSink.onReceive(c, data, offset, length);
        });
        // The application's thread waits as a runner does (spin, yield, then park up to 100 us).
        final org.agrona.concurrent.IdleStrategy idle = new org.agrona.concurrent.BackoffIdleStrategy(100, 10, 1_000, 100_000);
        while (!connection.isEndOfStream() && !connection.isEnded() && System.nanoTime() - deadline < 0) {
            idle.idle(views.copyAndRelease(stack) ? 1 : 0);
        }
        while (views.copyAndRelease(stack)) {
            // the last views
        }
        final CopiedBytes held = views.copied();
        heldShare = (double) held.bytes() / (held.bytes() + refusedSink.copied().bytes());
        return held.gbps(refusedSink.copied());
    }

    /** The share of the last held run's bytes the application took from held frames (the rest the handler copied). */
    private double heldShare;

    /**
     * Held views on their way from the stack's thread to the application's: a single-producer, single-consumer ring
     * of (hold, segment, offset, length), and the consumer's copy into its buffer. Nothing allocates per view.
     */
    private static final class HeldViews {
        private final CopiedBytes copied;
        private final long[] holds;
        private final MemorySegment[] segments;
        private final long[] offsets;
        private final int[] lengths;
        private final int mask;
        private final java.util.concurrent.atomic.AtomicLong produced = new java.util.concurrent.atomic.AtomicLong();
        private final java.util.concurrent.atomic.AtomicLong consumed = new java.util.concurrent.atomic.AtomicLong();

        HeldViews(MemorySegment buffer, int capacity) {
            this.copied = new CopiedBytes(buffer);
            this.holds = new long[capacity];
            this.segments = new MemorySegment[capacity];
            this.offsets = new long[capacity];
            this.lengths = new int[capacity];
            this.mask = capacity - 1;
        }

        /** Producer (the stack's thread). */
        boolean hasRoom() {
            return produced.get() - consumed.get() < holds.length;
        }

        /** Producer: after {@link #hasRoom}. */
        void offer(long hold, MemorySegment segment, long offset, int length) {
            final long p = produced.get();
            final int i = (int) (p & mask);
            holds[i] = hold;
            segments[i] = segment;
            offsets[i] = offset;
            lengths[i] = length;
            produced.lazySet(p + 1);
        }

        /** Consumer: copies out and releases every view waiting; false when there was none. */
        boolean copyAndRelease(NetStack stack) {
            final long p = produced.get();
            long c = consumed.get();
            if (c == p) {
                return false;
            }
            for (; c < p; c++) {
                final int i = (int) (c & mask);
                copied.take(segments[i], offsets[i], lengths[i]);
                segments[i] = null;
                if (!stack.releaseHeld(holds[i])) {
                    throw new IllegalStateException("a held frame was refused on release: " + holds[i]);
                }
            }
            copied.stamp();
            consumed.lazySet(c);
            return true;
        }

        CopiedBytes copied() {
            return copied;
        }
    }

    /**
     * The zero-copy receiver: takes every byte it is offered into {@link CopiedBytes}. Runs on whichever thread holds
     * the stack (the runner's, or the waiting application's); the stack's hand-over orders those threads, and the
     * counts are read after the end of stream (which the stack publishes after the last byte).
     */
    private static final class CopyingSink implements TcpConnection.ReceiveHandler {
        private final CopiedBytes copied;

        CopyingSink(MemorySegment buffer) {
            this.copied = new CopiedBytes(buffer);
        }

        @Override
        public int onReceive(TcpConnection connection, MemorySegment data, long offset, int length) {
            copied.take(data, offset, length);
            copied.stamp();
            return length;
        }

        CopiedBytes copied() {
            return copied;
        }
    }

    /**
     * What an application took of a transfer: each byte copied into one buffer (round and round, as a read copies
     * into its buffer), how many, and when the first and the last arrived. One thread's.
     */
    private static final class CopiedBytes {
        /** Nothing taken: {@code gbps(NONE)} is one side's own rate. */
        static final CopiedBytes NONE = new CopiedBytes(null);

        private final MemorySegment buffer;
        private long at;
        private long bytes;
        private long firstNs;
        private long lastNs;

        CopiedBytes(MemorySegment buffer) {
            this.buffer = buffer;
        }

        void take(MemorySegment data, long offset, int length) {
            at = dev.tern.core.memory.WrappingCopy.copy(data, offset, length, buffer, at);
            bytes += length;
        }

        /** Notes the time of what was just taken. */
        void stamp() {
            final long now = System.nanoTime();
            if (firstNs == 0) {
                firstNs = now;
            }
            lastNs = now;
        }

        long bytes() {
            return bytes;
        }

        long firstNs() {
            return firstNs;
        }

        long lastNs() {
            return lastNs;
        }

        /** Gbit/s from the first byte to the last, of this and {@code other} together (either may have taken none). */
        double gbps(CopiedBytes other) {
            final long first = bytes == 0 ? other.firstNs : other.bytes == 0 ? firstNs : Math.min(firstNs, other.firstNs);
            return (bytes + other.bytes) * 8 / ((Math.max(lastNs, other.lastNs) - first) / 1e9) / 1e9;
        }
    }

    /**
     * Tern's client against the kernel's echo server; {@code spin}: wait on the non-blocking receive. A round trip
     * with no echo within 1 s is counted as lost (returned third) and left out of the percentiles, as sockperf does;
     * each echo carries its round trip's number, so a late echo is not taken for the next one.
     */
    private double[] ternClientRoundTrips(NetnsHarness net, NetStack stack, boolean spin) throws TernSocketException {
        final BackgroundCommand echo = endpointInPeer(net, "udp-echo", Integer.toString(ECHO_PORT), watchdog(60));
        try (UdpSocket socket = stack.openUdp(); Arena arena = Arena.ofConfined()) {
            socket.connect(NetnsHarness.PEER_IPV4, ECHO_PORT);
            final MemorySegment out = arena.allocate(DATAGRAM);
            final MemorySegment in = arena.allocate(2048);
            final long[] rtt = new long[roundTrips];
            int timed = 0;
            int lost = 0;
            for (int i = -roundTrips / 5; i < roundTrips; i++) {
                final long start = System.nanoTime();
                out.set(java.lang.foreign.ValueLayout.JAVA_INT, 0, i);
                while (!socket.send(out, 0, DATAGRAM)) {
                    Thread.onSpinWait();
                }
                if (awaitEcho(socket, in, i, start + 1_000_000_000L, spin)) {
                    if (i >= 0) {
                        rtt[timed++] = System.nanoTime() - start;
                    }
                } else {
                    lost++;
                }
            }
            if (lost > roundTrips / 100) {
                throw new IllegalStateException(lost + " of " + (roundTrips + roundTrips / 5) + " round trips lost");
            }
            final double[] p = percentiles(Arrays.copyOf(rtt, timed));
            return new double[] {p[0], p[1], lost};
        } finally {
            echo.stop();
        }
    }

    /** Waits until the echo of round trip {@code sequence} arrives (true) or the deadline passes (false). */
    private static boolean awaitEcho(UdpSocket socket, MemorySegment in, int sequence, long deadlineNs, boolean spin)
        throws TernSocketException {
        while (true) {
            final long left = deadlineNs - System.nanoTime();
            if (left <= 0) {
                return false;
            }
            final int n = spin ? socket.receive(in, 0, 2048) : socket.receive(in, 0, 2048, left);
            if (n >= 4 && in.get(java.lang.foreign.ValueLayout.JAVA_INT, 0) == sequence) {
                return true;
            }
            if (spin && n < 0) {
                Thread.onSpinWait();
            }
        }
    }

    /** The kernel's client against Tern's echo socket (the application thread echoes; {@code spin}: without parking). */
    private double[] ternServerRoundTrips(NetnsHarness net, NetStack stack, boolean spin) throws TernSocketException {
        try (UdpSocket socket = stack.openUdp(); Arena arena = Arena.ofConfined()) {
            socket.bind(ECHO_PORT);
            final MemorySegment buffer = arena.allocate(2048);
            final BackgroundCommand client = net.startInPeer(endpoint("udp-rr", NetnsHarness.TERN_ADDRESS,
                Integer.toString(ECHO_PORT), Integer.toString(roundTrips / 5), Integer.toString(roundTrips),
                Integer.toString(DATAGRAM)));
            final long deadline = System.nanoTime() + 90_000_000_000L;
            while (client.isAlive() && System.nanoTime() - deadline < 0) {
                final int n = spin ? socket.receive(buffer, 0, 2048) : socket.receive(buffer, 0, 2048, 10_000_000L);
                if (n >= 0) {
                    while (!socket.sendTo(socket.lastSourceAddress(), socket.lastSourcePort(), buffer, 0, n)) {
                        Thread.onSpinWait();
                    }
                }
            }
            client.awaitExit(Duration.ofSeconds(5));
            return new double[] {value(P50, client.stdout(), "kernel client"), value(P99, client.stdout(), "kernel client")};
        }
    }

    // ---------------------------------------------------------------------------------------------- helpers

    /**
     * Waits for a kernel program to end, polling the stack meanwhile when this thread owns it (no runner: else the
     * stack would stop, and with it what it still has to send); if it does not end within 30 s, says what Tern's
     * stack counted, and fails.
     */
    static void awaitExit(BackgroundCommand command, NetStack stack, String what) {
        final long deadline = System.nanoTime() + 30_000_000_000L;
        while (command.isAlive() && System.nanoTime() - deadline < 0) {
            if (stack.isOwnerThread()) {
                stack.doWork();
            } else {
                sleep(1);
            }
        }
        if (command.isAlive()) {
            final StringBuilder counters = new StringBuilder();
            stack.counters().reader().forEach((value, id, label) -> {
                if (value != 0 && (label.startsWith("tcp.") || label.startsWith("link.") || label.contains(".drop."))) {
                    counters.append(' ').append(label).append('=').append(value);
                }
            });
            throw new IllegalStateException(what + " did not finish within 30 s: " + command.stdout() + command.stderr()
                + "; Tern's counters:" + counters);
        }
    }

    private static double[] percentiles(long[] rtt) {
        final long[] sorted = rtt.clone();
        Arrays.sort(sorted);
        return new double[] {sorted[sorted.length / 2] / 1e3, sorted[(int) (sorted.length * 0.99)] / 1e3};
    }

    static MemorySegment randomData(Arena arena, int length) {
        final byte[] bytes = new byte[length];
        new SplittableRandom(2).nextBytes(bytes);
        final MemorySegment segment = arena.allocate(length);
        MemorySegment.copy(bytes, 0, segment, java.lang.foreign.ValueLayout.JAVA_BYTE, 0, length);
        return segment;
    }

    private static String watchdog(double seconds) {
        return Double.toString(seconds + 30);
    }

    /** {@code java -cp <this class path> KernelEndpoint ARGS}, to run in a namespace. */
    static String[] endpoint(String... arguments) {
        final List<String> command = new ArrayList<>(List.of(ProcessHandle.current().info().command().orElse("java"),
            "-XX:+UseSerialGC", "-cp", System.getProperty("java.class.path"), KernelEndpoint.class.getName()));
        command.addAll(List.of(arguments));
        return command.toArray(String[]::new);
    }

    private static BackgroundCommand endpointInPeer(NetnsHarness net, String... arguments) {
        return net.startInPeer(endpoint(arguments)).awaitOutput("ready", Duration.ofSeconds(20));
    }

    static double value(Pattern pattern, String output, String who) {
        return Double.parseDouble(text(pattern, output, who));
    }

    /** The first group of {@code pattern}'s first match in a program's output; throws naming {@code who} if none. */
    static String text(Pattern pattern, String output, String who) {
        final Matcher matcher = pattern.matcher(output);
        if (!matcher.find()) {
            throw new IllegalStateException(who + " printed no " + pattern.pattern() + ": " + output);
        }
        return matcher.group(1);
    }

    /** Deletes {@code directory} and everything under it (a benchmark's scratch directory). */
    static void deleteTree(Path directory) {
        try (Stream<Path> files = Files.walk(directory)) {
            for (Path file : files.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(file);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private double get(String key) {
        return results.getOrDefault(key, Double.NaN);
    }

    private void print(List<Boolean> settings) {
        final StringBuilder table = new StringBuilder();
        final String format = "%-4s %-50s %9s %9s %7s%n";
        if (!settings.isEmpty()) {
            table.append(String.format(Locale.ROOT, format, "offl", "measurement (Tern's threading)", "Tern", "kernel", "ratio"));
        }
        for (boolean offloads : settings) {
            final String s = offloads ? "_offloads_on" : "_offloads_off";
            final String o = offloads ? "on" : "off";
            for (BulkMode mode : BulkMode.forSetting(offloads)) {
                final String how = " (" + mode.threading().name().toLowerCase(Locale.ROOT).replace('_', ' ')
                    + (mode.afxdp() ? ", AF_XDP" : mode.vnetHeader() ? "" : ", no vnet")
                    + (mode.receive() == Receive.HANDLER ? ", zero-copy" : mode.receive() == Receive.HELD ? ", held" : "") + ")";
                for (String way : List.of("tern_to_kernel", "kernel_to_tern")) {
                    if (mode.zeroCopy() && way.equals("tern_to_kernel")) {
                        continue;
                    }
                    row(table, format, o, "TCP bulk Gbit/s " + way.replace("_to_", "->").replace("tern", "Tern") + how,
                        get("tcp_bulk_gbps_" + way + mode.key() + s), get("tcp_bulk_gbps_kernel" + s),
                        get("tcp_bulk_ratio_" + way + mode.key() + s));
                }
            }
            for (Threading threading : List.of(Threading.RUNNER, Threading.OWN_THREAD)) {
                // Columns: zero-copy where Tern goes, the copying read where the kernel goes; the per-round ratio.
                final String how = threading.name().toLowerCase(Locale.ROOT).replace('_', ' ');
                row(table, format, o, "TCP bulk kernel->Tern: zero-copy vs read (" + how + ")",
                    get("tcp_bulk_gbps_kernel_to_tern" + threading.key + ZERO_COPY + s),
                    get("tcp_bulk_gbps_kernel_to_tern" + threading.key + s),
                    get("tcp_bulk_ratio_zero_copy_to_read_kernel_to_tern" + threading.key + s));
                row(table, format, o, "  stack copies per received byte: zero-copy vs read",
                    get("tcp_rx_stack_copies_per_byte_kernel_to_tern" + threading.key + ZERO_COPY + s),
                    get("tcp_rx_stack_copies_per_byte_kernel_to_tern" + threading.key + s), Double.NaN);
            }
            row(table, format, o, "TCP bulk kernel->Tern: held vs read (runner, AF_XDP)",
                get("tcp_bulk_gbps_kernel_to_tern" + Threading.RUNNER.key + AFXDP + HELD + s),
                get("tcp_bulk_gbps_kernel_to_tern" + Threading.RUNNER.key + AFXDP + s),
                get("tcp_bulk_ratio_held_to_read_kernel_to_tern_afxdp" + s));
            row(table, format, o, "share of the bytes taken from held frames (AF_XDP)",
                get("tcp_rx_held_share_kernel_to_tern" + Threading.RUNNER.key + AFXDP + HELD + s), Double.NaN, Double.NaN);
            for (String way : List.of("tern_to_kernel", "kernel_to_tern")) {
                // Columns: AF_XDP where Tern goes, AF_PACKET (no vnet header) where the kernel goes; the per-round ratio.
                row(table, format, o, "TCP bulk " + way.replace("_to_", "->").replace("tern", "Tern") + ": AF_XDP vs AF_PACKET no vnet",
                    get("tcp_bulk_gbps_" + way + Threading.RUNNER.key + AFXDP + s), get("tcp_bulk_gbps_" + way + Threading.RUNNER.key + NO_VNET + s),
                    get("tcp_bulk_ratio_afxdp_to_afpacket_" + way + s));
            }
            for (Threading threading : Threading.values()) {
                final String how = " (" + threading.name().toLowerCase(Locale.ROOT).replace('_', ' ') + ")";
                for (String role : List.of("client", "server")) {
                    for (String p : List.of("p50", "p99")) {
                        row(table, format, o, "UDP 64 B RR " + p + " us, Tern " + role + how,
                            get("udp_rr_" + p + "_us_tern_" + role + threading.key + s), get("udp_rr_" + p + "_us_kernel" + s));
                    }
                }
            }
            for (String busy : List.of("", BUSY_POLL)) {
                for (String role : List.of("client", "server")) {
                    for (String p : List.of("p50", "p99")) {
                        row(table, format, o, "UDP 64 B RR " + p + " us, Tern " + role + " (runner spin, AF_XDP"
                            + (busy.isEmpty() ? "" : ", busy poll") + ")",
                            get("udp_rr_" + p + "_us_tern_" + role + Threading.RUNNER_SPIN.key + AFXDP + busy + s),
                            get("udp_rr_" + p + "_us_kernel" + s));
                    }
                }
            }
            row(table, format, o, "iperf3 kernel<->kernel Gbit/s", Double.NaN, get("tcp_bulk_gbps_iperf3_kernel" + s));
            row(table, format, o, "sockperf kernel<->kernel RR p50 us", Double.NaN, get("udp_rr_p50_us_sockperf_kernel" + s));
            row(table, format, o, "sockperf kernel<->kernel RR p99 us", Double.NaN, get("udp_rr_p99_us_sockperf_kernel" + s));
        }
        if (lossCongestionControl != null) {
            final String lossFormat = "%-6s %-48s %9s %9s %7s%n";
            table.append(String.format(Locale.ROOT, lossFormat, "loss", "measurement (the kernel's program), offloads off",
                "Tern", "kernel", "ratio"));
            for (double level : lossLevels) {
                final String k = LossyPairs.key(level);
                final String l = LossyPairs.label(level);
                for (String way : List.of("tern_to_kernel", "kernel_to_tern")) {
                    final String arrow = way.replace("_to_", "->").replace("tern", "Tern");
                    final String baseline = way.equals("tern_to_kernel") ? "" : "_reverse";
                    row(table, lossFormat, l, "TCP over loss Gbit/s " + arrow + " (runner)", get("tcp_loss_gbps_" + way + "_" + k),
                        get("tcp_loss_gbps_kernel" + baseline + "_" + k), get("tcp_loss_ratio_" + way + "_" + k));
                    row(table, lossFormat, l, "tern nc Gbit/s " + arrow + " (kernel: socat)", get("nc_gbps_" + way + "_" + k),
                        get("nc_gbps_socat" + baseline + "_" + k), get("nc_ratio_" + way + "_" + k));
                }
                row(table, lossFormat, l, "share of packets the rules dropped, %", get("tcp_loss_dropped_pct_" + k), Double.NaN, Double.NaN);
            }
        }
        if (results.containsKey("ipv6_ratio_tern_to_kernel_vnet")) {
            final String v6Format = "%-8s %-46s %9s %9s %7s%n";
            table.append(String.format(Locale.ROOT, v6Format, "", "TCP against the kernel, offloads off", "IPv6",
                "IPv4", "ratio"));
            for (String mode : List.of("vnet", "no_vnet")) {
                final String m = mode.equals("vnet") ? "vnet" : "no vnet";
                for (String way : List.of("tern_to_kernel", "kernel_to_tern")) {
                    row(table, v6Format, m, "bulk Gbit/s " + way.replace("_to_", "->").replace("tern", "Tern"),
                        get("ipv6_bulk_gbps_ipv6_" + way + "_" + mode), get("ipv6_bulk_gbps_ipv4_" + way + "_" + mode),
                        get("ipv6_ratio_" + way + "_" + mode));
                }
                row(table, v6Format, m, "64 B round trip p50 us (ratio: IPv4's over IPv6's)",
                    get("ipv6_rr_p50_us_ipv6_" + mode), get("ipv6_rr_p50_us_ipv4_" + mode), get("ipv6_ratio_rr_p50_" + mode));
            }
            row(table, v6Format, "control", "bulk Gbit/s kernel->kernel, same pair",
                get("ipv6_bulk_gbps_ipv6_kernel_to_kernel"), get("ipv6_bulk_gbps_ipv4_kernel_to_kernel"),
                get("ipv6_ratio_kernel_to_kernel"));
        }
        if (results.containsKey("mcast_ratio_64_full")) {
            final String mcastFormat = "%-6s %-48s %9s %9s %7s%n";
            table.append(String.format(Locale.ROOT, mcastFormat, "", "UDP received (kernel: socat), offloads on",
                "Tern", "kernel", "ratio"));
            for (MulticastBenchmark.Burst burst : MulticastBenchmark.BURSTS) {
                final String k = burst.prefix() + "%s" + burst.key();
                row(table, mcastFormat, "", "datagrams of " + String.format(Locale.ROOT, "%.0f", get(k.formatted("sent_")))
                    + ", " + burst.label(), get(k.formatted("tern_")), get(k.formatted("kernel_")), get(k.formatted("ratio_")));
            }
            // The goal's first half: wherever the kernel member lost nothing, Tern lost nothing either.
            for (String prefix : List.of("mcast_", "ucast_")) {
                int kernelLossless = 0;
                int ternLosslessThere = 0;
                for (MulticastBenchmark.Burst burst : MulticastBenchmark.BURSTS) {
                    final String k = burst.key();
                    if (burst.prefix().equals(prefix) && burst.rate() > 0 && get(prefix + "kernel_lost_pct_" + k) <= 0) {
                        kernelLossless++;
                        ternLosslessThere += get(prefix + "tern_lost_pct_" + k) <= 0 ? 1 : 0;
                    }
                }
                final String kind = prefix.equals("mcast_") ? "multicast" : "unicast";
                table.append(String.format(Locale.ROOT, "%-6s %s%n", "", kind + ": paced bursts the kernel member received "
                    + "whole: " + kernelLossless + "; of those, Tern received whole: " + ternLosslessThere));
                results.put(prefix + "kernel_lossless_bursts", (double) kernelLossless);
                results.put(prefix + "tern_lossless_where_kernel_is", (double) ternLosslessThere);
            }
        }
        if (results.containsKey("udp_echo_ratio")) {
            final String rateFormat = "%-6s %-48s %9s %9s %7s%n";
            table.append(String.format(Locale.ROOT, rateFormat, "", "small packets (kernel: a Java echo loop)", "Tern",
                "kernel", "ratio"));
            udpRateRows(table, rateFormat, "kernel", "");
            if (results.containsKey("udp_echo_ratio_mmsg")) {
                table.append(String.format(Locale.ROOT, rateFormat, "", "the same, kernel: a C recvmmsg/sendmmsg loop",
                    "Tern", "kernel", "ratio"));
                udpRateRows(table, rateFormat, "kernel_mmsg", "_mmsg");
            }
        }
        if (results.containsKey("flood_ratio_kernel_to_tern")) {
            final String floodFormat = "%-6s %-48s %9s %9s %7s%n";
            table.append(String.format(Locale.ROOT, floodFormat, "", "under a SYN flood (" + floodSource.describe()
                + "), offloads on", "Tern", "kernel", "ratio"));
            for (String way : List.of("kernel_to_tern", "tern_to_kernel")) {
                final String arrow = way.replace("_to_", "->").replace("tern", "Tern");
                row(table, floodFormat, "", "TCP " + arrow + ": rate kept under flood", get("flood_kept_" + way),
                    get("flood_kept_kernel_" + way));
                row(table, floodFormat, "", "TCP " + arrow + ": longest stall under flood, s", get("flood_stall_s_" + way),
                    get("flood_stall_s_kernel_" + way));
                row(table, floodFormat, "", "TCP " + arrow + ": SYNs/s the Java flood sent", get("flood_syn_rate_" + way),
                    get("flood_syn_rate_kernel_" + way));
            }
        }
        if (results.containsKey("syn_rate_ratio")) {
            final String synFormat = "%-6s %-48s %9s %9s %7s%n";
            table.append(String.format(Locale.ROOT, synFormat, "", "SYN -> SYN-ACK, one shard (kernel: a listener)", "Tern",
                "kernel", "ratio"));
            for (long rate : synRates) {
                final String step = SynRateBenchmark.stepKey(rate);
                row(table, synFormat, "", "SYNs/s sent, step " + step, get("syn_sent_rate_tern_" + step),
                    get("syn_sent_rate_kernel_" + step), Double.NaN);
                row(table, synFormat, "", "SYN-ACKs/s received, step " + step, get("syn_rate_tern_" + step),
                    get("syn_rate_kernel_" + step));
                row(table, synFormat, "", "  Tern without the link's SYN filter: SYNs/s sent",
                    get("syn_sent_rate_tern" + SynRateBenchmark.NO_FILTER + "_" + step), get("syn_sent_rate_kernel_" + step),
                    Double.NaN);
                row(table, synFormat, "", "  Tern without the link's SYN filter: SYN-ACKs/s",
                    get("syn_rate_tern" + SynRateBenchmark.NO_FILTER + "_" + step), get("syn_rate_kernel_" + step));
            }
            row(table, synFormat, "", "SYN-ACKs/s, best step", get("syn_rate_tern"), get("syn_rate_kernel"),
                get("syn_rate_ratio"));
            row(table, synFormat, "", "SYN-ACKs/s, best step, no link filter", get("syn_rate_tern" + SynRateBenchmark.NO_FILTER),
                get("syn_rate_kernel"), get("syn_rate_ratio" + SynRateBenchmark.NO_FILTER));
        }
        if (results.containsKey("http_ratio_keepalive")) {
            final String httpFormat = "%-6s %-48s %9s %9s %7s%n";
            table.append(String.format(Locale.ROOT, httpFormat, "", "measurement (kernel: nginx, 1 worker), offloads off",
                "Tern", "kernel", "ratio"));
            row(table, httpFormat, "", "HTTP requests/s, keep-alive (ab -k -c 8)", get("http_rps_tern_keepalive"),
                get("http_rps_nginx_keepalive"), get("http_ratio_keepalive"));
            row(table, httpFormat, "", "HTTP requests/s, a connection each (ab -c 8)", get("http_rps_tern_close"),
                get("http_rps_nginx_close"), get("http_ratio_close"));
            row(table, httpFormat, "", "HTTP requests/s, keep-alive, cold (just started)", get("http_rps_tern_cold"),
                get("http_rps_nginx_cold"), get("http_ratio_cold"));
        }
        System.out.print(table);
        final StringBuilder json = new StringBuilder("{");
        json.append("\"seconds\":").append(seconds).append(",\"rounds\":").append(rounds)
            .append(",\"round_trips\":").append(roundTrips)
            .append(",\"rx_ring\":\"").append(frameRing ? "frame" : "block").append('"')
            .append(",\"cpus\":").append(Runtime.getRuntime().availableProcessors())
            .append(",\"congestion_control\":\"").append(congestionControlInUse).append('"')
            .append(",\"runner_idle\":\"").append(idle).append('"');
        if (lossCongestionControl != null) {
            json.append(",\"loss_levels_pct\":").append(lossLevels)
                .append(",\"loss_congestion_control\":\"").append(lossCongestionControl).append('"')
                .append(",\"tern_congestion_control\":\"").append(ternCongestionControl == null ? "cubic" : ternCongestionControl)
                .append('"');
            if (wants("nc")) {
                json.append(",\"nc_mib\":").append(ncBytes >> 20).append(",\"nc_seconds\":").append(ncSeconds);
            }
            if (wants("http")) {
                json.append(",\"http_requests\":").append(httpRequests);
            }
        }
        if (wants("flood")) {
            json.append(",\"flood_generator\":\"").append(floodSource.hping3() ? "hping3" : "java").append('"')
                .append(",\"flood_rate_asked\":").append(floodSource.rate());
        }
        if (wants("syn-rate")) {
            json.append(",\"syn_rate_steps\":").append(synRates);
        }
        results.forEach((key, value) -> json.append(",\"").append(key).append("\":").append(!Double.isFinite(value) ? "null"
            : String.format(Locale.ROOT, value == 0 || Math.abs(value) >= 1 ? "%.3f" : "%.4g", value)));
        System.out.println(json.append('}'));
    }

    /** The UDP echo rate's rows against one kernel server: keys {@code ..._KERNEL...}, ratios {@code ..._ratioSUFFIX}. */
    private void udpRateRows(StringBuilder table, String format, String kernel, String ratioSuffix) {
        row(table, format, "", "UDP 64 B echoes/s, " + UdpRateBenchmark.WINDOW + " in flight, one shard",
            get("udp_echo_rate_tern"), get("udp_echo_rate_" + kernel), get("udp_echo_ratio" + ratioSuffix));
        for (long rate : UdpRateBenchmark.FLOOD_RATES) {
            final String step = SynRateBenchmark.stepKey(rate);
            row(table, format, "", "  flood " + step + ": datagrams/s sent", get("udp_flood_sent_rate_tern_" + step),
                get("udp_flood_sent_rate_" + kernel + "_" + step), Double.NaN);
            row(table, format, "", "  flood " + step + ": echoes/s", get("udp_flood_echo_rate_tern_" + step),
                get("udp_flood_echo_rate_" + kernel + "_" + step));
        }
        row(table, format, "", "UDP 64 B echoes/s under a flood, best step", get("udp_flood_echo_rate_tern"),
            get("udp_flood_echo_rate_" + kernel), get("udp_flood_echo_ratio" + ratioSuffix));
    }

    private static void row(StringBuilder table, String format, String offloads, String what, double tern, double kernel) {
        row(table, format, offloads, what, tern, kernel, tern / kernel);
    }

    /** A row; {@code ratio} is given where it is the median of per-round ratios rather than tern / kernel. */
    private static void row(StringBuilder table, String format, String offloads, String what, double tern, double kernel,
                            double ratio) {
        if (!Double.isFinite(kernel) && !what.startsWith("share") || !Double.isFinite(tern) && !what.contains("kernel<->kernel")) {
            return;
        }
        table.append(String.format(Locale.ROOT, format, offloads, what, number(tern), number(kernel),
            Double.isFinite(ratio) ? String.format(Locale.ROOT, "%.2f", ratio) : ""));
    }

    private static String number(double value) {
        return Double.isFinite(value) ? String.format(Locale.ROOT, "%.2f", value) : "";
    }
}
