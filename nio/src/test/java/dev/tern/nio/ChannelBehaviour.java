package dev.tern.nio;

import dev.tern.nio.testing.World;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.AsynchronousCloseException;
import java.nio.channels.ClosedByInterruptException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.DatagramChannel;
import java.nio.channels.IllegalBlockingModeException;
import java.nio.channels.MembershipKey;
import java.nio.channels.NotYetConnectedException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Channel and selector behaviour as the JDK specifies it, written once and run against the JDK's own provider on
 * loopback ({@link KernelChannelBehaviourTest}) and against Tern's on two stacks joined by a memory pipe
 * ({@link TernChannelBehaviourTest}): the same expectations hold for both. Waits are bounded by generous timeouts;
 * nothing asserts how fast anything is.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
abstract class ChannelBehaviour {
    private static final long WAIT_MS = 10_000;

    protected World world;
    private final List<AutoCloseable> toClose = new ArrayList<>();
    /** Threads for the other side of a test (the common pool has one thread on two cores: tests would queue). */
    private final java.util.concurrent.ExecutorService threads = java.util.concurrent.Executors.newCachedThreadPool();

    protected abstract World makeWorld();

    @BeforeEach
    void setUp() {
        world = makeWorld();
    }

    @AfterEach
    void tearDown() throws Exception {
        for (AutoCloseable c : toClose.reversed()) {
            c.close();
        }
        threads.shutdownNow();
        world.close();
    }

    private <T> CompletableFuture<T> async(java.util.function.Supplier<T> work) {
        return CompletableFuture.supplyAsync(work, threads);
    }

    private <T extends AutoCloseable> T closing(T closeable) {
        toClose.add(closeable);
        return closeable;
    }

    private ServerSocketChannel listen() throws IOException {
        final ServerSocketChannel server = closing(world.server().openServerSocketChannel());
        server.bind(new InetSocketAddress(world.serverAddress(), 0));
        return server;
    }

    private static int port(ServerSocketChannel server) throws IOException {
        return ((InetSocketAddress) server.getLocalAddress()).getPort();
    }

    /** A connected pair: [client, accepted], both blocking. */
    private SocketChannel[] connectedPair() throws IOException {
        final ServerSocketChannel server = listen();
        final SocketChannel client = closing(world.client().openSocketChannel());
        assertTrue(client.connect(new InetSocketAddress(world.serverAddress(), port(server))));
        final SocketChannel accepted = closing(server.accept());
        return new SocketChannel[] {client, accepted};
    }

    private static ByteBuffer bytes(String text) {
        return ByteBuffer.wrap(text.getBytes(java.nio.charset.StandardCharsets.US_ASCII));
    }

    private static String readExactly(SocketChannel channel, int length) throws IOException {
        final ByteBuffer buffer = ByteBuffer.allocate(length);
        while (buffer.hasRemaining()) {
            if (channel.read(buffer) < 0) {
                break;
            }
        }
        return new String(buffer.array(), 0, buffer.position(), java.nio.charset.StandardCharsets.US_ASCII);
    }

    private static int selectUntil(Selector selector, java.util.function.BooleanSupplier done) throws IOException {
        final long deadline = System.nanoTime() + WAIT_MS * 1_000_000L;
        int total = 0;
        while (!done.getAsBoolean()) {
            assertTrue(System.nanoTime() - deadline < 0, "selector did not report in time");
            total += selector.select(100);
        }
        return total;
    }

    // ------------------------------------------------------------------------------------------ TCP, blocking

    @Test
    void aBlockingConnectAndAcceptCarryBytesBothWays() throws IOException {
        final SocketChannel[] pair = connectedPair();
        pair[0].write(bytes("hello"));
        assertEquals("hello", readExactly(pair[1], 5));
        pair[1].write(bytes("world!"));
        assertEquals("world!", readExactly(pair[0], 6));
        assertTrue(pair[0].isConnected() && pair[1].isConnected());
        assertEquals(pair[1].getLocalAddress(), pair[0].getRemoteAddress());
        assertEquals(pair[0].getLocalAddress(), pair[1].getRemoteAddress());
    }

    @Test
    void aDirectBufferCarriesBytesAsAHeapOneDoes() throws IOException {
        final SocketChannel[] pair = connectedPair();
        final ByteBuffer out = ByteBuffer.allocateDirect(64);
        out.put(new byte[] {1, 2, 3, 4, 5}).flip();
        assertEquals(5, pair[0].write(out));
        final ByteBuffer in = ByteBuffer.allocateDirect(64);
        while (in.position() < 5) {
            pair[1].read(in);
        }
        in.flip();
        final byte[] got = new byte[5];
        in.get(got);
        assertArrayEquals(new byte[] {1, 2, 3, 4, 5}, got);
    }

    @Test
    void readReturnsMinusOneOnceThePeerShutsDownOutputAndTheOtherDirectionGoesOn() throws IOException {
        final SocketChannel[] pair = connectedPair();
        pair[0].write(bytes("last"));
        pair[0].shutdownOutput();
        assertEquals("last", readExactly(pair[1], 4));
        assertEquals(-1, pair[1].read(ByteBuffer.allocate(8)));
        pair[1].write(bytes("reply"));
        assertEquals("reply", readExactly(pair[0], 5));
        assertThrows(ClosedChannelException.class, () -> pair[0].write(bytes("x")), "write after shutdownOutput");
    }

    @Test
    void shutdownInputMakesReadsReturnMinusOne() throws IOException {
        final SocketChannel[] pair = connectedPair();
        pair[1].shutdownInput();
        assertEquals(-1, pair[1].read(ByteBuffer.allocate(8)));
        assertEquals(-1, pair[1].read(ByteBuffer.allocate(8)));
    }

    @Test
    void aConnectToAPortNobodyListensOnThrowsConnectExceptionAndClosesTheChannel() throws IOException {
        final ServerSocketChannel server = listen();
        final int port = port(server);
        server.close();
        final SocketChannel client = closing(world.client().openSocketChannel());
        assertThrows(ConnectException.class, () -> client.connect(new InetSocketAddress(world.serverAddress(), port)));
        assertFalse(client.isOpen());
    }

    @Test
    void readAndWriteBeforeConnectThrowNotYetConnected() throws IOException {
        final SocketChannel channel = closing(world.client().openSocketChannel());
        assertThrows(NotYetConnectedException.class, () -> channel.read(ByteBuffer.allocate(1)));
        assertThrows(NotYetConnectedException.class, () -> channel.write(bytes("x")));
        final SocketChannel[] pair = connectedPair();
        assertThrows(IllegalArgumentException.class, () -> pair[0].read(ByteBuffer.allocate(1).asReadOnlyBuffer()));
    }

    @Test
    void closingAChannelFromAnotherThreadEndsABlockedReadWithAsynchronousClose() throws Exception {
        final SocketChannel[] pair = connectedPair();
        final CompletableFuture<Throwable> reader = async(() -> {
            try {
                pair[0].read(ByteBuffer.allocate(8));
                return null;
            } catch (Throwable e) {
                return e;
            }
        });
        Thread.sleep(100);
        pair[0].close();
        assertTrue(reader.get(WAIT_MS, TimeUnit.MILLISECONDS) instanceof AsynchronousCloseException);
    }

    @Test
    void interruptingABlockedReadClosesTheChannel() throws Exception {
        final SocketChannel[] pair = connectedPair();
        final AtomicReference<Throwable> thrown = new AtomicReference<>();
        final Thread reader = new Thread(() -> {
            try {
                pair[0].read(ByteBuffer.allocate(8));
            } catch (Throwable e) {
                thrown.set(e);
            }
        });
        reader.start();
        Thread.sleep(100);
        reader.interrupt();
        reader.join(WAIT_MS);
        assertTrue(thrown.get() instanceof ClosedByInterruptException, String.valueOf(thrown.get()));
        assertFalse(pair[0].isOpen());
    }

    @Test
    void aBlockingAcceptReturnsTheConnectionThatArrives() throws Exception {
        final ServerSocketChannel server = listen();
        final CompletableFuture<SocketChannel> accepted = async(() -> {
            try {
                return server.accept();
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
        Thread.sleep(50);
        final SocketChannel client = closing(world.client().openSocketChannel(
        ));
        client.connect(new InetSocketAddress(world.serverAddress(), port(server)));
        final SocketChannel got = closing(accepted.get(WAIT_MS, TimeUnit.MILLISECONDS));
        assertTrue(got.isBlocking(), "accepted channels start in blocking mode");
        assertEquals(client.getLocalAddress(), got.getRemoteAddress());
    }

    // ------------------------------------------------------------------------------------------ non-blocking, selector

    @Test
    void aNonBlockingConnectCompletesThroughOpConnectAndFinishConnect() throws IOException {
        final ServerSocketChannel server = listen();
        server.configureBlocking(false);
        final Selector selector = closing(world.client().openSelector());
        final SocketChannel client = closing(world.client().openSocketChannel());
        client.configureBlocking(false);
        final boolean immediately = client.connect(new InetSocketAddress(world.serverAddress(), port(server)));
        if (!immediately) {
            assertTrue(client.isConnectionPending());
            final SelectionKey key = client.register(selector, SelectionKey.OP_CONNECT);
            selectUntil(selector, () -> selector.selectedKeys().contains(key));
            assertTrue(key.isConnectable());
            assertTrue(client.finishConnect());
        }
        assertTrue(client.isConnected());
        assertFalse(client.isConnectionPending());
        assertTrue(client.finishConnect(), "finishConnect on a connected channel is true");
    }

    @Test
    void aNonBlockingReadReturnsZeroWhenNothingWaitsAndAcceptReturnsNull() throws IOException {
        final SocketChannel[] pair = connectedPair();
        pair[1].configureBlocking(false);
        assertEquals(0, pair[1].read(ByteBuffer.allocate(8)));
        final ServerSocketChannel server = listen();
        server.configureBlocking(false);
        assertNull(server.accept());
    }

    @Test
    void aSelectorReportsAcceptThenReadThenWriteReadiness() throws IOException {
        final ServerSocketChannel server = listen();
        server.configureBlocking(false);
        final Selector selector = closing(world.server().openSelector());
        final SelectionKey acceptKey = server.register(selector, SelectionKey.OP_ACCEPT, "listener");
        assertEquals(0, selector.selectNow(), "nothing to accept yet");
        final SocketChannel client = closing(world.client().openSocketChannel());
        client.connect(new InetSocketAddress(world.serverAddress(), port(server)));
        selectUntil(selector, () -> selector.selectedKeys().contains(acceptKey));
        assertEquals(SelectionKey.OP_ACCEPT, acceptKey.readyOps());
        assertEquals("listener", acceptKey.attachment());
        selector.selectedKeys().clear();
        final SocketChannel accepted = closing(server.accept());
        accepted.configureBlocking(false);
        final SelectionKey readKey = accepted.register(selector, SelectionKey.OP_READ);
        client.write(bytes("ping"));
        selectUntil(selector, () -> selector.selectedKeys().contains(readKey));
        assertTrue(readKey.isReadable());
        assertEquals("ping", readExactly(accepted, 4));
        selector.selectedKeys().clear();
        readKey.interestOps(SelectionKey.OP_WRITE);
        selectUntil(selector, () -> selector.selectedKeys().contains(readKey));
        assertEquals(SelectionKey.OP_WRITE, readKey.readyOps());
    }

    @Test
    void aKeyStaysSelectedAndLevelTriggeredUntilTheDataIsRead() throws IOException {
        final SocketChannel[] pair = connectedPair();
        pair[1].configureBlocking(false);
        final Selector selector = closing(world.server().openSelector());
        final SelectionKey key = pair[1].register(selector, SelectionKey.OP_READ);
        pair[0].write(bytes("abc"));
        selectUntil(selector, () -> selector.selectedKeys().contains(key));
        selector.selectedKeys().remove(key);
        assertEquals(1, selector.selectNow(), "still readable: selected again");
        assertTrue(selector.selectedKeys().contains(key));
        assertEquals(0, selector.selectNow(), "already in the set with the same ops: not counted again");
        assertEquals("abc", readExactly(pair[1], 3));
        selector.selectedKeys().clear();
        assertEquals(0, selector.selectNow(), "drained");
        assertThrows(UnsupportedOperationException.class, () -> selector.selectedKeys().add(key));
        assertThrows(UnsupportedOperationException.class, () -> selector.keys().remove(key));
    }

    @Test
    void selectWithAnActionCallsItPerReadyKeyAndLeavesTheSelectedSetAlone() throws IOException {
        final SocketChannel[] pair = connectedPair();
        pair[1].configureBlocking(false);
        final Selector selector = closing(world.server().openSelector());
        final SelectionKey key = pair[1].register(selector, SelectionKey.OP_READ);
        pair[0].write(bytes("abc"));
        final List<SelectionKey> seen = new ArrayList<>();
        final long deadline = System.nanoTime() + WAIT_MS * 1_000_000L;
        while (seen.isEmpty() && System.nanoTime() - deadline < 0) {
            selector.select(seen::add, 100);
        }
        assertEquals(List.of(key), seen);
        assertTrue(selector.selectedKeys().isEmpty());
        assertEquals(SelectionKey.OP_READ, key.readyOps());
    }

    @Test
    void selectWithATimeoutReturnsZeroWhenNothingIsReady() throws IOException {
        final SocketChannel[] pair = connectedPair();
        pair[1].configureBlocking(false);
        final Selector selector = closing(world.server().openSelector());
        pair[1].register(selector, SelectionKey.OP_READ);
        final long start = System.nanoTime();
        assertEquals(0, selector.select(200));
        assertTrue(System.nanoTime() - start >= 150_000_000L, "waited about the timeout");
    }

    @Test
    void wakeupEndsABlockedSelectAndAnEarlierWakeupTheNextOne() throws Exception {
        final Selector selector = closing(world.server().openSelector());
        final ServerSocketChannel server = listen();
        server.configureBlocking(false);
        server.register(selector, SelectionKey.OP_ACCEPT);
        final CompletableFuture<Integer> blocked = async(() -> {
            try {
                return selector.select();
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
        Thread.sleep(100);
        selector.wakeup();
        assertEquals(0, blocked.get(WAIT_MS, TimeUnit.MILLISECONDS));
        selector.wakeup();
        assertEquals(0, selector.select(), "a wakeup before select makes it return at once");
        selector.wakeup();
        selector.selectNow();
        final long start = System.nanoTime();
        assertEquals(0, selector.select(150), "selectNow consumed the wakeup");
        assertTrue(System.nanoTime() - start >= 100_000_000L);
    }

    @Test
    void closingASelectorFromAnotherThreadEndsABlockedSelectAndInvalidatesItsKeys() throws Exception {
        final Selector selector = world.server().openSelector();
        final ServerSocketChannel server = listen();
        server.configureBlocking(false);
        final SelectionKey key = server.register(selector, SelectionKey.OP_ACCEPT);
        final CompletableFuture<Object> blocked = async(() -> {
            try {
                return selector.select();
            } catch (IOException | ClosedSelectorException e) {
                return e;
            }
        });
        Thread.sleep(100);
        selector.close();
        blocked.get(WAIT_MS, TimeUnit.MILLISECONDS);
        assertFalse(selector.isOpen());
        assertFalse(key.isValid());
        assertThrows(ClosedSelectorException.class, selector::selectNow);
        assertThrows(ClosedSelectorException.class, selector::keys);
    }

    @Test
    void aCancelledKeyLeavesTheKeySetAtTheNextSelectionAndTheChannelCanRegisterAgain() throws IOException {
        final Selector selector = closing(world.server().openSelector());
        final ServerSocketChannel server = listen();
        server.configureBlocking(false);
        final SelectionKey key = server.register(selector, SelectionKey.OP_ACCEPT);
        key.cancel();
        assertFalse(key.isValid());
        assertTrue(selector.keys().contains(key), "still there until the next selection");
        selector.selectNow();
        assertFalse(selector.keys().contains(key));
        assertFalse(server.isRegistered());
        final SelectionKey again = server.register(selector, SelectionKey.OP_ACCEPT);
        assertTrue(again.isValid());
        assertThrows(java.nio.channels.CancelledKeyException.class, key::interestOps);
    }

    @Test
    void closingARegisteredChannelCancelsItsKey() throws IOException {
        final Selector selector = closing(world.server().openSelector());
        final SocketChannel[] pair = connectedPair();
        pair[1].configureBlocking(false);
        final SelectionKey key = pair[1].register(selector, SelectionKey.OP_READ);
        pair[1].close();
        assertFalse(key.isValid());
        selector.selectNow();
        assertTrue(selector.keys().isEmpty());
    }

    @Test
    void registeringNeedsNonBlockingModeAndValidOps() throws IOException {
        final Selector selector = closing(world.server().openSelector());
        final ServerSocketChannel server = listen();
        assertThrows(IllegalBlockingModeException.class, () -> server.register(selector, SelectionKey.OP_ACCEPT));
        server.configureBlocking(false);
        assertThrows(IllegalArgumentException.class, () -> server.register(selector, SelectionKey.OP_READ));
        final SelectionKey key = server.register(selector, SelectionKey.OP_ACCEPT);
        assertThrows(java.nio.channels.IllegalBlockingModeException.class, () -> server.configureBlocking(true));
        assertEquals(key, server.keyFor(selector));
    }

    @Test
    void thePeersResetSurfacesAsAnExceptionOnRead() throws Exception {
        final SocketChannel[] pair = connectedPair();
        pair[1].setOption(StandardSocketOptions.SO_LINGER, 0);
        pair[1].close(); // linger 0: a reset
        final ByteBuffer buffer = ByteBuffer.allocate(8);
        final long deadline = System.nanoTime() + WAIT_MS * 1_000_000L;
        IOException failure = null;
        while (failure == null && System.nanoTime() - deadline < 0) {
            try {
                if (pair[0].read(buffer) < 0) {
                    break;
                }
            } catch (IOException e) {
                failure = e;
            }
        }
        assertNotNull(failure, "a read after the peer's reset throws");
        assertTrue(failure.getMessage().contains("reset"), failure.getMessage());
    }

    /**
     * Fills the connection until a non-blocking write takes nothing (the sender's buffer and the peer's window full,
     * the peer not reading); returns the bytes written.
     */
    private static long fillUntilBlocked(SocketChannel writer) throws IOException, InterruptedException {
        writer.configureBlocking(false);
        final ByteBuffer chunk = ByteBuffer.allocateDirect(64 * 1024);
        long written = 0;
        int idle = 0;
        while (idle < 200) {
            final int n = writer.write(chunk.clear());
            written += n;
            if (n == 0) {
                idle++;
                Thread.sleep(1);
            } else {
                idle = 0;
            }
        }
        writer.configureBlocking(true);
        return written;
    }

    @Test
    void closeWithLingerWaitsForThePeerToAcknowledgeThenReturns() throws Exception {
        final SocketChannel[] pair = connectedPair();
        final long written = fillUntilBlocked(pair[0]);
        // The peer starts reading after 500 ms: close must wait for it, then return well before the linger time.
        final CompletableFuture<Long> drained = async(() -> {
            try {
                Thread.sleep(500);
                final ByteBuffer in = ByteBuffer.allocateDirect(64 * 1024);
                long read = 0;
                int n;
                while ((n = pair[1].read(in.clear())) >= 0) {
                    read += n;
                }
                return read;
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        });
        pair[0].setOption(StandardSocketOptions.SO_LINGER, 20);
        final long start = System.nanoTime();
        pair[0].close();
        final double seconds = (System.nanoTime() - start) / 1e9;
        assertTrue(seconds >= 0.3, "close waited for the peer to read and acknowledge: " + seconds + " s");
        assertTrue(seconds < 15, "close returned once all was acknowledged, not at the linger time: " + seconds + " s");
        assertEquals(written, drained.get(WAIT_MS, TimeUnit.MILLISECONDS), "every byte written arrived");
    }

    @Test
    void closeWithLingerReturnsAfterTheLingerTimeWhenThePeerNeverReads() throws Exception {
        final SocketChannel[] pair = connectedPair();
        fillUntilBlocked(pair[0]);
        pair[0].setOption(StandardSocketOptions.SO_LINGER, 1);
        final long start = System.nanoTime();
        pair[0].close();
        final double seconds = (System.nanoTime() - start) / 1e9;
        assertTrue(seconds >= 0.8 && seconds < 8, "close waited about the linger time (1 s): " + seconds + " s");
        assertTrue(!pair[0].isOpen());
    }

    // ------------------------------------------------------------------------------------------ bulk, sha-256

    @Test
    void sixteenMebibytesEachWayArriveIntactWhileBothSidesWriteAtOnce() throws Exception {
        final SocketChannel[] pair = connectedPair();
        final int size = 16 << 20;
        final CompletableFuture<String> serverEcho = async(() -> sendAndDigest(pair[1], size, 2));
        final String clientSent = sendAndDigestOther(pair[0], size, 1);
        final String[] server = serverEcho.get(60, TimeUnit.SECONDS).split(" ");
        final String[] client = clientSent.split(" ");
        assertEquals(client[0], server[1], "client -> server intact");
        assertEquals(server[0], client[1], "server -> client intact");
    }

    /** Writes {@code size} seeded bytes from a second thread while reading {@code size}; "sentDigest receivedDigest". */
    private String sendAndDigest(SocketChannel channel, int size, long seed) {
        try {
            return sendAndDigestOther(channel, size, seed);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private String sendAndDigestOther(SocketChannel channel, int size, long seed) throws Exception {
        final CompletableFuture<String> sent = async(() -> {
            try {
                final MessageDigest digest = sha256();
                final SplittableRandom random = new SplittableRandom(seed);
                final ByteBuffer buffer = ByteBuffer.allocateDirect(65536);
                final byte[] chunk = new byte[65536];
                for (int done = 0; done < size; done += chunk.length) {
                    random.nextBytes(chunk);
                    digest.update(chunk);
                    buffer.clear();
                    buffer.put(chunk).flip();
                    while (buffer.hasRemaining()) {
                        channel.write(buffer);
                    }
                }
                return HexFormat.of().formatHex(digest.digest());
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
        final MessageDigest digest = sha256();
        final ByteBuffer buffer = ByteBuffer.allocateDirect(65536);
        final byte[] chunk = new byte[65536];
        for (int got = 0; got < size; ) {
            buffer.clear();
            final int n = channel.read(buffer);
            if (n < 0) {
                break;
            }
            buffer.flip();
            buffer.get(chunk, 0, n);
            digest.update(chunk, 0, n);
            got += n;
        }
        return sent.get(60, TimeUnit.SECONDS) + " " + HexFormat.of().formatHex(digest.digest());
    }

    static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void aSelectorDrivenEchoServerReturnsEightMebibytesIntact() throws Exception {
        final ServerSocketChannel server = listen();
        server.configureBlocking(false);
        final Selector selector = closing(world.server().openSelector());
        server.register(selector, SelectionKey.OP_ACCEPT);
        final int size = 8 << 20;
        final CompletableFuture<String> client = async(() -> {
            try (SocketChannel channel = world.client().openSocketChannel()) {
                channel.connect(new InetSocketAddress(world.serverAddress(), port(server)));
                return sendAndDigestOther(channel, size, 3);
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        final ByteBuffer buffer = ByteBuffer.allocateDirect(32768);
        final long deadline = System.nanoTime() + 60_000_000_000L;
        while (!client.isDone() && System.nanoTime() - deadline < 0) {
            selector.select(100);
            for (var it = selector.selectedKeys().iterator(); it.hasNext(); ) {
                final SelectionKey key = it.next();
                it.remove();
                if (key.isAcceptable()) {
                    final SocketChannel accepted = ((ServerSocketChannel) key.channel()).accept();
                    if (accepted != null) {
                        closing(accepted).configureBlocking(false);
                        accepted.register(selector, SelectionKey.OP_READ, ByteBuffer.allocateDirect(65536));
                    }
                    continue;
                }
                final SocketChannel channel = (SocketChannel) key.channel();
                final ByteBuffer pending = (ByteBuffer) key.attachment();
                if (key.isWritable()) {
                    pending.flip();
                    channel.write(pending);
                    pending.compact();
                }
                if (key.isValid() && key.isReadable() && pending.hasRemaining()) {
                    buffer.clear().limit(Math.min(buffer.capacity(), pending.remaining()));
                    if (channel.read(buffer) < 0) {
                        key.cancel();
                        continue;
                    }
                    buffer.flip();
                    pending.put(buffer);
                }
                if (key.isValid()) {
                    key.interestOps((pending.position() > 0 ? SelectionKey.OP_WRITE : 0)
                        | (pending.hasRemaining() ? SelectionKey.OP_READ : 0));
                }
            }
        }
        final String[] digests = client.get(10, TimeUnit.SECONDS).split(" ");
        assertEquals(digests[0], digests[1], "what came back is what was sent");
    }

    // ------------------------------------------------------------------------------------------ options, adaptors

    @Test
    void standardSocketOptionsReadBackAndAnUnsupportedOneThrows() throws IOException {
        final SocketChannel channel = closing(world.client().openSocketChannel());
        assertEquals(-1, channel.getOption(StandardSocketOptions.SO_LINGER));
        channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
        channel.setOption(StandardSocketOptions.SO_KEEPALIVE, true);
        channel.setOption(StandardSocketOptions.SO_LINGER, 5);
        channel.setOption(StandardSocketOptions.SO_REUSEADDR, true);
        channel.setOption(StandardSocketOptions.SO_RCVBUF, 65536);
        assertTrue(channel.getOption(StandardSocketOptions.TCP_NODELAY));
        assertTrue(channel.getOption(StandardSocketOptions.SO_KEEPALIVE));
        assertEquals(5, channel.getOption(StandardSocketOptions.SO_LINGER));
        assertTrue(channel.getOption(StandardSocketOptions.SO_REUSEADDR));
        assertTrue(channel.getOption(StandardSocketOptions.SO_RCVBUF) >= 65536);
        assertTrue(channel.getOption(StandardSocketOptions.SO_SNDBUF) > 0);
        assertThrows(UnsupportedOperationException.class,
            () -> channel.setOption(StandardSocketOptions.IP_MULTICAST_TTL, 3), "not a TCP option");
        assertThrows(IllegalArgumentException.class, () -> channel.setOption(StandardSocketOptions.SO_RCVBUF, -1));
        assertTrue(channel.supportedOptions().contains(StandardSocketOptions.TCP_NODELAY));
        channel.close();
        assertThrows(ClosedChannelException.class, () -> channel.getOption(StandardSocketOptions.TCP_NODELAY));
    }

    @Test
    void theSocketAdaptorsStreamsAndOptionsGoThroughTheChannel() throws IOException {
        final SocketChannel[] pair = connectedPair();
        final java.net.Socket socket = pair[0].socket();
        assertEquals(pair[0], socket.getChannel());
        socket.setTcpNoDelay(true);
        assertTrue(pair[0].getOption(StandardSocketOptions.TCP_NODELAY));
        assertTrue(socket.isConnected());
        assertEquals(((InetSocketAddress) pair[0].getRemoteAddress()).getPort(), socket.getPort());
        final OutputStream out = socket.getOutputStream();
        out.write("stream".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
        assertEquals("stream", readExactly(pair[1], 6));
        pair[1].write(bytes("back"));
        final InputStream in = socket.getInputStream();
        final byte[] got = new byte[4];
        int n = 0;
        while (n < 4) {
            n += in.read(got, n, 4 - n);
        }
        assertEquals("back", new String(got, java.nio.charset.StandardCharsets.US_ASCII));
        socket.setSoTimeout(100);
        assertThrows(java.net.SocketTimeoutException.class, () -> in.read(new byte[4]));
        socket.shutdownOutput();
        assertTrue(socket.isOutputShutdown());
        socket.close();
        assertTrue(socket.isClosed());
        assertFalse(pair[0].isOpen());
    }

    // ------------------------------------------------------------------------------------------ UDP

    private DatagramChannel udp(java.nio.channels.spi.SelectorProvider provider, InetAddress address) throws IOException {
        final DatagramChannel channel = closing(provider.openDatagramChannel(java.net.StandardProtocolFamily.INET));
        channel.bind(new InetSocketAddress(address, 0));
        return channel;
    }

    private static SocketAddress receive(DatagramChannel channel, ByteBuffer buffer) throws IOException {
        final long deadline = System.nanoTime() + WAIT_MS * 1_000_000L;
        SocketAddress source;
        while ((source = channel.receive(buffer)) == null) {
            assertTrue(System.nanoTime() - deadline < 0, "no datagram arrived");
            Thread.onSpinWait();
        }
        return source;
    }

    @Test
    void aDatagramArrivesWithItsSourceAndTheRestOfALongOneIsDropped() throws IOException {
        final DatagramChannel receiver = udp(world.server(), world.serverAddress());
        final DatagramChannel sender = udp(world.client(), world.clientAddress());
        assertEquals(5, sender.send(bytes("hello"), receiver.getLocalAddress()));
        final ByteBuffer buffer = ByteBuffer.allocate(3);
        assertEquals(sender.getLocalAddress(), receiver.receive(buffer), "blocking receive: the source");
        assertEquals("hel", new String(buffer.array(), java.nio.charset.StandardCharsets.US_ASCII), "truncated to the buffer");
        receiver.configureBlocking(false);
        assertNull(receiver.receive(ByteBuffer.allocate(8)), "the rest was dropped, nothing else waits");
    }

    @Test
    void aConnectedDatagramChannelReadsAndWritesItsPeerOnly() throws IOException {
        final DatagramChannel a = udp(world.server(), world.serverAddress());
        final DatagramChannel b = udp(world.client(), world.clientAddress());
        b.connect(a.getLocalAddress());
        assertTrue(b.isConnected());
        assertEquals(a.getLocalAddress(), b.getRemoteAddress());
        assertEquals(4, b.write(bytes("ping")));
        final ByteBuffer buffer = ByteBuffer.allocate(16);
        assertEquals(b.getLocalAddress(), receive(a, buffer));
        a.send(bytes("pong"), b.getLocalAddress());
        final ByteBuffer reply = ByteBuffer.allocate(16);
        assertEquals(4, b.read(reply));
        assertEquals("pong", new String(reply.array(), 0, 4, java.nio.charset.StandardCharsets.US_ASCII));
        b.disconnect();
        assertFalse(b.isConnected());
        assertThrows(NotYetConnectedException.class, () -> b.write(bytes("x")));
    }

    @Test
    void aSelectorReportsADatagramChannelReadable() throws IOException {
        final DatagramChannel receiver = udp(world.server(), world.serverAddress());
        receiver.configureBlocking(false);
        final Selector selector = closing(world.server().openSelector());
        final SelectionKey key = receiver.register(selector, SelectionKey.OP_READ | SelectionKey.OP_WRITE);
        selectUntil(selector, () -> selector.selectedKeys().contains(key));
        assertEquals(SelectionKey.OP_WRITE, key.readyOps(), "room to send, nothing to read");
        selector.selectedKeys().clear();
        key.interestOps(SelectionKey.OP_READ);
        final DatagramChannel sender = udp(world.client(), world.clientAddress());
        sender.send(bytes("x"), receiver.getLocalAddress());
        selectUntil(selector, () -> selector.selectedKeys().contains(key));
        assertEquals(SelectionKey.OP_READ, key.readyOps());
    }

    @Test
    void datagramOptionsReadBack() throws IOException {
        final DatagramChannel channel = closing(world.client().openDatagramChannel(java.net.StandardProtocolFamily.INET));
        channel.setOption(StandardSocketOptions.SO_BROADCAST, true);
        channel.setOption(StandardSocketOptions.IP_MULTICAST_TTL, 7);
        channel.setOption(StandardSocketOptions.IP_MULTICAST_LOOP, false);
        channel.setOption(StandardSocketOptions.SO_REUSEADDR, true);
        assertTrue(channel.getOption(StandardSocketOptions.SO_BROADCAST));
        assertEquals(7, channel.getOption(StandardSocketOptions.IP_MULTICAST_TTL));
        assertFalse(channel.getOption(StandardSocketOptions.IP_MULTICAST_LOOP));
        assertTrue(channel.getOption(StandardSocketOptions.SO_REUSEADDR));
        assertThrows(UnsupportedOperationException.class, () -> channel.setOption(StandardSocketOptions.TCP_NODELAY, true));
        assertThrows(IllegalArgumentException.class, () -> channel.setOption(StandardSocketOptions.IP_MULTICAST_TTL, 300));
    }

    // ------------------------------------------------------------------------------------------ multicast

    private static final InetAddress GROUP = World.address(239, 7, 7, 7);

    private DatagramChannel member() throws IOException {
        final DatagramChannel channel = closing(world.server().openDatagramChannel(java.net.StandardProtocolFamily.INET));
        channel.setOption(StandardSocketOptions.SO_REUSEADDR, true);
        channel.bind(new InetSocketAddress(0));
        channel.configureBlocking(false);
        return channel;
    }

    private DatagramChannel groupSender() throws IOException {
        final DatagramChannel channel = udp(world.client(), world.clientAddress());
        channel.setOption(StandardSocketOptions.IP_MULTICAST_IF, world.multicastInterface());
        return channel;
    }

    /** Sends numbered datagrams until one arrives (a join takes a moment to reach the wire), or 2 s; true if one did. */
    private static boolean delivered(DatagramChannel sender, DatagramChannel member, String text) throws IOException {
        final int port = ((InetSocketAddress) member.getLocalAddress()).getPort();
        final ByteBuffer buffer = ByteBuffer.allocate(64);
        final long deadline = System.nanoTime() + 2_000_000_000L;
        while (System.nanoTime() - deadline < 0) {
            sender.send(bytes(text), new InetSocketAddress(GROUP, port));
            final long wait = System.nanoTime() + 50_000_000L;
            while (System.nanoTime() - wait < 0) {
                buffer.clear();
                if (member.receive(buffer) != null) {
                    return true;
                }
                Thread.onSpinWait();
            }
        }
        return false;
    }

    @Test
    void aMemberReceivesItsGroupUntilItDrops() throws IOException {
        final DatagramChannel member = member();
        final DatagramChannel sender = groupSender();
        final MembershipKey key = member.join(GROUP, world.multicastInterface());
        assertTrue(key.isValid());
        assertEquals(GROUP, key.group());
        assertNull(key.sourceAddress());
        assertTrue(delivered(sender, member, "to the group"));
        assertEquals(key, member.join(GROUP, world.multicastInterface()), "joining again returns the same key");
        key.drop();
        assertFalse(key.isValid());
        drain(member);
        assertFalse(delivered(sender, member, "after the drop"));
    }

    @Test
    void blockingTheOnlySenderStopsDeliveryAndUnblockingRestoresIt() throws IOException {
        final DatagramChannel member = member();
        final DatagramChannel sender = groupSender();
        final MembershipKey key = member.join(GROUP, world.multicastInterface());
        assertTrue(delivered(sender, member, "before"));
        key.block(world.clientAddress());
        drain(member);
        assertFalse(delivered(sender, member, "blocked"));
        key.unblock(world.clientAddress());
        assertTrue(delivered(sender, member, "unblocked"));
        assertThrows(IllegalStateException.class, () -> member.join(GROUP, world.multicastInterface(), world.clientAddress()),
            "a source-specific join next to an any-source one");
    }

    @Test
    void aSourceSpecificMemberHearsOnlyItsSource() throws IOException {
        final DatagramChannel member = member();
        final DatagramChannel sender = groupSender();
        final MembershipKey other = member.join(GROUP, world.multicastInterface(), World.address(198, 18, 0, 99));
        assertFalse(delivered(sender, member, "from a source not joined"));
        final MembershipKey ours = member.join(GROUP, world.multicastInterface(), world.clientAddress());
        assertEquals(world.clientAddress(), ours.sourceAddress());
        assertTrue(delivered(sender, member, "from the joined source"));
        assertThrows(IllegalStateException.class, () -> ours.block(world.clientAddress()));
        other.drop();
        ours.drop();
    }

    private static void drain(DatagramChannel member) throws IOException {
        try {
            Thread.sleep(50);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        while (member.receive(ByteBuffer.allocate(64)) != null) {
            Thread.onSpinWait();
        }
    }
}
