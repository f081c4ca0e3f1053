package dev.tern.tcp;

import dev.tern.tcp.testing.Seg;
import dev.tern.tcp.testing.TcpHarness;
import org.junit.jupiter.api.Test;

import static dev.tern.tcp.testing.TcpHarness.LOCAL_ISS;
import static dev.tern.tcp.testing.TcpHarness.REMOTE_ISS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Send completions: ids in send order, one notice per range, completed by acknowledgment or by the end. */
class SendCompletionsTest {
    private static void ack(TcpHarness h, int bytes) {
        h.send(Seg.ACK.seq(REMOTE_ISS + 1).ack(LOCAL_ISS + 1 + bytes));
    }

    @Test
    void sendsCompleteInOrderWhenAcknowledgedAndUnreadNoticesCoalesce() {
        try (TcpHarness h = TcpHarness.established()) {
            final SendCompletions sc = h.tcp.sendCompletions();
            h.write(new byte[100]);
            assertEquals(-TcpError.INVALID, sc.track(h.conn), "SO_ZEROCOPY off: nothing is tracked");
            assertEquals(0, sc.enable(h.conn, true));
            h.write(new byte[100]);
            assertEquals(0, sc.track(h.conn));
            h.write(new byte[100]);
            assertEquals(1, sc.track(h.conn));
            assertEquals(2, sc.pending(h.conn));
            ack(h, 100); // the first write's segment; Nagle held the others until now
            ack(h, 150);
            assertFalse(sc.ready(h.conn), "the first tracked send ends at byte 200");
            ack(h, 200);
            assertTrue(sc.ready(h.conn));
            assertEquals(0, sc.first(h.conn));
            assertEquals(0, sc.last(h.conn));
            ack(h, 300);
            assertEquals(1, sc.last(h.conn), "a completion extends the notice not yet read");
            assertEquals(0, sc.take(h.conn));
            assertFalse(sc.ready(h.conn));
            assertEquals(-TcpError.INVALID, sc.take(h.conn), "no notice waits: EAGAIN");
            assertEquals(2, h.counter("tcp.tx.completions.done"));
            assertEquals(1, h.counter("tcp.tx.completions.notices"));
        }
    }

    @Test
    void sendsStillWaitingCompleteWhenTheConnectionIsReset() {
        try (TcpHarness h = TcpHarness.established()) {
            final SendCompletions sc = h.tcp.sendCompletions();
            sc.enable(h.conn, true);
            h.write(new byte[100]);
            assertEquals(0, sc.track(h.conn));
            h.send(Seg.RST.seq(REMOTE_ISS + 1));
            assertTrue(sc.ready(h.conn), "every id gets its notice");
            assertEquals(0, sc.first(h.conn));
            assertEquals(0, sc.last(h.conn));
        }
    }
}
