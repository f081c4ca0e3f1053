package dev.tern.tcp.bench;

import dev.tern.core.io.ByteRing;
import dev.tern.core.time.VirtualClock;
import dev.tern.ethernet.memory.MemoryWire;
import dev.tern.tcp.TcpConfig;
import dev.tern.tcp.TcpEvents;
import dev.tern.tcp.TcpOptions;
import dev.tern.tcp.testing.TestStack;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * Both stacks polled from one thread on a virtual clock: the CPU cost of the TCP path without any cross-thread
 * handoff. {@code bulk MTU SECONDS [offload]} or {@code rr SECONDS}.
 */
public final class SingleThreadBench {
    private SingleThreadBench() {
    }

    public static void main(String[] args) {
        final boolean rr = args[0].equals("rr");
        final int mtu = rr ? 1500 : Integer.parseInt(args[1]);
        final int seconds = Integer.parseInt(args[rr ? 1 : 2]);
        final boolean offload = rr || (args.length > 3 && args[3].equals("offload"));
        final VirtualClock clock = new VirtualClock(1_000_000_000L);
        try (MemoryWire wire = MemoryWire.builder().clock(clock).mtu(mtu).checksumOffload(offload)
            .frames(mtu > 9000 ? 2048 : 8192).build(); Arena arena = Arena.ofConfined()) {
            final TcpConfig config = TcpConfig.builder().bufferSizes(4 << 20, 4 << 20).build();
            final TestStack server = new TestStack("server", wire.attach("s", 1), "198.18.0.1/24", config, clock.nanoTime());
            final TestStack client = new TestStack("client", wire.attach("c", 2), "198.18.0.2/24", config, clock.nanoTime());
            final int listener = server.tcp.listen(80, 4, TcpOptions.DEFAULT.withNoDelay(true), TcpEvents.NONE);
            final int c = client.tcp.connect(server.address(), 80, 0, TcpOptions.DEFAULT.withNoDelay(true),
                TcpEvents.NONE, clock.nanoTime());
            int s = -1;
            while (s < 0) {
                client.poll(clock.nanoTime());
                server.poll(clock.nanoTime());
                clock.advance(1_000_000);
                s = server.tcp.accept(listener);
            }
            final MemorySegment data = arena.allocate(1 << 20);
            final MemorySegment sink = arena.allocate(1 << 20);
            final ByteRing out = client.tcp.sendBuffer(c);
            final ByteRing in = server.tcp.receiveBuffer(s);
            final ByteRing back = server.tcp.sendBuffer(s);
            final ByteRing reply = client.tcp.receiveBuffer(c);
            for (int phase = 0; phase < 2; phase++) {
                final long end = System.nanoTime() + (phase == 0 ? 2 : seconds) * 1_000_000_000L;
                long bytes = 0;
                long rounds = 0;
                final long start = System.nanoTime();
                while (System.nanoTime() < end) {
                    for (int i = 0; i < 100; i++) {
                        if (rr) {
                            out.write(data, 0, 64);
                            client.tcp.sendable(c, clock.nanoTime());
                            client.poll(clock.nanoTime());
                            server.poll(clock.nanoTime());
                            in.read(sink, 0, in.available());
                            server.tcp.consumed(s, clock.nanoTime());
                            back.write(sink, 0, 64);
                            server.tcp.sendable(s, clock.nanoTime());
                            server.poll(clock.nanoTime());
                            client.poll(clock.nanoTime());
                            reply.read(sink, 0, reply.available());
                            client.tcp.consumed(c, clock.nanoTime());
                        } else {
                            final int room = out.freeSpace();
                            if (room > 0) {
                                out.write(data, 0, Math.min(room, (int) data.byteSize()));
                                client.tcp.sendable(c, clock.nanoTime());
                            }
                            client.poll(clock.nanoTime());
                            server.poll(clock.nanoTime());
                            int available;
                            while ((available = in.available()) > 0) {
                                bytes += in.read(sink, 0, Math.min(available, (int) sink.byteSize()));
                            }
                            server.tcp.consumed(s, clock.nanoTime());
                        }
                        clock.advance(1_000);
                        rounds++;
                    }
                }
                final double elapsed = (System.nanoTime() - start) / 1e9;
                if (phase == 1) {
                    if (rr) {
                        System.out.printf("single thread rr 64 B: %.2f us per round trip (%d)%n", elapsed * 1e6 / rounds,
                            rounds);
                    } else {
                        System.out.printf("single thread bulk mtu %d%s: %.2f Gbit/s, %d segments%n", mtu,
                            offload ? " offload" : "", bytes * 8 / elapsed / 1e9, client.counter("tcp.tx.segments"));
                    }
                }
            }
            client.close();
            server.close();
        }
    }
}
