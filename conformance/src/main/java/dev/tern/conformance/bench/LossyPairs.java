package dev.tern.conformance.bench;

import dev.tern.testkit.netns.BackgroundCommand;
import dev.tern.testkit.netns.CeMarking;
import dev.tern.testkit.netns.EthtoolOffloads;
import dev.tern.testkit.netns.NetnsHarness;
import dev.tern.testkit.netns.NetworkNamespace;
import dev.tern.testkit.netns.PacketLoss;

import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The two pairs of the lossy measurements (TCP bulk and {@code tern nc} through random loss), each with a wire namespace between its ends
 * ({@link NetnsHarness.Options#wire}: a bridge, no address) where the kernel drops the same share of packets at
 * random both ways ({@link PacketLoss} on the bridge's ports):
 *
 * <pre>
 *   net:     [p] peer0 198.18.0.1 (kernel) -- [w] wp br0 wt + loss rules -- tern0, no kernel address [t]  Tern
 *   kernels: [p] peer0 198.18.0.1 (kernel) -- [w] wp br0 wt + loss rules -- tern0 198.18.0.2 (kernel) [t]
 * </pre>
 * Offloads off on all ends (as the loss goals were set): every frame that crosses the wire is MTU-sized, so the rules drop
 * packets as a lossy link would, and no sender learns of a drop but from its peer. (Rules on the peer's own device,
 * as first planned, would not do for the peer's data: its kernel hears of a drop at its egress hook at once and sends
 * the segment again, in order, so the receiver never sees a hole; see {@link PacketLoss}.) The kernel's TCP congestion
 * control in every namespace with a kernel address is set by the route's {@code congctl}
 * ({@link NetnsHarness#kernelCongestionControl}; CUBIC by default, as Linux's own default), so the kernel's senders
 * run CUBIC whatever the host's default is, and the host's sysctls stay as they were. Closing removes the rules, the
 * namespaces and everything in them, also after a failure half-way through the setup.
 *
 * <p>Each of Tern's directions is compared with the kernel pair sending the same way: Tern -> kernel with the kernel
 * sending from the "Tern" end ({@code kernel}), kernel -> Tern with the kernel sending from the peer's end
 * ({@code kernel_reverse}).
 */
final class LossyPairs implements AutoCloseable {
    private static final Pattern ALGORITHM = Pattern.compile("(\\w+)\\s+wscale:");

    final NetnsHarness net;
    final NetnsHarness kernels;
    final String congestionControl;
    private final PacketLoss ternLoss;
    private final PacketLoss kernelLoss;
    /** CE marks on both pairs' wires once {@link #ecn()} turned ECN on; null before. */
    private CeMarking ternMarks;
    private CeMarking kernelMarks;

    private LossyPairs(NetnsHarness net, NetnsHarness kernels, String congestionControl, PacketLoss ternLoss,
                       PacketLoss kernelLoss) {
        this.net = net;
        this.kernels = kernels;
        this.congestionControl = congestionControl;
        this.ternLoss = ternLoss;
        this.kernelLoss = kernelLoss;
    }

    static LossyPairs create(String congestionControl) {
        final NetnsHarness.Options options = new NetnsHarness.Options(1500, EthtoolOffloads.ALL_OFF, EthtoolOffloads.ALL_OFF)
            .wire(true);
        NetnsHarness net = null;
        NetnsHarness kernels = null;
        try {
            net = NetnsHarness.create(options);
            kernels = NetnsHarness.create(options);
            kernels.ternExec(Duration.ofSeconds(10), "ip", "address", "add", NetnsHarness.TERN_ADDRESS + "/24", "dev",
                NetnsHarness.TERN_INTERFACE).orThrow();
            net.kernelCongestionControl(congestionControl);
            kernels.kernelCongestionControl(congestionControl);
            for (NetnsHarness harness : List.of(net, kernels)) {
                requireOffloadsOff(harness.peerNamespace(), NetnsHarness.PEER_INTERFACE);
                requireOffloadsOff(harness.ternNamespace(), NetnsHarness.TERN_INTERFACE);
            }
            final PacketLoss ternLoss = PacketLoss.install(net, 0);
            final PacketLoss kernelLoss = PacketLoss.install(kernels, 0);
            return new LossyPairs(net, kernels, congestionControl, ternLoss, kernelLoss);
        } catch (RuntimeException | Error e) {
            for (NetnsHarness harness : new NetnsHarness[] {net, kernels}) {
                if (harness != null) {
                    try {
                        harness.close();
                    } catch (RuntimeException cleanup) {
                        e.addSuppressed(cleanup);
                    }
                }
            }
            throw e;
        }
    }

    /**
     * Checks with {@code ethtool -k} that the harness really turned segmentation and receive offloads off on
     * {@code device}: the baseline must be what the measurement says it is.
     */
    private static void requireOffloadsOff(NetworkNamespace namespace, String device) {
        final String features = namespace.exec(Duration.ofSeconds(10), "ethtool", "-k", device).orThrow().stdout();
        for (String feature : List.of("tcp-segmentation-offload", "generic-segmentation-offload",
            "generic-receive-offload")) {
            if (!features.contains(feature + ": off")) {
                throw new IllegalStateException(feature + " is not off on " + device + " in " + namespace.name() + ": "
                    + features);
            }
        }
    }

    /** Sets both pairs to {@code percent} loss each way (the rules' counters start again). */
    void loss(double percent) {
        ternLoss.percent(percent);
        kernelLoss.percent(percent);
    }

    /**
     * Turns ECN on for every kernel end ({@code tcp_ecn=1}: ask and accept) and puts CE marking rules on both wires,
     * marking nothing until {@link #marks}. (This machine's {@code ss} prints no TCP options, so negotiation shows only
     * in the marks: the rules mark ECT packets only, and a sender without ECN sends none.)
     */
    void ecn() {
        for (NetworkNamespace namespace : List.of(net.peerNamespace(), kernels.ternNamespace(), kernels.peerNamespace())) {
            namespace.sysctl("net.ipv4.tcp_ecn", "1");
        }
        ternMarks = CeMarking.install(net, 0);
        kernelMarks = CeMarking.install(kernels, 0);
    }

    /** Sets both pairs to mark {@code percent} of the ECN-capable packets CE each way; needs {@link #ecn()}. */
    void marks(double percent) {
        ternMarks.close();
        kernelMarks.close();
        ternMarks = CeMarking.install(net, percent);
        kernelMarks = CeMarking.install(kernels, percent);
    }

    /**
     * {packets marked on Tern's pair, on the kernel pair, packets on both} since the last {@link #marks}: each pair's
     * own marks show that its ends negotiated ECN (only ECT packets are marked).
     */
    long[] markCounts() {
        final CeMarking.Counts tern = ternMarks.counts();
        final CeMarking.Counts kernel = kernelMarks.counts();
        return new long[] {tern.toPeerMarked() + tern.fromPeerMarked(), kernel.toPeerMarked() + kernel.fromPeerMarked(),
            tern.toPeerPackets() + tern.fromPeerPackets() + kernel.toPeerPackets() + kernel.fromPeerPackets()};
    }

    /** What both pairs' rules counted since the last {@link #loss}. */
    PacketLoss.Counts counts() {
        final PacketLoss.Counts a = ternLoss.counts();
        final PacketLoss.Counts b = kernelLoss.counts();
        return new PacketLoss.Counts(a.toPeerPackets() + b.toPeerPackets(), a.toPeerDropped() + b.toPeerDropped(),
            a.fromPeerPackets() + b.fromPeerPackets(), a.fromPeerDropped() + b.fromPeerDropped());
    }

    /** Whether a kernel sender of the second pair was checked: [from the "Tern" end, from the peer]. */
    private final boolean[] checked = new boolean[2];

    /**
     * The first time for each way across {@link #kernels}: {@link #checkCongestionControl} in the namespace the
     * {@code sender} (kernel or socat) runs in.
     */
    synchronized void checkCongestionControlOnce(boolean fromPeer, BackgroundCommand sender) {
        if (!checked[fromPeer ? 1 : 0]) {
            checkCongestionControl(fromPeer ? kernels.peerNamespace() : kernels.ternNamespace(), sender);
            checked[fromPeer ? 1 : 0] = true;
        }
    }

    /**
     * Checks, while {@code sender} runs a connection out of {@code namespace}, that the kernel's TCP uses the
     * congestion control asked for ({@code ss -tin}: the algorithm's name opens the second line). Throws if it does
     * not, or if no connection shows up within 5 s.
     */
    void checkCongestionControl(NetworkNamespace namespace, BackgroundCommand sender) {
        final long deadline = System.nanoTime() + 5_000_000_000L;
        String listing = "";
        while (System.nanoTime() - deadline < 0 && sender.isAlive()) {
            listing = namespace.exec(Duration.ofSeconds(10), "ss", "-tinH", "state", "established").stdout();
            final Matcher algorithm = ALGORITHM.matcher(listing);
            if (algorithm.find()) {
                if (!algorithm.group(1).equals(congestionControl)) {
                    throw new IllegalStateException("the kernel's sender in " + namespace.name() + " runs "
                        + algorithm.group(1) + ", not " + congestionControl + ": " + listing);
                }
                return;
            }
            VethBenchmark.sleep(50);
        }
        throw new IllegalStateException("no established connection of the kernel's sender in " + namespace.name()
            + " to check its congestion control: " + listing + sender.stdout() + sender.stderr());
    }

    /** "0pct", "0_1pct", "1pct", "5pct": the key suffix of a loss level. */
    static String key(double percent) {
        final String text = percent == Math.rint(percent) ? Long.toString((long) percent)
            : String.format(Locale.ROOT, "%s", percent).replaceAll("0+$", "");
        return text.replace('.', '_') + "pct";
    }

    /** "0.1 %" for tables. */
    static String label(double percent) {
        return (percent == Math.rint(percent) ? Long.toString((long) percent) : Double.toString(percent)) + " %";
    }

    static List<Double> parseLevels(String text) {
        final List<Double> levels = java.util.Arrays.stream(text.split(",")).map(String::strip).map(Double::parseDouble).toList();
        for (double level : levels) {
            if (!(level >= 0 && level < 100)) {
                throw new IllegalArgumentException("--loss: " + level + " is not a percentage from 0 to below 100");
            }
        }
        return levels;
    }

    @Override
    public void close() {
        RuntimeException failure = null;
        final List<AutoCloseable> resources = new java.util.ArrayList<>();
        if (ternMarks != null) {
            resources.addAll(List.of(ternMarks, kernelMarks));
        }
        resources.addAll(List.of(ternLoss, kernelLoss, net, kernels));
        for (AutoCloseable resource : resources) {
            try {
                resource.close();
            } catch (Exception e) {
                if (failure == null) {
                    failure = new IllegalStateException("cleaning up the lossy pairs: " + e.getMessage(), e);
                } else {
                    failure.addSuppressed(e);
                }
            }
        }
        if (failure != null) {
            throw failure;
        }
    }
}
