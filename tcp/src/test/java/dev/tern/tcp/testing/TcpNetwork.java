package dev.tern.tcp.testing;

import dev.tern.core.time.VirtualClock;
import dev.tern.ethernet.link.Link;
import dev.tern.ethernet.pcap.PcapTap;
import dev.tern.ethernet.pcap.PcapWriter;
import dev.tern.ethernet.memory.MemoryWire;
import dev.tern.ethernet.memory.VirtualTimeLoop;
import dev.tern.tcp.TcpConfig;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;

/**
 * Stacks on one {@link MemoryWire} and one {@link VirtualClock}, stepped like {@code stack.sim.Simulation}: poll
 * every stack until idle, then jump time to the next frame or timer. Deterministic for a given wire seed.
 */
public final class TcpNetwork implements AutoCloseable {
    public final VirtualClock clock = new VirtualClock(1_000_000_000L);
    public final MemoryWire wire;
    public final List<TestStack> stacks = new ArrayList<>();
    private final VirtualTimeLoop loop;
    private int nextMac = 1;
    private PcapWriter capture;

    /** Records every frame the first stack added afterwards sends and receives into {@code file}. */
    public TcpNetwork capture(Path file) {
        this.capture = PcapWriter.create(file);
        return this;
    }

    public TcpNetwork(MemoryWire.Builder wire) {
        this.wire = wire.clock(clock).build();
        this.loop = new VirtualTimeLoop(clock, this.wire);
    }

    public TcpNetwork() {
        this(MemoryWire.builder());
    }

    public long now() {
        return clock.nanoTime();
    }

    public TestStack add(String name, String cidr, TcpConfig config) {
        return add(name, cidr, config, 64);
    }

    public TestStack add(String name, String cidr, TcpConfig config, int receiveBatch) {
        return add(name, cidr, config, receiveBatch, link -> link);
    }

    /** A stack whose link is wrapped by {@code wrap} (a segmenting link, say). */
    public TestStack add(String name, String cidr, TcpConfig config, int receiveBatch,
                         java.util.function.UnaryOperator<Link> wrap) {
        Link link = wrap.apply(wire.attach(name, 0x0200_0000_0000L | nextMac++));
        if (capture != null && stacks.isEmpty()) {
            link = new PcapTap(link, capture, clock);
        }
        final TestStack stack = new TestStack(name, link, cidr, config, now(), receiveBatch);
        stacks.add(stack);
        loop.add(stack);
        return stack;
    }

    /** Runs {@code poller} after the stacks on every poll round (an application pumping data, say). */
    public void onPoll(Runnable poller) {
        loop.onPoll(poller);
    }

    public int pollAll() {
        return loop.pollAll();
    }

    public void step(long limitNs) {
        loop.step(limitNs);
    }

    /** Runs until {@code done} holds (checked after a first round of polls) or {@code maxNs} of virtual time pass. */
    public boolean runUntil(BooleanSupplier done, long maxNs) {
        loop.pollAll();
        return loop.runUntil(done, maxNs);
    }

    public void runFor(long durationNs) {
        loop.runFor(durationNs);
    }

    @Override
    public void close() {
        for (TestStack stack : stacks) {
            stack.close();
        }
        wire.close();
        if (capture != null) {
            capture.close();
        }
    }
}
