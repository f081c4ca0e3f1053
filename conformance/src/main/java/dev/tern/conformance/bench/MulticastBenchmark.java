package dev.tern.conformance.bench;

import dev.tern.testkit.netns.BackgroundCommand;
import dev.tern.testkit.netns.CommandResult;
import dev.tern.testkit.netns.Commands;
import dev.tern.testkit.netns.EthtoolOffloads;
import dev.tern.testkit.netns.NetnsHarness;
import dev.tern.testkit.netns.NetworkNamespace;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * Multicast receive as a market-data user meets it (goal: lose no more than the kernel's member): one kernel sender, a Tern member and a kernel
 * member on one bridge, in the same run, each member counting what it received of one burst; then the same for
 * unicast, the sender sending each datagram to both members' own addresses ({@code tern nc -u -l} and socat).
 *
 * <pre>
 *   [p] peer0 198.18.0.1: python3 sender --+
 *                                          [w] br0 (snooping off) --+-- wt -- tern0 [t]: tern nc -u -l --join G 5000
 *                                                                   +-- wk -- km0 198.18.0.3 [k]: socat UDP4-RECV ... -
 * </pre>
 * The Tern member is the real command ({@code ./tern nc -u -l --join}, which writes every datagram to stdout); the
 * kernel member is socat with the kernel's default receive buffer, as a user would start it. Both write to a file;
 * a member's count is the growth of its file divided by the datagram size. Before each burst the sender sends single
 * datagrams until both members have written one (so both have joined and started), then the burst: {@code RATE}
 * datagrams per second paced by the sender's clock, or as fast as one sender thread can ({@code RATE} 0), for a
 * bounded time. Offloads are on, as a user's interfaces have them. Keys: {@code mcast_{sent,tern,kernel}_SIZE_RATE},
 * {@code mcast_ratio_SIZE_RATE} (Tern's count over the kernel member's, median of rounds),
 * {@code mcast_tern_lost_pct_SIZE_RATE} (share of the sent datagrams Tern missed).
 */
final class MulticastBenchmark {
    static final String GROUP = "239.7.7.7";
    private static final int PORT = 5000;
    private static final String MEMBER_ADDRESS = "198.18.0.3";
    private static final Pattern SENT = Pattern.compile("sent (\\d+)");

    /**
     * One burst: datagram size, datagrams per second (0: as fast as the sender goes) and seconds; to the group, or
     * (unicast) to each member's own address in turn, each getting the rate.
     */
    record Burst(int size, int rate, double seconds, boolean unicast) {
        Burst(int size, int rate, double seconds) {
            this(size, rate, seconds, false);
        }

        /** The keys' infix: {@code mcast_..._64_50k} or {@code ucast_..._64_50k}. */
        String prefix() {
            return unicast ? "ucast_" : "mcast_";
        }

        String key() {
            return size + "_" + (rate == 0 ? "full" : rate / 1000 + "k");
        }

        String label() {
            return (unicast ? "unicast, " : "") + size + " B, "
                + (rate == 0 ? "sender's full rate" : String.format(Locale.ROOT, "%,d/s", rate));
        }
    }

    /**
     * A ladder of paced rates, to find those at which the kernel member loses nothing (the goal: Tern loses nothing
     * there either), then the sender's full rate (the goal: Tern receives at least what the kernel member does).
     */
    static final List<Burst> BURSTS = List.of(new Burst(64, 5_000, 5), new Burst(64, 10_000, 5), new Burst(64, 20_000, 5),
        new Burst(64, 50_000, 5), new Burst(64, 0, 3), new Burst(1400, 0, 3),
        new Burst(64, 5_000, 5, true), new Burst(64, 10_000, 5, true), new Burst(64, 20_000, 5, true),
        new Burst(64, 50_000, 5, true));

    /**
     * The paced sender: sends size-byte datagrams to the group (or, unicast, to each member's address in turn) at rate
     * per second for seconds, then says how many (per target).
     */
    private static final String SENDER = """
        import socket, sys, time
        size, rate, secs, warm = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), sys.argv[4] == "warm"
        targets = [("%s", %d)] if sys.argv[5] == "group" else [("%s", %d), ("%s", %d)]
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_TTL, 1)
        s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, socket.inet_aton("198.18.0.1"))
        payload = b"x" * size
        if warm:
            for target in targets:
                s.sendto(payload, target)
            print("sent 1"); sys.exit(0)
        n = 0; start = time.perf_counter(); end = start + secs
        while True:
            now = time.perf_counter()
            if now >= end:
                break
            due = int((now - start) * rate) if rate > 0 else n + 256
            while n < due:
                for target in targets:
                    try:
                        s.sendto(payload, target)
                    except OSError:
                        pass
                n += 1
        print("sent", n)
        """.formatted(GROUP, PORT, NetnsHarness.TERN_ADDRESS, PORT, MEMBER_ADDRESS, PORT);

    private final int rounds;
    private final Path tern;

    MulticastBenchmark(int rounds, Path root) {
        this.rounds = rounds;
        this.tern = root.resolve("tern");
        if (!Files.isExecutable(tern)) {
            throw new IllegalStateException("no tern launcher at " + tern + " (run through conformance/bench-veth.sh)");
        }
    }

    void run(Map<String, Double> results) {
        // Debian's python3 (scapy's is under /usr/bin; the one on PATH may differ, any will do for the sender).
        final String python = Files.isExecutable(Path.of("/usr/bin/python3")) ? "/usr/bin/python3"
            : Commands.require("python3", "python3");
        final String socat = Commands.require("socat", "socat");
        final NetnsHarness.Options options = new NetnsHarness.Options(1500, EthtoolOffloads.ALL_ON, EthtoolOffloads.ALL_ON)
            .wire(true);
        final Map<String, List<Double>> samples = new LinkedHashMap<>();
        try (NetnsHarness net = NetnsHarness.create(options);
             NetworkNamespace member = NetworkNamespace.create(net.wireNamespace().name() + "k")) {
            addKernelMember(net, member);
            for (int round = 0; round < rounds; round++) {
                for (Burst burst : BURSTS) {
                    System.err.printf(Locale.ROOT, "multicast: %s, round %d of %d ...%n", burst.label(), round + 1, rounds);
                    measure(net, member, python, socat, burst, samples);
                }
            }
        }
        samples.forEach((key, values) -> {
            results.put(key, VethBenchmark.median(values));
            System.err.printf("  %-40s %s%n", key, values.stream().map(v -> String.format(Locale.ROOT, "%.2f", v)).toList());
        });
    }

    /** A third port on the wire's bridge, to a namespace where the kernel member lives; snooping off on the bridge. */
    private static void addKernelMember(NetnsHarness net, NetworkNamespace member) {
        final NetworkNamespace wire = net.wireNamespace();
        wire.ip("link", "add", "wk", "type", "veth", "peer", "name", "km0", "netns", member.name()).orThrow();
        wire.ip("link", "set", "wk", "master", "br0").orThrow();
        wire.ip("link", "set", "wk", "up").orThrow();
        wire.ip("link", "set", "br0", "type", "bridge", "mcast_snooping", "0").orThrow();
        member.sysctl("net.ipv6.conf.all.disable_ipv6", "1");
        member.ip("address", "add", MEMBER_ADDRESS + "/24", "dev", "km0").orThrow();
        member.ip("link", "set", "km0", "up").orThrow();
    }

    private void measure(NetnsHarness net, NetworkNamespace member, String python, String socat, Burst burst,
                         Map<String, List<Double>> samples) {
        final List<String> ternCommand = new ArrayList<>(List.of(tern.toString(), "nc", "-u", "-l"));
        if (!burst.unicast()) {
            ternCommand.addAll(List.of("--join", GROUP));
        }
        ternCommand.addAll(List.of(Integer.toString(PORT), "--link", "afpacket:" + NetnsHarness.TERN_INTERFACE, "--ip",
            NetnsHarness.TERN_ADDRESS + "/24"));
        final BackgroundCommand ternMember = net.startInTern(ternCommand.toArray(String[]::new));
        try (BackgroundCommand kernelMember = member.start(socat, "-u",
                 "UDP4-RECV:" + PORT + (burst.unicast() ? "" : ",ip-add-membership=" + GROUP + ":km0"), "-")) {
            try {
                final long deadline = System.nanoTime() + 60_000_000_000L;
                while (ternMember.stdoutBytes() == 0 || kernelMember.stdoutBytes() == 0) {
                    if (System.nanoTime() - deadline > 0 || !ternMember.isAlive() || !kernelMember.isAlive()) {
                        throw new IllegalStateException("the members did not start receiving within 60 s; tern: "
                            + ternMember.stderr().strip() + "; socat: " + kernelMember.stderr().strip());
                    }
                    send(net, python, burst, 0, 0, true);
                    VethBenchmark.sleep(100);
                }
                VethBenchmark.sleep(500); // the last warm-up datagrams land before the counts start
                final long ternBefore = ternMember.stdoutBytes();
                final long kernelBefore = kernelMember.stdoutBytes();
                final long sent = send(net, python, burst, burst.rate(), burst.seconds(), false);
                VethBenchmark.sleep(1000);
                final double ternGot = (ternMember.stdoutBytes() - ternBefore) / (double) burst.size();
                final double kernelGot = (kernelMember.stdoutBytes() - kernelBefore) / (double) burst.size();
                System.err.printf(Locale.ROOT, "  sent %d: Tern received %.0f, the kernel member %.0f%n", sent, ternGot,
                    kernelGot);
                final String key = burst.key();
                final String prefix = burst.prefix();
                add(samples, prefix + "sent_" + key, sent);
                add(samples, prefix + "tern_" + key, ternGot);
                add(samples, prefix + "kernel_" + key, kernelGot);
                add(samples, prefix + "ratio_" + key, kernelGot == 0 ? Double.NaN : ternGot / kernelGot);
                add(samples, prefix + "tern_lost_pct_" + key, 100.0 * (sent - ternGot) / sent);
                add(samples, prefix + "kernel_lost_pct_" + key, 100.0 * (sent - kernelGot) / sent);
            } finally {
                kernelMember.stop();
            }
        } finally {
            ternMember.stop();
            ternMember.close();
        }
    }

    private static long send(NetnsHarness net, String python, Burst burst, int rate, double seconds, boolean warm) {
        final CommandResult result = net.peerExec(Duration.ofSeconds((long) seconds + 30), python, "-c", SENDER,
            Integer.toString(burst.size()), Integer.toString(rate), Double.toString(seconds), warm ? "warm" : "burst",
            burst.unicast() ? "members" : "group");
        if (!result.succeeded()) {
            throw new IllegalStateException("the multicast sender failed: " + result.stderr().strip());
        }
        return Long.parseLong(VethBenchmark.text(SENT, result.stdout(), "the multicast sender"));
    }

    private static void add(Map<String, List<Double>> samples, String key, double value) {
        samples.computeIfAbsent(key, x -> new ArrayList<>()).add(value);
    }
}
