package dev.tern.lab;

import dev.tern.lab.link.QueueLimit;
import org.junit.jupiter.api.Test;

import java.util.List;

import static dev.tern.lab.Specs.MS;
import static dev.tern.lab.Specs.S;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Outcomes the literature predicts, pinned with tolerances wide enough for a short run and narrow enough to fail
 * when a congestion control or a discipline goes wrong.
 */
class TextbookOutcomesTest {
    private static final DisciplineSpec CODEL = new DisciplineSpec("codel", 5 * MS, 100 * MS, false, null);

    /**
     * Mathis et al. / RFC 9438 §5.2: under random loss p with a link that never limits, CUBIC in its Reno-friendly
     * region sends about (MSS / RTT) * 1.22 / sqrt(p); at 1 % and 20 ms that is about 7 Mbit/s.
     */
    @Test
    void cubicUnderRandomLossFollowsTheMathisResponseFunction() {
        final ScenarioResult r = Dumbbell.run(Specs.dumbbell("mathis", 200_000_000, 20 * MS, QueueLimit.ofBytes(2_000_000),
            DisciplineSpec.dropTail(), 0.01, 10 * S, Specs.bulk(1, "cubic", false)), null);
        final double mathis = 1448 * 8 / 0.020 * 1.22 / Math.sqrt(0.01);
        final double goodput = r.flows().getFirst().goodputBps();
        assertTrue(goodput > 0.5 * mathis && goodput < 2.0 * mathis, "goodput " + goodput + " vs Mathis " + mathis);
    }

    /**
     * BBR's model is not built on loss: under random loss it keeps more of the link than CUBIC, whose response
     * function caps it. Tern's BBR is version 3, whose BBRLossThresh is 2 % (draft-ietf-ccwg-bbr §4.5.10), so the
     * textbook outcome of version 1 (most of the link at 5 %) is not expected; docs/LAB.md records what it reaches.
     */
    @Test
    void bbrKeepsMoreOfTheLinkUnderRandomLossThanCubic() {
        final double bbr = utilisation("bbr", 0.01);
        final double cubic = utilisation("cubic", 0.01);
        assertTrue(bbr > 1.5 * cubic, "BBR utilisation " + bbr + ", CUBIC " + cubic);
        assertTrue(cubic < 0.3, "CUBIC utilisation " + cubic);
    }

    private static double utilisation(String cc, double loss) {
        return Dumbbell.run(Specs.dumbbell("loss-" + cc, 50_000_000, 20 * MS, QueueLimit.ofBytes(250_000),
            DisciplineSpec.dropTail(), loss, 6 * S, Specs.bulk(1, cc, false)), null).utilisation();
    }

    /** CoDel (RFC 8289) holds a standing queue's delay near its 5 ms target where drop-tail lets it fill the buffer. */
    @Test
    void codelHoldsQueueDelayNearItsTarget() {
        final ScenarioResult codel = Dumbbell.run(Specs.dumbbell("codel", 20_000_000, 20 * MS,
            QueueLimit.ofBytes(1_000_000), CODEL, 0, 8 * S, Specs.bulk(4, "cubic", false)), null);
        final ScenarioResult tail = Dumbbell.run(Specs.dumbbell("tail", 20_000_000, 20 * MS,
            QueueLimit.ofBytes(1_000_000), DisciplineSpec.dropTail(), 0, 8 * S, Specs.bulk(4, "cubic", false)), null);
        assertTrue(codel.queueP50Us() >= 1_000 && codel.queueP50Us() <= 15_000, "CoDel median " + codel.queueP50Us());
        assertTrue(tail.queueP50Us() > 100_000, "drop-tail median " + tail.queueP50Us());
        assertTrue(codel.aqmDrops() > 0 && codel.overflowDrops() == 0, "CoDel drops, the buffer never overflows");
        assertTrue(codel.utilisation() > 0.9, "utilisation " + codel.utilisation());
    }

    /** Two CUBIC flows with the same RTT, started apart, converge to fair shares. */
    @Test
    void twoEqualRttCubicFlowsConvergeToFairShares() {
        final ScenarioResult r = Dumbbell.run(Specs.dumbbell("fair", 20_000_000, 20 * MS, QueueLimit.ofBytes(100_000),
            DisciplineSpec.dropTail(), 0, 15 * S, List.of(new FlowSpec("cubic", false, 0, 0, 0, 0),
                new FlowSpec("cubic", false, 1 * S, 0, 0, 0))), null);
        assertTrue(r.jainIndex() > 0.95, "Jain " + r.jainIndex() + " " + r.flows());
        assertTrue(r.utilisation() > 0.9, "utilisation " + r.utilisation());
    }

    /** DCTCP (RFC 8257) behind step marking keeps the queue near the threshold with marks and no drops. */
    @Test
    void dctcpKeepsTheQueueShortWithMarksAndNoDrops() {
        final ScenarioResult r = Dumbbell.run(Specs.dumbbell("dctcp", 20_000_000, 10 * MS, QueueLimit.ofPackets(200),
            new DisciplineSpec("droptail", 5 * MS, 100 * MS, false, QueueLimit.ofPackets(20)), 0, 5 * S,
            Specs.bulk(2, "dctcp", true)), null);
        assertEquals(0, r.overflowDrops() + r.aqmDrops());
        assertTrue(r.thresholdMarks() > 100, "marks " + r.thresholdMarks());
        for (FlowResult flow : r.flows()) {
            assertEquals(0, flow.retransmits(), flow.toString());
            assertTrue(flow.ceMarks() > 0, flow.toString());
        }
        // 20 packets of 1514 bytes at 20 Mbit/s are 12 ms; the queue stays within about twice that.
        assertTrue(r.queueP99Us() < 25_000, "queue p99 " + r.queueP99Us());
        assertTrue(r.utilisation() > 0.9, "utilisation " + r.utilisation());
    }

    /**
     * FQ-CoDel (RFC 8290) shares by flow, not by round trip: CUBIC at 20 ms and at 100 ms, which drop-tail splits
     * about 12 to 1 (the rtt-fairness scenario), get near-equal goodput, and each flow's queue stays short.
     */
    @Test
    void fqCodelSharesEquallyAcrossRoundTrips() {
        final DisciplineSpec fq = new DisciplineSpec("fq_codel", 5 * MS, 100 * MS, false, null);
        final ScenarioResult r = Dumbbell.run(Specs.dumbbell("fq-rtt", 20_000_000, 20 * MS, QueueLimit.ofBytes(150_000),
            fq, 0, 8 * S, List.of(new FlowSpec("cubic", false, 0, 0, 0, 0), new FlowSpec("cubic", false, 0, 0, 0,
                40 * MS))), null);
        assertTrue(r.jainIndex() > 0.9, "Jain " + r.jainIndex() + " " + r.flows());
        assertTrue(r.queueP50Us() < 15_000, "queue median " + r.queueP50Us());
        assertTrue(r.utilisation() > 0.9, "utilisation " + r.utilisation());
    }

    /** PIE (RFC 8033) holds four CUBIC flows' queue near its 15 ms reference in a buffer that would hold 400 ms. */
    @Test
    void pieHoldsQueueDelayNearItsReference() {
        final DisciplineSpec pie = new DisciplineSpec("pie", 15 * MS, 100 * MS, false, null);
        final ScenarioResult r = Dumbbell.run(Specs.dumbbell("pie", 20_000_000, 20 * MS, QueueLimit.ofBytes(1_000_000),
            pie, 0, 8 * S, Specs.bulk(4, "cubic", false)), null);
        assertTrue(r.queueP50Us() >= 5_000 && r.queueP50Us() <= 30_000, "PIE median " + r.queueP50Us());
        assertTrue(r.aqmDrops() > 0 && r.overflowDrops() == 0, "PIE drops early, the buffer never overflows");
        assertTrue(r.utilisation() > 0.85, "utilisation " + r.utilisation());
    }

    /**
     * DualPI2 (RFC 9332): DCTCP in the L4S queue sees about a millisecond of queue while CUBIC in the classic queue
     * sees about the 15 ms target; the sender's smoothed RTT shows it over the 20 ms base round trip.
     */
    @Test
    void dualPi2GivesL4sAShallowQueueAndClassicItsTarget() {
        final DisciplineSpec dual = new DisciplineSpec("dualpi2", 15 * MS, 100 * MS, false, null,
            anyEct(DisciplineSpec.Tuning.defaults("dualpi2", 15 * MS)));
        final List<FlowSpec> flows = List.of(new FlowSpec("dctcp", true, 0, 0, 0, 0),
            new FlowSpec("dctcp", true, 0, 0, 0, 0), new FlowSpec("cubic", false, 0, 0, 0, 0),
            new FlowSpec("cubic", false, 0, 0, 0, 0));
        final ScenarioResult r = Dumbbell.run(Specs.dumbbell("l4s", 20_000_000, 20 * MS, QueueLimit.ofBytes(1_000_000),
            dual, 0, 8 * S, flows), null);
        for (FlowResult flow : r.flows()) {
            final long queueUs = flow.rttP50Us() - 20_000;
            if (flow.congestionControl().equals("dctcp")) {
                assertTrue(queueUs < 4_000 && flow.ceMarks() > 0, "L4S " + flow);
            } else {
                assertTrue(queueUs > 8_000 && queueUs < 30_000, "classic " + flow);
            }
        }
        assertTrue(r.aqmMarks() > 0 && r.overflowDrops() == 0, "marks " + r.aqmMarks());
        assertTrue(r.utilisation() > 0.8, "utilisation " + r.utilisation());
    }

    /**
     * Flow isolation (RFC 8290 §1): 15 Mbit/s of unresponsive UDP beside one CUBIC flow on 20 Mbit/s. Drop-tail lets
     * the UDP stream keep its rate and CUBIC the rest; FQ-CoDel serves the two queues in turn, so CUBIC gets about
     * half the link and the UDP stream loses what it sends above that.
     */
    @Test
    void fqCodelProtectsTcpFromUnresponsiveUdp() {
        final List<UdpSpec> udp = List.of(new UdpSpec(15_000_000, 1514, 0, 0, 0));
        final ScenarioResult tail = Dumbbell.run(Specs.withUdp(Specs.dumbbell("udp-tail", 20_000_000, 20 * MS,
            QueueLimit.ofBytes(200_000), DisciplineSpec.dropTail(), 0, 8 * S, Specs.bulk(1, "cubic", false)), udp), null);
        final ScenarioResult fq = Dumbbell.run(Specs.withUdp(Specs.dumbbell("udp-fq", 20_000_000, 20 * MS,
            QueueLimit.ofBytes(200_000), new DisciplineSpec("fq_codel", 5 * MS, 100 * MS, false, null), 0, 8 * S,
            Specs.bulk(1, "cubic", false)), udp), null);
        final double tcpTail = tail.flows().getFirst().goodputBps();
        final double tcpFq = fq.flows().getFirst().goodputBps();
        assertTrue(tcpTail < 7e6, "drop-tail: CUBIC " + tcpTail + ", UDP " + tail.udp());
        assertTrue(tcpFq > 8e6, "FQ-CoDel: CUBIC " + tcpFq + ", UDP " + fq.udp());
        assertEquals(10e6, fq.udp().deliveredBps(), 1.5e6, "FQ-CoDel: UDP " + fq.udp());
        assertEquals(15e6, tail.udp().offeredBps(), 0.1e6);
    }

    private static DisciplineSpec.Tuning anyEct(DisciplineSpec.Tuning t) {
        return new DisciplineSpec.Tuning(t.flows(), t.quantum(), t.updateNs(), t.alpha(), t.beta(), t.maxBurstNs(),
            t.markProbability(), t.coupling(), t.l4sThresholdNs(), t.l4sRangeNs(), t.l4sMinPackets(), t.tShiftNs(),
            true);
    }
}
