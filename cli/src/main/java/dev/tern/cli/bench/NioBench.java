package dev.tern.cli.bench;

import dev.tern.core.net.Ipv4Address;
import dev.tern.ethernet.memory.MemoryPipe;
import dev.tern.nio.TernSelectorProvider;
import dev.tern.stack.NetStack;
import dev.tern.stack.StackRunner;
import dev.tern.stack.TcpConnection;
import dev.tern.stack.TcpListener;
import dev.tern.tcp.TcpOptions;
import org.agrona.concurrent.BackoffIdleStrategy;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.SelectorProvider;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The NIO provider's benchmark: TCP 64-byte round trips and one-stream bulk through Tern's NIO provider, against Tern's own
 * socket API on the same two stacks (goal: p50 within 1.3x, bulk at least 0.9x), and the same NIO code on the JDK's
 * provider over loopback (goal: Tern's round trip at least 3x lower). Both Tern variants run two stacks on a memory
 * pipe (MTU 65535, checksum offload), each driven by a {@link StackRunner}, with blocking calls on application
 * threads: what {@code TernSelectorProvider.open} sets up. One thread echoes, one measures.
 */
public final class NioBench {
    private static final int PORT = 5002;
    private static final int REQUEST = 64;
    private static final int BULK_CHUNK = 65536;
    private static final int WARM_UP_ROUND_TRIPS = 100_000;
    private static final long WARM_UP_BULK_BYTES = 4L << 30;
    private static final long WARM_UP_LIMIT_NS = 20_000_000_000L;

    /** What one variant measured. */
    public record Result(double p50Micros, double p99Micros, int roundTrips, double bulkGbps) {
    }

    private NioBench() {
    }

    /** One connected TCP pair, whichever API: a blocking write of all bytes and a blocking read of some. */
    private interface Endpoint {
        void writeAll(int length) throws IOException;

        int read(int capacity) throws IOException;

        void shutdownOutput() throws IOException;
    }

    /** Makes connected pairs, [client, server], on one API; closes what it made. */
    private interface Setup extends AutoCloseable {
        Endpoint[] connect() throws Exception;

        @Override
        void close() throws Exception;
    }

    /** Two stacks on a pipe, each with a runner, as {@code TernSelectorProvider.open} runs them. */
    private static final class Stacks implements AutoCloseable {
        final MemoryPipe pipe = MemoryPipe.create(0x0200_0000_0001L, 0x0200_0000_0002L, 65535, 1 << 23, true);
        final NetStack client = NetStack.builder().name("bench-nio-client").link(pipe.first()).address("198.18.0.1/24")
            .countersInMemory().build();
        final NetStack server = NetStack.builder().name("bench-nio-server").link(pipe.second()).address("198.18.0.2/24")
            .countersInMemory().build();

        @Override
        public void close() {
            pipe.close();
        }
    }

    private static BackoffIdleStrategy idle() {
        return new BackoffIdleStrategy(100, 10, 1_000, 100_000);
    }

    /** Tern's own API: TcpConnection's blocking read and write, on stacks driven by runners. */
    private static Setup nativeApi() throws Exception {
        final Stacks stacks = new Stacks();
        final StackRunner clientRunner = StackRunner.start(stacks.client, idle());
        final StackRunner serverRunner = StackRunner.start(stacks.server, idle());
        final TcpOptions options = TcpOptions.DEFAULT.withNoDelay(true).withBuffers(4 << 20, 4 << 20);
        final TcpListener listener = stacks.server.listen(PORT, 4, options);
        final Arena arena = Arena.ofShared();
        final List<TcpConnection> made = new ArrayList<>();
        return new Setup() {
            @Override
            public Endpoint[] connect() throws Exception {
                final TcpConnection client = stacks.client.connect(Ipv4Address.parse("198.18.0.2"), PORT, 0, options);
                client.awaitConnected(5_000_000_000L);
                final TcpConnection server = listener.accept(5_000_000_000L);
                made.add(client);
                made.add(server);
                return new Endpoint[] {endpoint(client, arena.allocate(BULK_CHUNK)), endpoint(server, arena.allocate(BULK_CHUNK))};
            }

            @Override
            public void close() {
                made.forEach(TcpConnection::abort);
                listener.close();
                clientRunner.close();
                serverRunner.close();
                stacks.close();
                arena.close();
            }
        };
    }

    private static Endpoint endpoint(TcpConnection connection, MemorySegment buffer) {
        return new Endpoint() {
            @Override
            public void writeAll(int length) throws IOException {
                connection.write(buffer, 0, length, Long.MAX_VALUE / 4);
            }

            @Override
            public int read(int capacity) throws IOException {
                return connection.read(buffer, 0, capacity, Long.MAX_VALUE / 4);
            }

            @Override
            public void shutdownOutput() {
                connection.shutdownOutput();
            }
        };
    }

    /** NIO channels from {@code client}/{@code server} providers, blocking, direct buffers. */
    private static Setup nio(SelectorProvider clientProvider, SelectorProvider serverProvider, InetAddress serverAddress,
                             AutoCloseable resources) throws Exception {
        final ServerSocketChannel listener = serverProvider.openServerSocketChannel();
        listener.setOption(StandardSocketOptions.SO_RCVBUF, 4 << 20); // accepted connections' receive buffer, as the API's
        listener.bind(new InetSocketAddress(serverAddress, 0));
        final List<SocketChannel> made = new ArrayList<>();
        return new Setup() {
            @Override
            public Endpoint[] connect() throws Exception {
                final SocketChannel client = clientProvider.openSocketChannel();
                client.setOption(StandardSocketOptions.TCP_NODELAY, true);
                client.setOption(StandardSocketOptions.SO_SNDBUF, 4 << 20);
                client.setOption(StandardSocketOptions.SO_RCVBUF, 4 << 20);
                client.connect(listener.getLocalAddress());
                final SocketChannel server = listener.accept();
                server.setOption(StandardSocketOptions.TCP_NODELAY, true);
                made.add(client);
                made.add(server);
                return new Endpoint[] {endpoint(client), endpoint(server)};
            }

            @Override
            public void close() throws Exception {
                for (SocketChannel channel : made) {
                    channel.close();
                }
                listener.close();
                resources.close();
            }
        };
    }

    private static Endpoint endpoint(SocketChannel channel) {
        final ByteBuffer buffer = ByteBuffer.allocateDirect(BULK_CHUNK);
        return new Endpoint() {
            @Override
            public void writeAll(int length) throws IOException {
                buffer.clear().limit(length);
                while (buffer.hasRemaining()) {
                    channel.write(buffer);
                }
            }

            @Override
            public int read(int capacity) throws IOException {
                buffer.clear().limit(capacity);
                return channel.read(buffer);
            }

            @Override
            public void shutdownOutput() throws IOException {
                channel.shutdownOutput();
            }
        };
    }

    private static Setup ternNio() throws Exception {
        final Stacks stacks = new Stacks();
        final TernSelectorProvider client = TernSelectorProvider.open(stacks.client);
        final TernSelectorProvider server = TernSelectorProvider.open(stacks.server);
        return nio(client, server, InetAddress.getByName("198.18.0.2"), () -> {
            client.close();
            server.close();
            stacks.close();
        });
    }

    private static Setup kernelNio() throws Exception {
        return nio(SelectorProvider.provider(), SelectorProvider.provider(), InetAddress.getLoopbackAddress(), () -> { });
    }

    /**
     * Round trips for {@code seconds} (after a warm-up of 100,000 round trips, at most 20 s) on one connection, then
     * one-way bulk for {@code seconds} on another (after 4 GiB, at most 20 s). Each ends by the client's half-close,
     * which the other side reads as the end.
     */
    private static Result measure(Setup setup, double seconds) throws Exception {
        try (setup) {
            final Endpoint[] echoPair = setup.connect();
            final Thread echo = Thread.ofPlatform().name("bench-nio-echo").start(() -> {
                try {
                    int n;
                    while ((n = echoPair[1].read(REQUEST)) > 0) {
                        echoPair[1].writeAll(n);
                    }
                } catch (IOException e) {
                    // the setup closed under us: done
                }
            });
            final LatencyRecorder latency = new LatencyRecorder(4_000_000);
            warmRoundTrips(echoPair[0], latency);
            latency.reset();
            roundTrips(echoPair[0], latency, seconds);
            echoPair[0].shutdownOutput();
            echo.join(5_000);

            final Endpoint[] bulkPair = setup.connect();
            final AtomicLong received = new AtomicLong();
            final Thread sink = Thread.ofPlatform().name("bench-nio-sink").start(() -> {
                try {
                    int n;
                    while ((n = bulkPair[1].read(BULK_CHUNK)) > 0) {
                        received.addAndGet(n);
                    }
                } catch (IOException e) {
                    // closed at the end
                }
            });
            // As the round trips: by volume, within a bound, so that each variant is measured compiled.
            final long warmEnd = System.nanoTime() + WARM_UP_LIMIT_NS;
            for (long sent = 0; sent < WARM_UP_BULK_BYTES && System.nanoTime() - warmEnd < 0; sent += BULK_CHUNK) {
                bulkPair[0].writeAll(BULK_CHUNK);
            }
            final long startBytes = received.get();
            final long start = System.nanoTime();
            final long end = start + (long) (seconds * 1e9);
            while (System.nanoTime() - end < 0) {
                bulkPair[0].writeAll(BULK_CHUNK);
            }
            final double gbps = (received.get() - startBytes) * 8.0 / (System.nanoTime() - start);
            bulkPair[0].shutdownOutput();
            sink.join(5_000);
            return new Result(latency.percentileMicros(50), latency.percentileMicros(99), latency.count(), gbps);
        }
    }

    /**
     * Round trips until the JIT has compiled the path: a count, not a time, since a fresh JVM on two busy cores took
     * 3.5 s and about 20,000 round trips at 100-1,400 µs each before the round trip fell to 5 µs (2026-11-29); a
     * half-second warm-up measured whichever variant ran first at 165-490 µs. Bounded in time all the same.
     */
    private static void warmRoundTrips(Endpoint client, LatencyRecorder latency) throws IOException {
        final long end = System.nanoTime() + WARM_UP_LIMIT_NS;
        for (int i = 0; i < WARM_UP_ROUND_TRIPS && System.nanoTime() - end < 0; i++) {
            roundTrip(client, latency);
        }
    }

    private static void roundTrips(Endpoint client, LatencyRecorder latency, double seconds) throws IOException {
        final long end = System.nanoTime() + (long) (seconds * 1e9);
        while (System.nanoTime() - end < 0) {
            roundTrip(client, latency);
        }
    }

    private static void roundTrip(Endpoint client, LatencyRecorder latency) throws IOException {
        final long start = System.nanoTime();
        client.writeAll(REQUEST);
        int got = 0;
        while (got < REQUEST) {
            final int n = client.read(REQUEST - got);
            if (n < 0) {
                throw new IOException("echo closed");
            }
            got += n;
        }
        latency.record(System.nanoTime() - start);
    }

    public static Result ternApi(double seconds) throws Exception {
        return measure(nativeApi(), seconds);
    }

    public static Result ternProvider(double seconds) throws Exception {
        return measure(ternNio(), seconds);
    }

    public static Result kernelProvider(double seconds) throws Exception {
        return measure(kernelNio(), seconds);
    }
}
