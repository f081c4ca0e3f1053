package dev.tern.tcp;

import dev.tern.tcp.testing.TcpHarness;
import org.junit.jupiter.api.Test;

import static dev.tern.tcp.testing.Seg.ACK;
import static dev.tern.tcp.testing.Seg.PSH_ACK;
import static dev.tern.tcp.testing.Seg.SEG;
import static dev.tern.tcp.testing.TcpHarness.LOCAL_ISS;
import static dev.tern.tcp.testing.TcpHarness.REMOTE_ISS;
import static dev.tern.tcp.testing.TcpHarness.SECOND;
import static dev.tern.tcp.testing.TcpHarness.bytes;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * MSG_EOR on the wire ({@link RecordEnds}): no segment carries bytes of both sides of a record end, first sent or
 * sent again; the record's last segment is pushed and goes though short; a full table of ends is refused.
 */
class RecordEndsTest {
    static final int L = LOCAL_ISS + 1;
    static final int R = REMOTE_ISS + 1;
    static final int MSS = 1460;

    /** Ten full segments in flight (the initial window), then {@code tail} bytes queued behind them. */
    static TcpHarness windowFullThen(TcpHarness h, int tail) {
        h.write(bytes(10 * MSS + tail));
        for (int i = 0; i < 10; i++) {
            h.expect(SEG.seq(L + i * MSS).len(MSS));
        }
        h.expectNothing();
        return h;
    }

    @Test
    void theSegmentAfterARecordEndStartsAtItAndTheRecordsLastIsPushed() {
        try (TcpHarness h = windowFullThen(TcpHarness.established(), 500)) {
            assertEquals(0, h.tcp.socketOptions().endRecord(h.conn));
            h.write(bytes(2 * MSS));
            h.send(ACK.seq(R).ack(L + 10 * MSS));
            final int end = L + 10 * MSS + 500;
            // Without the record end: 1460, 1460 and 540 bytes, the 500 joined by the next write's bytes.
            h.expect(PSH_ACK.seq(L + 10 * MSS).len(500));
            h.expect(SEG.seq(end).len(MSS));
            h.expect(PSH_ACK.seq(end + MSS).len(MSS));
            h.expectNothing();
        }
    }

    @Test
    void aRetransmissionKeepsTheCutAtTheRecordEnd() {
        try (TcpHarness h = windowFullThen(TcpHarness.established(), 500)) {
            h.tcp.socketOptions().endRecord(h.conn);
            h.write(bytes(2 * MSS));
            h.send(ACK.seq(R).ack(L + 10 * MSS));
            h.expect(PSH_ACK.seq(L + 10 * MSS).len(500));
            h.expect(SEG.seq(L + 10 * MSS + 500).len(MSS));
            h.expect(PSH_ACK.seq(L + 10 * MSS + 500 + MSS).len(MSS));
            h.advanceUntilSent(5 * SECOND);
            // The timeout sends the first unacknowledged segment again as it went: the record's 500 bytes only.
            h.expect(SEG.seq(L + 10 * MSS).len(500));
            h.expectNothing();
        }
    }

    @Test
    void aShortRecordEndWithDataBehindItIsNotHeldByNagle() {
        try (TcpHarness h = TcpHarness.established()) {
            h.write(bytes(100));
            h.expect(PSH_ACK.seq(L).len(100));
            // A short segment is in flight: Nagle holds the next short one while it is unacknowledged.
            h.write(bytes(300));
            h.tcp.socketOptions().endRecord(h.conn);
            h.write(bytes(300));
            // The record's 300 bytes cannot grow, so they go; the 300 after them wait for the ACK, as Nagle says.
            h.expect(PSH_ACK.seq(L + 100).len(300));
            h.expectNothing();
            h.send(ACK.seq(R).ack(L + 400));
            h.expect(PSH_ACK.seq(L + 400).len(300));
        }
    }

    @Test
    void endsOnlyWhereBytesLieBetweenAndAFullTableIsRefused() {
        try (TcpHarness h = windowFullThen(TcpHarness.established(), 0)) {
            assertEquals(0, h.tcp.socketOptions().endRecord(h.conn), "nothing unsent: no record end to keep");
            for (int i = 0; i < RecordEnds.MARKS; i++) {
                h.write(bytes(1));
                assertEquals(0, h.tcp.socketOptions().endRecord(h.conn));
                assertEquals(0, h.tcp.socketOptions().endRecord(h.conn), "a second end at the same place is none");
            }
            assertTrue(h.tcp.socketOptions().recordEndsFull(h.conn));
            h.write(bytes(1));
            assertEquals(-TcpError.NO_BUFFER, h.tcp.socketOptions().endRecord(h.conn));
            // The window opens: each one-byte record goes as a segment of its own, and the ends sent are freed.
            h.send(ACK.seq(R).ack(L + 10 * MSS));
            for (int i = 0; i < 10; i++) {
                h.expect(PSH_ACK.seq(L + 10 * MSS + i).len(1));
            }
            assertFalse(h.tcp.socketOptions().recordEndsFull(h.conn));
        }
    }
}
