package dev.tern.tcp;

import dev.tern.ethernet.memory.MemoryWire;
import dev.tern.tcp.testing.Captured;
import dev.tern.tcp.testing.TcpHarness;
import dev.tern.tcp.wire.TcpFlags;
import org.junit.jupiter.api.Test;

import static dev.tern.tcp.testing.Seg.ACK;
import static dev.tern.tcp.testing.Seg.PSH_ACK;
import static dev.tern.tcp.testing.Seg.SYN;
import static dev.tern.tcp.testing.Seg.SYN_ACK;
import static dev.tern.tcp.testing.TcpHarness.LOCAL_ISS;
import static dev.tern.tcp.testing.TcpHarness.REMOTE_ISS;
import static dev.tern.tcp.testing.TcpHarness.bytes;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** DCTCP (RFC 8257): alpha, the proportional reduction, the receiver's per-segment echo, and the gain over RFC 3168. */
class DctcpTest {
    private static final int MSS = 1000;
    private static final int ECE = TcpFlags.ECE;
    private static final int CWR = TcpFlags.CWR;
    private static final int SYN_FLAG = TcpFlags.SYN;
    private static final int ACK_FLAG = TcpFlags.ACK;
    private static final int L = LOCAL_ISS + 1;
    private static final int R = REMOTE_ISS + 1;
    private static final DctcpCongestionControl DCTCP = new DctcpCongestionControl();

    @Test
    void alphaMovesBySixteenthsTowardsTheShareOfMarkedBytes() {
        // RFC 8257 §3.3, g = 1/16: from 1, a window without marks leaves 15/16; all marked keeps 1.
        assertEquals(960, DctcpCongestionControl.nextAlpha(1024, 0, 10_000));
        assertEquals(1024, DctcpCongestionControl.nextAlpha(1024, 10_000, 10_000));
        int alpha = DctcpCongestionControl.ALPHA_ONE;
        for (int window = 0; window < 200; window++) {
            alpha = DctcpCongestionControl.nextAlpha(alpha, 1_000, 10_000);
        }
        assertEquals(102, alpha, 16, "converges on the marked share, 10 %");
    }

    @Test
    void anEceTakesAlphaOverTwoOfTheWindow() {
        try (TcpControlBlocks tcb = new TcpControlBlocks(2)) {
            final int c = tcb.allocate();
            DCTCP.init(tcb, c, MSS, 10, 0);
            assertEquals(DctcpCongestionControl.ALPHA_ONE, tcb.ccInt1(c), "alpha starts at 1 (RFC 8257 §3.3)");
            tcb.cwnd(c, 100 * MSS);
            DCTCP.onEcn(tcb, c, 100 * MSS, MSS, 0);
            assertEquals(50 * MSS, tcb.ssthresh(c), "alpha 1 halves, as RFC 3168");
            tcb.ccInt1(c, DctcpCongestionControl.ALPHA_ONE / 8);
            DCTCP.onEcn(tcb, c, 100 * MSS, MSS, 0);
            assertEquals(100 * MSS - 100 * MSS / 16, tcb.ssthresh(c), "alpha 1/8 takes 1/16");
        }
    }

    @Test
    void itAsksForEcnWhateverThePolicyAndEchoesEachSegmentsMark() {
        final TcpHarness h = new TcpHarness(TcpHarness.config().ecn(EcnMode.OFF).build());
        try (h) {
            h.connect(TcpOptions.DEFAULT.withCongestionControl(DctcpCongestionControl.NAME));
            h.expect(SYN.flags(SYN_FLAG | ECE | CWR));
            h.send(SYN_ACK.flags(SYN_FLAG | ACK_FLAG | ECE).mss(MSS).seq(REMOTE_ISS).ack(L));
            h.expect(ACK.seq(L).ack(R));
            assertTrue(h.tcp.info(h.conn).ecn());
            // Not marked, then marked: the change is acknowledged at once, first the data before it without ECE.
            h.send(PSH_ACK.seq(R).ack(L).payload(bytes(100)).ipEcn(2));
            h.send(PSH_ACK.seq(R + 100).ack(L).payload(bytes(100)).ipEcn(3));
            final Captured before = h.expect(ACK.seq(L).ack(R + 100));
            assertEquals(0, before.tcp().flags() & ECE, "the unmarked segment's ACK: " + before);
            h.expect(ACK.flags(ACK_FLAG | ECE).ack(R + 200));
            // CWR means nothing to DCTCP's receiver; the next unmarked segment ends the echo at once.
            h.send(PSH_ACK.flags(TcpFlags.PSH | ACK_FLAG | CWR).seq(R + 200).ack(L)
                .payload(bytes(100)).ipEcn(3));
            h.send(PSH_ACK.seq(R + 300).ack(L).payload(bytes(100)).ipEcn(2));
            h.advance(100 * TcpHarness.MS);
            final java.util.List<Captured> acks = h.pending();
            assertEquals(ECE, acks.getFirst().tcp().flags() & ECE, "still marked after CWR: " + acks);
            assertEquals(0, acks.getLast().tcp().flags() & ECE, "unmarked again: " + acks);
            assertEquals(R + 400, acks.getLast().tcp().ack());
        }
    }

    @Test
    void underTheSameRandomMarksDctcpKeepsMoreOfTheBottleneckThanRfc3168() {
        // Tern to Tern through 100 Mbit/s, 2 ms each way, 2 % of ECT packets marked CE at random (no loss): CUBIC
        // with RFC 3168 cuts its window by 30 % on every marked window, DCTCP by alpha / 2 (about the marked share).
        final long cubic = goodputBytes(CubicCongestionControl.NAME);
        final long dctcp = goodputBytes(DctcpCongestionControl.NAME);
        System.out.printf("2 %% CE marks, 5 s at 100 Mbit/s: CUBIC %d bytes, DCTCP %d bytes%n", cubic, dctcp);
        assertTrue(dctcp > 1.3 * cubic, "DCTCP " + dctcp + " bytes against CUBIC's " + cubic);
    }

    /**
     * Bytes one connection delivers in 5 s of virtual time under {@code congestionControl}, ECN on both ends: the bulk
     * rounds of {@link ZeroAllocationTest.Pair} through the wire above.
     */
    private static long goodputBytes(String congestionControl) {
        final TcpConfig config = TcpConfig.builder().ecn(EcnMode.ON).congestionControl(congestionControl)
            .bufferSizes(4 << 20, 4 << 20).build();
        try (ZeroAllocationTest.Pair pair = new ZeroAllocationTest.Pair(MemoryWire.builder().seed(5).ceMarking(0.02)
                .delay(2_000_000, 0).bandwidth(100_000_000L, 250_000), config, config)) {
            final long start = pair.clock.nanoTime();
            while (pair.clock.nanoTime() - start < 5_000_000_000L) {
                pair.bulkRound();
            }
            assertTrue(pair.client.tcp.info(pair.clientConnection).ecn(), "negotiated");
            assertTrue(pair.wire.stats.ceMarked > 0, "the wire marked: " + pair.wire.stats);
            return pair.server.tcp.bytesReceived(pair.serverConnection);
        }
    }
}
