package dev.tern.cli;

import dev.tern.stack.NetStack;
import dev.tern.stack.TernSocketException;
import dev.tern.stack.UdpSocket;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/** UDP echo (RFC 862): every datagram goes back to its sender. Polled from the command's loop. */
final class UdpEchoService implements AutoCloseable {
    private final UdpSocket socket;
    // Shared, not confined: tern serve --shards makes each shard's services on the main thread and polls them on the
    // shard's own.
    private final Arena arena = Arena.ofShared();
    private final MemorySegment buffer = arena.allocate(65536);
    private long echoed;

    UdpEchoService(NetStack stack, int port) throws TernSocketException {
        this.socket = stack.openUdp();
        socket.bind(port);
    }

    /** Echoes what has arrived; returns how many datagrams. */
    int poll() {
        int work = 0;
        try {
            int length;
            while ((length = socket.receive(buffer, 0, (int) buffer.byteSize())) >= 0) {
                if (socket.sendTo(socket.lastSourceAddress(), socket.lastSourcePort(), buffer, 0, length)) {
                    echoed++;
                }
                work++;
            }
        } catch (TernSocketException e) {
            // An ICMP error about an earlier echo: nothing to do for an unconnected echo server.
        }
        return work;
    }

    long echoed() {
        return echoed;
    }

    @Override
    public void close() {
        socket.close();
        arena.close();
    }
}
