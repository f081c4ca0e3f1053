package dev.tern.stack;

import dev.tern.arp.wire.ArpPacket;
import dev.tern.arp.wire.ArpRepr;
import dev.tern.core.net.Ipv4Address;
import dev.tern.core.testing.Allocations;
import dev.tern.ethernet.wire.EtherType;
import dev.tern.ethernet.wire.EthernetHeader;
import dev.tern.ethernet.wire.MacAddress;
import dev.tern.ipv4.Ipv4Layer;
import dev.tern.stack.sim.Simulation;
import dev.tern.stack.testing.PeerPort;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class GatewayAndAllocationTest {
    private static final long SECOND = 1_000_000_000L;

    @Test
    void anOffSubnetDestinationGoesViaTheGatewayAndWithoutOneHasNoRoute() {
        try (Simulation sim = new Simulation()) {
            final PeerPort peer = new PeerPort(sim, "router", MacAddress.parse("0a:00:00:00:00:01"));
            final NetStack routed = sim.addStack("routed", "198.18.0.2/24", b -> b.gateway("198.18.0.1"));
            final NetStack isolated = sim.addStack("isolated", "198.18.0.3/24");
            sim.runFor(5 * SECOND);
            peer.clear();
            final int far = Ipv4Address.parse("203.0.113.9");
            assertEquals(Ipv4Layer.OK, routed.pinger().send(far, 1, 8, sim.nowNs()));
            assertEquals(Ipv4Layer.ERR_NO_ROUTE, isolated.pinger().send(far, 1, 8, sim.nowNs()));
            assertEquals(1, isolated.counters().value("ipv4.tx.no_route"));
            sim.runFor(SECOND / 10);
            final List<PeerPort.Received> arp = peer.drain(f -> f.etherType() == EtherType.ARP);
            assertEquals(1, arp.size());
            assertEquals(Ipv4Address.parse("198.18.0.1"),
                ArpRepr.parse(new ArpPacket().wrap(arp.getFirst().segment(), EthernetHeader.LENGTH, 28)).targetIp(),
                "the gateway is resolved, not the far address");
        }
    }

    /**
     * Over IPv4 and over IPv6 (the pseudo-header sum, the neighbour cache and the records' wider header too), and
     * either family to a dual-stack socket, which answers in it.
     */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"IPv4", "IPv6", "IPv4 to a dual-stack socket", "IPv6 to a dual-stack socket"})
    void sendingAndReceivingDatagramsThroughSocketsAllocatesNothing(String path) throws Exception {
        final boolean ipv6 = path.startsWith("IPv6");
        final boolean dualStack = path.endsWith("dual-stack socket");
        try (Simulation sim = new Simulation(); Arena arena = Arena.ofConfined()) {
            final NetStack a = sim.addStack("a", "198.18.0.1/24",
                builder -> withIpv6(builder, ipv6 || dualStack, "2001:db8::1/64"));
            final NetStack b = sim.addStack("b", "198.18.0.2/24",
                builder -> withIpv6(builder, ipv6 || dualStack, "2001:db8::2/64"));
            final UdpSocket receiver = dualStack ? b.openUdpDualStack() : ipv6 ? b.openUdp6() : b.openUdp();
            receiver.bind(9000);
            final UdpSocket sender = ipv6 ? a.openUdp6() : a.openUdp();
            if (ipv6) {
                sender.connect(dev.tern.core.net.Ipv6Address.parse("2001:db8::2"), 9000);
            } else {
                sender.connect(Ipv4Address.parse("198.18.0.2"), 9000);
            }
            final MemorySegment message = arena.allocate(200);
            final MemorySegment buffer = arena.allocate(2000);
            final long[] received = {0};
            final Runnable exchange = () -> {
                try {
                    sender.send(message, 0, 200);
                    a.poll(sim.nowNs());
                    b.poll(sim.nowNs());
                    if (receiver.receive(buffer, 0, 2000) == 200) {
                        received[0]++;
                        if (dualStack) {
                            answer(receiver, buffer);
                            b.poll(sim.nowNs());
                            a.poll(sim.nowNs());
                            sender.receive(buffer, 0, 2000);
                        }
                    }
                } catch (TernSocketException e) {
                    throw new IllegalStateException(e);
                }
            };
            for (int i = 0; i < 10; i++) {
                exchange.run();
                sim.runFor(SECOND / 100); // ARP or neighbour discovery first
            }
            final long bytes = Allocations.measure(200_000, 1_000_000, exchange);
            assertEquals(0, bytes, "bytes allocated sending and receiving 1M datagrams, " + path);
            assertTrue(received[0] > 1_000_000);
            if (dualStack) {
                assertEquals(ipv6 ? 0 : received[0], b.counters().value("udp.tx.datagrams")
                    - b.counters().value("udp.tx.ipv6_datagrams"), "the answers went in the client's family");
            }
        }
    }

    /** A dual-stack socket answers the source of the datagram it just took, in that source's family. */
    private static void answer(UdpSocket socket, MemorySegment data) throws TernSocketException {
        if (socket.lastSourceIpv6()) {
            socket.sendTo6(socket.lastSourceHigh(), socket.lastSourceLow(), socket.lastSourcePort(), data, 0, 200);
        } else {
            socket.sendTo(socket.lastSourceAddress(), socket.lastSourcePort(), data, 0, 200);
        }
    }

    private static void withIpv6(NetStack.Builder builder, boolean ipv6, String address) {
        if (ipv6) {
            builder.ipv6(dev.tern.ipv6.Ipv6Config.withAddresses(
                java.util.List.of(dev.tern.core.net.Ipv6InterfaceAddress.parse(address))).withDadTransmits(0));
        }
    }
}
