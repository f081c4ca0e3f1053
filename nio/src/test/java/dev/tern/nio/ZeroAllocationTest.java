package dev.tern.nio;

import dev.tern.core.testing.Allocations;
import dev.tern.nio.testing.World;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.StandardProtocolFamily;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * In steady state a Tern channel's read and write with direct buffers allocate nothing: the bytes the application
 * thread and the stack's threads allocate over a window of round trips after a warm-up ({@link Allocations#measure}:
 * the window is measured whole, after the windows it takes a one-off deoptimisation to settle).
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class ZeroAllocationTest {
    private static final int WARM_UP = 30_000;
    private static final int WINDOW = 50_000;

    interface RoundTrip {
        void run() throws IOException;
    }

    private static long cleanestWindow(RoundTrip roundTrip) throws IOException {
        return Allocations.measure(WARM_UP, WINDOW, () -> {
            try {
                roundTrip.run();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
    }

    @Test
    void tcpReadAndWriteWithDirectBuffersAllocateNothing() throws Exception {
        try (World world = World.tern();
             ServerSocketChannel server = world.server().openServerSocketChannel();
             SocketChannel client = world.client().openSocketChannel()) {
            server.bind(new InetSocketAddress(world.serverAddress(), 0));
            client.connect(server.getLocalAddress());
            client.setOption(java.net.StandardSocketOptions.TCP_NODELAY, true);
            final SocketChannel accepted = server.accept();
            accepted.setOption(java.net.StandardSocketOptions.TCP_NODELAY, true);
            final var echoThread = Executors.newSingleThreadExecutor();
            final CompletableFuture<Void> echo = CompletableFuture.runAsync(() -> {
                final ByteBuffer buffer = ByteBuffer.allocateDirect(64);
                try {
                    while (true) {
                        buffer.clear();
                        if (accepted.read(buffer) < 0) {
                            return;
                        }
                        buffer.flip();
                        while (buffer.hasRemaining()) {
                            accepted.write(buffer);
                        }
                    }
                } catch (IOException e) {
                    // closed at the end
                }
            }, echoThread);
            final ByteBuffer out = ByteBuffer.allocateDirect(64);
            final ByteBuffer in = ByteBuffer.allocateDirect(64);
            final long allocated = cleanestWindow(() -> {
                out.clear();
                client.write(out);
                in.clear();
                while (in.hasRemaining()) {
                    client.read(in);
                }
            });
            assertEquals(0, allocated, "bytes allocated by " + WINDOW + " TCP round trips of 64 bytes");
            client.shutdownOutput();
            echo.get(10, TimeUnit.SECONDS);
            echoThread.shutdown();
        }
    }

    /** IPv4 channels; and an IPv4 and an IPv6 client of a dual-stack echo side ({@code DatagramChannel.open()}). */
    @org.junit.jupiter.params.ParameterizedTest(name = "{0}")
    @org.junit.jupiter.params.provider.ValueSource(strings = {"IPv4", "IPv4 to dual-stack", "IPv6 to dual-stack"})
    void udpSendAndReceiveWithDirectBuffersAllocateNothing(String path) throws Exception {
        final boolean dualStack = path.endsWith("dual-stack");
        final boolean ipv6 = path.startsWith("IPv6");
        try (World world = dualStack ? World.ternDualStack() : World.tern();
             DatagramChannel echoSide = dualStack ? world.server().openDatagramChannel()
                 : world.server().openDatagramChannel(StandardProtocolFamily.INET);
             DatagramChannel client = world.client().openDatagramChannel(ipv6 ? StandardProtocolFamily.INET6
                 : StandardProtocolFamily.INET)) {
            final InetAddress serverAddress = ipv6 ? InetAddress.getByName("2001:db8::1") : world.serverAddress();
            echoSide.bind(dualStack ? new InetSocketAddress(0) : new InetSocketAddress(world.serverAddress(), 0));
            client.bind(new InetSocketAddress(ipv6 ? InetAddress.getByName("2001:db8::2") : world.clientAddress(), 0));
            final SocketAddress target = new InetSocketAddress(serverAddress,
                ((InetSocketAddress) echoSide.getLocalAddress()).getPort());
            final var echoThread = Executors.newSingleThreadExecutor();
            final CompletableFuture<Void> echo = CompletableFuture.runAsync(() -> {
                final ByteBuffer buffer = ByteBuffer.allocateDirect(64);
                try {
                    while (echoSide.isOpen()) {
                        buffer.clear();
                        final SocketAddress source = echoSide.receive(buffer);
                        buffer.flip();
                        echoSide.send(buffer, source);
                    }
                } catch (IOException e) {
                    // closed at the end
                }
            }, echoThread);
            final ByteBuffer out = ByteBuffer.allocateDirect(64);
            final ByteBuffer in = ByteBuffer.allocateDirect(64);
            final long allocated = cleanestWindow(() -> {
                out.clear();
                client.send(out, target);
                in.clear();
                client.receive(in);
            });
            assertEquals(0, allocated, "bytes allocated by " + WINDOW + " UDP round trips of 64 bytes, " + path);
            echoSide.close();
            echo.get(10, TimeUnit.SECONDS);
            echoThread.shutdown();
        }
    }
}
