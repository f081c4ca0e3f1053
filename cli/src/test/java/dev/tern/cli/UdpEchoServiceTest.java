package dev.tern.cli;

import dev.tern.core.net.Ipv4Address;
import dev.tern.core.net.Ipv6Address;
import dev.tern.core.net.Ipv6InterfaceAddress;
import dev.tern.ipv6.Ipv6Config;
import dev.tern.stack.NetStack;
import dev.tern.stack.UdpSocket;
import dev.tern.stack.sim.Simulation;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** {@code tern serve --udp-echo} on a stack of a simulation, with a client stack on the same subnet. */
class UdpEchoServiceTest {
    private static final long SECOND = 1_000_000_000L;
    private static final int SERVER = Ipv4Address.parse("198.18.0.2");
    private static final int SUBNET_BROADCAST = Ipv4Address.parse("198.18.0.255");

    @Test
    void echoesWhatIsSentToItsAddressButNeverWhatIsSentToTheSubnetsBroadcast() throws Exception {
        try (Simulation sim = new Simulation(); Arena arena = Arena.ofConfined()) {
            final NetStack client = sim.addStack("client", "198.18.0.1/24");
            final NetStack server = sim.addStack("server", "198.18.0.2/24");
            try (UdpEchoService echo = new UdpEchoService(server, 7)) {
                final UdpSocket socket = client.openUdp();
                socket.bind(40000);
                socket.broadcast(true);
                final MemorySegment data = arena.allocate(32);
                final MemorySegment back = arena.allocate(64);

                socket.sendTo(SERVER, 7, data, 0, 32);
                sim.runUntil(() -> echo.poll() > 0, SECOND);
                sim.runFor(SECOND / 10);
                assertEquals(32, socket.receive(back, 0, 64), "the unicast datagram comes back");

                // A spoofed source would make this a reflection towards a victim: the echo stays silent.
                socket.sendTo(SUBNET_BROADCAST, 7, data, 0, 32);
                sim.runUntil(() -> echo.poll() > 0, SECOND);
                sim.runFor(SECOND / 10);
                assertEquals(-1, socket.receive(back, 0, 64), "no echo of a broadcast datagram");
                assertEquals(1, server.counters().value("udp.echo.group_addressed"));
                assertEquals(1, echo.echoed());
                socket.close();
            }
        }
    }

    @Test
    void onAStackWithIpv6TheSamePortEchoesIpv6DatagramsToTheirSender() throws Exception {
        try (Simulation sim = new Simulation(); Arena arena = Arena.ofConfined()) {
            final NetStack client = sim.addStack("client", "198.18.0.1/24", b -> ipv6(b, "2001:db8::1/64"));
            final NetStack server = sim.addStack("server", "198.18.0.2/24", b -> ipv6(b, "2001:db8::2/64"));
            try (UdpEchoService echo = new UdpEchoService(server, 7)) {
                final UdpSocket four = client.openUdp();
                final UdpSocket six = client.openUdp6();
                final MemorySegment data = arena.allocate(1000);
                data.fill((byte) 6);
                final MemorySegment back = arena.allocate(2000);
                six.sendTo(Ipv6Address.parse("2001:db8::2"), 7, data, 0, 1000);
                four.sendTo(SERVER, 7, data, 0, 10);
                sim.runUntil(() -> echo.poll() > 0, SECOND);
                sim.runFor(SECOND / 10);
                echo.poll();
                sim.runFor(SECOND / 10);
                assertEquals(1000, six.receive(back, 0, 2000));
                assertEquals(Ipv6Address.parse("2001:db8::2"), six.lastSource6());
                assertEquals(-1L, back.asSlice(0, 1000).mismatch(data.asSlice(0, 1000)));
                assertEquals(10, four.receive(back, 0, 2000));
                assertEquals(2, echo.echoed());
            }
        }
    }

    private static void ipv6(NetStack.Builder builder, String address) {
        builder.ipv6(Ipv6Config.withAddresses(List.of(Ipv6InterfaceAddress.parse(address))).withDadTransmits(0));
    }
}
