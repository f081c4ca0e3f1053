package dev.tern.tcp;

import dev.tern.tcp.testing.App;
import dev.tern.tcp.testing.TcpNetwork;
import dev.tern.tcp.testing.TestStack;
import org.junit.jupiter.api.Test;

import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class TwoStackSmokeTest {
    @Test
    void transfersAMegabyteAndClosesCleanly() {
        try (TcpNetwork net = new TcpNetwork()) {
            final TestStack a = net.add("a", "198.18.0.1/24", TcpConfig.defaults());
            final TestStack b = net.add("b", "198.18.0.2/24", TcpConfig.defaults());
            final App server = new App(a, net::now);
            final App client = new App(b, net::now);
            server.closeOnEof = true;
            assertTrue(a.tcp.listen(80, 16, server) >= 0);
            final byte[] data = new byte[1 << 20];
            new Random(1).nextBytes(data);
            client.connection = b.tcp.connect(a.address(), 80, 0, TcpOptions.DEFAULT, client, net.now());
            assertTrue(client.connection >= 0, "connect " + client.connection);
            client.closeWhenSent = true;
            client.send(data);
            assertTrue(net.runUntil(() -> client.closedError >= 0 && a.tcp.connectionCount() == 0, 60_000_000_000L),
                "both closed; client " + client.events + " server " + server.events + " got " + server.received.size());
            assertArrayEquals(data, server.received.toByteArray());
            assertEquals(0, client.closedError);
            System.out.printf("1 MiB in %d segments, %d ACKs back (one per receive batch), %d retransmissions%n",
                b.counter("tcp.tx.segments"), a.counter("tcp.tx.segments"), b.counter("tcp.tx.retransmits"));
        }
    }
}
