package dev.tern.nio;

import dev.tern.nio.examples.NettyEchoServer;
import dev.tern.nio.testing.World;
import dev.tern.stack.NetStack;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A connection registered with a Tern selector gives its rings back once it has been neither read nor written for
 * the provider's idle time ({@link TernSelectorProvider#releaseIdleBuffersAfter}), as {@code tern serve --http} does
 * between requests: the server stack's attached bytes fall to 0, and the next request is served intact. A connection
 * in use, or with bytes waiting to be read, keeps them; 0 turns the sweep off. Netty's event loop gets it unchanged.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class IdleChannelBuffersTest {
    private static final String RELEASED = "tcp.memory.rings_released_idle";
    private static final String ATTACHED = "tcp.memory.attached_bytes";

    private static byte[] random(long seed, int length) {
        final byte[] bytes = new byte[length];
        new SplittableRandom(seed).nextBytes(bytes);
        return bytes;
    }

    /** A server-side connection on a selector, and its client. */
    private record Pair(SocketChannel client, SocketChannel accepted, Selector selector, NetStack serverStack)
        implements AutoCloseable {
        static Pair open(World world, Duration idle) throws IOException {
            final TernSelectorProvider provider = (TernSelectorProvider) world.server();
            provider.releaseIdleBuffersAfter(idle);
            try (ServerSocketChannel server = provider.openServerSocketChannel()) {
                server.bind(new InetSocketAddress(world.serverAddress(), 0));
                final SocketChannel client = world.client().openSocketChannel();
                client.connect(server.getLocalAddress());
                final SocketChannel accepted = server.accept();
                accepted.configureBlocking(false);
                final Selector selector = provider.openSelector();
                accepted.register(selector, SelectionKey.OP_READ);
                return new Pair(client, accepted, selector, provider.stack());
            }
        }

        long counter(String name) {
            return serverStack.counters().value(name);
        }

        /** Selects for {@code millis}, reading whatever arrives into {@code into} (if not null). */
        void selectFor(long millis, ByteBuffer into) throws IOException {
            final long end = System.nanoTime() + millis * 1_000_000L;
            while (System.nanoTime() < end) {
                selector.select(20);
                if (into != null) {
                    drain(into);
                }
                selector.selectedKeys().clear();
            }
        }

        /** Selects until the stack has released {@code count} connections' rings in all, or 5 s passed. */
        void selectUntilReleased(long count) throws IOException {
            final long end = System.nanoTime() + 5_000_000_000L;
            while (counter(RELEASED) < count && System.nanoTime() < end) {
                selectFor(20, null);
            }
        }

        void drain(ByteBuffer into) throws IOException {
            while (into.hasRemaining() && accepted.read(into) > 0) {
                // until nothing is waiting
            }
        }

        /** The client sends {@code request}; the server reads it through the selector and sends it back. */
        void echo(byte[] request) throws IOException {
            final ByteBuffer out = ByteBuffer.wrap(request);
            final ByteBuffer in = ByteBuffer.allocate(request.length);
            final ByteBuffer back = ByteBuffer.allocate(request.length);
            final long end = System.nanoTime() + 30_000_000_000L;
            while (back.hasRemaining() && System.nanoTime() < end) {
                client.configureBlocking(false);
                client.write(out);
                client.read(back);
                selector.select(1);
                selector.selectedKeys().clear();
                drain(in);
                if (in.position() > 0) {
                    in.flip();
                    accepted.write(in);
                    in.compact();
                }
            }
            client.configureBlocking(true);
            assertArrayEquals(request, back.array());
        }

        @Override
        public void close() throws IOException {
            selector.close();
            accepted.close();
            client.close();
        }
    }

    @Test
    void anIdleRegisteredConnectionGivesItsRingsBackAndServesTheNextRequest() throws Exception {
        try (World world = World.tern(); Pair pair = Pair.open(world, Duration.ofMillis(100))) {
            pair.echo(random(1, 1_000));
            final long lastUse = System.nanoTime();
            assertTrue(pair.counter(ATTACHED) > 0);
            pair.selectUntilReleased(1);
            final long idleNs = System.nanoTime() - lastUse;
            assertEquals(1, pair.counter(RELEASED), "released once");
            assertTrue(idleNs >= 90_000_000L, "released after " + idleNs + " ns idle, before the 100 ms");
            assertEquals(0, pair.counter(ATTACHED), "no ring attached while idle");

            pair.echo(random(2, 100_000)); // arriving data brings the rings back, and the reply goes out
            assertTrue(pair.counter(ATTACHED) > 0);
            pair.selectUntilReleased(2);
            assertEquals(2, pair.counter(RELEASED), "idle again, released again");
            assertEquals(0, pair.counter(ATTACHED));
            pair.accepted.write(ByteBuffer.wrap(random(3, 5_000))); // a write brings them back too
            final ByteBuffer got = ByteBuffer.allocate(5_000);
            while (got.hasRemaining()) {
                pair.client.read(got);
            }
            assertArrayEquals(random(3, 5_000), got.array());
        }
    }

    /**
     * The sweep looks only at channels that may hold rings (registered or ready since): one that takes its rings back
     * by a write alone, with nothing for the selector to see, is found by the full look every
     * {@link TernSelector#FULL_SWEEP_EVERY}th sweep and released again. The sweeps' cost shows in the counters.
     */
    @Test
    void aConnectionThatTakesItsRingsBackByAWriteAloneIsReleasedAgainByTheFullLook() throws Exception {
        try (World world = World.tern(); Pair pair = Pair.open(world, Duration.ofMillis(50))) {
            pair.echo(random(20, 1_000));
            pair.selectUntilReleased(1);
            pair.selectFor(200, null); // sweeps after the release take it off the list: it holds no rings
            pair.accepted.write(ByteBuffer.wrap(random(21, 5_000)));
            final ByteBuffer got = ByteBuffer.allocate(5_000);
            while (got.hasRemaining()) {
                pair.client.read(got);
            }
            assertArrayEquals(random(21, 5_000), got.array());
            assertTrue(pair.counter(ATTACHED) > 0, "the write took the rings back");
            pair.selectUntilReleased(2);
            assertEquals(2, pair.counter(RELEASED), "released again without being ready");
            assertEquals(0, pair.counter(ATTACHED));

            final long sweeps = pair.counter("nio.idle.sweeps");
            assertTrue(sweeps >= TernSelector.FULL_SWEEP_EVERY, sweeps + " sweeps");
            final long maxNs = pair.counter("nio.idle.sweep_max_ns");
            assertTrue(maxNs > 0 && maxNs <= pair.counter("nio.idle.sweep_ns"), "longest sweep " + maxNs + " ns");
        }
    }

    @Test
    void aConnectionInUseOrWithUnreadBytesKeepsItsRings() throws Exception {
        try (World world = World.tern(); Pair pair = Pair.open(world, Duration.ofMillis(300))) {
            // Used every 40 ms for 1.2 s: never a whole period untouched (a stall of 600 ms would be one).
            final long end = System.nanoTime() + 1_200_000_000L;
            for (int i = 0; System.nanoTime() < end; i++) {
                pair.echo(random(10 + i, 100));
                pair.selectFor(40, null);
            }
            assertEquals(0, pair.counter(RELEASED), "a connection in use keeps its rings");

            // Bytes the server does not read (no interest) keep the rings however long it idles.
            pair.accepted.keyFor(pair.selector).interestOps(0);
            pair.client.write(ByteBuffer.wrap(random(4, 3_000)));
            pair.selectFor(1_200, null); // four periods: three sweeps that find it untouched
            assertEquals(0, pair.counter(RELEASED), "unread bytes keep the rings");
            final ByteBuffer got = ByteBuffer.allocate(3_000);
            pair.drain(got);
            assertArrayEquals(random(4, 3_000), got.array());
            pair.selectUntilReleased(1);
            assertEquals(1, pair.counter(RELEASED), "read, then idle: released");
        }
    }

    @Test
    void zeroTurnsTheSweepOff() throws Exception {
        try (World world = World.tern(); Pair pair = Pair.open(world, Duration.ZERO)) {
            pair.echo(random(5, 1_000));
            pair.selectFor(600, null);
            assertEquals(0, pair.counter(RELEASED));
            assertTrue(pair.counter(ATTACHED) > 0);
            assertEquals(0, ((TernSelector) pair.selector).sweepHolds(), "no sweep, so no channel held for one");
        }
    }

    @Test
    void nettysEventLoopReleasesIdleConnectionsAndServesThemAgain() throws Exception {
        try (World world = World.tern()) {
            final TernSelectorProvider provider = (TernSelectorProvider) world.server();
            provider.releaseIdleBuffersAfter(Duration.ofMillis(100));
            final NetStack serverStack = provider.stack();
            try (NettyEchoServer server = NettyEchoServer.start(provider, new InetSocketAddress(world.serverAddress(), 7008))) {
                final List<SocketChannel> clients = new ArrayList<>();
                try {
                    for (int i = 0; i < 50; i++) {
                        final SocketChannel client = world.client().openSocketChannel();
                        client.connect(server.localAddress());
                        clients.add(client);
                        echo(client, random(100 + i, 2_000));
                    }
                    final long end = System.nanoTime() + 10_000_000_000L;
                    while (serverStack.counters().value(ATTACHED) != 0 && System.nanoTime() < end) {
                        Thread.sleep(20);
                    }
                    assertEquals(0, serverStack.counters().value(ATTACHED), "the idle connections hold no rings");
                    assertTrue(serverStack.counters().value(RELEASED) >= 50);
                    for (int i = 0; i < clients.size(); i++) {
                        echo(clients.get(i), random(200 + i, 20_000));
                    }
                } finally {
                    for (SocketChannel client : clients) {
                        client.close();
                    }
                }
            }
        }
    }

    private static void echo(SocketChannel client, byte[] request) throws IOException {
        client.write(ByteBuffer.wrap(request));
        final ByteBuffer back = ByteBuffer.allocate(request.length);
        while (back.hasRemaining()) {
            if (client.read(back) < 0) {
                break;
            }
        }
        assertArrayEquals(request, back.array());
    }

    @Test
    void theSystemWideProviderTakesItsIdleTimeFromTernReleaseIdleMs() {
        final Properties properties = new Properties();
        try (TernSelectorProvider unset = new TernSelectorProvider(properties)) {
            assertEquals(1_000_000_000L, unset.idleReleaseNs(), "a second by default");
        }
        properties.setProperty("tern.releaseIdleMs", "250");
        try (TernSelectorProvider set = new TernSelectorProvider(properties)) {
            assertEquals(250_000_000L, set.idleReleaseNs());
        }
        properties.setProperty("tern.releaseIdleMs", "0");
        try (TernSelectorProvider off = new TernSelectorProvider(properties)) {
            assertEquals(0, off.idleReleaseNs());
        }
    }

    @Test
    void aBadSettingIsOneClearLine() {
        final Properties bad = new Properties();
        bad.setProperty("tern.releaseIdleMs", "soon");
        assertEquals("tern.releaseIdleMs wants milliseconds (0 for never), got 'soon'",
            assertThrows(IllegalArgumentException.class, () -> TernSelectorProvider.checkConfiguration(bad)).getMessage());
        bad.setProperty("tern.releaseIdleMs", "-5");
        assertEquals("tern.releaseIdleMs wants 0..86400000 milliseconds, got -5",
            assertThrows(IllegalArgumentException.class, () -> TernSelectorProvider.checkConfiguration(bad)).getMessage());
    }
}
