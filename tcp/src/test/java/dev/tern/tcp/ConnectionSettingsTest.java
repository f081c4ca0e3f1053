package dev.tern.tcp;

import dev.tern.tcp.testing.TcpHarness;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Settings that change while the layer runs reach connections opened after the change only; TCP_SYNCNT. */
class ConnectionSettingsTest {
    /** A connection attempt to the harness's peer, which answers no SYN, from a local port of its own. */
    private static int attempt(TcpHarness h, int localPort) {
        final int c = h.tcp.connect(TcpHarness.PEER, TcpHarness.REMOTE_PORT, localPort, TcpOptions.DEFAULT, h.events,
            h.now());
        assertTrue(c >= 0, "connect failed: " + c);
        h.poll();
        return c;
    }

    @Test
    void aConnectionKeepsTheSettingsItWasOpenedWith() {
        try (TcpHarness h = new TcpHarness(TcpHarness.config().synRetries(3).build())) {
            h.tcp.socketOptions().synCount(0, 0); // a bad handle changes nothing
            final int before = attempt(h, 40000);
            h.tcp.reconfigure(h.tcp.config().toBuilder().synRetries(1).build());
            final int after = attempt(h, 40001);
            assertEquals(3, h.tcp.socketOptions().synCount(before));
            assertEquals(1, h.tcp.socketOptions().synCount(after));
            // One retransmission at 1 s, then the attempt ends at 3 s; the older one retransmits at 1, 3 and 7 s.
            h.advance(3 * TcpHarness.SECOND + TcpHarness.SECOND / 2);
            assertEquals(TcpState.CLOSED, h.tcp.state(after));
            assertEquals(TcpState.SYN_SENT, h.tcp.state(before));
            h.advance(12 * TcpHarness.SECOND);
            assertEquals(TcpState.CLOSED, h.tcp.state(before));
            assertEquals(2, h.counter("tcp.conn.timed_out"));
        }
    }

    @Test
    void tcpSyncntBoundsOneConnectionsAttempt() {
        try (TcpHarness h = new TcpHarness(TcpHarness.config().synRetries(5).build())) {
            final int c = attempt(h, 40000);
            assertEquals(0, h.tcp.socketOptions().synCount(c, 2));
            assertEquals(2, h.tcp.socketOptions().synCount(c));
            assertEquals(-TcpError.INVALID, h.tcp.socketOptions().synCount(c, 128));
            assertEquals(0, h.tcp.socketOptions().synCount(c, 0));
            assertEquals(5, h.tcp.socketOptions().synCount(c), "0 goes back to the settings' limit");
            assertEquals(0, h.tcp.socketOptions().synCount(c, 1));
            h.advance(3 * TcpHarness.SECOND + TcpHarness.SECOND / 2);
            assertEquals(TcpState.CLOSED, h.tcp.state(c));
            assertEquals(TcpError.TIMED_OUT, h.tcp.error(c));
        }
    }

    @Test
    void aLayerWideSettingCannotChangeWhileTheLayerRuns() {
        try (TcpHarness h = new TcpHarness(TcpHarness.config().build())) {
            final TcpConfig now = h.tcp.config();
            final IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> h.tcp.reconfigure(now.toBuilder().maxConnections(now.maxConnections() * 2).build()));
            assertTrue(e.getMessage().endsWith("cannot change while it runs: maxConnections"), e.getMessage());
            assertEquals(now, h.tcp.config(), "nothing changed");
        }
    }
}
