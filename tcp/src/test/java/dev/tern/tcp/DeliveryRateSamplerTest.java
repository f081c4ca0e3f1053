package dev.tern.tcp;

import dev.tern.core.counters.CountersFile;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Delivery rate samples (draft-cheng-iccrg-delivery-rate-estimation) on a hand-driven record of sent segments:
 * the interval is the longer of the send and ACK intervals, the newest delivered segment gives the sample, an
 * application-limited flight marks its samples, tx_in_flight and the flight's losses come with each, and a sample
 * without forward progress or over an interval shorter than the minimum RTT is discarded and counted.
 */
class DeliveryRateSamplerTest {
    private static final int MSS = 1000;
    private static final long MS = 1_000_000L;

    private final Arena arena = Arena.ofConfined();
    private CountersFile countersFile;
    private TcpControlBlocks tcb;
    private TcpCounters counters;
    private DeliveryRateSampler sampler;
    private SentSegments sent;
    private final AckSample ack = new AckSample();
    private int c;

    @BeforeEach
    void setUp() {
        countersFile = CountersFile.inMemory("rate-test", 512);
        counters = new TcpCounters(countersFile);
        tcb = new TcpControlBlocks(4);
        c = tcb.allocate();
        tcb.sndUna(c, 0);
        tcb.sndMax(c, 0);
        tcb.cwnd(c, 100 * MSS);
        sampler = new DeliveryRateSampler(tcb, counters);
        sent = new SentSegments(arena.allocate(64L * SentSegments.ENTRY_BYTES, 8));
    }

    @AfterEach
    void tearDown() {
        tcb.close();
        countersFile.close();
        arena.close();
    }

    /** Sends {@code segments} full segments at {@code nowNs}, as TcpSender records them. */
    private void send(int segments, long nowNs) {
        for (int i = 0; i < segments; i++) {
            final int start = tcb.sndMax(c);
            sent.append(start, start + MSS, false, false, nowNs, tcb.delivered(c));
            tcb.sndMax(c, start + MSS);
            sampler.onSent(c, sent, sent.count() - 1, nowNs);
        }
    }

    /** A cumulative ACK of {@code segments} head segments at {@code nowNs}, with {@code lost} bytes newly lost. */
    private AckSample acknowledge(int segments, long nowNs, int lost) {
        ack.reset(nowNs, MSS);
        for (int i = 0; i < segments; i++) {
            sampler.onDelivered(c, sent, 0, ack);
            sent.removeHead();
        }
        tcb.sndUna(c, tcb.sndUna(c) + segments * MSS);
        tcb.delivered(c, tcb.delivered(c) + (long) segments * MSS);
        ack.newlyLostBytes = lost;
        sampler.generate(c, ack);
        return ack;
    }

    @Test
    void aSampleIsDeliveredBytesOverTheLongerOfSendAndAckIntervals() {
        send(10, 0);
        // The first flight: the ACK interval (from the flight's start) is the RTT.
        AckSample s = acknowledge(1, 20 * MS, 0);
        assertTrue(s.hasRate());
        assertEquals(20 * MS, s.rateIntervalNs());
        assertEquals(MSS, s.rateDelivered());
        assertEquals(MSS * 1_000_000_000L / (20 * MS), s.deliveryRate());
        assertEquals(MSS, s.txInFlight(), "the first segment of the flight went alone");
        // Nine more arrive spread over 9 ms: every sample is measured from the first send.
        for (int i = 1; i < 10; i++) {
            s = acknowledge(1, (20 + i) * MS, 0);
        }
        assertEquals((20 + 9) * MS, s.rateIntervalNs());
        assertEquals(10L * MSS, s.rateDelivered());
        assertEquals(10 * MSS, s.txInFlight(), "the last segment left with the whole flight in flight");
    }

    @Test
    void theSendIntervalWinsWhenSegmentsLeftSlowerThanTheirAcksCame() {
        // Two go at 0; the first is acknowledged at 20 ms and a third goes then; the last two are acknowledged at
        // 21 ms. The third's send interval (from the first's send, 20 ms) outlasts its ACK interval (1 ms): ACKs
        // that arrive faster than data left must not be read as a faster path.
        send(2, 0);
        acknowledge(1, 20 * MS, 0);
        send(1, 20 * MS);
        final AckSample s = acknowledge(2, 21 * MS, 0);
        assertTrue(s.hasRate());
        assertEquals(20 * MS, s.rateIntervalNs());
        assertEquals(2L * MSS, s.rateDelivered());
    }

    @Test
    void theNewestDeliveredSegmentGivesTheSample() {
        send(2, 0);
        send(2, 5 * MS);
        final AckSample s = acknowledge(4, 25 * MS, 0);
        assertEquals(0, s.priorDelivered(), "every segment went before anything was delivered");
        assertEquals(4L * MSS, s.rateDelivered());
        assertEquals(4 * MSS, s.txInFlight(), "the newest segment left with four in flight");
    }

    @Test
    void anApplicationLimitedFlightMarksItsSamplesUntilItIsDelivered() {
        send(2, 0);
        sampler.checkAppLimited(c, sent, 0, MSS);
        assertTrue(tcb.appLimited(c) != 0, "nothing more to send and room in the window");
        send(1, 1 * MS);
        AckSample s = acknowledge(2, 20 * MS, 0);
        assertFalse(s.rateAppLimited(), "sent before the mark");
        s = acknowledge(1, 21 * MS, 0);
        assertTrue(s.rateAppLimited(), "sent while application limited");
        assertEquals(0, tcb.appLimited(c), "the limited flight is delivered: the mark ends");
        send(1, 22 * MS);
        assertFalse(sent.has(sent.count() - 1, SentSegments.APP_LIMITED));
    }

    @Test
    void aFullQueueIsNotApplicationLimited() {
        send(2, 0);
        sampler.checkAppLimited(c, sent, 5 * MSS, MSS);
        assertEquals(0, tcb.appLimited(c));
        tcb.cwnd(c, 2 * MSS);
        sampler.checkAppLimited(c, sent, 0, MSS);
        assertEquals(0, tcb.appLimited(c), "the window, not the application, limits");
    }

    @Test
    void lossesBetweenASendAndItsAckAreTheFlightsLosses() {
        send(10, 0);
        sampler.lost(c, 2 * MSS);
        send(1, 1 * MS);
        final AckSample first = acknowledge(1, 20 * MS, MSS);
        assertEquals(3 * MSS, first.lostOfThatFlight(), "sent before both losses");
        send(1, 21 * MS);
        acknowledge(10, 22 * MS, 0);
        final AckSample last = acknowledge(1, 41 * MS, 0);
        assertEquals(0, last.lostOfThatFlight(), "nothing lost since it went");
    }

    @Test
    void anIntervalShorterThanTheMinimumRttIsDiscardedAndCounted() {
        tcb.minRttUs(c, 20_000);
        send(10, 0);
        acknowledge(1, 20 * MS, 0);
        send(1, 20 * MS);
        // A compressed ACK: the next segment, sent at 0, acknowledged 1 µs after the last sample's.
        assertTrue(acknowledge(1, 20 * MS + 1000, 0).hasRate(), "measured from the first send: 20 ms");
        tcb.minRttUs(c, 30_000);
        final long before = counters.rateSamplesDiscarded.get();
        final AckSample s = acknowledge(1, 20 * MS + 2000, 0);
        assertFalse(s.hasRate());
        assertEquals(before + 1, counters.rateSamplesDiscarded.get());
    }

    @Test
    void aSampleWithoutProgressIsDiscardedAndCounted() {
        send(1, 0);
        ack.reset(10 * MS, MSS);
        sampler.onDelivered(c, sent, 0, ack);
        // Delivered count not advanced (a segment the caller did not count): no progress.
        final long before = counters.rateSamplesDiscarded.get();
        sampler.generate(c, ack);
        assertFalse(ack.hasRate());
        assertEquals(before + 1, counters.rateSamplesDiscarded.get());
    }

    @Test
    void aFlightFromIdleStartsItsIntervalsAtItsFirstSend() {
        send(1, 0);
        acknowledge(1, 20 * MS, 0);
        // Idle for a second: the next flight must not measure the idle time.
        send(1, 1020 * MS);
        final AckSample s = acknowledge(1, 1040 * MS, 0);
        assertEquals(20 * MS, s.rateIntervalNs());
    }
}
