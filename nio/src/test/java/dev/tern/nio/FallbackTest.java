package dev.tern.nio;

import dev.tern.ethernet.memory.MemoryPipe;
import dev.tern.stack.NetStack;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.nio.channels.Pipe;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.SelectorProvider;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Kernel fallback: what the rules do not give to Tern is served by the JDK's own provider, inside Tern's channel
 * classes, so that one Tern selector watches both kinds. Kernel traffic here stays on loopback or UNIX sockets.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class FallbackTest {
    private MemoryPipe pipe;
    private TernSelectorProvider tern;
    private TernSelectorProvider ternClient;

    @BeforeEach
    void setUp() {
        pipe = MemoryPipe.create(0x0200_0000_0001L, 0x0200_0000_0002L, 1500, 1 << 20, true);
        final NetStack server = NetStack.builder().name("server").link(pipe.first()).address("198.18.0.1/24")
            .countersInMemory().build();
        final NetStack client = NetStack.builder().name("client").link(pipe.second()).address("198.18.0.2/24")
            .countersInMemory().build();
        tern = TernSelectorProvider.open(server, Rules.parse("kernel listen *:5000-5999 udp", "test", server.address()));
        ternClient = TernSelectorProvider.open(client);
    }

    @AfterEach
    void tearDown() {
        ternClient.close();
        tern.close();
        pipe.close();
    }

    private static int port(java.nio.channels.NetworkChannel channel) throws IOException {
        return ((InetSocketAddress) channel.getLocalAddress()).getPort();
    }

    @Test
    void oneSelectorServesATernListenerAndAKernelConnectionAtOnce() throws Exception {
        try (ServerSocketChannel database = SelectorProvider.provider().openServerSocketChannel();
             Selector selector = tern.openSelector();
             ServerSocketChannel listener = tern.openServerSocketChannel();
             SocketChannel toDatabase = tern.openSocketChannel()) {
            database.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            listener.bind(new InetSocketAddress(0));
            listener.configureBlocking(false);
            assertNull(((TernChannel) listener).kernelChannel(), "a wildcard listener is Tern's");
            final SelectionKey accept = listener.register(selector, SelectionKey.OP_ACCEPT, "tern listener");
            toDatabase.configureBlocking(false);
            final SelectionKey read = toDatabase.register(selector, SelectionKey.OP_CONNECT, "kernel connection");
            toDatabase.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port(database)));
            assertNotNull(((TernChannel) toDatabase).kernelChannel(), "loopback is the kernel's");

            final Set<Object> seen = new HashSet<>();
            final CompletableFuture<Void> events = CompletableFuture.runAsync(() -> {
                try {
                    final long deadline = System.nanoTime() + 30_000_000_000L;
                    while (seen.size() < 3 && System.nanoTime() - deadline < 0) {
                        selector.select(key -> {
                            try {
                                if (key.isConnectable() && ((SocketChannel) key.channel()).finishConnect()) {
                                    seen.add("connected");
                                    key.interestOps(SelectionKey.OP_READ);
                                } else if (key.isReadable()) {
                                    final ByteBuffer buffer = ByteBuffer.allocate(16);
                                    if (((SocketChannel) key.channel()).read(buffer) > 0) {
                                        seen.add(key.attachment() + " read");
                                    }
                                } else if (key.isAcceptable()) {
                                    final SocketChannel accepted = ((ServerSocketChannel) key.channel()).accept();
                                    if (accepted != null) {
                                        seen.add(key.attachment() + " accepted");
                                        accepted.close();
                                    }
                                }
                            } catch (IOException e) {
                                throw new java.io.UncheckedIOException(e);
                            }
                        }, 0);
                    }
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            });
            // The selecting thread blocks (in the kernel's epoll: it watches both kinds) while each side gets ready.
            try (SocketChannel fromDatabase = database.accept();
                 SocketChannel ternClientChannel = ternClient.openSocketChannel()) {
                Thread.sleep(100);
                fromDatabase.write(ByteBuffer.wrap(new byte[] {42}));
                Thread.sleep(100);
                ternClientChannel.connect(new InetSocketAddress(InetAddress.getByName("198.18.0.1"), port(listener)));
                events.get(30, TimeUnit.SECONDS);
            }
            assertEquals(Set.of("connected", "kernel connection read", "tern listener accepted"), seen);
            assertTrue(accept.isValid() && read.isValid());
        }
    }

    @Test
    void aPipeAndAUnixDomainChannelGoToTheKernelAndRegisterWithATernSelector(@TempDir Path dir) throws IOException {
        try (Selector selector = tern.openSelector()) {
            final Pipe pipe = tern.openPipe();
            pipe.source().configureBlocking(false);
            final SelectionKey key = pipe.source().register(selector, SelectionKey.OP_READ);
            pipe.sink().write(ByteBuffer.wrap(new byte[] {1, 2, 3}));
            assertEquals(1, selector.select(5_000));
            assertTrue(selector.selectedKeys().contains(key));
            pipe.sink().close();
            pipe.source().close();

            final Path socket = dir.resolve("s");
            try (ServerSocketChannel unixServer = tern.openServerSocketChannel(StandardProtocolFamily.UNIX);
                 SocketChannel unixClient = tern.openSocketChannel(StandardProtocolFamily.UNIX)) {
                unixServer.bind(UnixDomainSocketAddress.of(socket));
                unixServer.configureBlocking(false);
                final SelectionKey acceptKey = unixServer.register(selector, SelectionKey.OP_ACCEPT);
                unixClient.connect(UnixDomainSocketAddress.of(socket));
                selector.selectedKeys().clear();
                assertEquals(1, selector.select(5_000));
                assertTrue(selector.selectedKeys().contains(acceptKey));
                assertNotNull(unixServer.accept());
            }
        }
    }

    @Test
    void aTernChannelRegistersWithOneSelectorAtATimeAndAKernelChannelWithSeveral() throws IOException {
        try (Selector first = tern.openSelector();
             Selector second = tern.openSelector();
             ServerSocketChannel ternListener = tern.openServerSocketChannel();
             DatagramChannel kernelSide = tern.openDatagramChannel(StandardProtocolFamily.INET)) {
            ternListener.bind(new InetSocketAddress(0));
            ternListener.configureBlocking(false);
            ternListener.register(first, SelectionKey.OP_ACCEPT);
            assertThrows(IllegalStateException.class, () -> ternListener.register(second, SelectionKey.OP_ACCEPT),
                "deviation: the stack's socket has one readiness queue");
            assertNull(ternListener.keyFor(second));
            assertTrue(second.keys().isEmpty());
            kernelSide.bind(new InetSocketAddress(5555));
            kernelSide.configureBlocking(false);
            kernelSide.register(first, SelectionKey.OP_READ);
            kernelSide.register(second, SelectionKey.OP_READ);
            assertEquals(1, second.keys().size());
        }
    }

    @Test
    void aRuleSendsABindToTheKernelAndTheRestStaysOnTern() throws IOException {
        try (DatagramChannel kernelSide = tern.openDatagramChannel(StandardProtocolFamily.INET);
             DatagramChannel ternSide = tern.openDatagramChannel(StandardProtocolFamily.INET)) {
            kernelSide.bind(new InetSocketAddress(5555));
            ternSide.bind(new InetSocketAddress(6666));
            assertNotNull(((TernChannel) kernelSide).kernelChannel(), "kernel listen *:5000-5999 udp");
            assertNull(((TernChannel) ternSide).kernelChannel());
            assertNotNull(((TernChannel) ternSide).ternSocket());
            assertEquals(1, tern.stack().counters().value("nio.kernel.channels"));
            assertEquals(1, tern.stack().counters().value("nio.udp.opened"));
        }
    }
}
