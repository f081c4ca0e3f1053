package dev.tern.cli;

import dev.tern.cli.bench.ChecksumBenchmark;
import dev.tern.cli.bench.EchoBenchmark;
import dev.tern.cli.bench.ConnectBench;
import dev.tern.cli.bench.TcpBench;
import dev.tern.cli.bench.UdpBench;
import org.openjdk.jmh.profile.GCProfiler;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.Options;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;
import org.openjdk.jmh.runner.options.VerboseMode;

import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * {@code tern bench [--seconds N] [--json]}: JMH benchmarks, each reported as a ratio to a baseline measured in the
 * same run: UDP and TCP round trips, message rate and bulk throughput against the kernel on loopback, Internet
 * checksum against the naive loop, and bytes allocated per packet.
 * With {@code --json}, one JSON object with the keys of DESIGN.md (absent when not measured) plus extra keys.
 */
final class BenchCommand {
    static final String USAGE = "bench [--seconds N] [--json] [--nio]";
    static final CommandHelp HELP = new CommandHelp("bench", "[--seconds N] [--json] [--nio]",
        "benchmarks, each as a ratio to a baseline measured in the same run",
        "Runs JMH benchmarks: UDP and TCP round trips, message rate and bulk throughput of a Tern pair on the memory "
            + "wire against the kernel on loopback, the Internet checksum against a naive loop, and bytes allocated "
            + "per packet; each result is given as a ratio to its baseline from the same run.",
        List.of(
            CommandHelp.option("--seconds N", "measurement time of each benchmark, 1..600", "3"),
            CommandHelp.option("--json", "print one JSON object (keys in docs/COMMANDS.md) instead of text", "text"),
            CommandHelp.option("--nio", "measure TCP through the NIO provider instead, against Tern's own API and "
                + "the kernel's provider", "off")),
        false, List.of("./tern bench --seconds 2 --json"));

    private final PrintStream out;

    BenchCommand(PrintStream out) {
        this.out = out;
    }

    int run(String[] argv) throws Exception {
        final Arguments args = Arguments.parse("bench", argv, Set.of("--seconds"), Set.of("--json", "--nio"));
        args.operands(0, 0, USAGE);
        final int seconds = args.intValue("--seconds", 3, 1, 600);
        final boolean json = args.has("--json");
        final Map<String, Object> results = new LinkedHashMap<>();
        if (args.has("--nio")) {
            return nio(seconds, json, results);
        }

        final UdpBench.Result udpTern = UdpBench.tern(seconds);
        final UdpBench.Result udpKernel = UdpBench.kernel(seconds);
        results.put("udp_rr_p50_us", round(udpTern.p50Micros(), 2));
        results.put("udp_rr_p99_us", round(udpTern.p99Micros(), 2));
        results.put("udp_rr_p50_us_kernel", round(udpKernel.p50Micros(), 2));
        results.put("udp_rr_p99_us_kernel", round(udpKernel.p99Micros(), 2));
        results.put("udp_rr_p50_ratio", round(udpKernel.p50Micros() / udpTern.p50Micros(), 2));
        results.put("udp_msg_rate", Math.round(udpTern.messagesPerSecond()));
        results.put("udp_msg_rate_kernel", Math.round(udpKernel.messagesPerSecond()));
        if (!json) {
            out.printf("UDP 64 B round trip: tern p50 %.2f us, p99 %.2f us (%d round trips); kernel loopback p50 %.2f us,"
                    + " p99 %.2f us (%d): tern %.1fx lower at p50%n", udpTern.p50Micros(), udpTern.p99Micros(),
                udpTern.roundTrips(), udpKernel.p50Micros(), udpKernel.p99Micros(), udpKernel.roundTrips(),
                udpKernel.p50Micros() / udpTern.p50Micros());
            out.printf("UDP 64 B message rate: tern %,.0f/s, kernel loopback %,.0f/s: %.2fx%n",
                udpTern.messagesPerSecond(), udpKernel.messagesPerSecond(),
                udpTern.messagesPerSecond() / udpKernel.messagesPerSecond());
        }

        final TcpBench.RoundTrips tcpTern = TcpBench.ternRoundTrips(seconds);
        final TcpBench.RoundTrips tcpKernel = TcpBench.kernelRoundTrips(seconds);
        results.put("tcp_rr_p50_us", round(tcpTern.p50Micros(), 2));
        results.put("tcp_rr_p99_us", round(tcpTern.p99Micros(), 2));
        results.put("tcp_rr_p50_us_kernel", round(tcpKernel.p50Micros(), 2));
        results.put("tcp_rr_p99_us_kernel", round(tcpKernel.p99Micros(), 2));
        results.put("tcp_rr_p50_ratio", round(tcpKernel.p50Micros() / tcpTern.p50Micros(), 2));
        final double bulk = TcpBench.ternBulk(65535, seconds);
        final double bulkZeroCopy = TcpBench.ternBulk(65535, seconds, true);
        final double bulk1500 = TcpBench.ternBulk(1500, seconds);
        final double bulk1500ZeroCopy = TcpBench.ternBulk(1500, seconds, true);
        final double bulkKernel = TcpBench.kernelBulk(seconds);
        results.put("tcp_bulk_gbps", round(bulk, 2));
        results.put("tcp_bulk_gbps_kernel", round(bulkKernel, 2));
        results.put("tcp_bulk_gbps_mtu1500", round(bulk1500, 2));
        results.put("tcp_bulk_ratio", round(bulk / bulkKernel, 2));
        results.put("tcp_bulk_gbps_zero_copy", round(bulkZeroCopy, 2));
        results.put("tcp_bulk_gbps_mtu1500_zero_copy", round(bulk1500ZeroCopy, 2));
        results.put("tcp_bulk_zero_copy_ratio", round(bulkZeroCopy / bulk, 2));
        results.put("tcp_bulk_zero_copy_ratio_mtu1500", round(bulk1500ZeroCopy / bulk1500, 2));
        if (!json) {
            out.printf("TCP 64 B round trip: tern p50 %.2f us, p99 %.2f us (%d); kernel loopback p50 %.2f us, p99 %.2f us (%d):"
                    + " tern %.2fx lower at p50%n", tcpTern.p50Micros(), tcpTern.p99Micros(), tcpTern.count(),
                tcpKernel.p50Micros(), tcpKernel.p99Micros(), tcpKernel.count(), tcpKernel.p50Micros() / tcpTern.p50Micros());
            out.printf("TCP bulk, one stream: tern %.2f Gbit/s at MTU 65535, %.2f Gbit/s at MTU 1500; kernel loopback %.2f"
                + " Gbit/s: %.2fx%n", bulk, bulk1500, bulkKernel, bulk / bulkKernel);
            out.printf("TCP bulk, receiving through a receive handler (zero-copy): %.2f Gbit/s at MTU 65535 (%.2fx the"
                + " read), %.2f Gbit/s at MTU 1500 (%.2fx)%n", bulkZeroCopy, bulkZeroCopy / bulk, bulk1500ZeroCopy,
                bulk1500ZeroCopy / bulk1500);
            out.printf("TCP bytes allocated per segment (client thread, round trips): %.3f%n",
                tcpTern.allocatedBytesPerSegment());
        }
        final ConnectBench.Rate connectTern = ConnectBench.tern(seconds);
        final ConnectBench.Rate connectKernel = ConnectBench.kernel(seconds);
        results.put("tcp_connect_rate", Math.round(connectTern.perSecond()));
        results.put("tcp_connect_rate_kernel", Math.round(connectKernel.perSecond()));
        results.put("tcp_connect_ratio", round(connectTern.perSecond() / connectKernel.perSecond(), 2));
        if (!json) {
            out.printf("TCP connections opened, accepted and reset, one thread: tern %.0f/s (two stacks on a pipe); kernel"
                    + " loopback %.0f/s: %.2fx%n", connectTern.perSecond(), connectKernel.perSecond(),
                connectTern.perSecond() / connectKernel.perSecond());
        }

        final Collection<RunResult> checksum = jmh(ChecksumBenchmark.class, seconds, false);
        for (String size : List.of("64", "1500")) {
            final double tern = score(checksum, "tern", size);
            final double naive = score(checksum, "naive", size);
            results.put("checksum_" + size + "b_per_s", Math.round(tern));
            results.put("checksum_" + size + "b_per_s_naive", Math.round(naive));
            results.put("checksum_" + size + "b_ratio", round(tern / naive, 2));
            if (!json) {
                out.printf("checksum %5s B: tern %,.0f/s, naive loop %,.0f/s: %.2fx%n", size, tern, naive, tern / naive);
            }
        }

        final Collection<RunResult> echo = jmh(EchoBenchmark.class, seconds, true);
        double worstBytesPerPacket = 0;
        for (String size : List.of("56", "4000")) {
            final double perRoundTrip = secondary(echo, "roundTrip", size, "gc.alloc.rate.norm");
            final double perPacket = Math.max(0, perRoundTrip) / 2;
            worstBytesPerPacket = Math.max(worstBytesPerPacket, perPacket);
            results.put("echo_" + size + "b_round_trip_ns", round(score(echo, "roundTrip", size), 1));
            if (!json) {
                out.printf("ICMP echo %s B through two stacks (memory wire, one thread): %.0f ns per round trip, "
                    + "%.2f bytes allocated per packet%n", size, score(echo, "roundTrip", size), perPacket);
            }
        }
        results.put("alloc_bytes_per_packet", round(Math.max(worstBytesPerPacket, tcpTern.allocatedBytesPerSegment()), 3));
        if (json) {
            out.println(toJson(results));
        } else {
            out.printf("(JMH, 1 fork, %d s measurement per benchmark, %d CPUs)%n", seconds,
                Runtime.getRuntime().availableProcessors());
        }
        return 0;
    }

    /**
     * {@code --nio}: TCP round trip and bulk through Tern's NIO provider against Tern's own API (same stacks, same
     * threading) and against the JDK's provider on loopback; the provider's goals are p50 within 1.3x of the API, bulk at
     * least 0.9x, and a round trip at least 3x lower than the kernel's.
     */
    private int nio(int seconds, boolean json, Map<String, Object> results) throws Exception {
        final dev.tern.cli.bench.NioBench.Result api = dev.tern.cli.bench.NioBench.ternApi(seconds);
        final dev.tern.cli.bench.NioBench.Result provider = dev.tern.cli.bench.NioBench.ternProvider(seconds);
        final dev.tern.cli.bench.NioBench.Result kernel = dev.tern.cli.bench.NioBench.kernelProvider(seconds);
        results.put("nio_rr_p50_us", round(provider.p50Micros(), 2));
        results.put("nio_rr_p99_us", round(provider.p99Micros(), 2));
        results.put("nio_rr_p50_us_api", round(api.p50Micros(), 2));
        results.put("nio_rr_p50_us_kernel", round(kernel.p50Micros(), 2));
        results.put("nio_bulk_gbps", round(provider.bulkGbps(), 2));
        results.put("nio_bulk_gbps_api", round(api.bulkGbps(), 2));
        results.put("nio_bulk_gbps_kernel", round(kernel.bulkGbps(), 2));
        if (json) {
            out.println(toJson(results));
            return 0;
        }
        out.printf("TCP 64 B round trip p50: NIO on Tern %.2f us (p99 %.2f), Tern's API %.2f us: %.2fx the API (goal <= 1.3x);"
                + " NIO on the kernel (loopback) %.2f us: Tern %.1fx lower (goal >= 3x)%n", provider.p50Micros(),
            provider.p99Micros(), api.p50Micros(), provider.p50Micros() / api.p50Micros(), kernel.p50Micros(),
            kernel.p50Micros() / provider.p50Micros());
        out.printf("TCP bulk, one stream: NIO on Tern %.2f Gbit/s, Tern's API %.2f Gbit/s: %.2fx (goal >= 0.9x); NIO on the"
                + " kernel (loopback) %.2f Gbit/s%n", provider.bulkGbps(), api.bulkGbps(), provider.bulkGbps() / api.bulkGbps(),
            kernel.bulkGbps());
        return 0;
    }

    private static Collection<RunResult> jmh(Class<?> benchmark, int seconds, boolean gcProfiler) throws RunnerException {
        final List<String> jvmArgs = new ArrayList<>(ManagementFactory.getRuntimeMXBean().getInputArguments().stream()
            .filter(a -> a.startsWith("--enable-native-access") || a.startsWith("--add-exports")
                || a.startsWith("--sun-misc-unsafe-memory-access"))
            .toList());
        final OptionsBuilder options = new OptionsBuilder();
        options.include(benchmark.getName() + ".")
            .forks(1)
            .warmupIterations(2).warmupTime(TimeValue.seconds(1))
            .measurementIterations(seconds).measurementTime(TimeValue.seconds(1))
            .jvmArgsAppend(jvmArgs.toArray(String[]::new))
            .verbosity(VerboseMode.SILENT);
        if (gcProfiler) {
            options.addProfiler(GCProfiler.class);
        }
        final Options built = options.build();
        return new Runner(built).run();
    }

    private static double score(Collection<RunResult> results, String method, String size) {
        return find(results, method, size).getPrimaryResult().getScore();
    }

    private static double secondary(Collection<RunResult> results, String method, String size, String name) {
        return find(results, method, size).getSecondaryResults().entrySet().stream()
            .filter(e -> e.getKey().endsWith(name)).findFirst()
            .map(e -> e.getValue().getScore()).orElse(Double.NaN);
    }

    private static RunResult find(Collection<RunResult> results, String method, String size) {
        return results.stream()
            .filter(r -> r.getParams().getBenchmark().endsWith("." + method) && size.equals(r.getParams().getParam("size")))
            .findFirst().orElseThrow(() -> new CommandFailure("bench: no result for " + method + " " + size));
    }

    private static double round(double value, int digits) {
        final double scale = Math.pow(10, digits);
        return Math.round(value * scale) / scale;
    }

    static String toJson(Map<String, Object> values) {
        final StringBuilder json = new StringBuilder("{");
        values.forEach((key, value) -> {
            if (json.length() > 1) {
                json.append(", ");
            }
            json.append('"').append(key).append("\": ").append(value);
        });
        return json.append('}').toString();
    }
}
