package dev.tern.cli.bench;

import dev.tern.core.net.Ipv4Address;
import dev.tern.ethernet.memory.MemoryPipe;
import dev.tern.stack.NetStack;
import dev.tern.stack.TcpConnection;
import dev.tern.stack.TcpListener;
import dev.tern.stack.TernSocketException;
import dev.tern.tcp.TcpOptions;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * TCP request/response and bulk throughput: two Tern stacks joined by a {@link MemoryPipe}, each polled by its own
 * thread through the public socket API, against the kernel's TCP on loopback (java.nio {@code SocketChannel}s,
 * blocking, one thread per side), in the same run.
 */
public final class TcpBench {
    /** Round-trip results. */
    public record RoundTrips(double p50Micros, double p99Micros, int count, double allocatedBytesPerSegment) {
    }

    private static final int PORT = 5001;
    private static final int REQUEST = 64;
    private static final int BULK_BUFFER = 4 << 20;
    private static final com.sun.management.ThreadMXBean THREADS =
        (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

    private TcpBench() {
    }

    /** Two stacks on a pipe and an accepted connection between them, both polled by the caller until connected. */
    private static final class Pair implements AutoCloseable {
        final MemoryPipe pipe;
        final NetStack client;
        final NetStack server;
        final TcpConnection clientConnection;
        final TcpConnection serverConnection;

        Pair(int mtu, boolean checksumOffload, TcpOptions options) throws TernSocketException {
            pipe = MemoryPipe.create(0x0200_0000_0001L, 0x0200_0000_0002L, mtu, Math.max(1 << 22, Integer.highestOneBit(mtu) * 64),
                checksumOffload);
            client = NetStack.builder().name("bench-tcp-client").link(pipe.first()).address("198.18.0.1/24")
                .countersInMemory().build();
            server = NetStack.builder().name("bench-tcp-server").link(pipe.second()).address("198.18.0.2/24")
                .countersInMemory().build();
            final TcpListener listener = server.listen(PORT, 4, options);
            clientConnection = client.connect(Ipv4Address.parse("198.18.0.2"), PORT, 0, options);
            TcpConnection accepted = null;
            final long deadline = System.nanoTime() + 5_000_000_000L;
            while ((accepted == null || !clientConnection.isConnected()) && System.nanoTime() < deadline) {
                client.doWork();
                server.doWork();
                if (accepted == null) {
                    accepted = listener.accept();
                }
            }
            if (accepted == null || !clientConnection.isConnected()) {
                throw new IllegalStateException("benchmark connection did not open");
            }
            serverConnection = accepted;
            listener.close();
        }

        @Override
        public void close() {
            clientConnection.abort();
            serverConnection.abort();
            client.close();
            server.close();
            pipe.close();
        }
    }

    /** 64-byte requests answered with 64 bytes, one at a time, for {@code seconds}; no-delay on both sides. */
    public static RoundTrips ternRoundTrips(double seconds) throws Exception {
        try (Pair pair = new Pair(1500, true, TcpOptions.DEFAULT.withNoDelay(true)); Arena arena = Arena.ofShared()) {
            final AtomicBoolean running = new AtomicBoolean(true);
            final MemorySegment serverBuffer = arena.allocate(4096);
            final Thread server = new Thread(() -> {
                try {
                    while (running.get()) {
                        pair.server.doWork();
                        final int n = pair.serverConnection.read(serverBuffer, 0, 4096);
                        if (n > 0) {
                            int written = 0;
                            while (written < n) {
                                written += pair.serverConnection.write(serverBuffer, written, n - written);
                            }
                        }
                    }
                } catch (TernSocketException e) {
                    throw new IllegalStateException(e);
                }
            }, "tern-bench-tcp-server");
            server.start();
            final MemorySegment request = arena.allocate(REQUEST);
            final MemorySegment reply = arena.allocate(4096);
            final LatencyRecorder latency = new LatencyRecorder(4_000_000);
            ternRoundTrips(pair, request, reply, latency, 0.5);
            latency.reset();
            final long segmentsBefore = segments(pair.client);
            final long allocatedBefore = THREADS.getCurrentThreadAllocatedBytes();
            ternRoundTrips(pair, request, reply, latency, seconds);
            final long allocated = THREADS.getCurrentThreadAllocatedBytes() - allocatedBefore;
            final long segments = Math.max(1, segments(pair.client) - segmentsBefore);
            running.set(false);
            server.join();
            return new RoundTrips(latency.percentileMicros(50), latency.percentileMicros(99), latency.count(),
                (double) allocated / segments);
        }
    }

    private static long segments(NetStack stack) {
        return stack.counters().value("tcp.tx.segments") + stack.counters().value("tcp.rx.segments");
    }

    private static void ternRoundTrips(Pair pair, MemorySegment request, MemorySegment reply, LatencyRecorder latency,
                                       double seconds) throws TernSocketException {
        final long end = System.nanoTime() + (long) (seconds * 1e9);
        while (System.nanoTime() - end < 0) {
            final long start = System.nanoTime();
            pair.clientConnection.write(request, 0, REQUEST);
            int got = 0;
            while (got < REQUEST) {
                pair.client.doWork();
                got += pair.clientConnection.read(reply, 0, 4096);
                if (System.nanoTime() - start > 1_000_000_000L) {
                    throw new IllegalStateException("a round trip took over a second");
                }
            }
            latency.record(System.nanoTime() - start);
        }
    }

    /** One connection streaming for {@code seconds} (after a 1 s warm-up); returns Gbit/s of payload. */
    public static double ternBulk(int mtu, double seconds) throws Exception {
        return ternBulk(mtu, seconds, false);
    }

    /**
     * {@link #ternBulk(int, double)}, the receiver taking the bytes through a receive handler when {@code zeroCopy}
     * (zero-copy receive against the copying read): the handler copies each byte from the frame into the same 1 MiB sink the read copies into from the
     * ring, so both end with the bytes in the application's memory and differ by the stack's copy into the ring.
     */
    public static double ternBulk(int mtu, double seconds, boolean zeroCopy) throws Exception {
        final TcpOptions options = TcpOptions.DEFAULT.withBuffers(BULK_BUFFER, BULK_BUFFER);
        try (Pair pair = new Pair(mtu, true, options); Arena arena = Arena.ofShared()) {
            final AtomicBoolean running = new AtomicBoolean(true);
            final AtomicLong received = new AtomicLong();
            final MemorySegment sink = arena.allocate(1 << 20);
            final Thread receiver = new Thread(zeroCopy ? () -> {
                try {
                    pair.serverConnection.receiveHandler(new SinkHandler(sink, received));
                } catch (TernSocketException e) {
                    throw new IllegalStateException(e);
                }
                while (running.get()) {
                    pair.server.doWork();
                }
            } : () -> {
                try {
                    while (running.get()) {
                        pair.server.doWork();
                        final int n = pair.serverConnection.read(sink, 0, 1 << 20);
                        if (n > 0) {
                            received.lazySet(received.get() + n);
                        }
                    }
                } catch (TernSocketException e) {
                    throw new IllegalStateException(e);
                }
            }, "tern-bench-tcp-receiver");
            receiver.start();
            final MemorySegment data = arena.allocate(1 << 20);
            final long warmEnd = System.nanoTime() + 1_000_000_000L;
            stream(pair, data, warmEnd);
            final long before = received.get();
            final long start = System.nanoTime();
            stream(pair, data, start + (long) (seconds * 1e9));
            final double elapsed = (System.nanoTime() - start) / 1e9;
            final long bytes = received.get() - before;
            running.set(false);
            receiver.join();
            if (Boolean.getBoolean("tern.bench.verbose")) {
                pair.client.counters().reader().forEach((id, label) -> {
                    final long value = pair.client.counters().reader().getCounterValue(id);
                    if (value != 0 && (label.startsWith("tcp") || label.startsWith("ethernet.tx"))) {
                        System.err.println("  client " + label + " = " + value);
                    }
                });
            }
            return bytes * 8 / elapsed / 1e9;
        }
    }

    /** The zero-copy receiver: copies what it is offered into the sink, round and round, and counts it. */
    private static final class SinkHandler implements TcpConnection.ReceiveHandler {
        private final MemorySegment sink;
        private final AtomicLong received;
        private long at;

        SinkHandler(MemorySegment sink, AtomicLong received) {
            this.sink = sink;
            this.received = received;
        }

        @Override
        public int onReceive(TcpConnection connection, MemorySegment data, long offset, int length) {
            at = dev.tern.core.memory.WrappingCopy.copy(data, offset, length, sink, at);
            received.lazySet(received.get() + length);
            return length;
        }
    }

    private static void stream(Pair pair, MemorySegment data, long endNs) throws TernSocketException {
        while (System.nanoTime() - endNs < 0) {
            pair.clientConnection.write(data, 0, (int) data.byteSize());
            pair.client.doWork();
        }
    }

    /** The kernel: 64-byte round trips over loopback with blocking SocketChannels and TCP_NODELAY. */
    public static RoundTrips kernelRoundTrips(double seconds) throws Exception {
        try (ServerSocketChannel listener = ServerSocketChannel.open()) {
            listener.bind(new InetSocketAddress("127.0.0.1", 0));
            try (SocketChannel client = SocketChannel.open(listener.getLocalAddress());
                 SocketChannel server = listener.accept()) {
                client.setOption(StandardSocketOptions.TCP_NODELAY, true);
                server.setOption(StandardSocketOptions.TCP_NODELAY, true);
                final Thread echo = new Thread(() -> {
                    final ByteBuffer buffer = ByteBuffer.allocateDirect(4096);
                    try {
                        while (true) {
                            buffer.clear();
                            if (server.read(buffer) < 0) {
                                return;
                            }
                            buffer.flip();
                            while (buffer.hasRemaining()) {
                                server.write(buffer);
                            }
                        }
                    } catch (java.io.IOException e) {
                        // closed at the end of the run
                    }
                }, "kernel-bench-tcp-server");
                echo.start();
                final ByteBuffer request = ByteBuffer.allocateDirect(REQUEST);
                final ByteBuffer reply = ByteBuffer.allocateDirect(REQUEST);
                final LatencyRecorder latency = new LatencyRecorder(4_000_000);
                kernelRoundTrips(client, request, reply, latency, 0.5);
                latency.reset();
                kernelRoundTrips(client, request, reply, latency, seconds);
                client.shutdownOutput();
                echo.join(2000);
                return new RoundTrips(latency.percentileMicros(50), latency.percentileMicros(99), latency.count(), Double.NaN);
            }
        }
    }

    private static void kernelRoundTrips(SocketChannel client, ByteBuffer request, ByteBuffer reply,
                                         LatencyRecorder latency, double seconds) throws java.io.IOException {
        final long end = System.nanoTime() + (long) (seconds * 1e9);
        while (System.nanoTime() - end < 0) {
            final long start = System.nanoTime();
            request.clear();
            while (request.hasRemaining()) {
                client.write(request);
            }
            reply.clear();
            while (reply.hasRemaining()) {
                client.read(reply);
            }
            latency.record(System.nanoTime() - start);
        }
    }

    /** The kernel: one loopback stream for {@code seconds} after a 1 s warm-up; Gbit/s of payload. */
    public static double kernelBulk(double seconds) throws Exception {
        try (ServerSocketChannel listener = ServerSocketChannel.open()) {
            listener.bind(new InetSocketAddress("127.0.0.1", 0));
            try (SocketChannel client = SocketChannel.open(listener.getLocalAddress());
                 SocketChannel server = listener.accept()) {
                final AtomicLong received = new AtomicLong();
                final Thread sink = new Thread(() -> {
                    final ByteBuffer buffer = ByteBuffer.allocateDirect(1 << 20);
                    try {
                        int n;
                        while ((n = server.read(buffer.clear())) >= 0) {
                            received.lazySet(received.get() + n);
                        }
                    } catch (java.io.IOException e) {
                        // closed at the end of the run
                    }
                }, "kernel-bench-tcp-sink");
                sink.start();
                final ByteBuffer data = ByteBuffer.allocateDirect(1 << 20);
                final long warmEnd = System.nanoTime() + 1_000_000_000L;
                while (System.nanoTime() - warmEnd < 0) {
                    client.write(data.clear());
                }
                final long before = received.get();
                final long start = System.nanoTime();
                final long end = start + (long) (seconds * 1e9);
                while (System.nanoTime() - end < 0) {
                    client.write(data.clear());
                }
                final double elapsed = (System.nanoTime() - start) / 1e9;
                final long bytes = received.get() - before;
                client.shutdownOutput();
                sink.join(2000);
                return bytes * 8 / elapsed / 1e9;
            }
        }
    }
}
