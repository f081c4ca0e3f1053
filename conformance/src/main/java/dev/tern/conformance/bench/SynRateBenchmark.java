package dev.tern.conformance.bench;

import dev.tern.afpacket.AfPacketLink;
import dev.tern.afpacket.AfPacketOptions;
import dev.tern.tcp.wire.TcpFlags;
import dev.tern.testkit.netns.BackgroundCommand;
import dev.tern.testkit.netns.NetnsHarness;
import dev.tern.testkit.netns.NetworkNamespace;

import java.nio.channels.ServerSocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Supplier;

/**
 * How many SYNs one stack answers per second (goal: the kernel's rate at every step): {@link FrameFloodGenerator} in the peer's namespace
 * sends SYNs from the peer's address to port 9 at each rate of a list of steps (0: as fast as it goes), and counts
 * the SYN-ACKs that come back on the same AF_PACKET link, between its batches. Against {@code tern serve --discard 9
 * --shards 1} on AF_PACKET (the real command) and against a kernel listener (a Java {@link ServerSocketChannel} bound
 * on the kernel-only pair, backlog 4096, never accepting) in the same run. The peer's kernel answers every SYN-ACK
 * with a reset, which ends each half-open connection on both kinds of listener. Offloads as the pair's defaults.
 *
 * <p>Both may answer with SYN cookies under such a load (the kernel when its SYN queue overflows, Tern when its
 * half-open table does), and Tern sheds SYNs while its link's ring is half full; which counters moved is printed per
 * step (Tern's from its counters file, the kernel's from {@code /proc/net/netstat} in its namespace). Each step lasts
 * {@code seconds}, after one unreported second at the first rate (the JIT of both ends). Keys: {@code syn_rate_tern},
 * {@code syn_rate_kernel} (SYN-ACKs per second, the best step), {@code syn_rate_ratio}; per step
 * ({@code 100k}, {@code unpaced}): {@code syn_rate_{tern,kernel}_STEP}, {@code syn_sent_rate_{tern,kernel}_STEP}
 * (SYNs per second the link took), {@code syn_cookies_{tern,kernel}_STEP}, {@code syn_pressure_drops_tern_STEP},
 * {@code syn_rx_drops_{tern,kernel}_STEP} (frames the counting link's ring lost: SYN-ACKs not counted). Tern is
 * measured twice: as it runs by default, and with the link's SYN filter off ({@code -Dtern.shed.filter=false}, keys
 * {@code syn_rate_tern_no_filter}, {@code syn_rate_ratio_no_filter}, ...), which shows how many SYNs the shard
 * answers where the default shows how many the filter lets through.
 */
final class SynRateBenchmark {
    static final List<Long> DEFAULT_RATES = List.of(100_000L, 200_000L, 300_000L, 0L);
    /** Key infix of the figures with the link's SYN filter off. */
    static final String NO_FILTER = "_no_filter";
    private static final int PORT = 9;
    private static final int BACKLOG = 4096;
    private static final long SECOND_NS = 1_000_000_000L;
    /** 64 receive blocks: 64 ms of SYN-ACKs on the block timer if the generator's thread is kept off the processor. */
    private static final AfPacketOptions LINK = AfPacketOptions.defaults().rxBlocks(256 * 1024, 64).txFrameCount(1024);
    private static final List<String> TERN_COUNTERS = List.of("tcp.syncookies.", "tcp.drop.syn_pressure",
        "tcp.rx.unanswered_pressure", "stack.shed.", "tcp.conn.passive_opens", "tcp.conn.half_open_expired",
        "tcp.conn.half_open_resets",
        "tcp.listen.", "tcp.conn.resets_received", "link.rx.kernel_drops", "link.rx.frames", "link.tx.frames");
    private static final List<String> KERNEL_COUNTERS = List.of("TcpExt.SyncookiesSent", "TcpExt.SyncookiesRecv",
        "TcpExt.SyncookiesFailed", "TcpExt.ListenOverflows", "TcpExt.ListenDrops", "TcpExt.TCPReqQFullDoCookies",
        "TcpExt.TCPReqQFullDrop", "Tcp.PassiveOpens", "Tcp.InSegs", "Tcp.OutSegs", "Tcp.InErrs", "Tcp.OutRsts");

    private final double seconds;
    private final List<Long> rates;
    private final Path tern;

    /** Seconds of unpaced SYNs before the steps, not counted (the JIT's warm-up, see {@link #steps}). */
    private static final int WARM_UP_SECONDS = Integer.getInteger("tern.bench.syn.warmup", 15);

    SynRateBenchmark(double seconds, List<Long> rates, Path root) {
        this.seconds = seconds;
        this.rates = rates;
        this.tern = root.resolve("tern");
        if (!Files.isExecutable(tern)) {
            throw new IllegalStateException("no tern launcher at " + tern + " (run through conformance/bench-veth.sh)");
        }
    }

    /** {@code 100000,200000,0} as a list; 0 is as fast as the generator goes. */
    static List<Long> parseRates(String text) {
        final List<Long> rates = new ArrayList<>();
        for (String rate : text.split(",")) {
            rates.add(Math.max(0, Long.parseLong(rate.strip())));
        }
        return List.copyOf(rates);
    }

    /** {@code 100k} for 100,000 SYNs/s, {@code unpaced} for 0. */
    static String stepKey(long rate) {
        return rate == 0 ? "unpaced" : rate % 1000 == 0 ? rate / 1000 + "k" : Long.toString(rate);
    }

    /** One step: SYNs/s the link took, SYN-ACKs/s counted, frames the counting ring lost, counters that moved. */
    private record Step(double sentRate, double answeredRate, long ringDrops, Map<String, Long> counters) {
    }

    void run(Map<String, Double> results) throws Exception {
        try (NetnsHarness kernels = NetnsHarness.create(); NetnsHarness net = NetnsHarness.create()) {
            kernels.ternExec(Duration.ofSeconds(10), "ip", "address", "add", NetnsHarness.TERN_ADDRESS + "/24",
                "dev", NetnsHarness.TERN_INTERFACE).orThrow();
            final Map<Long, Step> kernel;
            try (ServerSocketChannel listener = FloodBenchmark.listen(kernels.ternNamespace(), NetnsHarness.TERN_ADDRESS,
                     PORT, BACKLOG)) {
                System.err.println("SYN -> SYN-ACK: the kernel's listener ...");
                kernel = steps(kernels, () -> kernelNetstat(kernels.ternNamespace(), "Tcp"), KERNEL_COUNTERS, null);
            }
            final Map<Long, Step> ternSteps = ternSteps(net, false);
            final Map<Long, Step> unfiltered = ternSteps(net, true);
            double bestTern = 0;
            double bestUnfiltered = 0;
            double bestKernel = 0;
            for (long rate : rates) {
                final String step = stepKey(rate);
                final Step k = kernel.get(rate);
                final Step t = ternSteps.get(rate);
                final Step u = unfiltered.get(rate);
                results.put("syn_rate_tern_" + step, t.answeredRate);
                results.put("syn_rate_tern" + NO_FILTER + "_" + step, u.answeredRate);
                results.put("syn_rate_kernel_" + step, k.answeredRate);
                results.put("syn_sent_rate_tern_" + step, t.sentRate);
                results.put("syn_sent_rate_tern" + NO_FILTER + "_" + step, u.sentRate);
                results.put("syn_sent_rate_kernel_" + step, k.sentRate);
                results.put("syn_cookies_tern_" + step, (double) t.counters.getOrDefault("tcp.syncookies.sent", 0L));
                results.put("syn_cookies_tern" + NO_FILTER + "_" + step, (double) u.counters.getOrDefault("tcp.syncookies.sent", 0L));
                results.put("syn_cookies_kernel_" + step, (double) k.counters.getOrDefault("TcpExt.SyncookiesSent", 0L));
                results.put("syn_pressure_drops_tern_" + step, (double) t.counters.getOrDefault("tcp.drop.syn_pressure", 0L));
                results.put("syn_pressure_drops_tern" + NO_FILTER + "_" + step,
                    (double) u.counters.getOrDefault("tcp.drop.syn_pressure", 0L));
                results.put("syn_rx_drops_tern_" + step, (double) t.ringDrops);
                results.put("syn_rx_drops_kernel_" + step, (double) k.ringDrops);
                bestTern = Math.max(bestTern, t.answeredRate);
                bestUnfiltered = Math.max(bestUnfiltered, u.answeredRate);
                bestKernel = Math.max(bestKernel, k.answeredRate);
            }
            results.put("syn_rate_tern", bestTern);
            results.put("syn_rate_tern" + NO_FILTER, bestUnfiltered);
            results.put("syn_rate_kernel", bestKernel);
            results.put("syn_rate_ratio", bestTern / bestKernel);
            results.put("syn_rate_ratio" + NO_FILTER, bestUnfiltered / bestKernel);
        }
    }

    /**
     * The steps against {@code tern serve}, started afresh; {@code withoutLinkFilter}: with
     * {@code -Dtern.shed.filter=false}, so that under pressure only the stack's own drop sheds SYNs and the figure
     * shows how many the shard answers rather than how many the link's filter lets through (one in eight).
     */
    private Map<Long, Step> ternSteps(NetnsHarness net, boolean withoutLinkFilter) {
        final List<String> command = new ArrayList<>(List.of(tern.toString(), "serve", "--discard", Integer.toString(PORT),
            "--shards", "1", "--link", "afpacket:" + NetnsHarness.TERN_INTERFACE, "--ip", NetnsHarness.TERN_ADDRESS + "/24"));
        if (withoutLinkFilter) {
            command.addAll(0, List.of("env", "JAVA_TOOL_OPTIONS=-Dtern.shed.filter=false"));
        }
        try (CommandCounters counters = CommandCounters.create();
             BackgroundCommand serve = net.startInTern(counters.command(command.toArray(String[]::new)))) {
            System.err.println("SYN -> SYN-ACK: tern serve --discard 9 --shards 1" + (withoutLinkFilter
                ? ", the link's SYN filter off (-Dtern.shed.filter=false) ..." : " ..."));
            return steps(net, counters::read, TERN_COUNTERS, serve);
        }
    }

    /**
     * Every step against the listener across {@code pair}: waits until it answers (a few SYNs at a time, for up to
     * 30 s; {@code server} is the command, or null), warms up for {@value #WARM_UP_SECONDS} s unpaced, then measures each
     * rate. The generator's
     * link is opened on peer0 inside the peer's namespace ({@link NetnsHarness#openPeerLink}) and closed after.
     */
    private Map<Long, Step> steps(NetnsHarness pair, Supplier<Map<String, Long>> counters, List<String> moved,
                                  BackgroundCommand server) {
        final Map<Long, Step> steps = new LinkedHashMap<>();
        try (AfPacketLink link = pair.openPeerLink(AfPacketLink::open, LINK);
             FrameFloodGenerator generator = FrameFloodGenerator.syns(pair.peerMac(), NetnsHarness.PEER_IPV4, pair.ternMac(),
                 NetnsHarness.TERN_IPV4, PORT, FrameFloodGenerator.DEFAULT_FRAMES, 16)) {
            awaitAnswers(link, generator, server);
            // Not counted: a freshly started tern serve runs interpreted and C1 code for its first seconds under load
            // (measured without this: 30,000 SYN-ACKs/s in the first steps, 63,000 from the third on).
            step(link, generator, 0, WARM_UP_SECONDS, counters, moved);
            for (long rate : rates) {
                final Step step = step(link, generator, rate, seconds, counters, moved);
                System.err.printf(Locale.ROOT, "  step %-8s sent %,10.0f SYNs/s, SYN-ACKs %,10.0f /s (ring drops %d); moved: %s%n",
                    stepKey(rate), step.sentRate, step.answeredRate, step.ringDrops, step.counters);
                steps.put(rate, step);
            }
        }
        return steps;
    }

    private static Step step(AfPacketLink link, FrameFloodGenerator generator, long rate, double seconds,
                             Supplier<Map<String, Long>> counters, List<String> moved) {
        final FrameFloodGenerator.SegmentCounter synAcks = new FrameFloodGenerator.SegmentCounter(NetnsHarness.TERN_IPV4,
            TcpFlags.SYN | TcpFlags.ACK);
        final Map<String, Long> before = counters.get();
        final long dropsBefore = link.stats().kernelDrops();
        final long maxFrames = (long) ((rate == 0 ? 5_000_000 : rate) * seconds) + 1;
        final FrameFloodGenerator.Result sent = generator.run(link, rate, maxFrames, (long) (seconds * SECOND_NS), synAcks);
        final double answeredRate = synAcks.count() * 1e9 / sent.elapsedNs();
        // SYN-ACKs still on their way are left to the next step's start, which drains them uncounted.
        FrameFloodGenerator.receiveFor(link, FrameFloodGenerator.IGNORE, 100_000_000L);
        return new Step(sent.framesPerSecond(), answeredRate, link.stats().kernelDrops() - dropsBefore,
            CommandCounters.growth(before, counters.get(), moved));
    }

    /** Sends 20 SYNs every 100 ms until one is answered; fails after 30 s or when the server exits. */
    private static void awaitAnswers(AfPacketLink link, FrameFloodGenerator generator, BackgroundCommand server) {
        final FrameFloodGenerator.SegmentCounter synAcks = new FrameFloodGenerator.SegmentCounter(NetnsHarness.TERN_IPV4,
            TcpFlags.SYN | TcpFlags.ACK);
        final long deadline = System.nanoTime() + 30 * SECOND_NS;
        while (synAcks.count() == 0) {
            if (System.nanoTime() - deadline > 0 || server != null && !server.isAlive()) {
                throw new IllegalStateException("no SYN-ACK within 30 s" + (server == null ? ""
                    : " (tern serve: " + server.stderr().strip() + ")"));
            }
            generator.run(link, 200, 20, 100_000_000L, synAcks);
        }
    }

    /**
     * The kernel's counters in {@code namespace} of the groups whose names start with {@code groupPrefix} ("Tcp": Tcp
     * and TcpExt; "Udp": Udp and UdpLite), from /proc/net/snmp and /proc/net/netstat: {@code GROUP.NAME}.
     */
    static Map<String, Long> kernelNetstat(NetworkNamespace namespace, String groupPrefix) {
        final String text = namespace.exec(Duration.ofSeconds(10), "cat", "/proc/net/snmp", "/proc/net/netstat").orThrow().stdout();
        final Map<String, Long> counters = new LinkedHashMap<>();
        final List<String> lines = text.lines().toList();
        for (int i = 0; i + 1 < lines.size(); i++) {
            final String[] names = lines.get(i).split("\\s+");
            final String[] values = lines.get(i + 1).split("\\s+");
            if (names.length != values.length || !names[0].equals(values[0]) || !names[0].startsWith(groupPrefix)
                || values.length < 2 || !values[1].matches("-?\\d+")) {
                continue;
            }
            final String group = names[0].substring(0, names[0].length() - 1);
            for (int k = 1; k < names.length; k++) {
                counters.put(group + "." + names[k], Long.parseLong(values[k]));
            }
            i++;
        }
        return counters;
    }
}
