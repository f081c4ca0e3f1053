package dev.tern.cli;

import dev.tern.core.net.Ipv4Address;
import dev.tern.stack.NetStack;
import dev.tern.stack.TcpConnection;
import dev.tern.stack.sim.Simulation;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The services of {@code tern serve} on two stacks of a simulation. */
class TcpServiceTest {
    private static final long SECOND = 1_000_000_000L;

    @Test
    void discardTakesTheBytesInPlaceOnceItHasTheConnectionAndClosesAtTheEndOfTheStream() throws Exception {
        try (Simulation sim = new Simulation(); Arena arena = Arena.ofConfined()) {
            final NetStack a = sim.addStack("a", "198.18.0.1/24");
            final NetStack b = sim.addStack("b", "198.18.0.2/24");
            try (TcpService.Discard discard = new TcpService.Discard(b, 9)) {
                final TcpConnection client = a.connect(Ipv4Address.parse("198.18.0.2"), 9);
                assertTrue(sim.runUntil(client::isConnected, 5 * SECOND));
                final MemorySegment data = arena.allocate(1 << 20);
                int written = 0;
                while (written < data.byteSize()) {
                    written += client.write(data, written, (int) data.byteSize() - written);
                    sim.step();
                    discard.poll();
                }
                client.shutdownOutput();
                assertTrue(sim.runUntil(() -> {
                    discard.poll();
                    return client.isEndOfStream();
                }, 10 * SECOND), "the service closed after the client's end of stream");
                assertEquals(1 << 20, b.counters().value("tcp.rx.bytes"));
                // Bytes that came before the service accepted the connection waited in the ring (copied once) and
                // went to the handler when it was set; everything after was taken in the frames.
                final long fromRing = b.counters().value("tcp.rx.handler_ring_bytes");
                assertEquals(1 << 20, b.counters().value("tcp.rx.zero_copy_bytes") + fromRing);
                assertEquals(fromRing, b.counters().value("tcp.rx.copied_bytes"));
                assertTrue(fromRing < 1 << 18, "most bytes taken in place: " + fromRing + " from the ring");
                client.close();
            }
        }
    }
}
