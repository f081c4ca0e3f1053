package dev.tern.nio;

import dev.tern.core.net.InterfaceAddress;
import dev.tern.ethernet.link.Link;
import dev.tern.stack.NetStack;
import dev.tern.stack.TcpConnection;
import dev.tern.stack.TcpListener;
import dev.tern.stack.TernSocketException;
import dev.tern.stack.UdpSocket;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.IdleStrategy;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

/**
 * The stack at the other end of {@code tern.link=memory}: ARP and ping, UDP and TCP echo on port 7 (RFC 862), TCP
 * discard on port 9 (RFC 863), as the {@code tern} command's memory peer answers. One thread owns and polls it.
 */
final class MemoryPeer implements AutoCloseable {
    static final int ECHO_PORT = 7;
    static final int DISCARD_PORT = 9;

    private final NetStack stack;
    private final Thread thread;
    private volatile boolean running = true;

    private MemoryPeer(NetStack stack) {
        this.stack = stack;
        this.thread = Thread.ofPlatform().name("tern-" + stack.name()).daemon().unstarted(this::run);
    }

    /** A peer at {@code address} and, when {@code ipv6} is not null, that IPv6 address too (no DAD: the wire is ours). */
    static MemoryPeer start(String name, Link link, InterfaceAddress address, dev.tern.core.net.Ipv6InterfaceAddress ipv6) {
        final NetStack.Builder builder = NetStack.builder().name(name).link(link).address(address).countersInMemory();
        if (ipv6 != null) {
            builder.ipv6(dev.tern.ipv6.Ipv6Config.withAddresses(java.util.List.of(ipv6)).withDadTransmits(0));
        }
        final NetStack stack = builder.build();
        final MemoryPeer peer = new MemoryPeer(stack);
        peer.thread.start();
        return peer;
    }

    private void run() {
        final IdleStrategy idle = new BackoffIdleStrategy(100, 10, 1_000, 200_000);
        try (Arena arena = Arena.ofConfined()) {
            final MemorySegment buffer = arena.allocate(65536);
            final UdpSocket udpEcho = stack.openUdp();
            udpEcho.bind(ECHO_PORT);
            final TcpListener echo = stack.listen(ECHO_PORT, 64);
            final TcpListener discard = stack.listen(DISCARD_PORT, 64);
            final List<TcpConnection> echoing = new ArrayList<>();
            final List<TcpConnection> discarding = new ArrayList<>();
            while (running) {
                int work = stack.doWork();
                int length;
                while ((length = udpEcho.receive(buffer, 0, (int) buffer.byteSize())) >= 0) {
                    udpEcho.sendTo(udpEcho.lastSourceAddress(), udpEcho.lastSourcePort(), buffer, 0, length);
                    work++;
                }
                work += accept(echo, echoing) + accept(discard, discarding);
                work += serve(echoing, buffer, true) + serve(discarding, buffer, false);
                idle.idle(work);
            }
        } catch (TernSocketException | RuntimeException e) {
            System.err.println("tern: memory peer " + stack.name() + " stopped: " + e);
        } finally {
            stack.close();
        }
    }

    private static int accept(TcpListener listener, List<TcpConnection> into) throws TernSocketException {
        int accepted = 0;
        TcpConnection connection;
        while ((connection = listener.accept()) != null) {
            into.add(connection);
            accepted++;
        }
        return accepted;
    }

    /** Echoes (or discards) what each connection received, as much as its send ring takes; closes ended ones. */
    private static int serve(List<TcpConnection> connections, MemorySegment buffer, boolean echo) {
        int work = 0;
        for (int i = connections.size() - 1; i >= 0; i--) {
            final TcpConnection connection = connections.get(i);
            try {
                final int room = echo ? Math.min(connection.writableBytes(), (int) buffer.byteSize()) : (int) buffer.byteSize();
                final int n = room == 0 ? 0 : connection.read(buffer, 0, room);
                if (n > 0) {
                    if (echo) {
                        connection.write(buffer, 0, n);
                    }
                    work++;
                } else if (n < 0) {
                    connection.close();
                    connections.remove(i);
                    work++;
                }
            } catch (TernSocketException e) {
                connection.abort();
                connections.remove(i);
            }
        }
        return work;
    }

    @Override
    public void close() {
        running = false;
        try {
            thread.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
