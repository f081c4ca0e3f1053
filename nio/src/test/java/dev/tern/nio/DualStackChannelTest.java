package dev.tern.nio;

import dev.tern.core.net.Ipv6InterfaceAddress;
import dev.tern.ethernet.memory.MemoryPipe;
import dev.tern.ipv6.Ipv6Config;
import dev.tern.stack.NetStack;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The JDK's dual-stack behaviour on Tern's channels: a server channel bound to the wildcard (as {@code new
 * ServerSocket(8080)} and Netty do) accepts IPv4 and IPv6 clients, IPv4 peers reported as {@code Inet4Address}; INET6
 * channels are Tern's; a channel connects to an IPv6 peer on Tern's prefix through Tern.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class DualStackChannelTest {
    private static NetStack stack(String name, MemoryPipe pipe, boolean first, String ipv4, String ipv6) {
        return NetStack.builder().name(name).link(first ? pipe.first() : pipe.second()).address(ipv4)
            .ipv6(Ipv6Config.withAddresses(List.of(Ipv6InterfaceAddress.parse(ipv6))).withDadTransmits(0))
            .countersInMemory().build();
    }

    private static String echoOnce(SocketChannel accepted, SocketChannel client, String text) throws IOException {
        client.write(ByteBuffer.wrap(text.getBytes(StandardCharsets.US_ASCII)));
        final ByteBuffer got = ByteBuffer.allocate(text.length());
        while (got.hasRemaining()) {
            accepted.read(got);
        }
        return new String(got.array(), StandardCharsets.US_ASCII);
    }

    @Test
    void aWildcardServerChannelAcceptsBothFamiliesAndReportsIpv4PeersAsInet4Addresses() throws Exception {
        try (MemoryPipe pipe = MemoryPipe.create(0x0200_0000_0001L, 0x0200_0000_0002L, 1500, 1 << 22, true);
             TernSelectorProvider server = TernSelectorProvider.open(
                 stack("server", pipe, true, "198.18.0.1/24", "2001:db8::1/64"));
             TernSelectorProvider client = TernSelectorProvider.open(
                 stack("client", pipe, false, "198.18.0.2/24", "2001:db8::2/64"));
             ServerSocketChannel listener = server.openServerSocketChannel(StandardProtocolFamily.INET6)) {
            assertInstanceOf(TernServerSocketChannel.class, listener, "an INET6 channel is Tern's");
            listener.bind(new InetSocketAddress(8080));
            try (SocketChannel six = client.openSocketChannel(StandardProtocolFamily.INET6);
                 SocketChannel four = client.openSocketChannel()) {
                six.connect(new InetSocketAddress(InetAddress.getByName("2001:db8::1"), 8080));
                try (SocketChannel acceptedSix = listener.accept()) {
                    assertInstanceOf(Inet6Address.class, ((InetSocketAddress) acceptedSix.getRemoteAddress()).getAddress());
                    assertEquals(new InetSocketAddress(InetAddress.getByName("2001:db8::2"),
                        ((InetSocketAddress) six.getLocalAddress()).getPort()), acceptedSix.getRemoteAddress());
                    assertEquals(new InetSocketAddress(InetAddress.getByName("2001:db8::1"), 8080),
                        acceptedSix.getLocalAddress());
                    assertEquals(new InetSocketAddress(InetAddress.getByName("2001:db8::2"),
                        ((InetSocketAddress) six.getLocalAddress()).getPort()), acceptedSix.getRemoteAddress());
                    assertEquals("over IPv6", echoOnce(acceptedSix, six, "over IPv6"));
                }
                four.connect(new InetSocketAddress(InetAddress.getByName("198.18.0.1"), 8080));
                try (SocketChannel acceptedFour = listener.accept()) {
                    final InetAddress peer = ((InetSocketAddress) acceptedFour.getRemoteAddress()).getAddress();
                    assertInstanceOf(Inet4Address.class, peer, "as the JDK's dual-stack socket: not ::ffff:198.18.0.2");
                    assertEquals(InetAddress.getByName("198.18.0.2"), peer);
                    assertEquals("over IPv4", echoOnce(acceptedFour, four, "over IPv4"));
                }
            }
            assertEquals(0, server.stack().counters().value("nio.kernel.channels"), "nothing went to the kernel");
        }
    }

    @Test
    void onTheMemoryLinkWithTernIp6AChannelReachesThePeersEchoOverIpv6() throws IOException {
        final Properties properties = new Properties();
        properties.setProperty("tern.link", "memory");
        properties.setProperty("tern.ip6", "2001:db8::2/64");
        properties.setProperty("tern.name", "dual-stack-channel-test");
        try (TernSelectorProvider provider = new TernSelectorProvider(properties);
             SocketChannel tcp = provider.openSocketChannel()) {
            // Connected at once: the channel waits out duplicate address detection on the new stack's addresses.
            tcp.connect(new InetSocketAddress(InetAddress.getByName("2001:db8::1"), 7));
            final InetSocketAddress local = (InetSocketAddress) tcp.getLocalAddress();
            assertEquals(InetAddress.getByName("2001:db8::2"), local.getAddress());
            tcp.write(ByteBuffer.wrap("echo six".getBytes(StandardCharsets.US_ASCII)));
            final ByteBuffer reply = ByteBuffer.allocate(8);
            while (reply.hasRemaining()) {
                tcp.read(reply);
            }
            assertEquals("echo six", new String(reply.array(), StandardCharsets.US_ASCII));
            assertTrue(provider.stack().counters().value("tcp.rx.segments") > 0);
        }
    }
}
