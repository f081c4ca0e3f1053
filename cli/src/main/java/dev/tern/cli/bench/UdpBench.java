package dev.tern.cli.bench;

import dev.tern.core.net.Ipv4Address;
import dev.tern.ethernet.memory.MemoryPipe;
import dev.tern.stack.NetStack;
import dev.tern.stack.TernSocketException;
import dev.tern.stack.UdpSocket;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * 64-byte UDP request/response and message rate: two Tern stacks joined by a {@link MemoryPipe}, each polled by
 * its own thread (client and server), against the kernel's UDP on loopback (java.nio DatagramChannel, blocking,
 * one thread per side), in the same run.
 */
public final class UdpBench {
    /** What one side of the comparison measured. */
    public record Result(double p50Micros, double p99Micros, int roundTrips, double messagesPerSecond) {
    }

    private static final int PORT = 7;
    private static final int SIZE = 64;

    private UdpBench() {
    }

    /** Tern: round trips for {@code seconds}, then a one-way message rate for {@code seconds}. */
    public static Result tern(double seconds) throws Exception {
        try (MemoryPipe pipe = MemoryPipe.create(0x0200_0000_0001L, 0x0200_0000_0002L, 1500, 1 << 20, false);
             NetStack client = NetStack.builder().name("bench-udp-client").link(pipe.first())
                 .address("198.18.0.1/24").countersInMemory().build();
             NetStack server = NetStack.builder().name("bench-udp-server").link(pipe.second())
                 .address("198.18.0.2/24").countersInMemory().build();
             Arena arena = Arena.ofShared()) {
            final UdpSocket serverSocket = server.openUdp();
            serverSocket.bind(PORT);
            final UdpSocket clientSocket = client.openUdp();
            clientSocket.connect(Ipv4Address.parse("198.18.0.2"), PORT);
            final AtomicBoolean running = new AtomicBoolean(true);
            final AtomicLong received = new AtomicLong();
            final AtomicBoolean echo = new AtomicBoolean(true);
            final MemorySegment serverBuffer = arena.allocate(2048);
            final Thread serverThread = new Thread(() -> {
                try {
                    while (running.get()) {
                        server.doWork();
                        int length;
                        while ((length = serverSocket.receive(serverBuffer, 0, 2048)) >= 0) {
                            received.lazySet(received.get() + 1);
                            if (echo.get()) {
                                serverSocket.sendTo(serverSocket.lastSourceAddress(), serverSocket.lastSourcePort(),
                                    serverBuffer, 0, length);
                            }
                        }
                    }
                } catch (TernSocketException e) {
                    throw new IllegalStateException(e);
                }
            }, "tern-bench-server");
            serverThread.start();
            final MemorySegment message = arena.allocate(SIZE);
            final MemorySegment reply = arena.allocate(2048);
            final LatencyRecorder latency = new LatencyRecorder(4_000_000);
            roundTrips(client, clientSocket, message, reply, latency, 0.5); // warm-up, resolves ARP
            latency.reset();
            roundTrips(client, clientSocket, message, reply, latency, seconds);

            echo.set(false);
            final long before = received.get();
            final long start = System.nanoTime();
            final long end = start + (long) (seconds * 1e9);
            while (System.nanoTime() - end < 0) {
                for (int i = 0; i < 32; i++) {
                    clientSocket.send(message, 0, SIZE);
                }
                client.doWork();
            }
            final double rate = (received.get() - before) / ((System.nanoTime() - start) / 1e9);
            running.set(false);
            serverThread.join();
            return new Result(latency.percentileMicros(50), latency.percentileMicros(99), latency.count(), rate);
        }
    }

    private static void roundTrips(NetStack client, UdpSocket socket, MemorySegment message, MemorySegment reply,
                                   LatencyRecorder latency, double seconds) throws TernSocketException {
        final long end = System.nanoTime() + (long) (seconds * 1e9);
        while (System.nanoTime() - end < 0) {
            final long start = System.nanoTime();
            socket.send(message, 0, SIZE);
            while (true) {
                client.doWork();
                if (socket.receive(reply, 0, 2048) >= 0) {
                    break;
                }
                if (System.nanoTime() - start > 100_000_000L) {
                    break; // a lost round trip (cannot happen on a clean wire) must not hang the benchmark
                }
            }
            latency.record(System.nanoTime() - start);
        }
    }

    /** The kernel: the same exchanges over loopback with blocking DatagramChannels. */
    public static Result kernel(double seconds) throws Exception {
        try (DatagramChannel server = DatagramChannel.open(StandardProtocolFamily.INET);
             DatagramChannel client = DatagramChannel.open(StandardProtocolFamily.INET)) {
            server.bind(new InetSocketAddress("127.0.0.1", 0));
            client.connect(server.getLocalAddress());
            final AtomicBoolean running = new AtomicBoolean(true);
            final AtomicBoolean echo = new AtomicBoolean(true);
            final AtomicLong received = new AtomicLong();
            final Thread serverThread = new Thread(() -> {
                final ByteBuffer buffer = ByteBuffer.allocateDirect(2048);
                try {
                    while (running.get()) {
                        buffer.clear();
                        final var from = server.receive(buffer);
                        received.lazySet(received.get() + 1);
                        if (echo.get() && from != null) {
                            buffer.flip();
                            server.send(buffer, from);
                        }
                    }
                } catch (IOException e) {
                    // closed at the end of the run
                }
            }, "kernel-bench-server");
            serverThread.start();
            final ByteBuffer message = ByteBuffer.allocateDirect(SIZE);
            final ByteBuffer reply = ByteBuffer.allocateDirect(2048);
            final LatencyRecorder latency = new LatencyRecorder(4_000_000);
            kernelRoundTrips(client, message, reply, latency, 0.5);
            latency.reset();
            kernelRoundTrips(client, message, reply, latency, seconds);

            echo.set(false);
            final long before = received.get();
            final long start = System.nanoTime();
            final long end = start + (long) (seconds * 1e9);
            while (System.nanoTime() - end < 0) {
                message.clear();
                client.write(message);
            }
            Thread.sleep(50);
            final double rate = (received.get() - before) / ((System.nanoTime() - start) / 1e9);
            running.set(false);
            message.clear();
            client.write(message);
            server.close();
            serverThread.join(2000);
            return new Result(latency.percentileMicros(50), latency.percentileMicros(99), latency.count(), rate);
        }
    }

    private static void kernelRoundTrips(DatagramChannel client, ByteBuffer message, ByteBuffer reply,
                                         LatencyRecorder latency, double seconds) throws IOException {
        final long end = System.nanoTime() + (long) (seconds * 1e9);
        while (System.nanoTime() - end < 0) {
            final long start = System.nanoTime();
            message.clear();
            client.write(message);
            reply.clear();
            client.read(reply);
            latency.record(System.nanoTime() - start);
        }
    }
}
