package dev.tern.cli;

import dev.tern.core.net.Ipv4Address;
import dev.tern.stack.NetStack;
import dev.tern.stack.UdpSocket;
import dev.tern.stack.sim.Simulation;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

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
}
