package dev.tern.conformance.bench;

import dev.tern.afpacket.netns.BackgroundCommand;
import dev.tern.afpacket.netns.NetnsHarness;
import dev.tern.afpacket.netns.NetworkNamespace;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.DatagramChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The small-packet rate one stack answers (issue 16 item 4): 64-byte UDP datagrams echoed by {@code tern serve
 * --udp-echo 7 --shards 1} against a kernel echo server (a Java {@link DatagramChannel} loop on the kernel's end,
 * receive then send back), both driven by the same client in the peer's namespace: a Java {@link DatagramChannel}
 * keeping {@value #WINDOW} datagrams in flight for {@code seconds} (a reply lets the next one go; after 20 ms without
 * any reply the window is counted lost and opened again), after {@link #WARM_UP_SECONDS} of the same load not counted.
 * Offloads on. Keys: {@code udp_echo_rate_{tern,kernel}}
 * (echoes per second), {@code udp_echo_ratio} (median of per-round ratios), {@code udp_echo_lost_{tern,kernel}}.
 */
final class UdpRateBenchmark {
    static final int WINDOW = 64;
    /**
     * Each server is driven this long before the measurement, not counted: a freshly started {@code tern serve} runs
     * interpreted and C1 code for its first seconds (the HTTP benchmark saw 15-25 s to full speed on two cores).
     */
    private static final double WARM_UP_SECONDS = Double.parseDouble(System.getProperty("tern.bench.udp.warmup", "10"));
    private static final int PORT = 7;
    private static final int SIZE = 64;

    private final double seconds;
    private final int rounds;
    private final Path tern;

    UdpRateBenchmark(double seconds, int rounds, Path root) {
        this.seconds = seconds;
        this.rounds = rounds;
        this.tern = root.resolve("tern");
        if (!Files.isExecutable(tern)) {
            throw new IllegalStateException("no tern launcher at " + tern + " (run through conformance/bench-veth.sh)");
        }
    }

    /** Echoes per second and datagrams lost. */
    record Figures(double rate, long lost) {
    }

    void run(Map<String, Double> results) throws Exception {
        final Map<String, List<Double>> samples = new LinkedHashMap<>();
        try (NetnsHarness kernels = NetnsHarness.create(); NetnsHarness net = NetnsHarness.create()) {
            kernels.ternExec(java.time.Duration.ofSeconds(10), "ip", "address", "add", NetnsHarness.TERN_ADDRESS + "/24",
                "dev", NetnsHarness.TERN_INTERFACE).orThrow();
            for (int round = 0; round < rounds; round++) {
                System.err.printf(Locale.ROOT, "UDP echo rate, round %d of %d ...%n", round + 1, rounds);
                final Figures kernel = kernelEcho(kernels);
                final Figures ternEcho = ternEcho(net);
                System.err.printf(Locale.ROOT, "  kernel %.0f echoes/s (%d lost), Tern %.0f echoes/s (%d lost)%n",
                    kernel.rate, kernel.lost, ternEcho.rate, ternEcho.lost);
                add(samples, "udp_echo_rate_kernel", kernel.rate);
                add(samples, "udp_echo_rate_tern", ternEcho.rate);
                add(samples, "udp_echo_ratio", ternEcho.rate / kernel.rate);
                add(samples, "udp_echo_lost_kernel", kernel.lost);
                add(samples, "udp_echo_lost_tern", ternEcho.lost);
            }
        }
        samples.forEach((key, values) -> {
            results.put(key, VethBenchmark.median(values));
            System.err.printf("  %-40s %s%n", key, values.stream().map(v -> String.format(Locale.ROOT, "%.2f", v)).toList());
        });
    }

    private Figures ternEcho(NetnsHarness net) throws IOException {
        try (BackgroundCommand serve = net.startInTern(tern.toString(), "serve", "--udp-echo", Integer.toString(PORT),
                 "--shards", "1", "--link", "afpacket:" + NetnsHarness.TERN_INTERFACE, "--ip",
                 NetnsHarness.TERN_ADDRESS + "/24")) {
            return drive(net.peerNamespace(), serve);
        }
    }

    private Figures kernelEcho(NetnsHarness kernels) throws Exception {
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
            return drive(kernels.peerNamespace(), null);
        } finally {
            server.close();
            echo.join(5_000);
        }
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
                client.write(out.clear());
                VethBenchmark.sleep(50);
                while (client.read(in.clear()) > 0) {
                    answered = true;
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
