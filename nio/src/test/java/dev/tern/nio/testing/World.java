package dev.tern.nio.testing;

import dev.tern.ethernet.memory.MemoryLink;
import dev.tern.ethernet.memory.MemoryPipe;
import dev.tern.ethernet.memory.MemoryWire;
import dev.tern.nio.Rules;
import dev.tern.nio.TernSelectorProvider;
import dev.tern.stack.NetStack;
import dev.tern.stack.StackShards;
import org.agrona.concurrent.BackoffIdleStrategy;

import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.UnknownHostException;
import java.nio.channels.spi.SelectorProvider;

/**
 * Where a behaviour test runs: a server side and a client side, each a {@link SelectorProvider}, and the server's
 * address. The same tests run in {@link #kernel()} (the JDK's own provider on loopback) and {@link #tern()} (two Tern
 * stacks joined by a memory pipe, each behind its own {@link TernSelectorProvider}), with identical expectations.
 */
public interface World extends AutoCloseable {
    SelectorProvider server();

    SelectorProvider client();

    InetAddress serverAddress();

    InetAddress clientAddress();

    /** The interface multicast goes out on and is joined on. */
    NetworkInterface multicastInterface();

    @Override
    void close();

    static World kernel() {
        return new World() {
            @Override
            public SelectorProvider server() {
                return SelectorProvider.provider();
            }

            @Override
            public SelectorProvider client() {
                return SelectorProvider.provider();
            }

            @Override
            public InetAddress serverAddress() {
                return InetAddress.getLoopbackAddress();
            }

            @Override
            public InetAddress clientAddress() {
                return InetAddress.getLoopbackAddress();
            }

            @Override
            public NetworkInterface multicastInterface() {
                try {
                    return NetworkInterface.getByInetAddress(InetAddress.getLoopbackAddress());
                } catch (java.net.SocketException e) {
                    throw new IllegalStateException(e);
                }
            }

            @Override
            public void close() {
            }

            @Override
            public String toString() {
                return "kernel";
            }
        };
    }

    /** Two Tern stacks, server 198.18.0.1 and client 198.18.0.2, on a memory pipe with 4 MiB rings. */
    static World tern() {
        return ternPair("tern", null, null);
    }

    /**
     * Two Tern stacks with IPv6 besides, as {@link #tern()}: server 198.18.0.1 and 2001:db8::1, client 198.18.0.2 and
     * 2001:db8::2 (no duplicate address detection, so the addresses serve at once).
     */
    static World ternDualStack() {
        return ternPair("tern, dual-stack", "2001:db8::1/64", "2001:db8::2/64");
    }

    /** Server 198.18.0.1 and client 198.18.0.2 on a memory pipe, each with the IPv6 address given (null: none). */
    private static World ternPair(String name, String serverIpv6, String clientIpv6) {
        final MemoryPipe pipe = MemoryPipe.create(0x0200_0000_0001L, 0x0200_0000_0002L, 9000, 1 << 22, true);
        final TernSelectorProvider server = TernSelectorProvider.open(stack("server", pipe.first(), "198.18.0.1/24",
            serverIpv6));
        final TernSelectorProvider client = TernSelectorProvider.open(stack("client", pipe.second(), "198.18.0.2/24",
            clientIpv6));
        return ternWorld(server, client, name, () -> {
            client.close();
            server.close();
            pipe.close();
        });
    }

    private static NetStack stack(String name, dev.tern.ethernet.link.Link link, String ipv4, String ipv6) {
        final NetStack.Builder builder = NetStack.builder().name(name).link(link).address(ipv4).countersInMemory();
        if (ipv6 != null) {
            builder.ipv6(dev.tern.ipv6.Ipv6Config.withAddresses(
                java.util.List.of(dev.tern.core.net.Ipv6InterfaceAddress.parse(ipv6))).withDadTransmits(0));
        }
        return builder.build();
    }

    /**
     * Two sharded Tern stacks, server 198.18.0.1 and client 198.18.0.2, of {@code shards} shards each, on one memory
     * wire that steers each flow to a shard as an AF_PACKET fanout group does; each shard driven by a StackRunner.
     */
    static World ternSharded(int shards) {
        final MemoryWire wire = MemoryWire.builder().mtu(9000).concurrent(true).build();
        final MemoryLink[] serverLinks = wire.attachShards("server", 0x0200_0000_0001L, shards);
        final MemoryLink[] clientLinks = wire.attachShards("client", 0x0200_0000_0002L, shards);
        final StackShards serverShards = StackShards.build(shards, k -> serverLinks[k],
            builder -> builder.name("server").address("198.18.0.1/24").countersInMemory());
        final StackShards clientShards = StackShards.build(shards, k -> clientLinks[k],
            builder -> builder.name("client").address("198.18.0.2/24").countersInMemory());
        serverShards.start(k -> new BackoffIdleStrategy(100, 10, 1_000, 100_000));
        clientShards.start(k -> new BackoffIdleStrategy(100, 10, 1_000, 100_000));
        final TernSelectorProvider server = TernSelectorProvider.over(serverShards,
            Rules.defaults(serverShards.shard(0).address()));
        final TernSelectorProvider client = TernSelectorProvider.over(clientShards,
            Rules.defaults(clientShards.shard(0).address()));
        return ternWorld(server, client, "tern, " + shards + " shards a side", () -> {
            clientShards.close();
            serverShards.close();
            wire.close();
        });
    }

    /** Tern's providers as a world: server 198.18.0.1, client 198.18.0.2; {@code close} releases what they run on. */
    private static World ternWorld(TernSelectorProvider server, TernSelectorProvider client, String name, Runnable close) {
        return new World() {
            @Override
            public SelectorProvider server() {
                return server;
            }

            @Override
            public SelectorProvider client() {
                return client;
            }

            @Override
            public InetAddress serverAddress() {
                return address(198, 18, 0, 1);
            }

            @Override
            public InetAddress clientAddress() {
                return address(198, 18, 0, 2);
            }

            @Override
            public NetworkInterface multicastInterface() {
                return World.kernel().multicastInterface(); // recorded, not used: a Tern stack has one interface
            }

            @Override
            public void close() {
                close.run();
            }

            @Override
            public String toString() {
                return name;
            }
        };
    }

    static InetAddress address(int a, int b, int c, int d) {
        try {
            return InetAddress.getByAddress(new byte[] {(byte) a, (byte) b, (byte) c, (byte) d});
        } catch (UnknownHostException e) {
            throw new IllegalStateException(e);
        }
    }
}
