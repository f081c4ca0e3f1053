package dev.tern.lab;

import dev.tern.core.time.Pollable;
import dev.tern.core.time.VirtualClock;
import dev.tern.ethernet.memory.MemoryWire;
import dev.tern.ethernet.memory.VirtualTimeLoop;
import dev.tern.ipv4.Ipv4Config;
import dev.tern.lab.link.Bottleneck;
import dev.tern.lab.link.BottleneckStats;
import dev.tern.lab.link.DelayHistogram;
import dev.tern.lab.link.Fingerprint;
import dev.tern.lab.link.FrameSlots;
import dev.tern.lab.link.LinkRate;
import dev.tern.stack.NetStack;
import dev.tern.stack.TcpConnection;
import dev.tern.stack.TcpListener;
import dev.tern.stack.TernSocketException;
import dev.tern.tcp.EcnMode;
import dev.tern.tcp.TcpConfig;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * A dumbbell on virtual time: one sender stack and one receiver stack per flow, senders on one memory wire,
 * receivers on another, joined by a {@link DumbbellRouter} through one bottleneck. Each flow is a bulk transfer from
 * its sender to its receiver. The run is deterministic: the same scenario and seed give the same frames through the
 * bottleneck and the same results, and so the same fingerprint.
 */
public final class Dumbbell {
    static final long SENDER_MAC_BASE = 0x0200_0001_0000L;
    static final long RECEIVER_MAC_BASE = 0x0200_0002_0000L;
    private static final int PORT = 5001;
    /** How often each sender's smoothed RTT is sampled. */
    private static final long RTT_SAMPLE_NS = 10_000_000L;
    private static final int MTU = 1500;

    private Dumbbell() {
    }

    /** Runs {@code spec}; {@code progress} (may be null) hears the simulated second now and then. */
    public static ScenarioResult run(ScenarioSpec spec, Consumer<String> progress) {
        return run(spec, progress, null);
    }

    /**
     * Runs {@code spec}, and with {@code pcapDirectory} (may be null) writes one pcap file per flow there,
     * {@code NAME-flowN.pcap} ({@link FlowCapture}); the capture changes nothing in the run.
     */
    public static ScenarioResult run(ScenarioSpec spec, Consumer<String> progress, Path pcapDirectory) {
        final long wallStart = System.nanoTime();
        final int n = spec.flows().size();
        final VirtualClock clock = new VirtualClock();
        final LinkRate rate = spec.rate().get();
        final int bufferBytes = bufferBytes(spec, rate);
        final int wireFrames = Math.min(1 << 16, Math.max(4096, 2 * n * bufferBytes / MTU));
        try (MemoryWire leftWire = MemoryWire.builder().clock(clock).frames(Math.min(wireFrames, 32768)).build();
             MemoryWire rightWire = MemoryWire.builder().clock(clock).frames(Math.min(wireFrames, 32768)).build();
             FrameSlots slots = new FrameSlots(Math.min(1 << 17,
                 spec.queue().maxFrames(MTU) + 2 * n * bufferBytes / MTU + 4096));
             Arena arena = Arena.ofConfined();
             FlowCapture capture = pcapDirectory == null ? null : new FlowCapture(pcapDirectory, spec.name(), n)) {
            final BottleneckStats stats = new BottleneckStats();
            final Bottleneck bottleneck = new Bottleneck(slots, rate,
                spec.discipline().create(slots, spec.queue(), MTU + 14, spec.seed(), stats), spec.loss().get(),
                spec.outages().get(), stats);
            final long[] access = new long[n];
            for (int i = 0; i < n; i++) {
                access[i] = spec.flows().get(i).accessDelayNs();
            }
            final DumbbellRouter router = new DumbbellRouter(slots, bottleneck, leftWire, rightWire, SENDER_MAC_BASE,
                spec.forwardDelayNs(), spec.reverseDelayNs(), access);
            router.capture(capture);
            final VirtualTimeLoop loop = new VirtualTimeLoop(clock, leftWire);
            final List<NetStack> stacks = new ArrayList<>();
            final Flows flows = new Flows(spec, arena, clock, bottleneck);
            for (int i = 0; i < n; i++) {
                final FlowSpec flow = spec.flows().get(i);
                final NetStack sender = stack(leftWire, "s" + i, SENDER_MAC_BASE + i, "198.18." + (1 + i / 250) + "."
                    + (1 + i % 250) + "/15", clock, TcpConfig.builder().congestionControl(flow.congestionControl())
                    .ecn(flow.ecn() ? EcnMode.ON : EcnMode.OFF).bufferSizes(bufferBytes, bufferBytes), spec.seed());
                final NetStack receiver = stack(rightWire, "r" + i, RECEIVER_MAC_BASE + i, "198.18." + (101 + i / 250)
                    + "." + (1 + i % 250) + "/15", clock, TcpConfig.builder().ecn(EcnMode.SERVER)
                    .bufferSizes(bufferBytes, bufferBytes), spec.seed());
                stacks.add(sender);
                stacks.add(receiver);
                loop.add(sender);
                loop.add(receiver);
                flows.add(i, sender, receiver);
            }
            final CrossTraffic cross = spec.udp().isEmpty() ? null
                : new CrossTraffic(spec.udp(), slots, bottleneck, n, spec.durationNs(), arena);
            if (cross != null) {
                loop.add(cross);
            }
            loop.add(router);
            loop.add(flows);
            long nextProgressNs = 10_000_000_000L;
            while (clock.nanoTime() < spec.durationNs()) {
                loop.step(spec.durationNs());
                if (progress != null && clock.nanoTime() >= nextProgressNs && nextProgressNs < spec.durationNs()) {
                    progress.accept(String.format("%s: %d of %d s simulated", spec.name(), nextProgressNs / 1_000_000_000L,
                        spec.durationNs() / 1_000_000_000L));
                    nextProgressNs += 10_000_000_000L;
                }
            }
            loop.pollAll();
            final ScenarioResult result = flows.result(spec, bottleneck, router, cross, rate,
                (System.nanoTime() - wallStart) / 1e9);
            flows.close();
            for (NetStack stack : stacks) {
                stack.close();
            }
            return result;
        }
    }

    /** Socket buffers that never limit a flow below the path: twice the bandwidth-delay product plus the queue, as a power of two. */
    private static int bufferBytes(ScenarioSpec spec, LinkRate rate) {
        long maxAccess = 0;
        for (FlowSpec flow : spec.flows()) {
            maxAccess = Math.max(maxAccess, flow.accessDelayNs());
        }
        final long rttNs = spec.forwardDelayNs() + spec.reverseDelayNs() + 2 * maxAccess;
        final long bps = rate.isTrace() ? rate.capacityBytes(0, 1_000_000_000L) * 8 : rate.bitsPerSecond();
        final long bdp = bps / 8 * rttNs / 1_000_000_000L;
        final long queue = spec.queue().bytes() > 0 ? spec.queue().bytes() : (long) spec.queue().packets() * MTU;
        final long wanted = Math.clamp(2 * bdp + queue, 256 * 1024, 32 * 1024 * 1024);
        return (int) Long.highestOneBit(wanted * 2 - 1);
    }

    private static NetStack stack(MemoryWire wire, String name, long mac, String cidr, VirtualClock clock,
                                  TcpConfig.Builder tcp, long seed) {
        return NetStack.builder().name(name).link(wire.attach(name, mac)).address(cidr).clock(clock)
            .countersInMemory().tcp(tcp.isnKey(seed ^ name.hashCode(), mac).maxConnections(16).build())
            .ipv4(Ipv4Config.DEFAULT.withIdentificationKey(seed ^ name.hashCode(), mac)).build();
    }

    /** The applications: each flow's sender writes as fast as its socket takes, its receiver reads everything. */
    private static final class Flows implements Pollable, AutoCloseable {
        private final ScenarioSpec spec;
        private final VirtualClock clock;
        private final MemorySegment chunk;
        private final MemorySegment sink;
        private final NetStack[] senders;
        private final NetStack[] receivers;
        private final TcpListener[] listeners;
        private final TcpConnection[] clients;
        private final TcpConnection[] servers;
        private final long[] written;
        private final long[] read;
        private final long[] firstByteNs;
        private final long[] lastByteNs;
        private final DelayHistogram[] rtt;
        private long nextSampleNs;
        private final Bottleneck bottleneck;
        private final LabSeries series;
        private final long[] readAtPoint;
        private long pointStartNs;
        private long nextPointNs = LabSeries.INTERVAL_NS;
        private long sojournNsAtPoint;
        private long sojournFramesAtPoint;

        Flows(ScenarioSpec spec, Arena arena, VirtualClock clock, Bottleneck bottleneck) {
            this.spec = spec;
            this.clock = clock;
            this.bottleneck = bottleneck;
            this.series = new LabSeries(spec.flows().size(), spec.durationNs());
            this.readAtPoint = new long[spec.flows().size()];
            final int n = spec.flows().size();
            this.chunk = arena.allocate(1 << 16);
            this.sink = arena.allocate(1 << 16);
            this.senders = new NetStack[n];
            this.receivers = new NetStack[n];
            this.listeners = new TcpListener[n];
            this.clients = new TcpConnection[n];
            this.servers = new TcpConnection[n];
            this.written = new long[n];
            this.read = new long[n];
            this.firstByteNs = new long[n];
            this.lastByteNs = new long[n];
            this.rtt = new DelayHistogram[n];
        }

        void add(int i, NetStack sender, NetStack receiver) {
            senders[i] = sender;
            receivers[i] = receiver;
            rtt[i] = new DelayHistogram();
            try {
                listeners[i] = receiver.listen(PORT, 4);
            } catch (TernSocketException e) {
                throw new IllegalStateException("flow " + i + ": " + e.getMessage(), e);
            }
        }

        @Override
        public int poll(long nowNs) {
            int work = 0;
            final boolean sample = nowNs >= nextSampleNs;
            for (int i = 0; i < senders.length; i++) {
                try {
                    work += pump(i, nowNs, sample);
                } catch (TernSocketException e) {
                    // A flow that failed (reset, timed out) stops sending; its bytes so far still count.
                    clients[i] = null;
                }
            }
            if (sample) {
                nextSampleNs = nowNs + RTT_SAMPLE_NS;
                if (nowNs >= nextPointNs && series.hasRoom()) {
                    point(nowNs);
                }
            }
            return work;
        }

        private int pump(int i, long nowNs, boolean sample) throws TernSocketException {
            final FlowSpec flow = spec.flows().get(i);
            int work = 0;
            if (clients[i] == null && written[i] == 0 && nowNs >= flow.startNs() && firstByteNs[i] == 0) {
                clients[i] = senders[i].connect(receivers[i].address().address(), PORT);
                firstByteNs[i] = -1;
                work++;
            }
            if (servers[i] == null && listeners[i] != null) {
                servers[i] = listeners[i].accept();
            }
            final TcpConnection client = clients[i];
            final boolean stopped = flow.durationNs() > 0 && nowNs >= flow.startNs() + flow.durationNs();
            if (client != null && client.isConnected() && !stopped) {
                final long left = flow.bytes() > 0 ? flow.bytes() - written[i] : Long.MAX_VALUE;
                if (left > 0) {
                    final int n = client.write(chunk, 0, (int) Math.min(chunk.byteSize(), left));
                    written[i] += n;
                    work += n > 0 ? 1 : 0;
                }
                if (sample) {
                    final long srtt = client.info().srttNs();
                    if (srtt > 0) {
                        rtt[i].recordNs(srtt);
                    }
                }
            }
            final TcpConnection server = servers[i];
            if (server != null) {
                final int n = server.read(sink, 0, (int) sink.byteSize());
                if (n > 0) {
                    if (read[i] == 0) {
                        firstByteNs[i] = nowNs;
                    }
                    read[i] += n;
                    lastByteNs[i] = nowNs;
                    work++;
                }
            }
            return work;
        }

        /** One point of the time series, at a sampling instant, so that it adds no wake-up to the run. */
        private void point(long nowNs) {
            final long frames = bottleneck.sojournFrames() - sojournFramesAtPoint;
            final long sojournNs = bottleneck.sojournTotalNs() - sojournNsAtPoint;
            series.point(nowNs, frames == 0 ? 0 : sojournNs / 1e6 / frames);
            final double seconds = (nowNs - pointStartNs) / 1e9;
            for (int i = 0; i < read.length; i++) {
                series.goodput(i, (read[i] - readAtPoint[i]) * 8 / seconds);
                readAtPoint[i] = read[i];
            }
            sojournFramesAtPoint = bottleneck.sojournFrames();
            sojournNsAtPoint = bottleneck.sojournTotalNs();
            pointStartNs = nowNs;
            nextPointNs += LabSeries.INTERVAL_NS;
        }

        @Override
        public long pollAt() {
            long next = nextSampleNs;
            final long now = clock.nanoTime();
            for (int i = 0; i < senders.length; i++) {
                final long start = spec.flows().get(i).startNs();
                if (firstByteNs[i] == 0 && start > now) {
                    next = Math.min(next, start);
                }
            }
            return next;
        }

        ScenarioResult result(ScenarioSpec spec, Bottleneck bottleneck, DumbbellRouter router, CrossTraffic cross,
                              LinkRate rate, double wallSeconds) {
            final int n = senders.length;
            final double[] goodput = new double[n];
            double total = 0;
            for (int i = 0; i < n; i++) {
                final FlowSpec flow = spec.flows().get(i);
                final long end = flow.bytes() > 0 && read[i] >= flow.bytes() ? lastByteNs[i]
                    : flow.durationNs() > 0 ? Math.min(spec.durationNs(), flow.startNs() + flow.durationNs())
                    : spec.durationNs();
                final long active = Math.max(1, end - flow.startNs());
                goodput[i] = read[i] * 8e9 / active;
                total += goodput[i];
            }
            final Fingerprint fingerprint = bottleneck.fingerprint();
            final List<FlowResult> flows = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                final long retransmits = clients[i] == null ? 0 : clients[i].retransmits();
                flows.add(new FlowResult(i, spec.flows().get(i).congestionControl(), read[i], goodput[i],
                    total == 0 ? 0 : goodput[i] / total, retransmits, router.ceMarks[i], rtt[i].quantileUs(0.5),
                    rtt[i].quantileUs(0.95), rtt[i].quantileUs(0.99)));
                fingerprint.add(read[i]);
                fingerprint.add(retransmits);
            }
            UdpResult udp = null;
            if (cross != null) {
                final double seconds = spec.durationNs() / 1e9;
                udp = new UdpResult(cross.sentFrames, router.crossDelivered, cross.sentBytes * 8 / seconds,
                    router.crossDeliveredBytes * 8 / seconds, router.ceMarks[n]);
                fingerprint.add(router.crossDelivered);
            }
            final BottleneckStats stats = bottleneck.stats();
            fingerprint.add(stats.randomLoss);
            fingerprint.add(stats.overflowDrops);
            fingerprint.add(stats.aqmDrops);
            fingerprint.add(stats.marks());
            final long capacity = Math.max(1, rate.capacityBytes(0, spec.durationNs())
                - rate.capacityBytes(0, bottleneck.outages().silentNs(spec.durationNs())));
            final DelayHistogram queue = bottleneck.queueDelay();
            return new ScenarioResult(spec.name(), spec.seed(), spec.durationNs() / 1e9, wallSeconds, flows,
                Math.min(1.0, (double) stats.departedBytes / capacity), ScenarioResult.jain(goodput),
                queue.quantileUs(0.5), queue.quantileUs(0.95), queue.quantileUs(0.99), stats.randomLoss,
                stats.overflowDrops, stats.aqmDrops, stats.aqmMarks, stats.thresholdMarks, stats.noBuffer,
                fingerprint.hex(), series, udp);
        }

        @Override
        public void close() {
            for (int i = 0; i < senders.length; i++) {
                if (clients[i] != null) {
                    clients[i].abort();
                }
                if (servers[i] != null) {
                    servers[i].abort();
                }
                if (listeners[i] != null) {
                    listeners[i].close();
                }
            }
        }
    }
}
