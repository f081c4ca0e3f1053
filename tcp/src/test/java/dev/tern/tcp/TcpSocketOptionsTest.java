package dev.tern.tcp;

import dev.tern.tcp.testing.TcpHarness;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;

import static dev.tern.tcp.testing.Seg.ACK;
import static dev.tern.tcp.testing.Seg.PSH_ACK;
import static dev.tern.tcp.testing.TcpHarness.LOCAL_ISS;
import static dev.tern.tcp.testing.TcpHarness.MS;
import static dev.tern.tcp.testing.TcpHarness.REMOTE_ISS;
import static dev.tern.tcp.testing.TcpHarness.SECOND;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * TCP_USER_TIMEOUT (RFC 5482, {@link UserTimeout}) and the other options of {@link TcpSocketOptions}, on the
 * layer's handle API. The conformance scripts user-timeout.pkt, tcp-maxseg.pkt, notsent-lowat.pkt and cork.pkt show
 * them on the wire with the remote's answers.
 */
class TcpSocketOptionsTest {
    static final int L = LOCAL_ISS + 1;
    static final int R = REMOTE_ISS + 1;

    @Test
    void theUserTimeoutEndsAStalledConnectionBeforeTheRetryCount() {
        try (TcpHarness h = TcpHarness.established()) {
            assertEquals(0, h.tcp.socketOptions().userTimeout(h.conn, 700));
            assertEquals(700, h.tcp.socketOptions().userTimeout(h.conn));
            final long sentAt = h.now();
            h.write("hello");
            h.expect(PSH_ACK.seq(L).payload("hello"));
            // The RTO floor (200 ms) doubling: retransmissions 200 and 600 ms after the first send; the next,
            // due 1400 ms after it, is brought forward to the user timeout.
            h.advanceUntilSent(10 * SECOND);
            h.expect(PSH_ACK.seq(L).payload("hello"));
            h.advanceUntilSent(10 * SECOND);
            h.expect(PSH_ACK.seq(L).payload("hello"));
            assertEquals(TcpState.ESTABLISHED, h.tcp.state(h.conn));
            h.advance(sentAt + 700 * MS - h.now() - 1);
            assertEquals(TcpState.ESTABLISHED, h.tcp.state(h.conn));
            h.advance(2 * MS);
            h.assertState(TcpState.CLOSED);
            assertEquals(TcpError.TIMED_OUT, h.tcp.error(h.conn));
            assertEquals(1, h.counter("tcp.conn.timed_out"));
            assertEquals(1, h.counter("tcp.conn.user_timeouts"));
        }
    }

    @Test
    void progressRestartsTheUserTimeout() {
        try (TcpHarness h = TcpHarness.established()) {
            h.tcp.socketOptions().userTimeout(h.conn, 700);
            h.write("hello");
            h.expect(PSH_ACK.seq(L).payload("hello"));
            h.advanceUntilSent(10 * SECOND);
            h.expect(PSH_ACK.seq(L).payload("hello"));
            // Acknowledged after its retransmission: the next stall counts from the next data's first send.
            h.send(ACK.seq(R).ack(L + 5));
            h.advance(500 * MS);
            final long sentAt = h.now();
            h.write("world");
            h.expect(PSH_ACK.seq(L + 5).payload("world"));
            h.advance(sentAt + 690 * MS - h.now());
            assertEquals(TcpState.ESTABLISHED, h.tcp.state(h.conn));
            h.advance(20 * MS);
            h.assertState(TcpState.CLOSED);
        }
    }

    @Test
    void noUserTimeoutLeavesTheRetryCount() {
        try (TcpHarness h = TcpHarness.established()) {
            h.write("hello");
            h.advance(30 * SECOND);
            assertEquals(TcpState.ESTABLISHED, h.tcp.state(h.conn));
            assertTrue(h.tcp.info(h.conn).retries() > 5, "still retransmitting");
            assertEquals(0, h.counter("tcp.conn.user_timeouts"));
            assertEquals(-TcpError.INVALID, h.tcp.socketOptions().userTimeout(h.conn, -1));
        }
    }

    @Test
    void theNotsentMarkAndTheMaximumSegmentAreTheConnections() {
        try (TcpHarness h = TcpHarness.established(TcpHarness.config().notsentLowat(4000).build(),
            TcpOptions.DEFAULT.withMaxSegment(1000))) {
            final TcpSocketOptions options = h.tcp.socketOptions();
            assertEquals(4000, options.notsentLowat(h.conn), "the layer's mark");
            assertEquals(0, options.notsentLowat(h.conn, 100));
            assertEquals(100, options.notsentLowat(h.conn));
            assertEquals(1000, h.tcp.info(h.conn).advMss(), "the MSS offered");
            assertEquals(1000, h.tcp.mss(h.conn), "the MSS used");
            assertEquals(1000, options.maxSegment(h.conn));
            assertEquals(0, options.maxSegment(h.conn, 500));
            assertEquals(500, h.tcp.mss(h.conn));
            assertEquals(-TcpError.INVALID, options.maxSegment(h.conn, 87));
            assertTrue(options.belowNotsentLowat(h.conn));
            assertEquals(0, options.notsentBytes(h.conn));
        }
    }

    @Test
    void theCorkHoldsShortSegmentsUntilItComesOff() {
        try (TcpHarness h = TcpHarness.established()) {
            final TcpSocketOptions options = h.tcp.socketOptions();
            assertEquals(0, options.cork(h.conn, true, h.now()));
            assertTrue(options.corked(h.conn));
            h.write("hello");
            h.advance(100 * MS);
            h.expectNothing();
            h.write(" world");
            assertEquals(0, options.cork(h.conn, false, h.now()));
            h.poll();
            h.expect(PSH_ACK.seq(L).payload("hello world"));
            h.send(ACK.seq(R).ack(L + 11));
            // MSG_MORE holds the short tail of its own output; with nothing in flight the persist timer sends it
            // after the RTO (its 200 ms floor here), without PSH: the application did not push it.
            h.tcp.sendBuffer(h.conn).write(MemorySegment.ofArray("abc".getBytes(StandardCharsets.US_ASCII)), 0, 3);
            options.sendableMore(h.conn, h.now());
            h.poll();
            h.expectNothing();
            assertEquals(200 * MS, h.advanceUntilSent(SECOND));
            h.expect(ACK.seq(L + 11).payload("abc"));
        }
    }
}
