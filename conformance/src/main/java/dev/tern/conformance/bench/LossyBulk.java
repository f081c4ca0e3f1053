package dev.tern.conformance.bench;

import dev.tern.stack.NetStack;
import dev.tern.stack.TcpConnection;
import dev.tern.stack.TcpListener;
import dev.tern.stack.TernSocketException;
import dev.tern.tcp.TcpTrace;
import dev.tern.testkit.netns.BackgroundCommand;
import dev.tern.testkit.netns.NetnsHarness;
import dev.tern.testkit.netns.PacketLoss;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * TCP bulk over a lossy path (against the kernel's goodput through the same loss): goodput Tern -> kernel and kernel -> Tern against kernel -> kernel
 * the same way, at each loss level of {@code --loss} ({@link LossyPairs}: random loss injected by the kernel on a
 * wire between the ends, both ways, offloads off everywhere, the kernel's senders on CUBIC).
 *
 * <p>Each measurement is one connection; the receiver measures payload Gbit/s over a window of {@code --seconds} from
 * its first byte (or to the end of the stream), then closes, unread data and all: the rate is the receiver's over a
 * fixed stretch of its time, whatever the sender still had queued. Every transfer is bounded: the sender stops after
 * {@code seconds + 30} s or {@link #maxBytes} (5 GB per second of window, beyond anything veth carries), the
 * kernel's programs end themselves after their timeout. Tern runs on a {@code StackRunner} with the vnet header and
 * 4 MiB buffers each way (the benchmark's first bulk mode, offloads off), a fresh stack for each round and level.
 *
 * <p>Rounds are interleaved as in the bulk measurements: each round goes through every level, and at each level
 * measures kernel -> kernel, Tern -> kernel, kernel -> kernel the other way, kernel -> Tern; the results are medians
 * over the rounds, the ratios medians of ratios taken within a round. The first round warms Tern up at the first
 * level. Keys: {@code tcp_loss_gbps_{tern_to_kernel,kernel_to_tern,kernel,kernel_reverse}_LEVEL},
 * {@code tcp_loss_ratio_{tern_to_kernel,kernel_to_tern}_LEVEL}, {@code tcp_loss_dropped_pct_LEVEL} (what the rules
 * dropped, as a share of what they saw), with LEVEL {@code 0pct}, {@code 0_1pct}, {@code 1pct}, ...
 */
final class LossyBulk {
    private static final int SINK_PORT = 5101;
    private static final int SOURCE_PORT = 5102;
    private static final long SECOND_NS = 1_000_000_000L;

    private final VethBenchmark bench;
    private final LossyPairs pairs;
    private final List<Double> levels;
    private final double seconds;
    private final int rounds;
    private final long maxBytes;
    /** TERN_BENCH_TRACE=DIR: each measured Tern sender writes its TCP trace (CSV, for tern plot) there. */
    private static final String TRACE_DIRECTORY = System.getenv("TERN_BENCH_TRACE");
    private String traceName;

    /** Measures through CE marks instead of loss: levels are marking percents, keys {@code tcp_ce_*}. */
    private final boolean marking;

    LossyBulk(VethBenchmark bench, LossyPairs pairs, List<Double> levels, double seconds, int rounds) {
        this(bench, pairs, levels, seconds, rounds, false);
    }

    LossyBulk(VethBenchmark bench, LossyPairs pairs, List<Double> levels, double seconds, int rounds, boolean marking) {
        this.marking = marking;
        this.bench = bench;
        this.pairs = pairs;
        this.levels = levels;
        this.seconds = seconds;
        this.rounds = rounds;
        this.maxBytes = (long) Math.ceil(seconds * 5e9);
    }

    void run(Map<String, Double> results) throws Exception {
        final Map<String, List<Double>> samples = new LinkedHashMap<>();
        final Map<String, long[]> counted = new LinkedHashMap<>();
        for (int round = 0; round < rounds; round++) {
            for (double level : levels) {
                System.err.printf(Locale.ROOT, "TCP over %s %s, round %d of %d ...%n", marking ? "CE marks" : "loss",
                    LossyPairs.label(level), round + 1, rounds);
                if (marking) {
                    pairs.marks(level);
                } else {
                    pairs.loss(level);
                }
                final String k = (marking ? "ce_" : "") + LossyPairs.key(level);
                final double out = kernelWindow(pairs.kernels, false);
                final double in = kernelWindow(pairs.kernels, true);
                add(samples, "tcp_loss_gbps_kernel_" + k, out);
                add(samples, "tcp_loss_gbps_kernel_reverse_" + k, in);
                final boolean warmUp = round == 0 && level == levels.getFirst();
                final int roundNumber = round + 1;
                bench.withStack(pairs.net, true, VethBenchmark.Threading.RUNNER, "_loss_" + k, stack -> {
                    if (warmUp) {
                        ternToKernel(stack, seconds / 3);
                        kernelToTern(stack, seconds / 3);
                    }
                    traceName = "tern-to-kernel-" + k + "-round" + roundNumber;
                    final double ternOut = ternToKernel(stack, seconds);
                    traceName = null;
                    add(samples, "tcp_loss_gbps_tern_to_kernel_" + k, ternOut);
                    add(samples, "tcp_loss_ratio_tern_to_kernel_" + k, ternOut / out);
                    final double ternIn = kernelToTern(stack, seconds);
                    add(samples, "tcp_loss_gbps_kernel_to_tern_" + k, ternIn);
                    add(samples, "tcp_loss_ratio_kernel_to_tern_" + k, ternIn / in);
                });
                final long[] sum = counted.computeIfAbsent(k, x -> new long[2]);
                if (marking) {
                    final long[] marks = pairs.markCounts();
                    if (level > 0 && (marks[0] == 0 || marks[1] == 0)) {
                        throw new IllegalStateException("no packet was marked at " + LossyPairs.label(level) + " on "
                            + (marks[0] == 0 ? "Tern's pair" : "the kernel pair") + ": the rules mark ECT packets only, "
                            + "so ECN was not negotiated there");
                    }
                    sum[0] += marks[0] + marks[1];
                    sum[1] += marks[2];
                } else {
                    final PacketLoss.Counts counts = pairs.counts();
                    sum[0] += counts.dropped();
                    sum[1] += counts.packets();
                }
            }
        }
        samples.forEach((key, values) -> {
            results.put(key, VethBenchmark.median(values));
            System.err.printf("  %-50s %s%n", key, values.stream().map(v -> String.format(Locale.ROOT, "%.3f", v)).toList());
        });
        counted.forEach((k, sum) -> results.put((marking ? "tcp_loss_marked_pct_" : "tcp_loss_dropped_pct_") + k,
            sum[1] == 0 ? Double.NaN : 100.0 * sum[0] / sum[1]));
    }

    private static void writeTrace(TcpTrace trace, String name) {
        final java.nio.file.Path file = java.nio.file.Path.of(TRACE_DIRECTORY, name + ".csv");
        try (java.io.Writer out = java.nio.file.Files.newBufferedWriter(file)) {
            out.write(TcpTrace.CSV_HEADER);
            out.write('\n');
            trace.drainCsv(out);
            System.err.printf("  trace %s (%d records dropped)%n", file, trace.dropped());
        } catch (java.io.IOException e) {
            System.err.println("  trace " + file + " not written: " + e.getMessage());
        } finally {
            trace.close();
        }
    }

    /** Under CE marks the measurement means nothing unless Tern's connection negotiated ECN with the kernel. */
    private void requireEcn(TcpConnection connection) {
        if (marking && !connection.info().ecn()) {
            throw new IllegalStateException("Tern's connection with the kernel did not negotiate ECN: " + connection.info());
        }
    }

    private static void add(Map<String, List<Double>> samples, String key, double value) {
        samples.computeIfAbsent(key, x -> new ArrayList<>()).add(value);
    }

    /**
     * kernel -> kernel on the second pair: from the "Tern" end to the peer ({@code fromPeer} false: the way Tern ->
     * kernel goes) or from the peer to the "Tern" end (true: the way kernel -> Tern goes). The first time each way,
     * checks that the kernel's sender runs the congestion control asked for.
     */
    private double kernelWindow(NetnsHarness kernels, boolean fromPeer) {
        final String[] sink = VethBenchmark.endpoint("tcp-window-sink", Integer.toString(SINK_PORT), Double.toString(seconds),
            Long.toString(maxBytes), Double.toString(seconds + 60));
        final BackgroundCommand receiver = (fromPeer ? kernels.startInTern(sink) : kernels.startInPeer(sink))
            .awaitOutput("ready", Duration.ofSeconds(20));
        final String[] source = VethBenchmark.endpoint("tcp-source", fromPeer ? NetnsHarness.TERN_ADDRESS : NetnsHarness.PEER_ADDRESS,
            Integer.toString(SINK_PORT), Double.toString(seconds + 30), Long.toString(maxBytes));
        try (BackgroundCommand sender = fromPeer ? kernels.startInPeer(source) : kernels.startInTern(source)) {
            pairs.checkCongestionControlOnce(fromPeer, sender);
            receiver.awaitExit(Duration.ofSeconds((long) seconds + 90));
            sender.awaitExit(Duration.ofSeconds(30));
            return VethBenchmark.value(VethBenchmark.GBPS, receiver.stdout(), "kernel window sink");
        } finally {
            receiver.close();
        }
    }

    /** Tern writes to the kernel's windowed sink until it has measured its window and closed (a reset). */
    private double ternToKernel(NetStack stack, double window) throws TernSocketException {
        final BackgroundCommand sink = pairs.net.startInPeer(VethBenchmark.endpoint("tcp-window-sink", Integer.toString(SINK_PORT),
            Double.toString(window), Long.toString(maxBytes), Double.toString(window + 60))).awaitOutput("ready", Duration.ofSeconds(20));
        try (Arena arena = Arena.ofConfined()) {
            final MemorySegment data = VethBenchmark.randomData(arena, 8 << 20);
            final TcpConnection connection = stack.connect(NetnsHarness.PEER_IPV4, SINK_PORT, 0, VethBenchmark.BULK_BUFFERS);
            // Under loss the SYN or its answer may be lost; Tern's first retransmission comes after 1 s.
            connection.awaitConnected(15 * SECOND_NS);
            requireEcn(connection);
            final TcpTrace trace = TRACE_DIRECTORY == null || traceName == null ? null : new TcpTrace(1 << 22);
            if (trace != null) {
                connection.trace(trace);
            }
            final long end = System.nanoTime() + (long) ((window + 30) * 1e9);
            long offset = 0;
            long sent = 0;
            try {
                while (System.nanoTime() - end < 0 && sent < maxBytes && sink.isAlive() && !connection.isEnded()) {
                    final int written = connection.write(data, offset, 1 << 20, 100_000_000L);
                    offset = (offset + written) % (7 << 20);
                    sent += written;
                }
            } catch (TernSocketException e) {
                // The sink closed with our data unread: its reset ends the run.
            }
            connection.abort();
            if (trace != null) {
                writeTrace(trace, traceName);
            }
            VethBenchmark.awaitExit(sink, stack, "the kernel's windowed sink");
            return VethBenchmark.value(VethBenchmark.GBPS, sink.stdout(), "kernel window sink");
        } finally {
            sink.close();
        }
    }

    /** The kernel's source writes to Tern, which reads for {@code window} seconds from the first byte, then closes. */
    private double kernelToTern(NetStack stack, double window) throws TernSocketException {
        try (TcpListener listener = stack.listen(SOURCE_PORT, 4, VethBenchmark.BULK_BUFFERS); Arena arena = Arena.ofConfined()) {
            final BackgroundCommand source = pairs.net.startInPeer(VethBenchmark.endpoint("tcp-source", NetnsHarness.TERN_ADDRESS,
                Integer.toString(SOURCE_PORT), Double.toString(window + 30), Long.toString(maxBytes)));
            try {
                final TcpConnection connection = listener.accept(20 * SECOND_NS);
                if (connection == null) {
                    throw new IllegalStateException("the kernel's source did not connect: " + source.stdout() + source.stderr());
                }
                requireEcn(connection);
                final double gbps = VethBenchmark.readFor(connection, arena, System.nanoTime() + (long) ((window + 40) * 1e9),
                    maxBytes, (long) (window * 1e9));
                connection.close();
                VethBenchmark.awaitExit(source, stack, "the kernel's source");
                return gbps;
            } finally {
                source.close();
            }
        }
    }
}
