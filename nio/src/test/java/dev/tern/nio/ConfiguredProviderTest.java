package dev.tern.nio;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The provider as {@code tern exec} makes it: configured by {@code tern.*} properties, its stack opened on the first
 * channel that goes to Tern.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ConfiguredProviderTest {
    private static Properties properties(String... pairs) {
        final Properties properties = new Properties();
        for (int i = 0; i < pairs.length; i += 2) {
            properties.setProperty(pairs[i], pairs[i + 1]);
        }
        properties.setProperty("tern.name", "configured-provider-test");
        return properties;
    }

    @Test
    void onTheMemoryLinkAChannelReachesThePeersEchoServices() throws IOException {
        try (TernSelectorProvider provider = new TernSelectorProvider(properties("tern.link", "memory"))) {
            final InetSocketAddress echo = new InetSocketAddress(InetAddress.getByName("198.18.0.1"), 7);
            try (SocketChannel tcp = provider.openSocketChannel()) {
                tcp.connect(echo);
                tcp.write(ByteBuffer.wrap("tcp echo".getBytes(StandardCharsets.US_ASCII)));
                final ByteBuffer reply = ByteBuffer.allocate(8);
                while (reply.hasRemaining()) {
                    tcp.read(reply);
                }
                assertEquals("tcp echo", new String(reply.array(), StandardCharsets.US_ASCII));
            }
            try (DatagramChannel udp = provider.openDatagramChannel(StandardProtocolFamily.INET)) {
                udp.send(ByteBuffer.wrap("udp echo".getBytes(StandardCharsets.US_ASCII)), echo);
                final ByteBuffer reply = ByteBuffer.allocate(16);
                assertEquals(echo, udp.receive(reply));
                assertEquals(8, reply.position());
            }
            assertEquals(1, provider.stack().counters().value("nio.tcp.opened"));
            assertEquals(1, provider.stack().counters().value("nio.tcp.closed"));
            assertEquals(1, provider.stack().counters().value("nio.udp.closed"));
        }
    }

    @Test
    void aLinkThatCannotOpenFailsTheFirstTernChannelNamingTheCauseAndTheFix() throws IOException {
        try (TernSelectorProvider provider = new TernSelectorProvider(properties("tern.link", "afpacket:tern-absent9"))) {
            try (DatagramChannel channel = provider.openDatagramChannel(StandardProtocolFamily.INET)) {
                final IOException e = assertThrows(IOException.class, () -> channel.bind(new InetSocketAddress(0)));
                assertTrue(e.getMessage().startsWith("tern: cannot open --link afpacket:tern-absent9: "), e.getMessage());
                assertTrue(e.getMessage().contains("--link memory"), "names what works instead: " + e.getMessage());
            }
            try (DatagramChannel again = provider.openDatagramChannel(StandardProtocolFamily.INET)) {
                assertThrows(IOException.class, () -> again.bind(new InetSocketAddress(0)), "every Tern channel fails alike");
            }
        }
    }

    @Test
    void withLinkFailureKernelTheRulesSendChannelsToTheKernelInstead() throws IOException {
        try (TernSelectorProvider provider = new TernSelectorProvider(properties("tern.link", "afpacket:tern-absent9",
            "tern.rules.add", "link-failure kernel"));
             DatagramChannel channel = provider.openDatagramChannel(StandardProtocolFamily.INET)) {
            channel.bind(new InetSocketAddress(InetAddress.getByName("0.0.0.0"), 0));
            assertNotNull(((TernChannel) channel).kernelChannel());
        }
    }

    /** {@code tern exec --max-connections} and {@code --buffer-size}: the stack's table and every connection's rings. */
    @Test
    void theConnectionTableAndBufferSizesComeFromTheSettings() throws IOException {
        try (TernSelectorProvider provider = new TernSelectorProvider(properties("tern.link", "memory",
            "tern.maxConnections", "300", "tern.bufferSize", "8192", "tern.memoryLimit", "67108864"))) {
            assertEquals(300, provider.stack().tcp().config().maxConnections());
            assertEquals(67_108_864L, provider.stack().tcp().config().memoryLimitBytes());
            assertEquals(33_554_432L, provider.stack().tcp().config().memoryPressureBytes());
            assertEquals(8192, provider.stack().tcp().config().sendBufferSize());
            assertEquals(8192, provider.stack().tcp().config().receiveBufferSize());
            try (SocketChannel tcp = provider.openSocketChannel()) {
                tcp.connect(new InetSocketAddress(InetAddress.getByName("198.18.0.1"), 7));
                assertEquals(8192, tcp.getOption(java.net.StandardSocketOptions.SO_SNDBUF));
                assertEquals(8192, tcp.getOption(java.net.StandardSocketOptions.SO_RCVBUF));
            }
        }
    }

    /**
     * {@code tern.shutdownLinger} ({@code tern exec --shutdown-linger}): at the program's end a connection still open
     * and one the program closed with data on its way both end with Tern's FIN and the peer's, and nothing is reset.
     */
    @Test
    void withAShutdownLingerTheEndClosesWithFinsAndResetsNothing(@TempDir Path dir) throws IOException {
        final Path pcap = dir.resolve("linger.pcap");
        endWithTwoConnections(properties("tern.link", "memory", "tern.pcap", pcap.toString(), "tern.shutdownLinger", "5"));
        final int[] finsAndResets = finsAndResetsFromTern(pcap);
        assertEquals(2, finsAndResets[0], "a FIN on each connection");
        assertEquals(0, finsAndResets[1], "no reset");
    }

    /**
     * Without a linger (the default) the end resets what is still open, as docs/COMMANDS.md says, while the connection
     * the program closed delivers its data and FIN first, as the kernel's would: no reset for it.
     */
    @Test
    void withoutALingerTheEndResetsOnlyWhatIsOpen(@TempDir Path dir) throws IOException {
        final Path pcap = dir.resolve("reset.pcap");
        endWithTwoConnections(properties("tern.link", "memory", "tern.pcap", pcap.toString()));
        final int[] finsAndResets = finsAndResetsFromTern(pcap);
        assertEquals(1, finsAndResets[0], "a FIN on the connection the program closed");
        assertEquals(1, finsAndResets[1], "a reset of the connection still open");
    }

    /**
     * A connection whose output the program shut down with data still on its way, and which it never closes, is
     * waited for as a closed one at the end: its data and FIN go, the peer's FIN comes, and nothing is reset (it was,
     * as a connection still open, which cost a kernel reader its last bytes as ECONNRESET).
     */
    @Test
    void withoutALingerAConnectionShutDownForOutputDeliversItsDataAndFin(@TempDir Path dir) throws IOException {
        final Path pcap = dir.resolve("shutdown.pcap");
        try (TernSelectorProvider provider = new TernSelectorProvider(properties("tern.link", "memory", "tern.pcap",
            pcap.toString()))) {
            final SocketChannel channel = provider.openSocketChannel();
            channel.connect(new InetSocketAddress(InetAddress.getByName("198.18.0.1"), 9));
            final ByteBuffer data = ByteBuffer.allocate(256 * 1024);
            while (data.hasRemaining()) {
                channel.write(data);
            }
            channel.shutdownOutput();
        }
        final int[] finsAndResets = finsAndResetsFromTern(pcap);
        assertEquals(1, finsAndResets[0], "the FIN after the data");
        assertEquals(0, finsAndResets[1], "no reset");
    }

    /** One echo connection left open, and one to discard closed by the program with 256 KiB still to send. */
    private static void endWithTwoConnections(Properties properties) throws IOException {
        try (TernSelectorProvider provider = new TernSelectorProvider(properties)) {
            final SocketChannel open = provider.openSocketChannel();
            open.connect(new InetSocketAddress(InetAddress.getByName("198.18.0.1"), 7));
            open.write(ByteBuffer.wrap("kept open".getBytes(StandardCharsets.US_ASCII)));
            final ByteBuffer reply = ByteBuffer.allocate(9);
            while (reply.hasRemaining()) {
                open.read(reply);
            }
            try (SocketChannel closed = provider.openSocketChannel()) {
                closed.connect(new InetSocketAddress(InetAddress.getByName("198.18.0.1"), 9));
                final ByteBuffer data = ByteBuffer.allocate(256 * 1024);
                while (data.hasRemaining()) {
                    closed.write(data);
                }
            }
        }
    }

    /**
     * TCP segments from Tern (198.18.0.2) in a pcap file: on how many connections (Tern's ports) one carries FIN, on
     * how many one carries RST. A FIN sent again (its timer fired before the peer's ACK, as on a loaded machine) is
     * the same connection's FIN.
     */
    private static int[] finsAndResetsFromTern(Path pcap) throws IOException {
        final ByteBuffer file = ByteBuffer.wrap(Files.readAllBytes(pcap)).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        final java.util.Set<Integer> finned = new java.util.HashSet<>();
        final java.util.Set<Integer> reset = new java.util.HashSet<>();
        int at = 24;
        while (at + 16 <= file.limit()) {
            final int length = file.getInt(at + 8);
            final int frame = at + 16;
            final int ihl = (file.get(frame + 14) & 0x0F) * 4;
            if (file.getShort(frame + 12) == (short) 0x0008 && file.get(frame + 23) == 6
                && file.order(java.nio.ByteOrder.BIG_ENDIAN).getInt(frame + 26) == 0xC6120002) {
                final int flags = file.get(frame + 14 + ihl + 13);
                final int port = file.getShort(frame + 14 + ihl) & 0xFFFF;
                if ((flags & 0x01) != 0) {
                    finned.add(port);
                }
                if ((flags & 0x04) != 0) {
                    reset.add(port);
                }
            }
            file.order(java.nio.ByteOrder.LITTLE_ENDIAN);
            at = frame + length;
        }
        return new int[] {finned.size(), reset.size()};
    }

    @Test
    void malformedSettingsAreOneLineNamingThem() {
        assertEquals("tern.bufferSize must be a power of two, got 3000", assertThrows(IllegalArgumentException.class,
            () -> TernSelectorProvider.checkConfiguration(properties("tern.bufferSize", "3000"))).getMessage());
        assertEquals("tern.bufferSize must be 1024..1073741824, got 512", assertThrows(IllegalArgumentException.class,
            () -> TernSelectorProvider.checkConfiguration(properties("tern.bufferSize", "512"))).getMessage());
        assertEquals("tern.maxConnections wants a whole number, got 'many'", assertThrows(IllegalArgumentException.class,
            () -> TernSelectorProvider.checkConfiguration(properties("tern.maxConnections", "many"))).getMessage());
        assertEquals("tern.memoryLimit must be 1048576..1099511627776 bytes, got 1000", assertThrows(
            IllegalArgumentException.class,
            () -> TernSelectorProvider.checkConfiguration(properties("tern.memoryLimit", "1000"))).getMessage());
        final IllegalArgumentException link = assertThrows(IllegalArgumentException.class,
            () -> TernSelectorProvider.checkConfiguration(properties("tern.link", "ethernet0")));
        assertEquals("tern.link wants memory, afpacket:IFACE, afxdp:IFACE[:QUEUE] or rawqp:DEVICE[:PORT], got 'ethernet0'", link.getMessage());
        final IllegalArgumentException rules = assertThrows(IllegalArgumentException.class,
            () -> TernSelectorProvider.checkConfiguration(properties("tern.rules.add", "tern connect *;tern bogus *")));
        assertEquals("tern.rules.add:2: unknown operation 'bogus' (want connect, listen or join)", rules.getMessage());
    }
}
