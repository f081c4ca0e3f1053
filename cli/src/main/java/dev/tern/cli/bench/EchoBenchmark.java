package dev.tern.cli.bench;

import dev.tern.core.net.Ipv4Address;
import dev.tern.core.time.VirtualClock;
import dev.tern.ethernet.memory.MemoryWire;
import dev.tern.stack.NetStack;
import dev.tern.stack.Pinger;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

import java.util.concurrent.TimeUnit;

/**
 * One ICMP echo round trip between two stacks on a memory wire, both polled by the benchmark thread: request out of
 * stack a, answered by stack b, reply back into a. Run with JMH's GC profiler, it shows the bytes allocated per
 * round trip (two packets), which must be zero in steady state.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class EchoBenchmark {
    @Param({"56", "4000"})
    public int size;

    private MemoryWire wire;
    private NetStack a;
    private NetStack b;
    private int target;
    private int sequence;
    private final VirtualClock clock = new VirtualClock();
    private final long[] replies = new long[1];

    @Setup
    public void setUp() {
        wire = MemoryWire.builder().clock(clock).build();
        a = NetStack.builder().name("bench-a").link(wire.attach("a", 0x0200_0000_0001L)).address("198.18.0.1/24")
            .clock(clock).countersInMemory().build();
        b = NetStack.builder().name("bench-b").link(wire.attach("b", 0x0200_0000_0002L)).address("198.18.0.2/24")
            .clock(clock).countersInMemory().build();
        target = Ipv4Address.parse("198.18.0.2");
        a.pinger().listener(new Pinger.Listener() {
            @Override
            public void onReply(int source, int seq, int dataLength, int ttl, long roundTripNs, boolean intact) {
                replies[0]++;
            }

            @Override
            public void onError(int reporter, int type, int code, int seq) {
            }
        });
        roundTrip();
    }

    @TearDown
    public void tearDown() {
        a.close();
        b.close();
        wire.close();
    }

    @Benchmark
    public long roundTrip() {
        final long before = replies[0];
        a.pinger().send(target, sequence++ & 0xFFFF, size, clock.nanoTime());
        while (replies[0] == before) {
            a.poll(clock.nanoTime());
            b.poll(clock.nanoTime());
        }
        return replies[0];
    }
}
