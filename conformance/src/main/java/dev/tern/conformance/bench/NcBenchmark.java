package dev.tern.conformance.bench;

import dev.tern.testkit.netns.BackgroundCommand;
import dev.tern.testkit.netns.NetnsHarness;
import dev.tern.testkit.netns.NetworkNamespace;
import dev.tern.testkit.netns.PacketLoss;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.function.Function;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * {@code tern nc} where users meet it (against socat through the same loss): the real command ({@code ./tern nc}, a JVM of its own, started
 * by the launcher) in Tern's namespace against {@code socat} with 1 MiB buffers ({@code -b 1048576}) in the peer's,
 * 128 MiB each way ({@code --nc-mib}), against socat to socat over the kernel pair, at each loss level of
 * {@code --loss} ({@link LossyPairs}: the same random loss on both pairs' wires, offloads off, the kernel on CUBIC).
 *
 * <pre>
 *   Tern -> kernel:  [t] ./tern nc --link afpacket:tern0 --ip 198.18.0.2/24 198.18.0.1 PORT &lt; FILE
 *                    [p] socat -b 1048576 -u TCP4-LISTEN:PORT,reuseaddr STDOUT | meter
 *   kernel -> Tern:  [p] socat -b 1048576 -u OPEN:FILE TCP4:198.18.0.2:PORT,retry=...
 *                    [t] ./tern nc -l --link afpacket:tern0 --ip 198.18.0.2/24 PORT &lt; /dev/null | meter
 *   socat, both ways on the kernel pair, the same commands with socat in place of tern nc
 * </pre>
 * FILE is random data in {@code /dev/shm} (memory), deleted afterwards. The meter ({@code KernelEndpoint
 * stdin-meter}) reads the receiver's standard output through a pipe and measures from its first byte to its last,
 * so neither the command's start (the launcher and a JVM, a second or more) nor socat's counts. Each transfer is
 * bounded by {@code --nc-seconds} (default 20) from its first byte: a slower one is cut there and measured over
 * what arrived (stderr says so), and every process is ended by its PID afterwards. The ratio compares Tern with socat
 * sending the same way across the wire (see {@link LossyPairs}). Keys: {@code
 * nc_gbps_{tern_to_kernel,kernel_to_tern,socat,socat_reverse}_LEVEL}, {@code nc_ratio_{tern_to_kernel,kernel_to_tern}_LEVEL}.
 */
final class NcBenchmark {
    private static final int PORT = 5301;
    private static final Pattern BYTES = Pattern.compile("bytes=(\\d+)");

    private final LossyPairs pairs;
    private final List<Double> levels;
    private final int rounds;
    private final long bytes;
    private final double window;
    private final Path tern;
    /** {@code tern nc --cc}'s argument ({@code --tern-cc}); null: the command's default. */
    private final String congestionControl;
    private Path file;

    /** Through CE marks instead of loss ({@link LossyPairs#ecn}); {@code tern nc} then runs with {@code --ecn on}. */
    private final boolean marking;

    NcBenchmark(LossyPairs pairs, List<Double> levels, int rounds, long bytes, double window, Path root,
                String congestionControl, boolean marking) {
        this.congestionControl = congestionControl;
        this.marking = marking;
        this.pairs = pairs;
        this.levels = levels;
        this.rounds = rounds;
        this.bytes = bytes;
        this.window = window;
        this.tern = root.resolve("tern");
        if (!Files.isExecutable(tern)) {
            throw new IllegalStateException("no tern launcher at " + tern + " (run through conformance/bench-veth.sh, or set"
                + " -Dtern.root to the repository)");
        }
    }

    void run(Map<String, Double> results) throws IOException {
        final Path directory = Files.isDirectory(Path.of("/dev/shm")) ? Path.of("/dev/shm") : Path.of(System.getProperty("java.io.tmpdir"));
        file = Files.createTempFile(directory, "tern-nc-bench", ".bin");
        try {
            writeRandom(file, bytes);
            final Map<String, List<Double>> samples = new LinkedHashMap<>();
            for (int round = 0; round < rounds; round++) {
                for (double level : levels) {
                    System.err.printf(Locale.ROOT, "tern nc over %s %s, round %d of %d ...%n", marking ? "CE marks" : "loss",
                        LossyPairs.label(level), round + 1, rounds);
                    if (marking) {
                        pairs.marks(level);
                    } else {
                        pairs.loss(level);
                    }
                    final String k = (marking ? "ce_" : "") + LossyPairs.key(level);
                    final double socatOut = socat(false);
                    final double ncOut = ncToKernel();
                    final double socatIn = socat(true);
                    final double ncIn = kernelToNc();
                    add(samples, "nc_gbps_socat_" + k, socatOut);
                    add(samples, "nc_gbps_tern_to_kernel_" + k, ncOut);
                    add(samples, "nc_ratio_tern_to_kernel_" + k, ncOut / socatOut);
                    add(samples, "nc_gbps_socat_reverse_" + k, socatIn);
                    add(samples, "nc_gbps_kernel_to_tern_" + k, ncIn);
                    add(samples, "nc_ratio_kernel_to_tern_" + k, ncIn / socatIn);
                    if (marking) {
                        final long[] marks = pairs.markCounts();
                        System.err.printf(Locale.ROOT, "  the rules marked %d packets on Tern's pair, %d on the kernel "
                            + "pair, of %d%n", marks[0], marks[1], marks[2]);
                    } else {
                        final PacketLoss.Counts counts = pairs.counts();
                        System.err.printf(Locale.ROOT, "  the rules dropped %d of %d packets (%.3f %%)%n", counts.dropped(),
                            counts.packets(), counts.droppedPercent());
                    }
                }
            }
            samples.forEach((key, values) -> {
                results.put(key, VethBenchmark.median(values));
                System.err.printf("  %-50s %s%n", key, values.stream().map(v -> String.format(Locale.ROOT, "%.3f", v)).toList());
            });
        } finally {
            Files.deleteIfExists(file);
        }
    }

    private static void add(Map<String, List<Double>> samples, String key, double value) {
        samples.computeIfAbsent(key, x -> new ArrayList<>()).add(value);
    }

    private static void writeRandom(Path file, long length) throws IOException {
        final byte[] block = new byte[1 << 20];
        final SplittableRandom random = new SplittableRandom(13);
        try (OutputStream out = Files.newOutputStream(file)) {
            for (long left = length; left > 0; left -= block.length) {
                random.nextBytes(block);
                out.write(block, 0, (int) Math.min(block.length, left));
            }
        }
    }

    /** socat to socat over the kernel pair: from the "Tern" end to the peer, or ({@code fromPeer}) the other way. */
    private double socat(boolean fromPeer) {
        final NetnsHarness kernels = pairs.kernels;
        final String host = fromPeer ? NetnsHarness.TERN_ADDRESS : NetnsHarness.PEER_ADDRESS;
        return transfer(fromPeer ? "socat -> socat (from the peer)" : "socat -> socat",
            fromPeer ? kernels::startInTern : kernels::startInPeer, socatListener(),
            fromPeer ? kernels.ternNamespace() : kernels.peerNamespace(),
            fromPeer ? kernels::startInPeer : kernels::startInTern, socatSender(host), fromPeer);
    }

    /** {@code tern nc} sends FILE to socat in the peer namespace. */
    private double ncToKernel() {
        final NetnsHarness net = pairs.net;
        final String nc = shell(tern.toString(), "nc", "--cc", ccName(), "--ecn", ecnMode(), "--link",
            "afpacket:" + NetnsHarness.TERN_INTERFACE, "--ip", NetnsHarness.TERN_ADDRESS + "/24", NetnsHarness.PEER_ADDRESS,
            Integer.toString(PORT)) + " < " + quote(file.toString());
        return transfer("tern nc -> socat", net::startInPeer, socatListener(), net.peerNamespace(), net::startInTern, nc, null);
    }

    /** socat in the peer namespace sends FILE to {@code tern nc -l}. */
    private double kernelToNc() {
        final NetnsHarness net = pairs.net;
        final String nc = shell(tern.toString(), "nc", "-l", "--cc", ccName(), "--ecn", ecnMode(), "--link",
            "afpacket:" + NetnsHarness.TERN_INTERFACE, "--ip", NetnsHarness.TERN_ADDRESS + "/24", Integer.toString(PORT))
            + " < /dev/null";
        return transfer("socat -> tern nc -l", net::startInTern, nc, null, net::startInPeer,
            socatSender(NetnsHarness.TERN_ADDRESS), null);
    }

    /** {@code --cc}'s name: {@code --tern-cc}'s, else Tern's default written out, cubic. */
    /** {@code --ecn}: on through CE marks, else Tern's default written out, server. */
    private String ecnMode() {
        return marking ? "on" : "server";
    }

    private String ccName() {
        return congestionControl == null ? "cubic" : congestionControl;
    }

    private static String socatListener() {
        return shell("socat", "-b", "1048576", "-u", "TCP4-LISTEN:" + PORT + ",reuseaddr", "STDOUT");
    }

    /**
     * socat sending FILE. It retries a refused connect (a Tern listener is there only once its JVM has started and
     * its stack answers with a reset before), and gives one attempt 20 s, longer than the kernel's SYN retransmissions
     * take to reach a listener that came up late (1, 3, 7, 15 s): with a short timeout socat may give up on an attempt
     * the moment Tern accepts it, and {@code nc -l} takes one connection only.
     */
    private String socatSender(String host) {
        return shell("socat", "-b", "1048576", "-u", "OPEN:" + file, "TCP4:" + host + ":" + PORT
            + ",retry=300,interval=0.1,connect-timeout=20");
    }

    /**
     * One transfer: starts {@code receiver | meter} (waiting for the meter, and for the listening socket when
     * {@code listening} names the kernel namespace it is in), then the sender; returns the meter's Gbit/s.
     * {@code checkFromPeer}: check the kernel sender's congestion control (the socat runs; null for Tern's).
     */
    private double transfer(String what, Function<String[], BackgroundCommand> receiverSide, String receiver,
                            NetworkNamespace listening, Function<String[], BackgroundCommand> senderSide, String sender,
                            Boolean checkFromPeer) {
        final String meter = shell(VethBenchmark.endpoint("stdin-meter", Long.toString(bytes), Double.toString(window),
            Double.toString(window + 90)));
        final BackgroundCommand rx = receiverSide.apply(new String[] {"sh", "-c", receiver + " | " + meter});
        BackgroundCommand tx = null;
        try {
            rx.awaitOutput("ready", Duration.ofSeconds(30));
            if (listening != null) {
                awaitListening(listening);
            }
            tx = senderSide.apply(new String[] {"sh", "-c", sender});
            if (checkFromPeer != null) {
                pairs.checkCongestionControlOnce(checkFromPeer, tx);
            }
            rx.awaitExit(Duration.ofSeconds((long) window + 120));
            final long received = Long.parseLong(VethBenchmark.text(BYTES, rx.stdout(), what + " meter"));
            if (received < bytes) {
                System.err.printf(Locale.ROOT, "  %s: %.1f of %d MiB within the %.0f s window%s%n", what, received / 1048576.0,
                    bytes >> 20, window, rx.stdout().contains("ended=eof") ? " (the stream ended early: " + rx.stderr().strip()
                    + " / " + (tx.isAlive() ? "" : tx.stderr().strip()) + ")" : "");
            }
            return VethBenchmark.value(VethBenchmark.GBPS, rx.stdout(), what + " meter");
        } finally {
            if (tx != null) {
                try {
                    tx.awaitExit(Duration.ofSeconds(20));
                } catch (RuntimeException e) {
                    System.err.printf("  %s: the sender was still running; stopped%n", what);
                }
                tx.close();
            }
            rx.close();
        }
    }

    private static void awaitListening(NetworkNamespace namespace) {
        final long deadline = System.nanoTime() + 20_000_000_000L;
        while (System.nanoTime() - deadline < 0) {
            if (!namespace.exec(Duration.ofSeconds(10), "ss", "-Hltn", "sport = :" + PORT).stdout().isBlank()) {
                return;
            }
            VethBenchmark.sleep(20);
        }
        throw new IllegalStateException("nothing listens on port " + PORT + " in " + namespace.name());
    }

    private static String shell(String... words) {
        return Arrays.stream(words).map(NcBenchmark::quote).collect(Collectors.joining(" "));
    }

    private static String quote(String word) {
        return word.matches("[A-Za-z0-9_./:=,+-]+") ? word : "'" + word.replace("'", "'\\''") + "'";
    }
}
