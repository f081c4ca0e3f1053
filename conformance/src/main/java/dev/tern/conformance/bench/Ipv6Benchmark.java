package dev.tern.conformance.bench;

import dev.tern.afpacket.AfPacketLink;
import dev.tern.afpacket.AfPacketOptions;
import dev.tern.core.net.Ipv6Address;
import dev.tern.core.net.Ipv6InterfaceAddress;
import dev.tern.ipv6.Ipv6Config;
import dev.tern.stack.LinkIdleStrategy;
import dev.tern.stack.NetStack;
import dev.tern.stack.StackRunner;
import dev.tern.stack.TcpConnection;
import dev.tern.stack.TcpListener;
import dev.tern.stack.TernSocketException;
import dev.tern.tcp.TcpOptions;
import dev.tern.testkit.netns.BackgroundCommand;
import dev.tern.testkit.netns.EthtoolOffloads;
import dev.tern.testkit.netns.NetnsHarness;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * TCP over IPv6 against TCP over IPv4, both Tern against the Linux kernel over the same veth pair, in the same run
 * (the goal: IPv6 at least 0.95 of IPv4): bulk each way and a 64-byte round trip, in {@code rounds} rounds,
 * each round measuring both families one after the other so that the machine's drift reaches both alike. Ratios are
 * medians of the ratios within a round. Tern's link is AF_PACKET as the {@code tern} command opens it, with the
 * vnet header (IPv4's segments then leave as TSO frames; IPv6 has no TSO in Tern) and, as a second mode, without it
 * (both families cut and checksum every segment in Java). Offloads off on both ends, MTU 1500.
 *
 * <p>A control in every round: the kernel sending to the kernel over the same pair and families (the Tern end's
 * namespace given the same addresses while Tern is not on it), so that what IPv6 costs the receiving kernel, which
 * is in Tern's ratio too, is seen apart from what it costs Tern.
 *
 * <p>Keys: {@code ipv6_{bulk_gbps,rr_p50_us}_{ipv4,ipv6}_{tern_to_kernel,kernel_to_tern,rr}_MODE} and
 * {@code ipv6_ratio_{tern_to_kernel,kernel_to_tern,rr_p50}_MODE} (IPv6 over IPv4; for the round trip IPv4's time
 * over IPv6's, so above 1 is better for both); {@code ipv6_bulk_gbps_{ipv4,ipv6}_kernel_to_kernel} and
 * {@code ipv6_ratio_kernel_to_kernel} for the control.
 */
final class Ipv6Benchmark {
    private static final String TERN_IPV6 = "2001:db8::2";
    private static final String PEER_IPV6 = "2001:db8::1";
    private static final int SINK_PORT = 5101;
    private static final int SOURCE_PORT = 5102;
    private static final int ECHO_PORT = 5103;
    private static final int RR_WARM_UP = 2_000;
    private static final int RR_COUNT = 20_000;

    private final double seconds;
    private final int rounds;

    Ipv6Benchmark(double seconds, int rounds) {
        this.seconds = seconds;
        this.rounds = rounds;
    }

    void run(Map<String, Double> results) throws Exception {
        final NetnsHarness.Options options = new NetnsHarness.Options(1500, EthtoolOffloads.ALL_OFF,
            EthtoolOffloads.ALL_OFF);
        try (NetnsHarness net = NetnsHarness.create(options)) {
            net.peerExec(Duration.ofSeconds(10), "sysctl", "-qw",
                "net.ipv6.conf." + NetnsHarness.PEER_INTERFACE + ".disable_ipv6=0").orThrow();
            net.peerExec(Duration.ofSeconds(10), "ip", "-6", "address", "add", PEER_IPV6 + "/64", "dev",
                NetnsHarness.PEER_INTERFACE, "nodad").orThrow();
            final Map<String, List<Double>> samples = new LinkedHashMap<>();
            final boolean[] ternWarmedUp = {false};
            for (int round = 0; round < rounds; round++) {
                System.err.printf("the kernel to the kernel, round %d of %d ...%n", round + 1, rounds);
                final double[] control = kernelToKernel(net, round == 0);
                add(samples, "ipv6_bulk_gbps_ipv4_kernel_to_kernel", control[0]);
                add(samples, "ipv6_bulk_gbps_ipv6_kernel_to_kernel", control[1]);
                add(samples, "ipv6_ratio_kernel_to_kernel", control[1] / control[0]);
                for (boolean vnetHeader : new boolean[] {true, false}) {
                    final String mode = vnetHeader ? "vnet" : "no_vnet";
                    System.err.printf("IPv6 against IPv4, %s, round %d of %d ...%n", mode, round + 1, rounds);
                    withStack(net, vnetHeader, stack -> {
                        final boolean warmUp = !ternWarmedUp[0]; // Tern's first measurement warms the JIT up
                        ternWarmedUp[0] = true;
                        final double[] four = measure(net, stack, false, warmUp);
                        final double[] six = measure(net, stack, true, warmUp);
                        add(samples, "ipv6_bulk_gbps_ipv4_tern_to_kernel_" + mode, four[0]);
                        add(samples, "ipv6_bulk_gbps_ipv6_tern_to_kernel_" + mode, six[0]);
                        add(samples, "ipv6_bulk_gbps_ipv4_kernel_to_tern_" + mode, four[1]);
                        add(samples, "ipv6_bulk_gbps_ipv6_kernel_to_tern_" + mode, six[1]);
                        add(samples, "ipv6_rr_p50_us_ipv4_" + mode, four[2]);
                        add(samples, "ipv6_rr_p50_us_ipv6_" + mode, six[2]);
                        add(samples, "ipv6_ratio_tern_to_kernel_" + mode, six[0] / four[0]);
                        add(samples, "ipv6_ratio_kernel_to_tern_" + mode, six[1] / four[1]);
                        add(samples, "ipv6_ratio_rr_p50_" + mode, four[2] / six[2]);
                    });
                }
            }
            samples.forEach((key, values) -> {
                results.put(key, VethBenchmark.median(values));
                System.err.printf("  %-50s %s%n", key,
                    values.stream().map(v -> String.format(Locale.ROOT, "%.3f", v)).toList());
            });
        }
    }

    /**
     * The control: bulk from the kernel in the Tern end's namespace (given Tern's addresses for the run, IPv6 without
     * DAD) to the same sink, IPv4 then IPv6 (Gbit/s each); the addresses are removed after, also on failure.
     */
    private double[] kernelToKernel(NetnsHarness net, boolean warmUp) throws Exception {
        final Duration timeout = Duration.ofSeconds(10);
        final String device = NetnsHarness.TERN_INTERFACE;
        net.ternExec(timeout, "sysctl", "-qw", "net.ipv6.conf." + device + ".disable_ipv6=0").orThrow();
        net.ternExec(timeout, "ip", "address", "add", NetnsHarness.TERN_ADDRESS + "/24", "dev", device).orThrow();
        try {
            net.ternExec(timeout, "ip", "-6", "address", "add", TERN_IPV6 + "/64", "dev", device, "nodad").orThrow();
            if (warmUp) {
                kernelSends(net, false, Math.max(2, seconds));
            }
            return new double[] {kernelSends(net, false, seconds), kernelSends(net, true, seconds)};
        } finally {
            net.ternExec(timeout, "ip", "address", "flush", "dev", device);
            net.ternExec(timeout, "sysctl", "-qw", "net.ipv6.conf." + device + ".disable_ipv6=1");
        }
    }

    /** The kernel in the Tern end's namespace sending to the peer's sink for {@code duration}: Gbit/s. */
    private static double kernelSends(NetnsHarness net, boolean ipv6, double duration) {
        final BackgroundCommand sink = inPeer(net, duration, "tcp-sink", Integer.toString(SINK_PORT));
        final BackgroundCommand source = net.startInTern(VethBenchmark.endpoint("tcp-source",
            ipv6 ? PEER_IPV6 : NetnsHarness.PEER_ADDRESS, Integer.toString(SINK_PORT), Double.toString(duration)));
        if (source.awaitExit(Duration.ofSeconds((long) duration + 30)) != 0 || sink.awaitExit(Duration.ofSeconds(30)) != 0) {
            throw new IllegalStateException("the kernel's source or sink failed: " + source.stderr() + sink.stderr());
        }
        return VethBenchmark.value(VethBenchmark.GBPS, sink.stdout(), "kernel sink");
    }

    private static void add(Map<String, List<Double>> samples, String key, double value) {
        samples.computeIfAbsent(key, k -> new ArrayList<>()).add(value);
    }

    interface StackWork {
        void run(NetStack stack) throws Exception;
    }

    /** A fresh stack with both families on a runner, its IPv6 addresses past DAD, for {@code work}; closed after. */
    private static void withStack(NetnsHarness net, boolean vnetHeader, StackWork work) throws Exception {
        final NetStack stack = NetStack.builder().name("ipv6-bench")
            .link(net.openTernLink(AfPacketLink::open, AfPacketOptions.throughput().vnetHeader(vnetHeader)))
            .address(NetnsHarness.TERN_ADDRESS + "/24")
            .ipv6(Ipv6Config.withAddresses(List.of(Ipv6InterfaceAddress.parse(TERN_IPV6 + "/64"))))
            .countersInMemory().build();
        final StackRunner runner = StackRunner.start(stack, new LinkIdleStrategy(stack));
        try {
            final long deadline = System.nanoTime() + 5_000_000_000L;
            while (!stack.call(() -> stack.ipv6().addresses().settled()) && System.nanoTime() - deadline < 0) {
                VethBenchmark.sleep(10);
            }
            work.run(stack);
            final long errors = stack.counters().value("stack.internal_errors");
            if (errors != 0) {
                throw new IllegalStateException("stack.internal_errors = " + errors);
            }
        } finally {
            runner.close();
            stack.close();
        }
    }

    /** Tern to the kernel (Gbit/s), the kernel to Tern (Gbit/s), the round trip's median (µs), over one family. */
    private double[] measure(NetnsHarness net, NetStack stack, boolean ipv6, boolean warmUp) throws Exception {
        if (warmUp) {
            ternToKernel(net, stack, ipv6, Math.max(2, seconds));
            kernelToTern(net, stack, ipv6, Math.max(2, seconds));
        }
        return new double[] {ternToKernel(net, stack, ipv6, seconds), kernelToTern(net, stack, ipv6, seconds),
            roundTrip(net, stack, ipv6)};
    }

    private static TcpConnection connect(NetStack stack, boolean ipv6, int port, TcpOptions options)
        throws TernSocketException {
        final TcpConnection connection = ipv6 ? stack.connect(Ipv6Address.parse(PEER_IPV6), port, 0, options)
            : stack.connect(NetnsHarness.PEER_IPV4, port, 0, options);
        connection.awaitConnected(5_000_000_000L);
        return connection;
    }

    private static BackgroundCommand inPeer(NetnsHarness net, double duration, String... arguments) {
        final List<String> all = new ArrayList<>(Arrays.asList(arguments));
        all.add(Double.toString(duration + 30));
        return net.startInPeer(VethBenchmark.endpoint(all.toArray(String[]::new)))
            .awaitOutput("ready", Duration.ofSeconds(20));
    }

    private static double ternToKernel(NetnsHarness net, NetStack stack, boolean ipv6, double duration)
        throws TernSocketException {
        final BackgroundCommand sink = inPeer(net, duration, "tcp-sink", Integer.toString(SINK_PORT));
        try (Arena arena = Arena.ofConfined()) {
            final MemorySegment data = VethBenchmark.randomData(arena, 8 << 20);
            final TcpConnection connection = connect(stack, ipv6, SINK_PORT, VethBenchmark.BULK_BUFFERS);
            final long end = System.nanoTime() + (long) (duration * 1e9);
            long offset = 0;
            while (System.nanoTime() - end < 0) {
                offset = (offset + connection.write(data, offset, 1 << 20, 100_000_000L)) % (7 << 20);
            }
            connection.close();
        }
        VethBenchmark.awaitExit(sink, stack, "the kernel's sink");
        return VethBenchmark.value(VethBenchmark.GBPS, sink.stdout(), "kernel sink");
    }

    private static double kernelToTern(NetnsHarness net, NetStack stack, boolean ipv6, double duration)
        throws Exception {
        try (TcpListener listener = stack.listen(SOURCE_PORT, 4, VethBenchmark.BULK_BUFFERS);
             Arena arena = Arena.ofShared()) {
            final BackgroundCommand source = net.startInPeer(VethBenchmark.endpoint("tcp-source",
                ipv6 ? TERN_IPV6 : NetnsHarness.TERN_ADDRESS, Integer.toString(SOURCE_PORT), Double.toString(duration)));
            final TcpConnection connection = listener.accept(10_000_000_000L);
            if (connection == null) {
                throw new IllegalStateException("the kernel's source did not connect: " + source.stdout() + source.stderr());
            }
            final double gbps = VethBenchmark.readFor(connection, arena,
                System.nanoTime() + (long) ((duration + 20) * 1e9), Long.MAX_VALUE, Long.MAX_VALUE);
            connection.close();
            VethBenchmark.awaitExit(source, stack, "the kernel's source");
            return gbps;
        }
    }

    /** 64-byte messages to the kernel's TCP echo and back, one at a time: the median round trip in µs. */
    private static double roundTrip(NetnsHarness net, NetStack stack, boolean ipv6) throws Exception {
        final BackgroundCommand echo = inPeer(net, 60, "tcp-echo", Integer.toString(ECHO_PORT));
        final long[] times = new long[RR_COUNT];
        try (Arena arena = Arena.ofConfined()) {
            final MemorySegment message = arena.allocate(64);
            final MemorySegment reply = arena.allocate(64);
            final TcpConnection connection = connect(stack, ipv6, ECHO_PORT, TcpOptions.DEFAULT.withNoDelay(true));
            for (int i = 0; i < RR_WARM_UP + RR_COUNT; i++) {
                final long start = System.nanoTime();
                connection.write(message, 0, 64, 1_000_000_000L);
                int got = 0;
                while (got < 64) {
                    final int n = connection.read(reply, got, 64 - got, 1_000_000_000L);
                    if (n < 0) {
                        throw new IllegalStateException("the kernel's echo ended after " + i + " round trips");
                    }
                    got += n;
                }
                if (i >= RR_WARM_UP) {
                    times[i - RR_WARM_UP] = System.nanoTime() - start;
                }
            }
            connection.close();
        }
        VethBenchmark.awaitExit(echo, stack, "the kernel's echo");
        Arrays.sort(times);
        return times[RR_COUNT / 2] / 1e3;
    }
}
