package dev.tern.tcp;

import dev.tern.tcp.testing.Captured;
import dev.tern.tcp.testing.Seg;
import dev.tern.tcp.testing.TcpHarness;
import org.junit.jupiter.api.Test;

import static dev.tern.tcp.testing.Seg.ACK;
import static dev.tern.tcp.testing.Seg.SEG;
import static dev.tern.tcp.testing.TcpHarness.LOCAL_ISS;
import static dev.tern.tcp.testing.TcpHarness.MS;
import static dev.tern.tcp.testing.TcpHarness.REMOTE_ISS;
import static dev.tern.tcp.testing.TcpHarness.bytes;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Undoing a reduction that a reordered, not lost, segment caused: by D-SACK (RFC 3708: every retransmission of the
 * episode came back duplicated) and by timestamps (RFC 3522, the Eifel detection: the ACK of the retransmitted
 * segment echoes the original's timestamp).
 */
class UndoTest {
    static final int L = LOCAL_ISS + 1;
    static final int R = REMOTE_ISS + 1;
    static final int MSS = 1460;

    static int seg(int i) {
        return L + i * MSS;
    }

    @Test
    void aDsackForTheOnlyRetransmissionUndoesTheReduction() {
        try (TcpHarness h = TcpHarness.establishedAfter(10 * MS, TcpHarness.config().build(),
            TcpOptions.DEFAULT.withLossDetection("dupack"), Seg.SYN_ACK.sackOk())) {
            h.write(bytes(10 * MSS));
            h.clearReceived();
            final int cwnd = h.tcp.cwnd(h.conn);
            for (int i = 2; i <= 4; i++) {
                h.send(ACK.seq(R).ack(seg(0)).sack(seg(1), seg(i)));
            }
            h.expect(SEG.seq(seg(0)).len(MSS));
            assertEquals((int) (cwnd * 0.7), h.tcp.ssthresh(h.conn));
            // Segment 0 was only late: it arrives, then its retransmission, which the peer reports as a D-SACK.
            h.send(ACK.seq(R).ack(seg(10)));
            h.send(ACK.seq(R).ack(seg(10)).sack(seg(0), seg(1)));
            assertEquals(1, h.counter("tcp.undo.dsack"));
            assertEquals(cwnd, h.tcp.cwnd(h.conn));
            assertEquals(1 << 30, h.tcp.ssthresh(h.conn));
        }
    }

    private static void untilTimeouts(TcpHarness h, int timeouts) {
        for (int i = 0; i < 10_000 && h.counter("tcp.rto_expired") < timeouts; i++) {
            h.advance(MS);
        }
        assertEquals(timeouts, h.counter("tcp.rto_expired"));
    }

    @Test
    void anAckOfOriginalsSentBeforeATimeoutShowsItSpuriousAndUndoesIt() {
        try (TcpHarness h = TcpHarness.establishedAfter(10 * MS, TcpHarness.config().build(), TcpOptions.DEFAULT,
            Seg.SYN_ACK.sackOk())) {
            h.write(bytes(10 * MSS));
            h.clearReceived();
            final int cwnd = h.tcp.cwnd(h.conn);
            // The path stalls longer than the RTO: the probe and then the timeout fire, the head goes again.
            untilTimeouts(h, 1);
            assertEquals(1, h.counter("tcp.rto_expired"));
            assertEquals("loss", h.tcp.info(h.conn).senderState());
            // Then the ACKs of the original transmissions arrive: segments never sent again were delivered.
            h.send(ACK.seq(R).ack(seg(5)));
            assertEquals(1, h.counter("tcp.undo.frto"), "RFC 5682: the timeout was spurious");
            assertEquals("open", h.tcp.info(h.conn).senderState());
            assertEquals(true, h.tcp.cwnd(h.conn) >= cwnd, "the window came back (and slow start went on)");
            assertEquals(1 << 30, h.tcp.ssthresh(h.conn));
        }
    }

    @Test
    void aSecondTimeoutIsNotUndoneByLateOriginals() {
        try (TcpHarness h = TcpHarness.establishedAfter(10 * MS, TcpHarness.config().build(), TcpOptions.DEFAULT,
            Seg.SYN_ACK.sackOk())) {
            h.write(bytes(10 * MSS));
            h.clearReceived();
            untilTimeouts(h, 2);
            h.send(ACK.seq(R).ack(seg(5)));
            assertEquals(0, h.counter("tcp.undo.frto"));
            assertEquals("loss", h.tcp.info(h.conn).senderState());
        }
    }

    @Test
    void aDsackForOnlyOneOfTwoRetransmissionsUndoesNothing() {
        try (TcpHarness h = TcpHarness.establishedAfter(10 * MS, TcpHarness.config().build(),
            TcpOptions.DEFAULT.withLossDetection("dupack"), Seg.SYN_ACK.sackOk())) {
            h.write(bytes(10 * MSS));
            h.clearReceived();
            h.send(ACK.seq(R).ack(seg(0)).sack(seg(1), seg(2)));
            h.send(ACK.seq(R).ack(seg(0)).sack(seg(1), seg(3)));
            h.send(ACK.seq(R).ack(seg(0)).sack(seg(4), seg(8), seg(1), seg(3)));
            h.expect(SEG.seq(seg(0)).len(MSS));
            h.expect(SEG.seq(seg(3)).len(MSS));
            final int ssthresh = h.tcp.ssthresh(h.conn);
            h.send(ACK.seq(R).ack(seg(10)).sack(seg(0), seg(1)));
            assertEquals(0, h.counter("tcp.undo.dsack"), "segment 3 was really lost");
            assertEquals(ssthresh, h.tcp.ssthresh(h.conn));
        }
    }

    /** With timestamps every segment carries 12 option bytes: 1448 bytes of data. */
    static int tsSeg(int i) {
        return L + i * (MSS - 12);
    }

    @Test
    void anEchoOfTheOriginalsTimestampUndoesTheReduction() {
        try (TcpHarness h = TcpHarness.establishedAfter(10 * MS, TcpHarness.config().build(),
            TcpOptions.DEFAULT.withLossDetection("dupack"), Seg.SYN_ACK.sackOk().ts(1000, 0))) {
            h.write(bytes(10 * MSS));
            final Captured first = h.expect(SEG.seq(tsSeg(0)));
            final int originalTsVal = first.tcp().tsVal();
            h.clearReceived();
            h.clock.advance(10 * MS);
            for (int i = 2; i <= 4; i++) {
                h.send(ACK.seq(R).ack(tsSeg(0)).sack(tsSeg(1), tsSeg(i)).ts(1000 + i, originalTsVal));
            }
            final Captured again = h.expect(SEG.seq(tsSeg(0)));
            final int cwnd = h.tcp.info(h.conn).cwnd();
            // The ACK covering segment 0 echoes the original's TSval, older than the retransmission's.
            assertEquals(true, again.tcp().tsVal() != originalTsVal);
            h.send(ACK.seq(R).ack(tsSeg(10)).ts(1010, originalTsVal));
            assertEquals(1, h.counter("tcp.undo.timestamp"));
            assertEquals("open", h.tcp.info(h.conn).senderState());
            assertEquals(1 << 30, h.tcp.ssthresh(h.conn));
            assertEquals(true, h.tcp.cwnd(h.conn) >= cwnd);
        }
    }
}
