package dev.tern.nio;

import dev.tern.nio.examples.NettyEchoServer;
import dev.tern.nio.testing.World;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.security.MessageDigest;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

/**
 * Netty 4.2's NIO transport on Tern's provider (event loop selector and server channel), with a client on a second
 * Tern stack: what it echoes is what was sent (sha-256).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class NettyOnTernTest {
    @Test
    void aNettyEchoServerOnTernReturnsFourMebibytesIntact() throws Exception {
        try (World world = World.tern();
             NettyEchoServer server = NettyEchoServer.start(world.server(), new InetSocketAddress(world.serverAddress(), 7007));
             SocketChannel client = world.client().openSocketChannel()) {
            client.connect(server.localAddress());
            final int size = 4 << 20;
            final MessageDigest sent = ChannelBehaviour.sha256();
            final CompletableFuture<Void> writer = CompletableFuture.runAsync(() -> {
                try {
                    final SplittableRandom random = new SplittableRandom(11);
                    final byte[] chunk = new byte[32768];
                    for (int done = 0; done < size; done += chunk.length) {
                        random.nextBytes(chunk);
                        sent.update(chunk);
                        final ByteBuffer buffer = ByteBuffer.wrap(chunk);
                        while (buffer.hasRemaining()) {
                            client.write(buffer);
                        }
                    }
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            }, java.util.concurrent.Executors.newSingleThreadExecutor());
            final MessageDigest received = ChannelBehaviour.sha256();
            final ByteBuffer buffer = ByteBuffer.allocate(65536);
            for (int got = 0; got < size; ) {
                buffer.clear();
                final int n = client.read(buffer);
                if (n < 0) {
                    break;
                }
                received.update(buffer.array(), 0, n);
                got += n;
            }
            writer.get(60, TimeUnit.SECONDS);
            assertArrayEquals(sent.digest(), received.digest());
        }
    }
}
