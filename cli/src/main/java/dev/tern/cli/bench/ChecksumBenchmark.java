package dev.tern.cli.bench;

import dev.tern.core.checksum.InternetChecksum;
import dev.tern.core.memory.BigEndian;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

/**
 * Internet checksum throughput: Tern's (64-bit loads, two accumulators, one fold at the end) against the obvious
 * loop over 16-bit words, on the same off-heap buffer, at an odd offset as frames often are.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class ChecksumBenchmark {
    @Param({"64", "1500"})
    public int size;

    private Arena arena;
    private MemorySegment buffer;

    @Setup
    public void setUp() {
        arena = Arena.ofConfined();
        buffer = arena.allocate(size + 16, 64);
        final byte[] bytes = new byte[size + 16];
        new SplittableRandom(size).nextBytes(bytes);
        MemorySegment.copy(bytes, 0, buffer, java.lang.foreign.ValueLayout.JAVA_BYTE, 0, bytes.length);
    }

    @TearDown
    public void tearDown() {
        arena.close();
    }

    @Benchmark
    public int tern() {
        return InternetChecksum.compute(buffer, 1, size);
    }

    @Benchmark
    public int naive() {
        return naiveChecksum(buffer, 1, size);
    }

    /** RFC 1071 §4.1 as most people first write it: 16-bit words, fold at the end. */
    static int naiveChecksum(MemorySegment segment, long offset, int length) {
        long sum = 0;
        int i = 0;
        for (; i + 1 < length; i += 2) {
            sum += BigEndian.u16(segment, offset + i);
        }
        if (i < length) {
            sum += BigEndian.u8(segment, offset + i) << 8;
        }
        while ((sum >>> 16) != 0) {
            sum = (sum & 0xFFFF) + (sum >>> 16);
        }
        return (int) (~sum & 0xFFFF);
    }
}
