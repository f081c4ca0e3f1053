package dev.tern.cli.bench;

import dev.tern.core.net.Ipv4Address;
import dev.tern.ethernet.memory.MemoryPipe;
import dev.tern.stack.NetStack;
import dev.tern.stack.TcpConnection;
import dev.tern.stack.TcpListener;
import dev.tern.stack.TernSocketException;
import dev.tern.tcp.TcpOptions;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;

/**
 * New TCP connections per second (against the kernel on loopback): a connection opened (three-way handshake), accepted, then reset by both
 * ends, one after another on one thread. Tern: two stacks on a {@link MemoryPipe}, both polled by the caller. The
 * kernel: loopback {@code SocketChannel}s, blocking connect and accept, closed with {@code SO_LINGER} 0 (a reset, so
 * neither side keeps TIME-WAIT, as Tern's abort). Same run, same thread count.
 */
public final class ConnectBench {
    /** Connections per second and how many were measured. */
    public record Rate(double perSecond, long connections) {
    }

    private static final int PORT = 5002;
    /**
     * Warm-up before measuring, on both sides: Tern's connection path (connect, accept, the socket objects) runs
     * interpreted for its first few thousand connections, at under a thousand a second here, against about 70,000 once
     * compiled.
     */
    private static final double WARM_UP_SECONDS = 2;

    private ConnectBench() {
    }

    /** Tern: opens, accepts and resets connections for {@code seconds} after the warm-up. */
    public static Rate tern(double seconds) throws Exception {
        try (MemoryPipe pipe = MemoryPipe.create(0x0200_0000_0011L, 0x0200_0000_0012L, 1500, 1 << 22, true);
             NetStack client = NetStack.builder().name("bench-connect-client").link(pipe.first())
                 .address("198.18.0.1/24").countersInMemory().build();
             NetStack server = NetStack.builder().name("bench-connect-server").link(pipe.second())
                 .address("198.18.0.2/24").countersInMemory().build()) {
            final TcpListener listener = server.listen(PORT, 64, TcpOptions.DEFAULT);
            final int address = Ipv4Address.parse("198.18.0.2");
            ternConnections(client, server, listener, address, WARM_UP_SECONDS);
            final long start = System.nanoTime();
            final long count = ternConnections(client, server, listener, address, seconds);
            return new Rate(count * 1e9 / (System.nanoTime() - start), count);
        }
    }

    private static long ternConnections(NetStack client, NetStack server, TcpListener listener, int address,
                                        double seconds) throws TernSocketException {
        final long end = System.nanoTime() + (long) (seconds * 1e9);
        long count = 0;
        while (System.nanoTime() - end < 0) {
            final long giveUp = System.nanoTime() + 1_000_000_000L;
            final TcpConnection connection = client.connect(address, PORT, 0, TcpOptions.DEFAULT);
            TcpConnection accepted = null;
            while (accepted == null || !connection.isConnected()) {
                client.doWork();
                server.doWork();
                if (accepted == null) {
                    accepted = listener.accept();
                }
                if (System.nanoTime() - giveUp > 0) {
                    throw new IllegalStateException("a connection took over a second to open");
                }
            }
            connection.abort();
            accepted.abort();
            client.doWork();
            server.doWork();
            count++;
        }
        return count;
    }

    /** The kernel on loopback, the same cycle. */
    public static Rate kernel(double seconds) throws Exception {
        try (ServerSocketChannel listener = ServerSocketChannel.open()) {
            listener.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 64);
            final InetSocketAddress address = (InetSocketAddress) listener.getLocalAddress();
            kernelConnections(listener, address, WARM_UP_SECONDS);
            final long start = System.nanoTime();
            final long count = kernelConnections(listener, address, seconds);
            return new Rate(count * 1e9 / (System.nanoTime() - start), count);
        }
    }

    private static long kernelConnections(ServerSocketChannel listener, InetSocketAddress address, double seconds)
        throws Exception {
        final long end = System.nanoTime() + (long) (seconds * 1e9);
        long count = 0;
        while (System.nanoTime() - end < 0) {
            try (SocketChannel connection = SocketChannel.open(address); SocketChannel accepted = listener.accept()) {
                connection.setOption(StandardSocketOptions.SO_LINGER, 0);
                accepted.setOption(StandardSocketOptions.SO_LINGER, 0);
            }
            count++;
        }
        return count;
    }
}
