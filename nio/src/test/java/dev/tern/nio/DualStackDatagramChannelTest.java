package dev.tern.nio;

import dev.tern.nio.testing.World;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.net.BindException;
import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.SocketAddress;
import java.net.StandardProtocolFamily;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.nio.channels.MembershipKey;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.UnsupportedAddressTypeException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The JDK's dual-stack datagram channels on Tern: {@code DatagramChannel.open()} and {@code open(INET6)} are Tern's,
 * bound to the wildcard they serve IPv4 and IPv6 peers on one port (IPv4 peers as {@code Inet4Address}es), the bind
 * decides the family and claims the port in both, and IPv6 groups are joined for any source; two stacks on a memory
 * pipe, each behind its provider.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class DualStackDatagramChannelTest {
    private static final InetSocketAddress SERVER_FOUR = new InetSocketAddress(address("198.18.0.1"), 9000);
    private static final InetSocketAddress SERVER_SIX = new InetSocketAddress(address("2001:db8::1"), 9000);

    private World world;
    private TernSelectorProvider server;
    private TernSelectorProvider client;
    private final List<AutoCloseable> opened = new ArrayList<>();

    private static InetAddress address(String text) {
        try {
            return InetAddress.getByName(text);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    @BeforeEach
    void setUp() {
        world = World.ternDualStack();
        server = (TernSelectorProvider) world.server();
        client = (TernSelectorProvider) world.client();
    }

    @AfterEach
    void tearDown() throws Exception {
        for (AutoCloseable one : opened.reversed()) {
            one.close();
        }
        world.close();
    }

    private <T extends AutoCloseable> T closing(T resource) {
        opened.add(resource);
        return resource;
    }

    private static ByteBuffer bytes(String text) {
        return ByteBuffer.wrap(text.getBytes(StandardCharsets.US_ASCII));
    }

    /** A blocking receive of one datagram: its text, with its source in {@code from[0]}. */
    private static String receive(DatagramChannel channel, SocketAddress[] from) throws IOException {
        final ByteBuffer buffer = ByteBuffer.allocate(256);
        from[0] = channel.receive(buffer);
        return new String(buffer.array(), 0, buffer.position(), StandardCharsets.US_ASCII);
    }

    @Test
    void openWithNoFamilyServesAnIpv4AndAnIpv6PeerOnOnePort() throws IOException {
        final DatagramChannel dual = closing(server.openDatagramChannel());
        assertInstanceOf(TernDatagramChannel.class, dual, "DatagramChannel.open() is Tern's");
        dual.bind(new InetSocketAddress(9000));
        assertEquals(new InetSocketAddress(address("::"), 9000), dual.getLocalAddress(), "bound to [::], as the JDK's");
        final DatagramChannel four = closing(client.openDatagramChannel(StandardProtocolFamily.INET));
        final DatagramChannel six = closing(client.openDatagramChannel(StandardProtocolFamily.INET6));
        final SocketAddress[] from = new SocketAddress[1];

        four.send(bytes("four"), SERVER_FOUR);
        assertEquals("four", receive(dual, from));
        final InetSocketAddress fourPeer = (InetSocketAddress) from[0];
        assertInstanceOf(Inet4Address.class, fourPeer.getAddress(), "not ::ffff:198.18.0.2");
        assertEquals(new InetSocketAddress(address("198.18.0.2"), ((InetSocketAddress) four.getLocalAddress()).getPort()),
            fourPeer);
        dual.send(bytes("back to four"), fourPeer);
        assertEquals("back to four", receive(four, from));
        assertEquals(SERVER_FOUR, from[0]);

        six.send(bytes("six"), SERVER_SIX);
        assertEquals("six", receive(dual, from));
        final InetSocketAddress sixPeer = (InetSocketAddress) from[0];
        assertInstanceOf(Inet6Address.class, sixPeer.getAddress());
        assertEquals(address("2001:db8::2"), sixPeer.getAddress());
        dual.send(bytes("back to six"), sixPeer);
        assertEquals("back to six", receive(six, from));
        assertEquals(SERVER_SIX, from[0]);
        six.send(bytes("six again"), SERVER_SIX);
        assertEquals("six again", receive(dual, from));
        assertSame(sixPeer, from[0], "one address object while the peer stays the same");

        assertEquals(0, server.stack().counters().value("nio.kernel.channels"), "nothing went to the kernel");
        assertEquals(2, server.stack().counters().value("udp.rx.ipv6_datagrams"));
        assertEquals(1, server.stack().counters().value("udp.tx.ipv6_datagrams"));
        assertEquals(3, server.stack().counters().value("udp.rx.datagrams"), "and one IPv4 datagram in");
        assertEquals(2, server.stack().counters().value("udp.tx.datagrams"), "and one IPv4 datagram out");
    }

    @Test
    void anIpv4MappedTargetGoesOutAsIpv4() throws IOException {
        final DatagramChannel dual = closing(server.openDatagramChannel(StandardProtocolFamily.INET6));
        dual.bind(null);
        final DatagramChannel four = closing(client.openDatagramChannel(StandardProtocolFamily.INET));
        four.bind(new InetSocketAddress(7000));
        final byte[] mapped = new byte[16];
        mapped[10] = (byte) 0xff;
        mapped[11] = (byte) 0xff;
        System.arraycopy(new byte[] {(byte) 198, 18, 0, 2}, 0, mapped, 12, 4);
        final InetAddress target = Inet6Address.getByAddress(null, mapped, -1);
        assertInstanceOf(Inet6Address.class, target);
        dual.send(bytes("mapped"), new InetSocketAddress(target, 7000));
        final SocketAddress[] from = new SocketAddress[1];
        assertEquals("mapped", receive(four, from));
        assertEquals(0, server.stack().counters().value("udp.tx.ipv6_datagrams"), "over IPv4");
    }

    @Test
    void aSelectorReportsADualStackChannelReadableForEitherFamily() throws IOException {
        final DatagramChannel dual = closing(server.openDatagramChannel());
        dual.bind(new InetSocketAddress(9000));
        dual.configureBlocking(false);
        final Selector selector = closing(server.openSelector());
        final SelectionKey key = dual.register(selector, SelectionKey.OP_READ | SelectionKey.OP_WRITE);
        selector.select(5_000);
        assertEquals(SelectionKey.OP_WRITE, key.readyOps(), "room to send, nothing to read");
        selector.selectedKeys().clear();
        key.interestOps(SelectionKey.OP_READ);
        final DatagramChannel six = closing(client.openDatagramChannel(StandardProtocolFamily.INET6));
        final DatagramChannel four = closing(client.openDatagramChannel(StandardProtocolFamily.INET));
        six.send(bytes("six"), SERVER_SIX);
        four.send(bytes("four"), SERVER_FOUR);
        int got = 0;
        final long deadline = System.nanoTime() + 5_000_000_000L;
        while (got < 2 && System.nanoTime() - deadline < 0) {
            if (selector.select(100) > 0) {
                assertEquals(SelectionKey.OP_READ, key.readyOps());
                while (dual.receive(ByteBuffer.allocate(16)) != null) {
                    got++;
                }
                selector.selectedKeys().clear();
            }
        }
        assertEquals(2, got);
        assertNull(dual.receive(ByteBuffer.allocate(16)), "non-blocking: nothing more");
    }

    @Test
    void aConnectedChannelTalksToItsIpv6PeerFromTheAddressRfc6724Picks() throws IOException {
        final DatagramChannel dual = closing(server.openDatagramChannel());
        dual.bind(new InetSocketAddress(9000));
        final DatagramChannel six = closing(client.openDatagramChannel());
        six.connect(SERVER_SIX);
        assertTrue(six.isConnected());
        assertEquals(SERVER_SIX, six.getRemoteAddress());
        final InetSocketAddress local = (InetSocketAddress) six.getLocalAddress();
        assertEquals(address("2001:db8::2"), local.getAddress());
        assertEquals(4, six.write(bytes("ping")));
        final SocketAddress[] from = new SocketAddress[1];
        assertEquals("ping", receive(dual, from));
        assertEquals(local, from[0]);
        dual.send(bytes("pong"), from[0]);
        final ByteBuffer reply = ByteBuffer.allocate(16);
        assertEquals(4, six.read(reply));
        assertEquals("pong", new String(reply.array(), 0, 4, StandardCharsets.US_ASCII));
        six.disconnect();
        assertEquals(new InetSocketAddress(address("::"), local.getPort()), six.getLocalAddress(),
            "back on the wildcard, as the JDK's");
    }

    @Test
    void thePortIsClaimedInBothFamiliesAndABindToAnAddressTakesOneFamily() throws IOException {
        final DatagramChannel dual = closing(server.openDatagramChannel());
        dual.bind(new InetSocketAddress(9100));
        assertThrows(BindException.class,
            () -> closing(server.openDatagramChannel(StandardProtocolFamily.INET)).bind(new InetSocketAddress(9100)));
        assertThrows(BindException.class, () -> closing(server.openDatagramChannel(StandardProtocolFamily.INET6))
            .bind(new InetSocketAddress(address("2001:db8::1"), 9100)));

        final DatagramChannel onlySix = closing(server.openDatagramChannel());
        onlySix.bind(new InetSocketAddress(address("2001:db8::1"), 9200));
        assertEquals(new InetSocketAddress(address("2001:db8::1"), 9200), onlySix.getLocalAddress());
        final DatagramChannel beside = closing(server.openDatagramChannel());
        beside.bind(new InetSocketAddress(address("198.18.0.1"), 9200));
        assertEquals(new InetSocketAddress(address("198.18.0.1"), 9200), beside.getLocalAddress(),
            "an INET6 channel bound to an IPv4 address is IPv4's, beside the IPv6 one");
        final DatagramChannel four = closing(client.openDatagramChannel(StandardProtocolFamily.INET));
        final DatagramChannel six = closing(client.openDatagramChannel(StandardProtocolFamily.INET6));
        four.send(bytes("four"), new InetSocketAddress(address("198.18.0.1"), 9200));
        six.send(bytes("six"), new InetSocketAddress(address("2001:db8::1"), 9200));
        final SocketAddress[] from = new SocketAddress[1];
        assertEquals("six", receive(onlySix, from));
        assertEquals("four", receive(beside, from));
    }

    @Test
    void withPreferIpv4StackOpenIsAnInetChannelAndInet6TheKernelProvidersAnswer() throws IOException {
        final String before = System.getProperty("java.net.preferIPv4Stack");
        System.setProperty("java.net.preferIPv4Stack", "true");
        try {
            final DatagramChannel four = closing(server.openDatagramChannel());
            assertThrows(UnsupportedAddressTypeException.class, () -> four.bind(new InetSocketAddress(address("::"), 0)),
                "an INET channel, as the JDK's open() then");
            final DatagramChannel six = closing(server.openDatagramChannel(StandardProtocolFamily.INET6));
            assertTrue(((TernDatagramChannel) six).kernelChannel() != null, "the kernel's provider answers for INET6");
        } finally {
            if (before == null) {
                System.clearProperty("java.net.preferIPv4Stack");
            } else {
                System.setProperty("java.net.preferIPv4Stack", before);
            }
        }
    }

    @Test
    void anInetChannelRefusesIpv6AddressesAsTheJdksDoes() throws IOException {
        final DatagramChannel four = closing(server.openDatagramChannel(StandardProtocolFamily.INET));
        assertThrows(UnsupportedAddressTypeException.class, () -> four.bind(new InetSocketAddress(address("::"), 0)));
        assertThrows(UnsupportedAddressTypeException.class, () -> four.send(bytes("x"), SERVER_SIX));
        assertThrows(UnsupportedAddressTypeException.class, () -> four.connect(SERVER_SIX));
        assertThrows(IllegalArgumentException.class, () -> four.join(address("ff02::1:3"), loopback()));
    }

    @Test
    void anIpv6GroupIsJoinedForAnySourceAndSourceFiltersAreRefused() throws IOException {
        final DatagramChannel member = closing(server.openDatagramChannel());
        member.bind(new InetSocketAddress(9300));
        final InetAddress group = address("ff02::1:3");
        final MembershipKey key = member.join(group, loopback());
        assertSame(key, member.join(group, loopback()), "joining again returns the same key");
        assertThrows(UnsupportedOperationException.class, () -> member.join(address("ff02::1:4"), loopback(),
            address("2001:db8::2")), "IPv6 source-specific joins: not in the stack");
        assertThrows(UnsupportedOperationException.class, () -> key.block(address("2001:db8::2")));
        final DatagramChannel sender = closing(client.openDatagramChannel());
        sender.bind(new InetSocketAddress(address("2001:db8::2"), 0));
        final SocketAddress[] from = new SocketAddress[1];
        final InetSocketAddress to = new InetSocketAddress(group, 9300);
        member.configureBlocking(false);
        assertTrue(deliveredWithin(sender, member, to, from), "the group's datagram reaches the member");
        assertEquals(new InetSocketAddress(address("2001:db8::2"), ((InetSocketAddress) sender.getLocalAddress()).getPort()),
            from[0]);
        key.drop();
        assertTrue(!key.isValid());
        assertTrue(!deliveredWithin(sender, member, to, from), "dropped: no more");
    }

    @Test
    void aDualStackChannelJoinsAnIpv4GroupToo() throws IOException {
        final DatagramChannel member = closing(server.openDatagramChannel());
        member.bind(new InetSocketAddress(9400));
        member.configureBlocking(false);
        final MembershipKey key = member.join(address("239.7.7.8"), loopback());
        final DatagramChannel sender = closing(client.openDatagramChannel(StandardProtocolFamily.INET));
        sender.bind(new InetSocketAddress(address("198.18.0.2"), 0));
        final SocketAddress[] from = new SocketAddress[1];
        assertTrue(deliveredWithin(sender, member, new InetSocketAddress(address("239.7.7.8"), 9400), from),
            "as Linux lets an IPv6 socket join an IPv4 group");
        assertInstanceOf(Inet4Address.class, ((InetSocketAddress) from[0]).getAddress());
        key.block(address("198.18.0.2"));
        try {
            Thread.sleep(50); // what was on its way before the block
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        while (member.receive(ByteBuffer.allocate(64)) != null) {
            Thread.onSpinWait();
        }
        assertTrue(!deliveredWithin(sender, member, new InetSocketAddress(address("239.7.7.8"), 9400), from),
            "IPv4 source filters hold on a dual-stack socket");
    }

    /** Sends to {@code to} until {@code member} has a datagram (a join takes a moment), half a second at most. */
    private static boolean deliveredWithin(DatagramChannel sender, DatagramChannel member, InetSocketAddress to,
                                           SocketAddress[] from) throws IOException {
        final long deadline = System.nanoTime() + 500_000_000L;
        while (System.nanoTime() - deadline < 0) {
            sender.send(bytes("to the group"), to);
            final long wait = System.nanoTime() + 20_000_000L;
            while (System.nanoTime() - wait < 0) {
                final SocketAddress source = member.receive(ByteBuffer.allocate(64));
                if (source != null) {
                    from[0] = source;
                    return true;
                }
                Thread.onSpinWait();
            }
        }
        return false;
    }

    private NetworkInterface loopback() {
        return world.multicastInterface();
    }
}
