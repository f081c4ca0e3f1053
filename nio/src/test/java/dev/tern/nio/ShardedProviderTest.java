package dev.tern.nio;

import dev.tern.nio.testing.World;
import dev.tern.stack.NetStack;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The provider over sharded stacks spreads its work: a server channel accepts connections that arrived on every
 * shard, one selector serving them all; active opens go to every shard; a datagram channel bound to a port gets every
 * peer's datagrams whichever shard the link steered them to; and {@code tern.shards} makes such a stack from
 * properties, as {@code tern exec --shards} does.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ShardedProviderTest {
    private static final int CONNECTIONS = 32;

    private static long total(List<NetStack> shards, String counter, int shard) {
        return shards.get(shard).counters().value(counter);
    }

    @Test
    void oneSelectorEchoesConnectionsAcceptedOnBothShardsAndClientsOpenFromBoth() throws Exception {
        try (World world = World.ternSharded(2)) {
            final TernSelectorProvider server = (TernSelectorProvider) world.server();
            final TernSelectorProvider client = (TernSelectorProvider) world.client();
            try (ServerSocketChannel listener = server.openServerSocketChannel();
                 Selector selector = server.openSelector()) {
                listener.bind(new InetSocketAddress(world.serverAddress(), 7000));
                listener.configureBlocking(false);
                listener.register(selector, SelectionKey.OP_ACCEPT);
                final CompletableFuture<List<String>> clients = CompletableFuture.supplyAsync(() -> {
                    final List<String> replies = new ArrayList<>();
                    final List<SocketChannel> opened = new ArrayList<>();
                    try {
                        for (int n = 0; n < CONNECTIONS; n++) {
                            final SocketChannel channel = client.openSocketChannel();
                            channel.connect(new InetSocketAddress(world.serverAddress(), 7000));
                            channel.write(ByteBuffer.wrap(("connection " + n + ";").getBytes(StandardCharsets.US_ASCII)));
                            opened.add(channel);
                        }
                        for (int n = 0; n < CONNECTIONS; n++) {
                            final ByteBuffer reply = ByteBuffer.allocate(("connection " + n + ";").length());
                            while (reply.hasRemaining() && opened.get(n).read(reply) >= 0) {
                                Thread.onSpinWait();
                            }
                            replies.add(new String(reply.array(), StandardCharsets.US_ASCII));
                            opened.get(n).close();
                        }
                    } catch (IOException e) {
                        throw new IllegalStateException(e);
                    }
                    return replies;
                });
                final ByteBuffer buffer = ByteBuffer.allocate(4096);
                final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                int accepted = 0;
                while (!clients.isDone()) {
                    assertTrue(System.nanoTime() - deadline < 0, "the echo ran in time");
                    selector.select(100);
                    for (SelectionKey key : selector.selectedKeys()) {
                        if (key.isAcceptable()) {
                            SocketChannel channel;
                            while ((channel = listener.accept()) != null) {
                                channel.configureBlocking(false);
                                channel.register(selector, SelectionKey.OP_READ);
                                accepted++;
                            }
                        } else if (key.isReadable()) {
                            final SocketChannel channel = (SocketChannel) key.channel();
                            buffer.clear();
                            if (channel.read(buffer) < 0) {
                                channel.close();
                                continue;
                            }
                            buffer.flip();
                            while (buffer.hasRemaining()) {
                                channel.write(buffer);
                            }
                        }
                    }
                    selector.selectedKeys().clear();
                }
                final List<String> replies = clients.get();
                for (int n = 0; n < CONNECTIONS; n++) {
                    assertEquals("connection " + n + ";", replies.get(n));
                }
                assertEquals(CONNECTIONS, accepted);
                final List<NetStack> serverShards = server.shards();
                final List<NetStack> clientShards = client.shards();
                for (int k = 0; k < 2; k++) {
                    assertTrue(total(serverShards, "tcp.conn.passive_opens", k) > 0, "server shard " + k + " accepted some");
                    assertEquals(CONNECTIONS / 2, total(clientShards, "tcp.conn.active_opens", k),
                        "client shard " + k + " opened every other connection");
                    assertEquals(0, total(serverShards, "shard.rx.wrong_shard", k), "server shard " + k);
                    assertEquals(0, total(clientShards, "shard.rx.wrong_shard", k), "client shard " + k);
                }
                assertEquals(CONNECTIONS, total(serverShards, "tcp.conn.passive_opens", 0)
                    + total(serverShards, "tcp.conn.passive_opens", 1));
            }
        }
    }

    @Test
    void aBlockingAcceptTakesConnectionsFromEveryShard() throws Exception {
        try (World world = World.ternSharded(2);
             ServerSocketChannel listener = world.server().openServerSocketChannel()) {
            listener.bind(new InetSocketAddress(world.serverAddress(), 0));
            final int port = ((InetSocketAddress) listener.getLocalAddress()).getPort();
            final List<SocketChannel> clients = new ArrayList<>();
            final List<SocketChannel> accepted = new ArrayList<>();
            try {
                for (int n = 0; n < 16; n++) {
                    final SocketChannel channel = world.client().openSocketChannel();
                    clients.add(channel);
                    // Connect from the other thread while this one blocks in accept: each must wake it.
                    final CompletableFuture<Void> connecting = CompletableFuture.runAsync(() -> {
                        try {
                            channel.connect(new InetSocketAddress(world.serverAddress(), port));
                        } catch (IOException e) {
                            throw new IllegalStateException(e);
                        }
                    });
                    accepted.add(listener.accept());
                    connecting.get(10, TimeUnit.SECONDS);
                }
                final List<NetStack> shards = ((TernSelectorProvider) world.server()).shards();
                for (int k = 0; k < 2; k++) {
                    assertTrue(shards.get(k).counters().value("tcp.conn.passive_opens") > 0, "shard " + k + " accepted some");
                }
            } finally {
                for (SocketChannel channel : clients) {
                    channel.close();
                }
                for (SocketChannel channel : accepted) {
                    channel.close();
                }
            }
        }
    }

    @Test
    void aDatagramChannelBoundToAPortGetsEveryPeersDatagramsWhicheverShardTheyReach() throws Exception {
        try (World world = World.ternSharded(2);
             DatagramChannel server = world.server().openDatagramChannel(StandardProtocolFamily.INET)) {
            server.bind(new InetSocketAddress(world.serverAddress(), 5353));
            final int peers = 24;
            final List<DatagramChannel> senders = new ArrayList<>();
            final Map<Integer, Integer> sourcePorts = new HashMap<>();
            try {
                for (int n = 0; n < peers; n++) {
                    final DatagramChannel sender = world.client().openDatagramChannel(StandardProtocolFamily.INET);
                    senders.add(sender);
                    sender.send(ByteBuffer.wrap(new byte[] {(byte) n, 1, 2, 3}), new InetSocketAddress(world.serverAddress(), 5353));
                    final ByteBuffer got = ByteBuffer.allocate(64);
                    final InetSocketAddress from = (InetSocketAddress) server.receive(got);
                    assertEquals(4, got.position());
                    assertEquals(n, got.get(0), "datagram " + n);
                    sourcePorts.put(from.getPort(), n);
                    got.flip();
                    server.send(got, from);
                    final ByteBuffer back = ByteBuffer.allocate(64);
                    sender.receive(back);
                    assertArrayEquals(new byte[] {(byte) n, 1, 2, 3}, Arrays.copyOf(back.array(), back.position()));
                }
                assertEquals(peers, sourcePorts.size(), "every peer a port of its own");
                final List<NetStack> shards = ((TernSelectorProvider) world.server()).shards();
                assertEquals(peers, shards.get(0).counters().value("udp.rx.datagrams"), "all on shard 0, the socket's");
                assertTrue(shards.get(1).counters().value("shard.rx.udp_port_claimed") > 0,
                    "some reached shard 1 by their hash and were handed over");
                assertEquals(0, shards.get(1).counters().value("udp.drop.no_socket"));
                assertEquals(0, shards.get(1).counters().value("icmp.tx.errors"), "shard 1 refused none");
            } finally {
                for (DatagramChannel sender : senders) {
                    sender.close();
                }
            }
        }
    }

    @Test
    void ternShardsMakesASharedStackFromPropertiesAsTernExecDoes() throws IOException {
        final Properties properties = new Properties();
        properties.setProperty("tern.link", "memory");
        properties.setProperty("tern.shards", "2");
        properties.setProperty("tern.name", "sharded-provider-test");
        try (TernSelectorProvider provider = new TernSelectorProvider(properties)) {
            final InetSocketAddress echo = new InetSocketAddress(InetAddress.getByName("198.18.0.1"), 7);
            for (int n = 0; n < 8; n++) {
                try (SocketChannel tcp = provider.openSocketChannel()) {
                    tcp.connect(echo);
                    tcp.write(ByteBuffer.wrap(("echo " + n).getBytes(StandardCharsets.US_ASCII)));
                    final ByteBuffer reply = ByteBuffer.allocate(6);
                    while (reply.hasRemaining()) {
                        tcp.read(reply);
                    }
                    assertEquals("echo " + n, new String(reply.array(), StandardCharsets.US_ASCII));
                }
            }
            try (DatagramChannel udp = provider.openDatagramChannel(StandardProtocolFamily.INET)) {
                udp.send(ByteBuffer.wrap("udp echo".getBytes(StandardCharsets.US_ASCII)), echo);
                final ByteBuffer reply = ByteBuffer.allocate(16);
                assertEquals(echo, udp.receive(reply));
                assertEquals(8, reply.position());
            }
            final List<NetStack> shards = provider.shards();
            assertEquals(2, shards.size());
            assertEquals(4, shards.get(0).counters().value("tcp.conn.active_opens"));
            assertEquals(4, shards.get(1).counters().value("tcp.conn.active_opens"));
            assertEquals("sharded-provider-test[1/2]", shards.get(1).name());
            assertTrue(provider.toString().contains("2 shards"), provider.toString());
        }
        for (String[] bad : new String[][] {{"memory", "0"}, {"memory", "two"}, {"afxdp:eth9", "2"}}) {
            final Properties wrong = new Properties();
            wrong.setProperty("tern.link", bad[0]);
            wrong.setProperty("tern.shards", bad[1]);
            final IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> TernSelectorProvider.checkConfiguration(wrong));
            assertTrue(e.getMessage().startsWith("tern.shards "), e.getMessage());
        }
    }
}
