package dev.tern.tcp.testing;

import dev.tern.core.io.ByteRing;
import dev.tern.tcp.TcpEvents;

import java.lang.foreign.MemorySegment;
import java.util.function.LongSupplier;

/**
 * Events of an echo server on a {@link TestStack}: every connection accepted is read and echoed through
 * {@code scratch}, and closed once the peer closed and everything was read. Connections that end with an error are
 * counted in {@link #errors}.
 */
public final class EchoServer implements TcpEvents {
    private final TestStack server;
    private final MemorySegment scratch;
    private final LongSupplier clock;
    public int errors;

    public EchoServer(TestStack server, MemorySegment scratch, LongSupplier clock) {
        this.server = server;
        this.scratch = scratch;
        this.clock = clock;
    }

    @Override
    public void acceptable(int listener) {
        int c;
        while ((c = server.tcp.accept(listener)) >= 0) {
            readable(c);
        }
    }

    @Override
    public void readable(int c) {
        final ByteRing in = server.tcp.receiveBuffer(c);
        final int n = in.read(scratch, 0, (int) scratch.byteSize());
        if (n > 0) {
            server.tcp.consumed(c, clock.getAsLong());
            server.tcp.sendBuffer(c).write(scratch, 0, n);
            server.tcp.sendable(c, clock.getAsLong());
        }
        if (server.tcp.receiveShutdown(c) && in.available() == 0) {
            server.tcp.close(c, clock.getAsLong());
        }
    }

    @Override
    public void closed(int c, int error) {
        if (error != 0) {
            errors++;
        }
    }
}
