package dev.tern.stack.sim;

import dev.tern.core.time.VirtualClock;
import dev.tern.ethernet.link.Link;
import dev.tern.ethernet.link.ShardRule;
import dev.tern.ethernet.memory.MemoryLink;
import dev.tern.ethernet.memory.MemoryWire;
import dev.tern.ethernet.memory.VirtualTimeLoop;
import dev.tern.ethernet.pcap.PcapTap;
import dev.tern.ethernet.pcap.PcapWriter;
import dev.tern.ipv4.Ipv4Config;
import dev.tern.stack.NetStack;
import dev.tern.stack.StackShards;
import dev.tern.tcp.TcpConfig;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

/**
 * A deterministic network of stacks on one {@link MemoryWire} and one {@link VirtualClock}: the same seed and the
 * same actions give the same run, frame for frame.
 *
 * <p>{@link #step()} polls every stack until none has work at the current instant, then moves virtual time to the
 * next thing that will happen: a frame arriving on the wire or a stack's timer. Nothing waits in real time, so a
 * 30-second reassembly timeout costs microseconds.
 *
 * <p>Owned by one thread.
 */
public final class Simulation implements AutoCloseable {
    private final VirtualClock clock;
    private final MemoryWire wire;
    private final List<NetStack> stacks = new ArrayList<>();
    private final VirtualTimeLoop loop;
    private PcapWriter capture;
    private int nextMac = 1;

    /** A simulation on a wire configured by {@code wire} (its clock is set here). */
    public Simulation(MemoryWire.Builder wire) {
        this.clock = new VirtualClock();
        this.wire = wire.clock(clock).build();
        this.loop = new VirtualTimeLoop(clock, this.wire);
    }

    /** A clean wire: no loss, no delay. */
    public Simulation() {
        this(MemoryWire.builder());
    }

    public VirtualClock clock() {
        return clock;
    }

    public MemoryWire wire() {
        return wire;
    }

    public long nowNs() {
        return clock.nanoTime();
    }

    /** Records every frame the first stack added afterwards sends and receives into {@code file}, as tcpdump would on its interface. */
    public Simulation capture(Path file) {
        this.capture = PcapWriter.create(file);
        return this;
    }

    /** Adds a stack with address {@code cidr} and a MAC of 02:00:00:00:00:NN; {@code customize} may set more. */
    public NetStack addStack(String name, String cidr, Consumer<NetStack.Builder> customize) {
        return addStack(name, cidr, link -> link, customize);
    }

    /**
     * Like {@link #addStack(String, String, Consumer)}, with the stack's link on the wire passed through
     * {@code wrap} first (a test's {@code ForwardingLink} that injects a condition the wire cannot make).
     */
    public NetStack addStack(String name, String cidr, java.util.function.UnaryOperator<Link> wrap,
                             Consumer<NetStack.Builder> customize) {
        final long mac = 0x0200_0000_0000L | nextMac++;
        Link link = wrap.apply(wire.attach(name, mac));
        if (capture != null && stacks.isEmpty()) {
            link = new PcapTap(link, capture, clock);
        }
        // A fixed TCP secret per stack keeps ISNs, ephemeral ports and cookies, and so the whole run, reproducible;
        // so does a fixed IPv4 identification key (a customizer that sets its own IPv4 config should fix one too).
        final NetStack.Builder builder = NetStack.builder().name(name).link(link).address(cidr).clock(clock)
            .countersInMemory().tcp(TcpConfig.builder().isnKey(name.hashCode(), mac).maxConnections(4096).build())
            .ipv4(Ipv4Config.DEFAULT.withIdentificationKey(name.hashCode(), mac));
        customize.accept(builder);
        final NetStack stack = builder.build();
        stacks.add(stack);
        loop.add(stack);
        return stack;
    }

    /**
     * Adds a stack of {@code shards} shards sharing address {@code cidr} and one MAC of 02:00:00:00:00:NN, on ports the
     * wire steers as an AF_PACKET fanout group with Tern's program would ({@code MemoryWire.attachShards}); each shard
     * is polled like a stack of its own. {@code customize} may set more on each shard's builder.
     */
    public StackShards addShardedStack(String name, String cidr, int shards, Consumer<NetStack.Builder> customize) {
        return addShardedStack(name, cidr, shards, ShardRule.FLOW_HASH, customize);
    }

    /** {@link #addShardedStack(String, String, int, Consumer)} on ports the wire steers by {@code rule}. */
    public StackShards addShardedStack(String name, String cidr, int shards, ShardRule rule,
                                       Consumer<NetStack.Builder> customize) {
        final long mac = 0x0200_0000_0000L | nextMac++;
        final MemoryLink[] links = wire.attachShards(name, mac, shards, rule);
        final StackShards built = StackShards.build(shards, k -> links[k], builder -> {
            builder.name(name).address(cidr).clock(clock).countersInMemory()
                .tcp(TcpConfig.builder().isnKey(name.hashCode(), mac).maxConnections(4096).build())
                .ipv4(Ipv4Config.DEFAULT.withIdentificationKey(name.hashCode(), mac));
            customize.accept(builder);
        });
        for (NetStack shard : built.shards()) {
            stacks.add(shard);
            loop.add(shard);
        }
        return built;
    }

    public NetStack addStack(String name, String cidr) {
        return addStack(name, cidr, builder -> { });
    }

    /** A bare port on the wire, for tests that play a peer with hand-made frames. */
    public MemoryLink addPort(String name, long mac) {
        return wire.attach(name, mac);
    }

    /** Runs {@code poller} on every poll of the simulation, after the stacks (a test's peer draining its port, say). */
    public void onPoll(Runnable poller) {
        loop.onPoll(poller);
    }

    public List<NetStack> stacks() {
        return stacks;
    }

    /** Polls every stack until all are idle at the current instant; returns the work done. */
    public int pollAll() {
        return loop.pollAll();
    }

    /** Polls, then moves time to the next event (at most a second ahead, and never past {@code limitNs}). */
    public void step(long limitNs) {
        loop.step(limitNs);
    }

    public void step() {
        loop.step(Long.MAX_VALUE);
    }

    /** Runs until {@code done} holds or {@code maxNs} of virtual time pass; returns whether it held. */
    public boolean runUntil(BooleanSupplier done, long maxNs) {
        return loop.runUntil(done, maxNs);
    }

    /** Runs for {@code durationNs} of virtual time. */
    public void runFor(long durationNs) {
        loop.runFor(durationNs);
    }

    @Override
    public void close() {
        for (NetStack stack : stacks) {
            stack.close();
        }
        wire.close();
        if (capture != null) {
            capture.close();
        }
    }
}
