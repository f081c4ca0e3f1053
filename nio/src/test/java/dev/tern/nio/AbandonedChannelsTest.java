package dev.tern.nio;

import dev.tern.nio.testing.World;
import dev.tern.stack.NetStack;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.ref.WeakReference;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A program that abandons channels (drops them unclosed) or closes them from other threads leaks no stack resources
 * and loses nothing on the channels it keeps; the nio counters say so.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class AbandonedChannelsTest {
    @Test
    void abandonedConnectionsAreClosedByTheCleanerAndTheKeptOnesStillCarryEveryByte() throws Exception {
        try (World world = World.tern();
             ServerSocketChannel server = world.server().openServerSocketChannel()) {
            server.bind(new InetSocketAddress(world.serverAddress(), 0));
            final List<SocketChannel> keptClients = new ArrayList<>();
            final List<SocketChannel> keptAccepted = new ArrayList<>();
            final List<WeakReference<SocketChannel>> abandoned = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                final SocketChannel client = world.client().openSocketChannel();
                client.connect(server.getLocalAddress());
                final SocketChannel accepted = server.accept();
                if (i % 2 == 0) {
                    keptClients.add(client);
                    keptAccepted.add(accepted);
                } else {
                    abandoned.add(new WeakReference<>(client));
                    accepted.close(); // closed from this thread while its peer is abandoned
                }
            }
            final NetStack clientStack = ((TernSelectorProvider) world.client()).stack();
            final long deadline = System.nanoTime() + 60_000_000_000L;
            while (clientStack.counters().value("nio.tcp.abandoned") < 10 && System.nanoTime() - deadline < 0) {
                System.gc();
                Thread.sleep(50);
            }
            assertEquals(10, clientStack.counters().value("nio.tcp.abandoned"), "every abandoned channel was cleaned");
            assertEquals(20, clientStack.counters().value("nio.tcp.opened"));
            assertEquals(10, clientStack.counters().value("nio.tcp.closed"), "opened - closed = the 10 kept");
            assertTrue(abandoned.stream().allMatch(reference -> reference.get() == null));

            for (int i = 0; i < keptClients.size(); i++) {
                final byte[] data = new byte[100_000];
                java.util.Arrays.fill(data, (byte) i);
                final ByteBuffer out = ByteBuffer.wrap(data);
                while (out.hasRemaining()) {
                    keptClients.get(i).write(out);
                }
                final ByteBuffer in = ByteBuffer.allocate(data.length);
                while (in.hasRemaining()) {
                    keptAccepted.get(i).read(in);
                }
                assertTrue(java.util.Arrays.equals(data, in.array()), "kept pair " + i + " intact");
            }
            for (int i = 0; i < keptClients.size(); i++) {
                keptClients.get(i).close();
                keptAccepted.get(i).close();
            }
            assertEquals(20, clientStack.counters().value("nio.tcp.closed"));
        }
    }
}
