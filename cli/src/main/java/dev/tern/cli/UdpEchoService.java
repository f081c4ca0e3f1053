package dev.tern.cli;

import dev.tern.stack.NetStack;
import dev.tern.stack.TernSocketException;
import dev.tern.stack.UdpSocket;
import org.agrona.concurrent.status.AtomicCounter;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * UDP echo (RFC 862): every datagram sent to our own address goes back to its sender. One sent to a broadcast or
 * multicast address is counted ({@code udp.echo.group_addressed}) and not answered: echoing it would make the service a
 * reflector, one spoofed datagram to the subnet's broadcast answered towards its victim by every echo server on the
 * subnet (the "fraggle" attack; Linux's inetd echo answers only what it received on a unicast socket). On a stack
 * with IPv6 a second socket serves the same port over IPv6. Polled from the command's loop.
 */
final class UdpEchoService implements AutoCloseable {
    private final UdpSocket socket;
    /** Null when the stack (or this shard) has no IPv6. */
    private final UdpSocket socket6;
    // Shared, not confined: tern serve --shards makes each shard's services on the main thread and polls them on the
    // shard's own.
    private final Arena arena = Arena.ofShared();
    private final MemorySegment buffer = arena.allocate(65536);
    private final AtomicCounter groupAddressed;
    private long echoed;

    UdpEchoService(NetStack stack, int port) throws TernSocketException {
        this.groupAddressed = stack.counters().counter("udp.echo.group_addressed");
        this.socket = stack.openUdp();
        socket.bind(port);
        this.socket6 = stack.ipv6() == null ? null : stack.openUdp6();
        if (socket6 != null) {
            socket6.bind(port);
        }
    }

    /** Echoes what has arrived; returns how many datagrams. */
    int poll() {
        return poll(socket) + (socket6 == null ? 0 : poll(socket6));
    }

    private int poll(UdpSocket from) {
        int work = 0;
        try {
            int length;
            while ((length = from.receive(buffer, 0, (int) buffer.byteSize())) >= 0) {
                work++;
                if (from.lastWasGroupAddressed()) {
                    groupAddressed.incrementRelease();
                } else if (from.ipv6()
                    ? from.sendTo6(from.lastSourceHigh(), from.lastSourceLow(), from.lastSourcePort(), buffer, 0, length)
                    : from.sendTo(from.lastSourceAddress(), from.lastSourcePort(), buffer, 0, length)) {
                    echoed++;
                }
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
        if (socket6 != null) {
            socket6.close();
        }
        arena.close();
    }
}
