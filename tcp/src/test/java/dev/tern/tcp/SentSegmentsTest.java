package dev.tern.tcp;

import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.longs;

/** The record of sent segments: the scoreboard's marks and the pipe totals (RFC 6675 §4 SetPipe). */
class SentSegmentsTest {
    private static final int MSS = 1000;

    private static SentSegments record(Arena arena, int entries) {
        return new SentSegments(arena.allocate((long) entries * SentSegments.ENTRY_BYTES, 8));
    }

    /** Ten segments of 1000 bytes from {@code start}. */
    private static SentSegments tenSegments(Arena arena, int start) {
        final SentSegments sent = record(arena, 16);
        for (int i = 0; i < 10; i++) {
            sent.append(start + i * MSS, start + (i + 1) * MSS, false, false, i, 0);
        }
        return sent;
    }

    @Test
    void pipeCountsWhatIsNeitherSackedNorLostAndRetransmissionsInFlight() {
        try (Arena arena = Arena.ofConfined()) {
            final SentSegments sent = tenSegments(arena, 0);
            assertEquals(10 * MSS, sent.pipe(10 * MSS));
            sent.markSacked(5);
            sent.markSacked(6);
            assertEquals(8 * MSS, sent.pipe(10 * MSS));
            sent.markLost(2);
            assertEquals(7 * MSS, sent.pipe(10 * MSS));
            sent.retransmitted(2, 100, 0);
            assertEquals(8 * MSS, sent.pipe(10 * MSS), "a lost segment sent again is in the network once");
            sent.retransmitted(3, 100, 0);
            assertEquals(9 * MSS, sent.pipe(10 * MSS), "a segment sent again without being lost counts twice");
            sent.markLost(2);
            assertEquals(8 * MSS, sent.pipe(10 * MSS), "its retransmission was lost too");
            assertTrue(sent.totalsConsistent());
        }
    }

    @Test
    void aSackedSegmentIsNeverMarkedLost() {
        try (Arena arena = Arena.ofConfined()) {
            final SentSegments sent = tenSegments(arena, 0);
            sent.markSacked(4);
            assertEquals(0, sent.markLost(4));
            assertEquals(0, sent.lostBytes());
            assertFalse(sent.has(4, SentSegments.LOST));
        }
    }

    @Test
    void theFirstLostSegmentIsFoundOnceAndNotAfterItWasSentAgain() {
        try (Arena arena = Arena.ofConfined()) {
            final SentSegments sent = tenSegments(arena, 0);
            assertEquals(-1, sent.firstLostNotRetransmitted());
            sent.markLost(7);
            sent.markLost(3);
            assertEquals(3, sent.firstLostNotRetransmitted());
            sent.retransmitted(3, 5, 0);
            assertEquals(7, sent.firstLostNotRetransmitted());
            sent.retransmitted(7, 5, 0);
            assertEquals(-1, sent.firstLostNotRetransmitted());
            sent.markLost(3);
            assertEquals(3, sent.firstLostNotRetransmitted(), "a lost retransmission is due again");
        }
    }

    @Test
    void indexOfFindsTheSegmentHoldingASequenceNumberAcrossTheWrap() {
        try (Arena arena = Arena.ofConfined()) {
            final SentSegments sent = tenSegments(arena, -4500);
            assertEquals(0, sent.indexOf(-4500));
            assertEquals(4, sent.indexOf(-1));
            assertEquals(4, sent.indexOf(-500));
            assertEquals(5, sent.indexOf(500));
            assertEquals(9, sent.indexOf(5499));
            assertEquals(-1, sent.indexOf(5500));
            assertEquals(-1, sent.indexOf(-4501));
        }
    }

    @Test
    void anAcknowledgmentInsideASegmentTrimsItAndItsTotals() {
        try (Arena arena = Arena.ofConfined()) {
            final SentSegments sent = tenSegments(arena, 0);
            sent.markLost(0);
            sent.trimHead(400);
            assertEquals(400, sent.start(0));
            assertEquals(600, sent.lostBytes());
            assertTrue(sent.totalsConsistent());
        }
    }

    @Test
    void aRenegingReceiverLosesEverySackMark() {
        try (Arena arena = Arena.ofConfined()) {
            final SentSegments sent = tenSegments(arena, 0);
            sent.markSacked(0);
            sent.markSacked(3);
            sent.unmarkSacked();
            assertEquals(0, sent.sackedBytes());
            assertFalse(sent.has(0, SentSegments.SACKED));
            assertEquals(1, sent.markLost(0) / MSS);
        }
    }

    /**
     * Any sequence of appends, SACKs, losses, retransmissions, cumulative acknowledgments (whole or inside a segment)
     * and reneging keeps the three totals equal to a walk over the entries, the entries tiling the sequence space
     * from SND.UNA, and the first-lost search equal to a scan.
     */
    @Test
    void totalsFollowEveryOperation() {
        qt().withExamples(300).forAll(longs().all(), integers().between(1, 400), integers().between(-2_000_000, 2_000_000))
            .checkAssert((seed, steps, start) -> {
                try (Arena arena = Arena.ofConfined()) {
                    final SplittableRandom random = new SplittableRandom(seed);
                    final SentSegments sent = record(arena, 64);
                    int una = start;
                    int max = start;
                    final List<String> log = new ArrayList<>();
                    for (int step = 0; step < steps; step++) {
                        final int op = random.nextInt(8);
                        if (op <= 1 && !sent.isFull()) {
                            final int length = 1 + random.nextInt(2 * MSS);
                            sent.append(max, max + length, false, false, step, 0);
                            max += length;
                            log.add("append " + length);
                        } else if (!sent.isEmpty()) {
                            final int i = random.nextInt(sent.count());
                            switch (op) {
                                case 2 -> sent.markSacked(i);
                                case 3 -> sent.markLost(i);
                                case 4 -> sent.retransmitted(i, step, 0);
                                case 5 -> {
                                    final int ack = sent.end(i);
                                    while (!sent.isEmpty() && SeqNum.le(sent.end(0), ack)) {
                                        sent.removeHead();
                                    }
                                    una = ack;
                                }
                                case 6 -> {
                                    final int cut = sent.start(0) + random.nextInt(Math.max(1, sent.length(0)));
                                    sent.trimHead(cut);
                                    una = sent.start(0);
                                }
                                default -> {
                                    if (random.nextInt(20) == 0) {
                                        sent.unmarkSacked();
                                    } else if (random.nextInt(10) == 0) {
                                        sent.unmarkLost();
                                    }
                                }
                            }
                            log.add("op " + op + " at " + i);
                        }
                        assertTrue(sent.totalsConsistent(), "totals after " + log);
                        if (!sent.isEmpty()) {
                            assertEquals(una, sent.start(0), "starts at SND.UNA after " + log);
                            assertEquals(max, sent.highEnd(), "ends at SND.MAX after " + log);
                        }
                        int expected = -1;
                        for (int i = 0; i < sent.count(); i++) {
                            if ((sent.flags(i) & (SentSegments.LOST | SentSegments.RETRANS_IN_FLIGHT
                                | SentSegments.SACKED)) == SentSegments.LOST) {
                                expected = i;
                                break;
                            }
                        }
                        assertEquals(expected, sent.firstLostNotRetransmitted(), "first lost after " + log);
                        final int outstanding = max - una;
                        assertTrue(sent.pipe(outstanding) >= 0 && sent.pipe(outstanding) <= 2 * outstanding);
                    }
                }
            });
    }
}
