package dev.tern.tcp.bench;

import dev.tern.core.io.ByteRing;
import dev.tern.ethernet.memory.MemoryWire;
import dev.tern.tcp.TcpConfig;
import dev.tern.tcp.TcpEvents;
import dev.tern.tcp.TcpOptions;
import dev.tern.tcp.TcpState;
import dev.tern.tcp.testing.TestStack;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A rough benchmark of the TCP core (the integrator's {@code tern bench} is the reference): two stacks on a
 * concurrent memory wire, each polled by its own thread on the real clock. {@code bulk MTU SECONDS [offload]}
 * streams one connection; {@code rr SECONDS} bounces 64 bytes and reports round-trip percentiles.
 *
 * <pre>  java -cp ... dev.tern.tcp.bench.TcpBench bulk 65535 5 offload</pre>
 */
public final class TcpBench {
    private TcpBench() {
    }

    public static void main(String[] args) throws Exception {
        final String mode = args.length > 0 ? args[0] : "bulk";
        if (mode.equals("rr")) {
            requestResponse(args.length > 1 ? Integer.parseInt(args[1]) : 3);
        } else {
            bulk(args.length > 1 ? Integer.parseInt(args[1]) : 65535, args.length > 2 ? Integer.parseInt(args[2]) : 3,
                args.length > 3 && args[3].equals("offload"));
        }
    }

    /** Two stacks and a connection between them, set up on the calling thread. */
    static final class Pair implements AutoCloseable {
        final MemoryWire wire;
        final TestStack server;
        final TestStack client;
        final int serverConnection;
        final int clientConnection;

        Pair(int mtu, boolean offload, int buffer) {
            wire = MemoryWire.builder().concurrent(true).mtu(mtu).checksumOffload(offload)
                .frames(mtu > 9000 ? 2048 : 8192).build();
            final TcpConfig config = TcpConfig.builder().bufferSizes(buffer, buffer).build();
            server = new TestStack("server", wire.attach("server", 0x0200_0000_0001L), "198.18.0.1/24", config,
                System.nanoTime());
            client = new TestStack("client", wire.attach("client", 0x0200_0000_0002L), "198.18.0.2/24", config,
                System.nanoTime());
            final int listener = server.tcp.listen(80, 4, TcpOptions.DEFAULT.withNoDelay(true), TcpEvents.NONE);
            clientConnection = client.tcp.connect(server.address(), 80, 0, TcpOptions.DEFAULT.withNoDelay(true),
                TcpEvents.NONE, System.nanoTime());
            int accepted = -1;
            final long deadline = System.nanoTime() + 5_000_000_000L;
            while (accepted < 0 && System.nanoTime() < deadline) {
                client.poll(System.nanoTime());
                server.poll(System.nanoTime());
                accepted = server.tcp.accept(listener);
            }
            if (accepted < 0 || client.tcp.state(clientConnection) != TcpState.ESTABLISHED) {
                throw new IllegalStateException("no connection");
            }
            serverConnection = accepted;
        }

        @Override
        public void close() {
            client.close();
            server.close();
            wire.close();
        }
    }

    static void bulk(int mtu, int seconds, boolean offload) throws InterruptedException {
        try (Pair pair = new Pair(mtu, offload, 4 << 20); Arena arena = Arena.ofShared()) {
            final MemorySegment data = arena.allocate(1 << 20);
            final MemorySegment sink = arena.allocate(1 << 20);
            final AtomicBoolean running = new AtomicBoolean(true);
            final AtomicLong received = new AtomicLong();
            final Thread sender = new Thread(() -> {
                final ByteRing out = pair.client.tcp.sendBuffer(pair.clientConnection);
                while (running.get()) {
                    final long now = System.nanoTime();
                    final int room = out.freeSpace();
                    if (room > 0) {
                        out.write(data, 0, Math.min(room, (int) data.byteSize()));
                        pair.client.tcp.sendable(pair.clientConnection, now);
                    }
                    pair.client.poll(now);
                }
            }, "sender");
            final Thread receiver = new Thread(() -> {
                final ByteRing in = pair.server.tcp.receiveBuffer(pair.serverConnection);
                long total = 0;
                while (running.get()) {
                    final long now = System.nanoTime();
                    pair.server.poll(now);
                    int available;
                    boolean read = false;
                    while ((available = in.available()) > 0) {
                        total += in.read(sink, 0, Math.min(available, (int) sink.byteSize()));
                        read = true;
                    }
                    if (read) {
                        pair.server.tcp.consumed(pair.serverConnection, now);
                        received.setRelease(total);
                    }
                }
            }, "receiver");
            sender.start();
            receiver.start();
            Thread.sleep(1000);
            final long start = System.nanoTime();
            final long before = received.getAcquire();
            Thread.sleep(seconds * 1000L);
            final long bytes = received.getAcquire() - before;
            final double elapsed = (System.nanoTime() - start) / 1e9;
            running.set(false);
            sender.join();
            receiver.join();
            System.out.printf("bulk mtu %d%s: %.2f Gbit/s (%d MB in %.2f s), retransmits %d%n", mtu,
                offload ? " checksum-offload" : "", bytes * 8 / elapsed / 1e9, bytes >> 20, elapsed,
                pair.client.counter("tcp.tx.retransmits"));
        }
    }

    static void requestResponse(int seconds) throws InterruptedException {
        try (Pair pair = new Pair(1500, true, 1 << 16); Arena arena = Arena.ofShared()) {
            final MemorySegment request = arena.allocate(64);
            final MemorySegment buffer = arena.allocate(64);
            final MemorySegment echo = arena.allocate(64);
            final AtomicBoolean running = new AtomicBoolean(true);
            final Thread server = new Thread(() -> {
                final ByteRing in = pair.server.tcp.receiveBuffer(pair.serverConnection);
                final ByteRing out = pair.server.tcp.sendBuffer(pair.serverConnection);
                while (running.get()) {
                    final long now = System.nanoTime();
                    pair.server.poll(now);
                    if (in.available() >= 64) {
                        in.read(echo, 0, 64);
                        pair.server.tcp.consumed(pair.serverConnection, now);
                        out.write(echo, 0, 64);
                        pair.server.tcp.sendable(pair.serverConnection, now);
                    }
                }
            }, "server");
            server.start();
            final ByteRing out = pair.client.tcp.sendBuffer(pair.clientConnection);
            final ByteRing in = pair.client.tcp.receiveBuffer(pair.clientConnection);
            final long[] samples = new long[20_000_000];
            int count = 0;
            final long warmupEnd = System.nanoTime() + 1_000_000_000L;
            final long end = warmupEnd + seconds * 1_000_000_000L;
            long now = System.nanoTime();
            while (now < end) {
                final long start = now;
                out.write(request, 0, 64);
                pair.client.tcp.sendable(pair.clientConnection, start);
                do {
                    now = System.nanoTime();
                    pair.client.poll(now);
                } while (in.available() < 64);
                in.read(buffer, 0, 64);
                pair.client.tcp.consumed(pair.clientConnection, now);
                now = System.nanoTime();
                if (start > warmupEnd && count < samples.length) {
                    samples[count++] = now - start;
                }
            }
            running.set(false);
            server.join();
            Arrays.sort(samples, 0, count);
            System.out.printf("rr 64 B: %d round trips, p50 %.2f us, p99 %.2f us, p99.9 %.2f us%n", count,
                samples[count / 2] / 1e3, samples[(int) (count * 0.99)] / 1e3, samples[(int) (count * 0.999)] / 1e3);
        }
    }
}
