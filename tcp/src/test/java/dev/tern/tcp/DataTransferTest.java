package dev.tern.tcp;

import dev.tern.tcp.testing.Seg;
import dev.tern.tcp.testing.TcpHarness;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

import java.util.Arrays;

import static dev.tern.tcp.testing.Seg.ACK;
import static dev.tern.tcp.testing.Seg.FIN_ACK;
import static dev.tern.tcp.testing.Seg.PSH_ACK;
import static dev.tern.tcp.testing.TcpHarness.LOCAL_ISS;
import static dev.tern.tcp.testing.TcpHarness.MS;
import static dev.tern.tcp.testing.TcpHarness.REMOTE_ISS;
import static dev.tern.tcp.testing.TcpHarness.SECOND;
import static dev.tern.tcp.testing.TcpHarness.bytes;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Data in ESTABLISHED: receiving, sending, delayed ACKs, Nagle, flow control and zero windows. */
class DataTransferTest {
    static final int L = LOCAL_ISS + 1;
    static final int R = REMOTE_ISS + 1;

    @Nested
    class Receiving {
        @Test
        void inOrderDataIsAcknowledgedAtOnceWhileQuickAcking() {
            try (TcpHarness h = TcpHarness.established()) {
                h.send(ACK.seq(R).ack(L).payload("hello"));
                h.expect(ACK.seq(L).ack(R + 5).len(0).window(65530));
                assertTrue(h.events.has("readable"));
                assertArrayEquals("hello".getBytes(), h.read());
                h.expectNothing();
            }
        }

        @Test
        void anOutOfOrderSegmentGetsAnImmediateDuplicateAckAndTheHoleFillingOneAcksAll() {
            try (TcpHarness h = TcpHarness.established()) {
                h.send(ACK.seq(R + 5).ack(L).payload("world"));
                h.expect(ACK.seq(L).ack(R));
                assertEquals(0, h.readable());
                h.send(ACK.seq(R).ack(L).payload("hello"));
                h.expect(ACK.seq(L).ack(R + 10));
                assertArrayEquals("helloworld".getBytes(), h.read());
                assertEquals(1, h.counter("tcp.rx.out_of_order"));
            }
        }

        @Test
        void inOrderSegmentsOfOneBurstShareOneAckButEachOutOfOrderOneGetsItsOwn() {
            try (TcpHarness h = TcpHarness.activeOpen(TcpHarness.config().build(), TcpOptions.DEFAULT,
                Seg.SYN_ACK.mss(1460).sackOk())) {
                final byte[] data = bytes(100);
                h.sendBurst(ACK.seq(R).ack(L).payload(data), ACK.seq(R + 100).ack(L).payload(data),
                    ACK.seq(R + 200).ack(L).payload(data));
                h.expect(ACK.ack(R + 300));
                h.expectNothing();
                // RFC 5681 §4.2: an immediate ACK for every out-of-order segment, each reporting first the block that
                // holds it (RFC 2018 §4), even when they arrive together.
                h.sendBurst(ACK.seq(R + 400).ack(L).payload(data), ACK.seq(R + 600).ack(L).payload(data),
                    ACK.seq(R + 800).ack(L).payload(data));
                h.expect(ACK.ack(R + 300).sack(R + 400, R + 500));
                h.expect(ACK.ack(R + 300).sack(R + 600, R + 700, R + 400, R + 500));
                h.expect(ACK.ack(R + 300).sack(R + 800, R + 900, R + 600, R + 700, R + 400, R + 500));
                h.expectNothing();
                assertEquals(3, h.counter("tcp.tx.immediate_acks"));
                // And the segment that fills the first hole is acknowledged at once too.
                h.sendBurst(ACK.seq(R + 300).ack(L).payload(data));
                h.expect(ACK.ack(R + 500).sack(R + 800, R + 900, R + 600, R + 700));
            }
        }

        @Test
        void withSackAnOutOfOrderBurstGetsAnAckForItsNewRangeAndOneAtItsEnd() {
            try (TcpHarness h = TcpHarness.activeOpen(TcpHarness.config().build(), TcpOptions.DEFAULT,
                Seg.SYN_ACK.mss(1460).sackOk())) {
                final byte[] data = bytes(100);
                // One segment lost ahead of a burst of four: the first of them opens a range (an ACK at once), the
                // other three grow it (one ACK when the burst is done, its first block the grown range).
                h.sendBurst(ACK.seq(R + 100).ack(L).payload(data), ACK.seq(R + 200).ack(L).payload(data),
                    ACK.seq(R + 300).ack(L).payload(data), ACK.seq(R + 400).ack(L).payload(data));
                h.expect(ACK.ack(R).sack(R + 100, R + 200));
                h.expect(ACK.ack(R).sack(R + 100, R + 500));
                h.expectNothing();
                assertEquals(1, h.counter("tcp.tx.immediate_acks"));
                // The retransmission fills the hole: acknowledged at once, the in-order data after it at the burst's
                // end.
                h.sendBurst(ACK.seq(R).ack(L).payload(data), ACK.seq(R + 500).ack(L).payload(data));
                h.expect(ACK.ack(R + 500));
                h.expect(ACK.ack(R + 600));
                h.expectNothing();
                assertEquals(2, h.counter("tcp.tx.immediate_acks"));
            }
        }

        @Test
        void withoutSackEveryOutOfOrderSegmentGetsItsOwnDuplicateAck() {
            try (TcpHarness h = TcpHarness.activeOpen(TcpHarness.config().build(), TcpOptions.DEFAULT,
                Seg.SYN_ACK.mss(1460))) {
                final byte[] data = bytes(100);
                // RFC 5681 §4.2 and §3.2: the peer counts duplicate ACKs, so each out-of-order segment has one.
                h.sendBurst(ACK.seq(R + 100).ack(L).payload(data), ACK.seq(R + 200).ack(L).payload(data),
                    ACK.seq(R + 300).ack(L).payload(data));
                h.expect(ACK.ack(R));
                h.expect(ACK.ack(R));
                h.expect(ACK.ack(R));
                h.expectNothing();
                h.sendBurst(ACK.seq(R).ack(L).payload(data));
                h.expect(ACK.ack(R + 400));
                assertEquals(4, h.counter("tcp.tx.immediate_acks"));
            }
        }

        @Test
        void aFinBeyondAHoleWaitsForTheMissingData() {
            try (TcpHarness h = TcpHarness.established()) {
                h.send(FIN_ACK.seq(R + 5).ack(L).payload("world"));
                h.expect(ACK.seq(L).ack(R));
                h.assertState(TcpState.ESTABLISHED);
                h.send(ACK.seq(R).ack(L).payload("hello"));
                h.expect(ACK.seq(L).ack(R + 11));
                h.assertState(TcpState.CLOSE_WAIT);
                assertArrayEquals("helloworld".getBytes(), h.read());
                assertTrue(h.tcp.receiveShutdown(h.conn));
            }
        }

        @Test
        void aPartlyOldSegmentDeliversOnlyItsNewBytes() {
            try (TcpHarness h = TcpHarness.established()) {
                h.send(ACK.seq(R).ack(L).payload("abc"));
                h.expect(ACK.ack(R + 3));
                h.send(ACK.seq(R).ack(L).payload("abcdef"));
                h.expect(ACK.ack(R + 6));
                assertArrayEquals("abcdef".getBytes(), h.read());
            }
        }

        @Test
        void dataBeyondTheWindowIsTrimmedAndTheRestRefused() {
            try (TcpHarness h = TcpHarness.activeOpen(TcpHarness.config().build(),
                TcpOptions.DEFAULT.withBuffers(0, 1024), Seg.SYN_ACK.mss(1460))) {
                assertEquals(1024, h.all.getFirst().tcp().window());
                h.send(ACK.seq(R).ack(L).payload(bytes(1400)));
                h.expect(ACK.seq(L).ack(R + 1024).window(0));
                h.send(ACK.seq(R + 1024).ack(L).payload(bytes(10)));
                h.expect(ACK.seq(L).ack(R + 1024).window(0));
                assertArrayEquals(Arrays.copyOf(bytes(1400), 1024), h.read());
                h.expect(ACK.seq(L).ack(R + 1024).window(1024));
                assertEquals(1, h.counter("tcp.tx.window_updates"));
            }
        }

        @Test
        void aZeroWindowProbeGetsAnAckCarryingTheWindow() {
            try (TcpHarness h = TcpHarness.activeOpen(TcpHarness.config().build(),
                TcpOptions.DEFAULT.withBuffers(0, 1024), Seg.SYN_ACK.mss(1460))) {
                h.send(ACK.seq(R).ack(L).payload(bytes(1024)));
                h.expect(ACK.ack(R + 1024).window(0));
                h.send(ACK.seq(R + 1024).ack(L).payload(bytes(1)));
                h.expect(ACK.ack(R + 1024).window(0));
            }
        }

        @Test
        void smallReadsDoNotOpenASillyWindow() {
            try (TcpHarness h = TcpHarness.activeOpen(TcpHarness.config().build(),
                TcpOptions.DEFAULT.withBuffers(0, 4096), Seg.SYN_ACK.mss(1000))) {
                h.send(ACK.seq(R).ack(L).payload(bytes(1000)));
                h.expect(ACK.ack(R + 1000).window(3096));
                h.send(ACK.seq(R + 1000).ack(L).payload(bytes(1000)));
                h.expect(ACK.ack(R + 2000).window(2096));
                h.send(ACK.seq(R + 2000).ack(L).payload(bytes(1000)));
                h.expect(ACK.ack(R + 3000).window(1096));
                h.send(ACK.seq(R + 3000).ack(L).payload(bytes(1000)));
                h.expect(ACK.ack(R + 4000).window(96));
                // Reading 100 bytes would move the right edge by 100: less than min(buffer/2, MSS), so no update.
                final var ring = h.tcp.receiveBuffer(h.conn);
                ring.consume(100);
                h.tcp.consumed(h.conn, h.now());
                h.expectNothing();
                h.read();
                h.expect(ACK.ack(R + 4000).window(4096));
            }
        }
    }

    @Nested
    class Sending {
        @Test
        void writesAreCutIntoMssSegmentsWithPushOnTheLast() {
            try (TcpHarness h = TcpHarness.established()) {
                h.write(bytes(3000));
                h.expect(ACK.seq(L).ack(R).len(1460));
                h.expect(ACK.seq(L + 1460).len(1460));
                h.expect(PSH_ACK.seq(L + 2920).len(80));
                h.expectNothing();
                h.send(ACK.seq(R).ack(L + 3000));
                h.advance(10 * SECOND);
                h.expectNothing();
                assertEquals(3000, h.tcp.info(h.conn).bytesAcked());
                assertEquals(0, h.tcp.inFlight(h.conn));
            }
        }

        @Test
        void theInitialWindowIsTenSegmentsThenAcksOpenIt() {
            try (TcpHarness h = TcpHarness.established()) {
                h.write(bytes(20 * 1460));
                for (int i = 0; i < 10; i++) {
                    h.expect(ACK.seq(L + i * 1460).len(1460));
                }
                h.expectNothing();
                h.send(ACK.seq(R).ack(L + 2 * 1460));
                // Slow start: cwnd grows by what was acknowledged (2 segments) and 2 more left the network: 4 go.
                for (int i = 10; i < 14; i++) {
                    h.expect(ACK.seq(L + i * 1460).len(1460));
                }
                h.expectNothing();
                assertEquals(12 * 1460, h.tcp.cwnd(h.conn));
            }
        }

        @Test
        void sendsNoMoreThanThePeersWindowAndThePersistTimerOverridesSillyWindowAvoidance() {
            try (TcpHarness h = TcpHarness.established()) {
                h.send(ACK.seq(R).ack(L).window(1000));
                h.write(bytes(3000));
                h.expectNothing();
                assertEquals(200 * MS, h.advanceUntilSent(SECOND));
                h.expect(ACK.seq(L).len(1000));
                h.send(ACK.seq(R).ack(L + 1000).window(65535));
                h.expect(ACK.seq(L + 1000).len(1460));
                h.expect(PSH_ACK.seq(L + 2460).len(540));
            }
        }
    }

    @Nested
    class DelayedAck {
        private TcpHarness afterQuickAcks() {
            final TcpHarness h = TcpHarness.established();
            int seq = R;
            for (int i = 0; i < 16; i++) {
                h.send(ACK.seq(seq).ack(L).payload(bytes(100)));
                seq += 100;
                h.expect(ACK.ack(seq));
            }
            return h;
        }

        @Test
        void afterTheQuickAcksASingleSegmentIsAcknowledgedAfterFortyMilliseconds() {
            try (TcpHarness h = afterQuickAcks()) {
                h.send(ACK.seq(R + 1600).ack(L).payload(bytes(100)));
                h.expectNothing();
                assertEquals(40 * MS, h.advanceUntilSent(SECOND));
                h.expect(ACK.ack(R + 1700));
                assertEquals(1, h.counter("tcp.tx.delayed_acks"));
            }
        }

        @Test
        void everySecondFullSizedSegmentIsAcknowledgedAtOnce() {
            try (TcpHarness h = afterQuickAcks()) {
                h.send(ACK.seq(R + 1600).ack(L).payload(bytes(1460)));
                h.expectNothing();
                h.send(ACK.seq(R + 3060).ack(L).payload(bytes(1460)));
                h.expect(ACK.ack(R + 4520));
            }
        }

        @Test
        void aReplySoonAfterTheRequestMakesTheExchangeInteractiveUntilADelayedAckGoesAlone() {
            try (TcpHarness h = TcpHarness.established()) {
                h.send(ACK.seq(R).ack(L).payload("request"));
                h.expect(ACK.seq(L).ack(R + 7).len(0));
                h.read();
                h.advance(10 * MS);
                h.write("response");
                h.expect(PSH_ACK.seq(L).ack(R + 7).payload("response"));
                // Replied within the delayed ACK time: interactive (Linux's pingpong mode), so the next request's
                // ACK waits for a reply or the delayed ACK, though quick ACKs are left.
                h.send(ACK.seq(R + 7).ack(L + 8).payload("again"));
                h.expectNothing();
                assertEquals(40 * MS, h.advanceUntilSent(SECOND));
                h.expect(ACK.seq(L + 8).ack(R + 12).len(0));
                // No reply carried that ACK: quick ACKs again.
                h.send(ACK.seq(R + 12).ack(L + 8).payload("third"));
                h.expect(ACK.seq(L + 8).ack(R + 17).len(0));
            }
        }

        @Test
        void aReplyLaterThanTheDelayedAckTimeLeavesQuickAcksOn() {
            try (TcpHarness h = TcpHarness.established()) {
                h.send(ACK.seq(R).ack(L).payload("request"));
                h.expect(ACK.seq(L).ack(R + 7).len(0));
                h.advance(50 * MS);
                h.write("response");
                h.expect(PSH_ACK.seq(L).ack(R + 7).payload("response"));
                h.send(ACK.seq(R + 7).ack(L + 8).payload("again"));
                h.expect(ACK.seq(L + 8).ack(R + 12).len(0));
            }
        }

        @Test
        void aReplyCarriesTheDelayedAck() {
            try (TcpHarness h = afterQuickAcks()) {
                h.send(ACK.seq(R + 1600).ack(L).payload("request"));
                h.expectNothing();
                h.read();
                h.write("response");
                h.expect(PSH_ACK.seq(L).ack(R + 1607).payload("response"));
                h.advance(SECOND / 10);
                h.expectNothing();
            }
        }
    }

    @Nested
    class Nagle {
        @Test
        void smallWritesWaitForTheAckOfOutstandingData() {
            try (TcpHarness h = TcpHarness.established()) {
                h.write("a");
                h.expect(PSH_ACK.seq(L).payload("a"));
                h.write("b");
                h.write("c");
                h.expectNothing();
                h.send(ACK.seq(R).ack(L + 1));
                h.expect(PSH_ACK.seq(L + 1).payload("bc"));
            }
        }

        @Test
        void noDelaySendsEverySmallWriteAtOnce() {
            try (TcpHarness h = TcpHarness.established(TcpHarness.config().build(),
                TcpOptions.DEFAULT.withNoDelay(true))) {
                h.write("a");
                h.expect(PSH_ACK.seq(L).payload("a"));
                h.write("b");
                h.expect(PSH_ACK.seq(L + 1).payload("b"));
            }
        }

        @Test
        void settingNoDelaySendsWhatNagleHeld() {
            try (TcpHarness h = TcpHarness.established()) {
                h.write("a");
                h.expect(PSH_ACK.payload("a"));
                h.write("b");
                h.expectNothing();
                h.tcp.noDelay(h.conn, true, h.now());
                h.poll();
                h.expect(PSH_ACK.seq(L + 1).payload("b"));
            }
        }

        @Test
        void aFullSegmentIsNeverHeld() {
            try (TcpHarness h = TcpHarness.established()) {
                h.write("a");
                h.expect(PSH_ACK.payload("a"));
                h.write(bytes(1500));
                h.expect(ACK.seq(L + 1).len(1460));
                h.expectNothing();
            }
        }
    }

    @Nested
    class ZeroWindow {
        @Test
        void aZeroWindowIsProbedWithBackoffUntilItOpens() {
            try (TcpHarness h = TcpHarness.established()) {
                h.send(ACK.seq(R).ack(L).window(0));
                h.write("hello");
                h.expectNothing();
                assertEquals(200 * MS, h.advanceUntilSent(SECOND));
                h.expect(ACK.seq(L).payload("h"));
                h.send(ACK.seq(R).ack(L).window(0));
                assertEquals(400 * MS, h.advanceUntilSent(SECOND));
                h.expect(ACK.seq(L).payload("h"));
                h.send(ACK.seq(R).ack(L).window(0));
                assertEquals(800 * MS, h.advanceUntilSent(2 * SECOND));
                h.expect(ACK.seq(L).payload("h"));
                h.send(ACK.seq(R).ack(L).window(65535));
                // The probe byte was refused: it goes again at once (it is a recorded segment), then the rest.
                h.expect(ACK.seq(L).payload("h"));
                h.expect(PSH_ACK.seq(L + 1).payload("ello"));
                assertTrue(h.counter("tcp.tx.window_probes") >= 3);
                h.assertState(TcpState.ESTABLISHED);
            }
        }

        @Test
        void theProbesGoOnAsLongAsThePeerAnswers() {
            try (TcpHarness h = TcpHarness.established(TcpHarness.config().maxRetries(3).build(), TcpOptions.DEFAULT)) {
                h.send(ACK.seq(R).ack(L).window(0));
                h.write("x");
                for (int i = 0; i < 10; i++) {
                    h.advanceUntilSent(200 * SECOND);
                    h.expect(ACK.seq(L).payload("x"));
                    h.send(ACK.seq(R).ack(L).window(0));
                }
                h.assertState(TcpState.ESTABLISHED);
            }
        }

        @Test
        void aWindowUpdateWithoutNewDataRestartsTransmission() {
            try (TcpHarness h = TcpHarness.established()) {
                h.write(bytes(1000));
                h.expect(PSH_ACK.seq(L).len(1000));
                h.send(ACK.seq(R).ack(L + 1000).window(0));
                h.write(bytes(500));
                h.expectNothing();
                h.send(ACK.seq(R).ack(L + 1000).window(8000));
                h.expect(PSH_ACK.seq(L + 1000).len(500));
            }
        }
    }
}
