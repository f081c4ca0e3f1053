package dev.tern.tcp;

import dev.tern.tcp.testing.Seg;
import dev.tern.tcp.wire.TcpFlags;
import dev.tern.tcp.testing.TcpHarness;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

import static dev.tern.tcp.testing.Seg.ACK;
import static dev.tern.tcp.testing.Seg.SEG;
import static dev.tern.tcp.testing.TcpHarness.LOCAL_ISS;
import static dev.tern.tcp.testing.TcpHarness.MS;
import static dev.tern.tcp.testing.TcpHarness.REMOTE_ISS;
import static dev.tern.tcp.testing.TcpHarness.bytes;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * TCP_INFO's delivered segments and reordering degree, as Linux counts tp->delivered, tp->delivered_ce,
 * tp->reordering and tp->reord_seen: the handshake, SACKed and acknowledged segments, duplicate ACKs without SACK,
 * ACKs with ECE; the distance a segment sent once was overtaken by, in segments.
 */
class DeliveredAndReorderingTest {
    static final int L = LOCAL_ISS + 1;
    static final int R = REMOTE_ISS + 1;
    static final int MSS = 1460;

    static int seg(int i) {
        return L + i * MSS;
    }

    /** Ten segments in flight to a peer with SACK ({@code sack}) or without; loss detection by counting. */
    static TcpHarness tenInFlight(boolean sack) {
        final Seg synAck = sack ? Seg.SYN_ACK.sackOk() : Seg.SYN_ACK;
        final TcpHarness h = TcpHarness.establishedAfter(10 * MS, TcpHarness.config().build(),
            TcpOptions.DEFAULT.withLossDetection("dupack"), synAck);
        h.write(bytes(10 * MSS));
        for (int i = 0; i < 10; i++) {
            h.expect(SEG.seq(seg(i)).len(MSS));
        }
        return h;
    }

    static TcpInfo info(TcpHarness h) {
        return h.tcp.info(h.conn);
    }

    @Nested
    class Delivered {
        @Test
        void theSynCountsOnceItIsAcknowledged() {
            try (TcpHarness h = TcpHarness.established()) {
                assertEquals(1, info(h).deliveredSegments());
            }
        }

        @Test
        void theSynAckCountsWhenTheHandshakeEnds() {
            try (TcpHarness h = TcpHarness.passiveOpen(TcpHarness.config().build(), TcpOptions.DEFAULT,
                Seg.SYN.mss(1460))) {
                assertEquals(1, info(h).deliveredSegments());
            }
        }

        @Test
        void eachSegmentCountsOnceWhetherSackedOrAcknowledged() {
            try (TcpHarness h = tenInFlight(true)) {
                h.send(ACK.seq(R).ack(seg(0)).sack(seg(2), seg(4)));
                assertEquals(1 + 2, info(h).deliveredSegments());
                h.send(ACK.seq(R).ack(seg(1)).sack(seg(2), seg(4)));
                assertEquals(1 + 3, info(h).deliveredSegments());
                // The SACKed two are not counted again when the cumulative ACK covers them.
                h.send(ACK.seq(R).ack(seg(10)));
                assertEquals(1 + 10, info(h).deliveredSegments());
                assertEquals(0, info(h).deliveredCe());
            }
        }

        @Test
        void withoutSackADuplicateAckStandsForOneSegmentAndTheCumulativeAckForTheRest() {
            try (TcpHarness h = tenInFlight(false)) {
                h.send(ACK.seq(R).ack(seg(0)));
                h.send(ACK.seq(R).ack(seg(0)));
                assertEquals(1 + 2, info(h).deliveredSegments());
                // Ten acknowledged, two of them already counted by the duplicates.
                h.send(ACK.seq(R).ack(seg(10)));
                assertEquals(1 + 10, info(h).deliveredSegments());
            }
        }

        @Test
        void withoutSackSlowStartGrowsOnlyByWhatTheDuplicatesDidNotAlreadyStandFor() {
            try (TcpHarness h = tenInFlight(false)) {
                final int before = h.tcp.cwnd(h.conn);
                h.send(ACK.seq(R).ack(seg(0)));
                h.send(ACK.seq(R).ack(seg(0)));
                assertEquals(before, h.tcp.cwnd(h.conn), "a duplicate ACK grows nothing");
                // Three segments acknowledged, two of them already delivered by the duplicates: one segment more,
                // as Linux's slow start grows by its newly delivered count.
                h.send(ACK.seq(R).ack(seg(3)));
                assertEquals(1 + 3, info(h).deliveredSegments());
                assertEquals(before + MSS, h.tcp.cwnd(h.conn));
            }
        }

        @Test
        void anAckEchoingCongestionCountsItsSegmentsUnderCe() {
            try (TcpHarness h = new TcpHarness(TcpHarness.config().ecn(EcnMode.ON).build())) {
                h.connect(TcpOptions.DEFAULT);
                h.expect(Seg.SYN.flags(TcpFlags.SYN | TcpFlags.ECE | TcpFlags.CWR).seq(LOCAL_ISS));
                h.send(Seg.SYN_ACK.flags(TcpFlags.SYN | TcpFlags.ACK | TcpFlags.ECE).mss(MSS).seq(REMOTE_ISS).ack(L));
                h.expect(ACK.seq(L).ack(R).len(0));
                h.write(bytes(2 * MSS));
                h.expect(SEG.seq(seg(0)).len(MSS));
                h.expect(SEG.seq(seg(1)).len(MSS));
                h.send(ACK.seq(R).ack(seg(1)).flags(TcpFlags.ACK | TcpFlags.ECE));
                h.send(ACK.seq(R).ack(seg(2)));
                assertEquals(3, info(h).deliveredSegments());
                assertEquals(1, info(h).deliveredCe());
            }
        }
    }

    @Nested
    class Reordering {
        @Test
        void startsAtThreeAndGrowsToTheDistanceASegmentWasOvertakenBy() {
            try (TcpHarness h = tenInFlight(true)) {
                assertEquals(ReorderingDegree.INITIAL, info(h).reordering());
                h.send(ACK.seq(R).ack(seg(0)).sack(seg(7), seg(8)));
                assertEquals(3, info(h).reordering());
                assertEquals(0, info(h).reorderings());
                // Segment 3 arrives after segment 7: from its start to the highest byte delivered, 5 segments.
                h.send(ACK.seq(R).ack(seg(0)).sack(seg(3), seg(4), seg(7), seg(8)));
                assertEquals(5, info(h).reordering());
                assertEquals(1, info(h).reorderings());
                // Segment 5: 3 segments below, no more than the degree already seen; counted, not raised.
                h.send(ACK.seq(R).ack(seg(0)).sack(seg(3), seg(4), seg(5), seg(6), seg(7), seg(8)));
                assertEquals(5, info(h).reordering());
                assertEquals(2, info(h).reorderings());
            }
        }

        @Test
        void aHoleFilledByTheCumulativeAckIsReorderingToo() {
            try (TcpHarness h = tenInFlight(true)) {
                h.send(ACK.seq(R).ack(seg(0)).sack(seg(9), seg(10)));
                // Segments 0..8 arrive late, never sent again: segment 0 was overtaken by all ten.
                h.send(ACK.seq(R).ack(seg(10)));
                assertEquals(10, info(h).reordering());
                assertEquals(1, info(h).reorderings());
            }
        }

        @Test
        void inOrderDeliveryIsNoReordering() {
            try (TcpHarness h = tenInFlight(true)) {
                h.send(ACK.seq(R).ack(seg(4)));
                h.send(ACK.seq(R).ack(seg(7)));
                h.send(ACK.seq(R).ack(seg(10)));
                assertEquals(3, info(h).reordering());
                assertEquals(0, info(h).reorderings());
            }
        }
    }
}
