package dev.tern.tcp;

import dev.tern.tcp.testing.Seg;
import dev.tern.tcp.testing.TcpHarness;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

import static dev.tern.tcp.testing.Seg.ACK;
import static dev.tern.tcp.testing.Seg.FIN_ACK;
import static dev.tern.tcp.testing.TcpHarness.LOCAL_ISS;
import static dev.tern.tcp.testing.TcpHarness.MS;
import static dev.tern.tcp.testing.TcpHarness.REMOTE_ISS;
import static dev.tern.tcp.testing.TcpHarness.bytes;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * The receive policy's two windows and its ACK rules on the wire: Linux's (the default: the right edge in steps,
 * every second full segment, 16 quick ACKs) and FreeBSD's (the free space, every second segment, no quick ACKs).
 */
class ReceivePolicyTest {
    static final int L = LOCAL_ISS + 1;
    static final int R = REMOTE_ISS + 1;
    static final long DELAYED_ACK = 100 * MS;

    private static TcpConfig config(ReceivePolicy policy, int receiveBuffer) {
        return TcpHarness.config().receiveBufferSize(receiveBuffer).receivePolicy(policy).delayedAckNs(DELAYED_ACK)
            .build();
    }

    private static TcpHarness established(ReceivePolicy policy, int receiveBuffer) {
        return TcpHarness.established(config(policy, receiveBuffer), TcpOptions.DEFAULT.withNoDelay(true));
    }

    /** Linux's ACKs (quick ACKs show every window) with {@code rule}'s window. */
    private static ReceivePolicy window(ReceivePolicy.WindowRule rule) {
        return ReceivePolicy.LINUX.withWindow(rule);
    }

    @Nested
    class Window {
        @Test
        void afterThePeersFinTheStepRuleOffersOneByteLessAndTheFreeSpaceRuleTheWholeField() {
            // The FIN takes one byte of sequence space: the edge the SYN offered is one byte nearer. A one-byte step
            // is too small to move it; the free space (64 KiB) fills the field.
            try (TcpHarness h = established(window(ReceivePolicy.WindowRule.RIGHT_EDGE_STEP), 64 << 10)) {
                h.send(FIN_ACK.seq(R).ack(L));
                h.expect(ACK.ack(R + 1).window(65534));
            }
            try (TcpHarness h = established(window(ReceivePolicy.WindowRule.FREE_SPACE), 64 << 10)) {
                h.send(FIN_ACK.seq(R).ack(L));
                h.expect(ACK.ack(R + 1).window(65535));
            }
        }

        @Test
        void afterUnreadBytesTheStepRuleKeepsTheEdgeAndTheFreeSpaceRuleOffersTheRoomLeft() {
            try (TcpHarness h = established(window(ReceivePolicy.WindowRule.RIGHT_EDGE_STEP), 64 << 10)) {
                h.send(ACK.seq(R).ack(L).payload(bytes(99)));
                h.expect(ACK.ack(R + 99).window(65535 - 99));
            }
            try (TcpHarness h = established(window(ReceivePolicy.WindowRule.FREE_SPACE), 64 << 10)) {
                h.send(ACK.seq(R).ack(L).payload(bytes(99)));
                h.expect(ACK.ack(R + 99).window(65536 - 99));
            }
        }

        @Test
        void aSmallWindowIsZeroUnderBothRulesButTheFreeSpaceRuleOffersOneOfAQuarterBuffer() {
            // A 4 KiB ring, segments of 1460: FreeBSD offers 0 below both a quarter of the buffer (1024) and one
            // segment; the step rule below one segment of growth. Our own data carries the window.
            for (ReceivePolicy.WindowRule rule : ReceivePolicy.WindowRule.values()) {
                try (TcpHarness h = established(window(rule), 4096)) {
                    h.send(ACK.seq(R).ack(L).payload(bytes(1460)));
                    h.send(ACK.seq(R + 1460).ack(L).payload(bytes(1460)));
                    h.send(ACK.seq(R + 2920).ack(L).payload(bytes(1176)));
                    h.clearReceived();
                    h.tcp.receiveBuffer(h.conn).consume(900);
                    h.tcp.consumed(h.conn, h.now());
                    h.expectNothing();
                    h.write("a");
                    h.expect(Seg.PSH_ACK.seq(L).ack(R + 4096).len(1).window(0));
                    h.send(ACK.seq(R + 4096).ack(L + 1));
                    h.tcp.receiveBuffer(h.conn).consume(300);
                    h.tcp.consumed(h.conn, h.now());
                    h.expectNothing();
                    h.write("b");
                    h.expect(Seg.PSH_ACK.seq(L + 1).ack(R + 4096).len(1)
                        .window(rule == ReceivePolicy.WindowRule.FREE_SPACE ? 1200 : 0));
                }
            }
        }

        @Test
        void theFreeSpaceRuleNeverOffersLessThanRemainsOfTheWindowOffered() {
            // 3500 unread bytes of a 4 KiB ring leave 596: below a quarter and one segment, so FreeBSD's rule would
            // offer 0, but 596 remain of the window offered before, and a window does not shrink.
            try (TcpHarness h = established(window(ReceivePolicy.WindowRule.FREE_SPACE), 4096)) {
                h.send(ACK.seq(R).ack(L).payload(bytes(1460)));
                h.send(ACK.seq(R + 1460).ack(L).payload(bytes(1460)));
                h.send(ACK.seq(R + 2920).ack(L).payload(bytes(580)));
                h.expect(ACK.ack(R + 1460).window(4096 - 1460));
                h.expect(ACK.ack(R + 2920).window(4096 - 2920));
                h.expect(ACK.ack(R + 3500).window(596));
            }
        }

        @Test
        void aReadGrowingTheWindowByAQuarterBufferIsAnUpdateForFreeBsdButNotForTheDoublingRule() {
            for (ReceivePolicy.WindowRule rule : ReceivePolicy.WindowRule.values()) {
                try (TcpHarness h = established(window(rule), 64 << 10)) {
                    for (int i = 0; i < 12; i++) {
                        h.send(ACK.seq(R + i * 1460).ack(L).payload(bytes(1460)));
                    }
                    h.advance(DELAYED_ACK + 10 * MS);
                    h.clearReceived();
                    // 17,520 bytes read: a quarter of the buffer and more, but less than the 48,000 odd that remain.
                    h.read();
                    if (rule == ReceivePolicy.WindowRule.FREE_SPACE) {
                        h.expect(ACK.ack(R + 12 * 1460).window(65535));
                        assertEquals(1, h.counter("tcp.tx.window_updates"));
                    } else {
                        h.expectNothing();
                        assertEquals(0, h.counter("tcp.tx.window_updates"));
                    }
                }
            }
        }

        @Test
        void theBufferSpaceCountsTheDefaultBufferInWholeSegmentsAndTheSynOffersItUnrounded() {
            // FreeBSD's 64 KiB buffer becomes 65,700 bytes (45 segments of 1460) in a 128 KiB ring.
            final TcpConfig config = config(ReceivePolicy.FREEBSD.withBufferSpace(64 << 10), 128 << 10);
            try (TcpHarness h = TcpHarness.established(config, TcpOptions.DEFAULT)) {
                assertEquals(65535, h.all.getFirst().tcp().window());
                h.send(ACK.seq(R).ack(L).payload(bytes(799)));
                h.advance(DELAYED_ACK + 10 * MS);
                h.expect(ACK.ack(R + 799).window(65700 - 799));
            }
            final TcpConfig small = config(ReceivePolicy.FREEBSD.withBufferSpace(8192), 128 << 10);
            try (TcpHarness h = TcpHarness.established(small, TcpOptions.DEFAULT)) {
                assertEquals(8192, h.all.getFirst().tcp().window());
                h.send(ACK.seq(R).ack(L).payload(bytes(1000)));
                h.advance(DELAYED_ACK + 10 * MS);
                h.expect(ACK.ack(R + 1000).window(6 * 1460 - 1000));
            }
            // A connection with a buffer of its own counts its ring.
            try (TcpHarness h = TcpHarness.established(small, TcpOptions.DEFAULT.withBuffers(0, 16 << 10))) {
                assertEquals(16 << 10, h.all.getFirst().tcp().window());
            }
        }
    }

    @Nested
    class Acceptance {
        @Test
        void theFreeSpaceRuleTakesTextBeyondTheEdgeOfferedWhereTheBufferHasRoom() {
            // The SYN offered 65535; the buffer counts 65,700 bytes. Text at 65,600 is beyond the edge offered.
            final TcpConfig freeBsd = config(ReceivePolicy.FREEBSD.withBufferSpace(64 << 10), 128 << 10);
            try (TcpHarness h = TcpHarness.activeOpen(freeBsd, TcpOptions.DEFAULT, Seg.SYN_ACK.mss(1460).sackOk())) {
                h.send(ACK.seq(R + 65_600).ack(L).payload(bytes(50)));
                h.expect(ACK.ack(R).sack(R + 65_600, R + 65_650));
                assertEquals(1, h.counter("tcp.rx.out_of_order"));
            }
            final TcpConfig linux = config(ReceivePolicy.LINUX, 128 << 10);
            try (TcpHarness h = TcpHarness.activeOpen(linux, TcpOptions.DEFAULT, Seg.SYN_ACK.mss(1460).sackOk())) {
                h.send(ACK.seq(R + 65_600).ack(L).payload(bytes(50)));
                h.expect(ACK.ack(R).sack());
                assertEquals(0, h.counter("tcp.rx.out_of_order"));
            }
        }
        @Test
        void aPassiveOpensSynReceivedChecksAResetAgainstTheWindowItsSynAckOffered() {
            // The SYN-ACK offers 65535 and the buffer counts 65,700 bytes: a RST at the edge offered is outside the
            // window (RFC 9293 3.10.7.4), dropped without a challenge ACK, and the handshake still completes.
            final TcpConfig freeBsd = config(ReceivePolicy.FREEBSD.withBufferSpace(64 << 10), 128 << 10);
            try (TcpHarness h = new TcpHarness(freeBsd)) {
                h.localPort = TcpHarness.LISTEN_PORT;
                h.remotePort = TcpHarness.PEER_CLIENT_PORT;
                final int listener = h.tcp.listen(TcpHarness.LISTEN_PORT, 16, TcpOptions.DEFAULT, h.events);
                h.send(Seg.SYN.seq(REMOTE_ISS).mss(1460));
                h.expect(Seg.SYN_ACK.seq(LOCAL_ISS).ack(R).window(65535));
                h.send(Seg.RST.seq(R + 65535));
                h.expectNothing();
                h.send(ACK.seq(R).ack(L));
                h.conn = h.tcp.accept(listener);
                h.assertState(TcpState.ESTABLISHED);
            }
        }
    }

    @Nested
    class Acks {
        @Test
        void freeBsdHasNoQuickAcksAndAcknowledgesTheSecondSegmentWhateverItsSize() {
            try (TcpHarness h = established(ReceivePolicy.FREEBSD, 64 << 10)) {
                h.send(ACK.seq(R).ack(L).payload(bytes(100)));
                h.expectNothing();
                h.advance(10 * MS);
                h.send(ACK.seq(R + 100).ack(L).payload(bytes(100)));
                h.expect(ACK.ack(R + 200));
                h.send(ACK.seq(R + 200).ack(L).payload(bytes(100)));
                h.advance(DELAYED_ACK - 5 * MS);
                h.expectNothing();
                h.advance(10 * MS);
                h.expect(ACK.ack(R + 300));
                assertEquals(1, h.counter("tcp.tx.delayed_acks"));
            }
        }

        @Test
        void linuxWithoutQuickAcksWaitsForTwoFullSegmentsWorthOfBytes() {
            try (TcpHarness h = established(ReceivePolicy.LINUX.withQuickAcks(0), 64 << 10)) {
                h.send(ACK.seq(R).ack(L).payload(bytes(100)));
                h.send(ACK.seq(R + 100).ack(L).payload(bytes(100)));
                h.expectNothing();
                h.send(ACK.seq(R + 200).ack(L).payload(bytes(1460)));
                h.send(ACK.seq(R + 1660).ack(L).payload(bytes(1460)));
                h.expect(ACK.ack(R + 3120));
            }
        }

        @Test
        void theQuickAckCountIsASetting() {
            try (TcpHarness h = established(ReceivePolicy.LINUX.withQuickAcks(2), 64 << 10)) {
                h.send(ACK.seq(R).ack(L).payload(bytes(100)));
                h.expect(ACK.ack(R + 100));
                h.send(ACK.seq(R + 100).ack(L).payload(bytes(100)));
                h.expect(ACK.ack(R + 200));
                h.send(ACK.seq(R + 200).ack(L).payload(bytes(100)));
                h.expectNothing();
                h.advance(DELAYED_ACK + 5 * MS);
                h.expect(ACK.ack(R + 300));
            }
        }

        @Test
        void freeBsdAcknowledgesASegmentLargerThanTheMssAtOnce() {
            // The peer sends with 500-byte segments but may send us up to our MSS of 1460.
            try (TcpHarness h = TcpHarness.activeOpen(config(ReceivePolicy.FREEBSD, 64 << 10), TcpOptions.DEFAULT,
                Seg.SYN_ACK.mss(500))) {
                h.send(ACK.seq(R).ack(L).payload(bytes(500)));
                h.expectNothing();
                h.advance(DELAYED_ACK + 5 * MS);
                h.expect(ACK.ack(R + 500));
                h.send(ACK.seq(R + 500).ack(L).payload(bytes(1000)));
                h.expect(ACK.ack(R + 1500));
            }
        }

        @Test
        void freeBsdAcknowledgesOutOfOrderDataAFilledHoleAndAFinAtOnce() {
            try (TcpHarness h = established(ReceivePolicy.FREEBSD, 64 << 10)) {
                h.send(ACK.seq(R + 100).ack(L).payload(bytes(100)));
                h.expect(ACK.ack(R));
                h.send(ACK.seq(R).ack(L).payload(bytes(100)));
                h.expect(ACK.ack(R + 200));
                h.send(FIN_ACK.seq(R + 200).ack(L));
                h.expect(ACK.ack(R + 201));
                h.expectNothing();
            }
        }

        @Test
        void withoutDelayedAcksEverySegmentIsAcknowledgedAtOnce() {
            try (TcpHarness h = established(ReceivePolicy.FREEBSD.withAcks(ReceivePolicy.AckRule.EVERY_SEGMENT),
                64 << 10)) {
                for (int i = 0; i < 3; i++) {
                    h.send(ACK.seq(R + i * 100).ack(L).payload(bytes(100)));
                    h.expect(ACK.ack(R + (i + 1) * 100));
                }
                assertEquals(0, h.counter("tcp.tx.delayed_acks"));
            }
        }

        @Test
        void aPolicyNeedsItsRulesAndNoNegativeCounts() {
            assertThrows(IllegalArgumentException.class,
                () -> new ReceivePolicy(null, ReceivePolicy.AckRule.SECOND_SEGMENT, 0, 0));
            assertThrows(IllegalArgumentException.class, () -> ReceivePolicy.LINUX.withQuickAcks(-1));
            assertThrows(IllegalArgumentException.class, () -> ReceivePolicy.LINUX.withBufferSpace(-1));
            assertEquals(ReceivePolicy.LINUX, TcpConfig.defaults().receivePolicy());
        }
    }
}
