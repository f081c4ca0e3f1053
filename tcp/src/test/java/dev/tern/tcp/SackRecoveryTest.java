package dev.tern.tcp;

import dev.tern.tcp.testing.Seg;
import dev.tern.tcp.testing.TcpHarness;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

import static dev.tern.tcp.testing.Seg.ACK;
import static dev.tern.tcp.testing.Seg.SEG;
import static dev.tern.tcp.testing.TcpHarness.LOCAL_ISS;
import static dev.tern.tcp.testing.TcpHarness.MS;
import static dev.tern.tcp.testing.TcpHarness.REMOTE_ISS;
import static dev.tern.tcp.testing.TcpHarness.SECOND;
import static dev.tern.tcp.testing.TcpHarness.bytes;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * SACK-based loss recovery (RFC 6675) against a peer that does SACK: the scoreboard, IsLost, NextSeg's four rules,
 * pipe, recovery's end, the retransmission timeout by the scoreboard, and what bad SACK blocks may not do. Loss is
 * detected by RFC 6675's duplicate counting here ({@code "dupack"}), so each rule shows alone; RACK has its own test.
 */
class SackRecoveryTest {
    static final int L = LOCAL_ISS + 1;
    static final int R = REMOTE_ISS + 1;
    static final int MSS = 1460;
    static final long RTT = 10 * MS;

    /** Segment {@code i}'s first sequence number. */
    static int seg(int i) {
        return L + i * MSS;
    }

    static TcpHarness sackPeer(TcpOptions options) {
        return TcpHarness.establishedAfter(RTT, TcpHarness.config().build(), options, Seg.SYN_ACK.sackOk());
    }

    /** Ten segments (the initial window) in flight, loss detected by duplicate counting. */
    static TcpHarness tenInFlight(String recovery, int extraSegments) {
        final TcpHarness h = sackPeer(TcpOptions.DEFAULT.withLossDetection("dupack").withRecovery(recovery));
        h.write(bytes((10 + extraSegments) * MSS));
        for (int i = 0; i < 10; i++) {
            h.expect(SEG.seq(seg(i)).len(MSS));
        }
        h.expectNothing();
        return h;
    }

    /** The peer acknowledges up to segment {@code ack} and SACKs segments [from, to). */
    static Seg sacking(int ack, int from, int to) {
        return ACK.seq(R).ack(seg(ack)).sack(seg(from), seg(to));
    }

    @Nested
    class Scoreboard {
        @Test
        void threeSackedSegmentsAboveAHoleMakeItLostAndOnlyItIsSentAgain() {
            try (TcpHarness h = tenInFlight("prr", 0)) {
                h.send(sacking(0, 1, 2));
                h.send(sacking(0, 1, 3));
                h.expectNothing();
                h.send(sacking(0, 1, 4));
                // RFC 6675 §4 IsLost: DupThresh (3) SACKed segments above segment 0.
                h.expect(SEG.seq(seg(0)).len(MSS));
                h.expectNothing();
                assertEquals(1, h.counter("tcp.fast_recoveries.sack"));
                assertEquals(1, h.counter("tcp.dupthresh.marked_lost"));
                final TcpInfo info = h.tcp.info(h.conn);
                assertEquals("recovery", info.senderState());
                assertEquals(3 * MSS, info.sackedBytes());
                // pipe = 10 sent - 3 SACKed - 1 lost + 1 retransmitted.
                assertEquals(7 * MSS, info.pipe());
            }
        }

        @Test
        void everyHoleWithEnoughSackedAboveIsRetransmittedAndNoSackedSegmentIs() {
            try (TcpHarness h = tenInFlight("rfc6675", 0)) {
                // Segments 0 and 3 lost; the rest arrives and is SACKed.
                h.send(sacking(0, 1, 2));
                h.send(sacking(0, 1, 3));
                h.send(ACK.seq(R).ack(seg(0)).sack(seg(4), seg(5), seg(1), seg(3)));
                h.send(ACK.seq(R).ack(seg(0)).sack(seg(4), seg(10), seg(1), seg(3)));
                h.expect(SEG.seq(seg(0)).len(MSS));
                h.expect(SEG.seq(seg(3)).len(MSS));
                h.expectNothing();
                h.send(ACK.seq(R).ack(seg(3)).sack(seg(4), seg(10)));
                h.send(ACK.seq(R).ack(seg(10)));
                assertEquals("open", h.tcp.info(h.conn).senderState());
                assertEquals(2, h.counter("tcp.tx.retransmits"));
                h.expectNothing();
            }
        }

        @Test
        void aFullAcknowledgmentEndsRecoveryWithTheWindowAtSsthresh() {
            try (TcpHarness h = tenInFlight("prr", 0)) {
                for (int i = 2; i <= 4; i++) {
                    h.send(sacking(0, 1, i));
                }
                h.expect(SEG.seq(seg(0)).len(MSS));
                final int ssthresh = h.tcp.ssthresh(h.conn);
                // CUBIC: ssthresh = 0.7 x the window when the loss was found (RFC 9438 §4.6).
                assertEquals((int) (10 * MSS * 0.7), ssthresh);
                h.send(ACK.seq(R).ack(seg(10)));
                assertEquals("open", h.tcp.info(h.conn).senderState());
                assertEquals(ssthresh, h.tcp.cwnd(h.conn), "RFC 9937: cwnd = ssthresh when recovery ends");
            }
        }

        @Test
        void limitedTransmitThenWithoutPrrNothingGoesUntilPipeFallsBelowTheHalvedWindow() {
            try (TcpHarness h = tenInFlight("rfc6675", 10)) {
                // RFC 3042 limited transmit: the first two duplicate ACKs each let a new segment go.
                h.send(sacking(0, 1, 2));
                h.expect(SEG.seq(seg(10)).len(MSS));
                h.send(sacking(0, 1, 3));
                h.expect(SEG.seq(seg(11)).len(MSS));
                h.send(sacking(0, 1, 4));
                // RFC 6675 (4.3): the fast retransmit at once; then cwnd = ssthresh = 7 segments while pipe is 9.
                h.expect(SEG.seq(seg(0)).len(MSS));
                h.expectNothing();
                h.send(sacking(0, 1, 5));
                h.send(sacking(0, 1, 6));
                h.expectNothing();
                // pipe = 12 sent - 6 SACKed - 1 lost + 1 sent again = 6: NextSeg rule (2) sends new data.
                h.send(sacking(0, 1, 7));
                h.expect(SEG.seq(seg(12)).len(MSS));
                h.expectNothing();
            }
        }
    }

    @Nested
    class RescueRules {
        @Test
        void ruleFourRetransmitsTheTailOnceWhenNothingElseCanGo() {
            try (TcpHarness h = tenInFlight("prr", 0)) {
                // Segments 0 and 9 are lost: nothing is SACKed above 9, so IsLost(9) never holds.
                for (int i = 2; i <= 9; i++) {
                    h.send(sacking(0, 1, i));
                }
                h.expect(SEG.seq(seg(0)).len(MSS));
                // With no new data and no other lost segment, rule (4) rescues the highest unSACKed segment, once.
                final Seg rescue = SEG.seq(seg(9)).len(MSS);
                boolean rescued = false;
                for (var frame : h.pending()) {
                    rescued |= rescue.check(frame) == null;
                }
                h.clearReceived();
                assertTrue(rescued, "the tail was rescued");
                assertEquals(1, h.counter("tcp.tx.retransmits.rescue"));
                h.send(ACK.seq(R).ack(seg(9)).sack(seg(9), seg(10)));
                h.expectNothing();
                assertEquals(1, h.counter("tcp.tx.retransmits.rescue"), "one rescue per recovery");
            }
        }

        @Test
        void holesGoOnePerSackAndOnceAllAreInFlightTheSackedTailIsNotSentAgain() {
            try (TcpHarness h = tenInFlight("prr", 0)) {
                // Segments 0-3 lost; 4-9 arrive and are SACKed one by one (packetdrill's prr-ss-30pkt-lost1_4).
                h.send(sacking(0, 4, 5));
                h.send(sacking(0, 4, 6));
                h.expectNothing();
                for (int hole = 0; hole < 4; hole++) {
                    h.send(sacking(0, 4, 7 + hole));
                    // RFC 9937: an ACK that only SACKs lets go what it delivered, one segment: the next hole. With one
                    // more (RFC 6937's PRR-SSRB on every ACK) the holes were all sent by the second SACK, and the third
                    // had room for rule 4's rescue of segment 9, which the fourth SACKed.
                    h.expect(SEG.seq(seg(hole)).len(MSS));
                    h.expectNothing();
                }
                // Every hole is in flight again and the rest SACKed: NextSeg has nothing to send (rule 4 must include
                // the highest unSACKed sequence number, in segment 3, already sent again).
                h.send(ACK.seq(R).ack(seg(10)));
                h.expectNothing();
                assertEquals(4, h.counter("tcp.tx.retransmits"));
                assertEquals(0, h.counter("tcp.tx.retransmits.rescue"));
            }
        }

        @Test
        void ruleThreeRetransmitsAnUnsackedSegmentBelowTheHighestSackWhenNothingElseCanGo() {
            try (TcpHarness h = tenInFlight("rfc6675", 0)) {
                // Segment 0 lost, 1-5 SACKed, 6 missing, 7 SACKed: IsLost(6) does not hold (one SACKed above).
                for (int i = 2; i <= 6; i++) {
                    h.send(sacking(0, 1, i));
                }
                h.expect(SEG.seq(seg(0)).len(MSS));
                h.clearReceived();
                h.send(ACK.seq(R).ack(seg(0)).sack(seg(7), seg(8), seg(1), seg(6)));
                h.send(ACK.seq(R).ack(seg(0)).sack(seg(7), seg(9), seg(1), seg(6)));
                // Now IsLost(6) holds (two SACKed segments above it is not enough, three is): it goes by rule 1.
                h.send(ACK.seq(R).ack(seg(0)).sack(seg(7), seg(10), seg(1), seg(6)));
                h.expect(SEG.seq(seg(6)).len(MSS));
            }
        }
    }

    @Nested
    class Timeout {
        @Test
        void afterATimeoutOnlyWhatIsNotSackedIsSentAgain() {
            try (TcpHarness h = tenInFlight("prr", 0)) {
                // Segments 0-4 are lost, 5-9 SACKed; then the fast retransmissions are lost too.
                h.send(sacking(0, 5, 6));
                h.send(sacking(0, 5, 7));
                h.send(sacking(0, 5, 8));
                h.send(sacking(0, 5, 9));
                h.send(sacking(0, 5, 10));
                h.clearReceived();
                h.advanceUntilSent(2 * SECOND);
                assertEquals(1, h.counter("tcp.rto_expired"));
                // Go back over 0-4 in slow start from one segment; never over 5-9.
                h.expect(SEG.seq(seg(0)).len(MSS));
                h.expectNothing();
                h.send(sacking(1, 5, 10));
                h.expect(SEG.seq(seg(1)).len(MSS));
                h.expect(SEG.seq(seg(2)).len(MSS));
                h.expectNothing();
                h.send(sacking(3, 5, 10));
                h.expect(SEG.seq(seg(3)).len(MSS));
                h.expect(SEG.seq(seg(4)).len(MSS));
                h.expectNothing();
                h.send(ACK.seq(R).ack(seg(10)));
                assertEquals("open", h.tcp.info(h.conn).senderState());
            }
        }

        @Test
        void aPeerThatRenegesOnItsSackGetsTheSegmentAgainAfterATimeout() {
            try (TcpHarness h = tenInFlight("prr", 0)) {
                // The peer SACKs segment 0 yet never acknowledges it (RFC 2018 §8 allows reneging).
                h.send(ACK.seq(R).ack(seg(0)).sack(seg(0), seg(1)));
                h.expectNothing();
                h.advanceUntilSent(2 * SECOND);
                h.expect(SEG.seq(seg(0)).len(MSS));
                assertEquals(1, h.counter("tcp.rx.sack_reneging"));
            }
        }
    }

    @Nested
    class BadInput {
        @Test
        void sackBlocksOutsideTheWindowOrInvertedAreCountedAndChangeNothing() {
            try (TcpHarness h = tenInFlight("prr", 0)) {
                h.send(ACK.seq(R).ack(seg(0)).sack(seg(11), seg(12)));
                h.send(ACK.seq(R).ack(seg(0)).sack(seg(5), seg(3)));
                h.send(ACK.seq(R).ack(seg(0)).sack(seg(9), seg(11)));
                h.send(ACK.seq(R).ack(seg(0)).sack(L - 10 * MSS * 1000, seg(2)));
                assertEquals(4, h.counter("tcp.rx.bad_sack_blocks"));
                assertEquals(0, h.tcp.info(h.conn).sackedBytes());
                assertEquals("open", h.tcp.info(h.conn).senderState());
                h.expectNothing();
            }
        }

        @Test
        void aDsackForDataNeverSentIsCountedAndIgnored() {
            try (TcpHarness h = tenInFlight("prr", 0)) {
                // A first block inside the second one is a D-SACK (RFC 2883 §4); this one reaches beyond SND.MAX.
                h.send(ACK.seq(R).ack(seg(0)).sack(seg(12), seg(13), seg(11), seg(14)));
                assertEquals(0, h.counter("tcp.rx.dsack"));
                assertTrue(h.counter("tcp.rx.bad_sack_blocks") >= 1);
                assertEquals(0, h.tcp.info(h.conn).sackedBytes());
            }
        }

        @Test
        void aDsackBelowTheFirstDataByteIsCountedAndIgnored() {
            try (TcpHarness h = tenInFlight("prr", 0)) {
                // Below the cumulative ACK, so a D-SACK by RFC 2883 §4, and within a window of SND.UNA, but of bytes
                // before the connection's first one: nothing was ever sent there.
                h.send(ACK.seq(R).ack(seg(0)).sack(seg(0) - 2 * MSS, seg(0) - MSS));
                assertEquals(0, h.counter("tcp.rx.dsack"));
                assertEquals(1, h.counter("tcp.rx.bad_sack_blocks"));
                assertEquals("open", h.tcp.info(h.conn).senderState());
            }
        }

        @Test
        void manyOverlappingAndRepeatedBlocksCountEachSegmentOnce() {
            try (TcpHarness h = tenInFlight("prr", 0)) {
                for (int i = 0; i < 50; i++) {
                    h.send(ACK.seq(R).ack(seg(0)).sack(seg(1), seg(3), seg(2), seg(4), seg(1), seg(4)));
                }
                assertEquals(3 * MSS, h.tcp.info(h.conn).sackedBytes());
            }
        }

        @Test
        void aBlockCoveringPartOfASegmentDoesNotMarkIt() {
            try (TcpHarness h = tenInFlight("prr", 0)) {
                h.send(ACK.seq(R).ack(seg(0)).sack(seg(1) + 100, seg(3)));
                assertEquals(MSS, h.tcp.info(h.conn).sackedBytes(), "segment 2 only; segment 1 was half covered");
            }
        }
    }
}
