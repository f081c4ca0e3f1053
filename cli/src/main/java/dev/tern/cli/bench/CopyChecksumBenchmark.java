package dev.tern.cli.bench;

import dev.tern.core.checksum.InternetChecksum;
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
import java.lang.foreign.ValueLayout;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

/**
 * Moving a TCP payload from the send ring into a frame on a link without checksum offload: one pass that copies and
 * sums ({@link InternetChecksum#copyAndAdd}, what TcpOutput does) against a bulk copy followed by a checksum pass over
 * the copy ({@link InternetChecksum#add}). The payload lands after Ethernet, IPv4 and a TCP header with timestamps
 * (66 bytes into the frame), read from an odd ring position.
 *
 * <p>{@code java --sun-misc-unsafe-memory-access=allow -cp "cli/target/tern-cli.jar:cli/target/lib/*" org.openjdk.jmh.Main
 *   CopyChecksumBenchmark}
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class CopyChecksumBenchmark {
    private static final int RING_OFFSET = 4097;
    private static final int PAYLOAD_OFFSET = 66;

    @Param({"1448"})
    public int size;

    private Arena arena;
    private MemorySegment ring;
    private MemorySegment frame;

    @Setup
    public void setUp() {
        arena = Arena.ofConfined();
        ring = arena.allocate(1 << 16, 64);
        frame = arena.allocate(2048, 64);
        final byte[] bytes = new byte[1 << 16];
        new SplittableRandom(size).nextBytes(bytes);
        MemorySegment.copy(bytes, 0, ring, ValueLayout.JAVA_BYTE, 0, bytes.length);
    }

    @TearDown
    public void tearDown() {
        arena.close();
    }

    @Benchmark
    public long fused() {
        return InternetChecksum.copyAndAdd(0, ring, RING_OFFSET, frame, PAYLOAD_OFFSET, size);
    }

    @Benchmark
    public long copyThenAdd() {
        MemorySegment.copy(ring, RING_OFFSET, frame, PAYLOAD_OFFSET, size);
        return InternetChecksum.add(0, frame, PAYLOAD_OFFSET, size);
    }
}
