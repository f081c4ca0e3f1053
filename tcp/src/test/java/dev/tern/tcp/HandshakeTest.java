package dev.tern.tcp;

import dev.tern.core.net.Ipv4Address;

import dev.tern.tcp.testing.Captured;
import dev.tern.tcp.testing.TcpHarness;
import dev.tern.tcp.wire.TcpFlags;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

import static dev.tern.tcp.testing.FrameCheck.assertFrame;
import static dev.tern.tcp.testing.FrameCheck.checksumValid;
import static dev.tern.tcp.testing.FrameCheck.dontFragment;
import static dev.tern.tcp.testing.FrameCheck.dst;
import static dev.tern.tcp.testing.FrameCheck.dstPort;
import static dev.tern.tcp.testing.FrameCheck.flags;
import static dev.tern.tcp.testing.FrameCheck.ipv4;
import static dev.tern.tcp.testing.FrameCheck.mss;
import static dev.tern.tcp.testing.FrameCheck.noOptions;
import static dev.tern.tcp.testing.FrameCheck.sackPermitted;
import static dev.tern.tcp.testing.FrameCheck.seq;
import static dev.tern.tcp.testing.FrameCheck.src;
import static dev.tern.tcp.testing.FrameCheck.srcPort;
import static dev.tern.tcp.testing.FrameCheck.tcp;
import static dev.tern.tcp.testing.FrameCheck.timestamp;
import static dev.tern.tcp.testing.FrameCheck.window;
import static dev.tern.tcp.testing.FrameCheck.windowScale;
import static dev.tern.tcp.testing.Seg.ACK;
import static dev.tern.tcp.testing.Seg.RST;
import static dev.tern.tcp.testing.Seg.RST_ACK;
import static dev.tern.tcp.testing.Seg.SEG;
import static dev.tern.tcp.testing.Seg.SYN;
import static dev.tern.tcp.testing.Seg.SYN_ACK;
import static dev.tern.tcp.testing.TcpHarness.LOCAL_ISS;
import static dev.tern.tcp.testing.TcpHarness.PEER;
import static dev.tern.tcp.testing.TcpHarness.REMOTE_ISS;
import static dev.tern.tcp.testing.TcpHarness.US;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Opening connections (RFC 9293 §3.5): active, passive, simultaneous; refused and timed out. */
class HandshakeTest {
    @Nested
    class ActiveOpen {
        @Test
        void synCarriesMssSackTimestampsAndWindowScaleInLinuxOrder() {
            try (TcpHarness h = new TcpHarness(TcpHarness.config().build())) {
                h.connect(TcpOptions.DEFAULT);
                final Captured syn = h.expect(SYN.seq(LOCAL_ISS).ack(0).window(65535));
                assertFrame(syn, ipv4(src(US), dst(PEER), dontFragment()), tcp(srcPort(TcpHarness.LOCAL_PORT),
                    dstPort(TcpHarness.REMOTE_PORT), mss(1460), sackPermitted(true), timestamp(true), windowScale(2),
                    checksumValid()));
                assertEquals(20, syn.tcp().optionsLength());
                h.assertState(TcpState.SYN_SENT);
            }
        }

        @Test
        void synAckCompletesTheHandshakeWithAnAckAndAnEstablishedEvent() {
            try (TcpHarness h = TcpHarness.established()) {
                assertTrue(h.events.has("established"));
                h.expectNothing();
                assertEquals(1460, h.tcp.mss(h.conn));
                assertEquals(65535, h.tcp.sendWindow(h.conn));
            }
        }

        @Test
        void withoutOptionsInTheSynAckTheConnectionUsesNoneAndMss536() {
            try (TcpHarness h = TcpHarness.activeOpen(TcpHarness.config().build(), TcpOptions.DEFAULT, SYN_ACK)) {
                assertEquals(536, h.tcp.mss(h.conn));
                h.write("x");
                h.expect(SEG.flags(TcpFlags.PSH | TcpFlags.ACK).len(1), noOptions());
            }
        }

        @Test
        void negotiatesTimestampsSackAndWindowScale() {
            try (TcpHarness h = TcpHarness.activeOpen(TcpHarness.config().build(), TcpOptions.DEFAULT,
                SYN_ACK.mss(1460).sackOk().ts(777, 0).wscale(7))) {
                final TcpInfo info = h.tcp.info(h.conn);
                assertTrue(info.timestamps() && info.sack());
                assertEquals(7, info.sndScale());
                assertEquals(2, info.rcvScale());
                h.send(ACK.seq(REMOTE_ISS + 1).ack(LOCAL_ISS + 1).ts(778, 0).window(100).payload("abc"));
                final Captured ack = h.expect(ACK.seq(LOCAL_ISS + 1).ack(REMOTE_ISS + 4).tsEcr(778));
                assertEquals(12, ack.tcp().optionsLength());
                assertEquals(100 << 7, h.tcp.sendWindow(h.conn));
            }
        }

        @Test
        void rstAckToSynIsConnectionRefused() {
            try (TcpHarness h = new TcpHarness(TcpHarness.config().build())) {
                h.connect(TcpOptions.DEFAULT);
                h.expect(SYN);
                h.send(RST_ACK.seq(0).ack(LOCAL_ISS + 1));
                h.assertState(TcpState.CLOSED);
                assertEquals(TcpError.REFUSED, h.tcp.error(h.conn));
                assertTrue(h.events.has("closed " + TcpError.REFUSED));
                assertEquals(1, h.counter("tcp.conn.refused"));
            }
        }

        @Test
        void rstWithoutAckInSynSentIsIgnored() {
            try (TcpHarness h = new TcpHarness(TcpHarness.config().build())) {
                h.connect(TcpOptions.DEFAULT);
                h.expect(SYN);
                h.send(RST.seq(0));
                h.assertState(TcpState.SYN_SENT);
            }
        }

        @Test
        void synAckWithAWrongAckGetsAResetAndTheConnectionWaits() {
            try (TcpHarness h = new TcpHarness(TcpHarness.config().build())) {
                h.connect(TcpOptions.DEFAULT);
                h.expect(SYN);
                h.send(SYN_ACK.seq(REMOTE_ISS).ack(LOCAL_ISS + 7));
                h.expect(RST.seq(LOCAL_ISS + 7).ack(0));
                h.assertState(TcpState.SYN_SENT);
            }
        }

        @Test
        void synIsRetransmittedWithDoublingTimeoutThenConnectTimesOut() {
            try (TcpHarness h = new TcpHarness(TcpHarness.config().synRetries(3).build())) {
                h.connect(TcpOptions.DEFAULT);
                h.expect(SYN);
                assertEquals(1 * TcpHarness.SECOND, h.advanceUntilSent(10 * TcpHarness.SECOND));
                h.expect(SYN.seq(LOCAL_ISS));
                assertEquals(2 * TcpHarness.SECOND, h.advanceUntilSent(10 * TcpHarness.SECOND));
                h.expect(SYN.seq(LOCAL_ISS));
                assertEquals(4 * TcpHarness.SECOND, h.advanceUntilSent(10 * TcpHarness.SECOND));
                h.expect(SYN.seq(LOCAL_ISS));
                h.advance(8 * TcpHarness.SECOND);
                h.expectNothing();
                h.assertState(TcpState.CLOSED);
                assertEquals(TcpError.TIMED_OUT, h.tcp.error(h.conn));
                assertEquals(1, h.counter("tcp.conn.timed_out"));
            }
        }

        @Test
        void aHostThatNeverAnswersArpIsHostUnreachable() {
            try (TcpHarness h = new TcpHarness(TcpHarness.config().build())) {
                final int c = h.tcp.connect(dev.tern.core.net.Ipv4Address.parse("198.18.0.77"), 80, 0,
                    TcpOptions.DEFAULT, h.events, h.now());
                assertTrue(c >= 0);
                h.advance(10 * TcpHarness.SECOND);
                assertEquals(TcpState.CLOSED, h.tcp.state(c));
                assertEquals(TcpError.HOST_UNREACHABLE, h.tcp.error(c));
                assertTrue(h.events.has("closed " + TcpError.HOST_UNREACHABLE));
            }
        }

        @Test
        void aDestinationWithoutARouteIsNetworkUnreachableAtOnce() {
            try (TcpHarness h = new TcpHarness(TcpHarness.config().build())) {
                assertEquals(-TcpError.NET_UNREACHABLE, h.tcp.connect(dev.tern.core.net.Ipv4Address.parse("203.0.113.9"),
                    80, 0, TcpOptions.DEFAULT, h.events, h.now()));
                assertEquals(0, h.tcp.connectionCount());
            }
        }

        @Test
        void simultaneousOpenGoesThroughSynReceived() {
            try (TcpHarness h = new TcpHarness(TcpHarness.config().build())) {
                h.connect(TcpOptions.DEFAULT);
                h.expect(SYN.seq(LOCAL_ISS));
                h.send(SYN.seq(REMOTE_ISS).mss(1460));
                h.expect(SYN_ACK.seq(LOCAL_ISS).ack(REMOTE_ISS + 1));
                h.assertState(TcpState.SYN_RECEIVED);
                h.send(SYN_ACK.seq(REMOTE_ISS).ack(LOCAL_ISS + 1).mss(1460));
                h.assertState(TcpState.ESTABLISHED);
                assertTrue(h.events.has("established"));
            }
        }
    }

    @Nested
    class PassiveOpen {
        /** A harness with a listener on {@link TcpHarness#LISTEN_PORT}, addressed from the peer's client port. */
        private static TcpHarness listening(TcpConfig config) {
            final TcpHarness h = new TcpHarness(config);
            h.localPort = TcpHarness.LISTEN_PORT;
            h.remotePort = TcpHarness.PEER_CLIENT_PORT;
            h.listener = h.tcp.listen(TcpHarness.LISTEN_PORT, 4, h.events);
            return h;
        }

        @Test
        void synGetsSynAckMirroringTheOfferedOptionsThenAckEstablishes() {
            try (TcpHarness h = TcpHarness.passiveOpen(TcpHarness.config().build(), TcpOptions.DEFAULT,
                SYN.mss(1400).sackOk().ts(10, 0).wscale(3))) {
                final Captured synAck = h.all.getFirst();
                assertFrame(synAck, tcp(mss(1460), sackPermitted(true), timestamp(true), windowScale(2),
                    window(65535), flags(TcpFlags.SYN | TcpFlags.ACK), seq(LOCAL_ISS)));
                assertTrue(h.events.has("acceptable"));
                assertEquals(1400 - 0, h.tcp.mss(h.conn));
                assertEquals(1, h.counter("tcp.conn.passive_opens"));
            }
        }

        @Test
        void synAckOmitsOptionsThePeerDidNotOffer() {
            try (TcpHarness h = TcpHarness.passiveOpen(TcpHarness.config().build(), TcpOptions.DEFAULT, SYN)) {
                assertFrame(h.all.getFirst(), tcp(mss(1460), sackPermitted(false), timestamp(false),
                    windowScale(-1)));
                assertEquals(536, h.tcp.mss(h.conn));
            }
        }

        @Test
        void synAckIsRetransmittedThenTheHalfOpenConnectionIsDropped() {
            try (TcpHarness h = listening(TcpHarness.config().synAckRetries(2).build())) {
                h.send(SYN.seq(REMOTE_ISS));
                h.expect(SYN_ACK.seq(LOCAL_ISS).ack(REMOTE_ISS + 1));
                assertEquals(TcpHarness.SECOND, h.advanceUntilSent(5 * TcpHarness.SECOND));
                h.expect(SYN_ACK.seq(LOCAL_ISS));
                assertEquals(2 * TcpHarness.SECOND, h.advanceUntilSent(5 * TcpHarness.SECOND));
                h.expect(SYN_ACK.seq(LOCAL_ISS));
                h.advance(10 * TcpHarness.SECOND);
                h.expectNothing();
                assertEquals(0, h.tcp.connectionCount());
                assertEquals(1, h.counter("tcp.conn.half_open_expired"));
                h.send(ACK.seq(REMOTE_ISS + 1).ack(LOCAL_ISS + 1));
                h.expect(RST.seq(LOCAL_ISS + 1));
            }
        }

        /**
         * A SYN-ACK that finds the transmit ring full never left: it goes a millisecond later, as a first SYN-ACK
         * (no retransmission counted, no back-off), not at the RTO, a second later.
         */
        @Test
        void aSynAckThatFoundNoTransmitBufferGoesAMillisecondLater() {
            try (TcpHarness h = listening(TcpHarness.config().build())) {
                h.refuseTransmits(1);
                h.send(SYN.seq(REMOTE_ISS));
                h.expectNothing();
                assertEquals(1, h.counter("tcp.tx.no_buffer"));
                assertEquals(1_000_000, h.advanceUntilSent(5 * TcpHarness.SECOND));
                h.expect(SYN_ACK.seq(LOCAL_ISS).ack(REMOTE_ISS + 1));
                assertEquals(0, h.counter("tcp.tx.retransmits"));
                assertEquals(TcpHarness.SECOND, h.advanceUntilSent(5 * TcpHarness.SECOND), "the RTO not backed off");
                h.expect(SYN_ACK.seq(LOCAL_ISS));
            }
        }

        @Test
        void aRetransmittedSynInSynReceivedGetsTheSynAckAgain() {
            try (TcpHarness h = listening(TcpHarness.config().build())) {
                h.send(SYN.seq(REMOTE_ISS));
                h.expect(SYN_ACK.seq(LOCAL_ISS).ack(REMOTE_ISS + 1));
                h.send(SYN.seq(REMOTE_ISS));
                h.expect(SYN_ACK.seq(LOCAL_ISS).ack(REMOTE_ISS + 1));
                assertEquals(1, h.tcp.connectionCount());
            }
        }

        @Test
        void rstInSynReceivedReturnsToListenQuietly() {
            try (TcpHarness h = listening(TcpHarness.config().build())) {
                h.send(SYN.seq(REMOTE_ISS));
                h.expect(SYN_ACK);
                h.send(RST.seq(REMOTE_ISS + 1));
                assertEquals(0, h.tcp.connectionCount());
                h.expectNothing();
                h.send(SYN.seq(REMOTE_ISS + 1000));
                h.expect(SYN_ACK.ack(REMOTE_ISS + 1001));
            }
        }

        @Test
        void badAckInSynReceivedGetsAReset() {
            try (TcpHarness h = listening(TcpHarness.config().build())) {
                h.send(SYN.seq(REMOTE_ISS));
                h.expect(SYN_ACK);
                h.send(ACK.seq(REMOTE_ISS + 1).ack(LOCAL_ISS + 99));
                h.expect(RST.seq(LOCAL_ISS + 99));
                assertEquals(-1, h.tcp.accept(h.listener));
            }
        }

        /**
         * A connection reset while it waits in the accept queue stays there, as Linux's: accept returns it closed, the
         * text it acknowledged readable, its error the reset.
         */
        @Test
        void aConnectionResetBeforeAcceptIsStillAcceptedWithItsText() {
            try (TcpHarness h = listening(TcpHarness.config().build())) {
                h.send(SYN.seq(REMOTE_ISS).mss(1460));
                h.expect(SYN_ACK);
                h.send(ACK.seq(REMOTE_ISS + 1).ack(LOCAL_ISS + 1));
                h.send(SEG.flags(TcpFlags.PSH | TcpFlags.ACK).seq(REMOTE_ISS + 1).ack(LOCAL_ISS + 1).payload("hi"));
                h.expect(ACK.ack(REMOTE_ISS + 3));
                h.send(RST.seq(REMOTE_ISS + 3));
                assertEquals(1, h.tcp.acceptable(h.listener));
                h.conn = h.tcp.accept(h.listener);
                assertTrue(h.conn >= 0, "the reset connection is still accepted");
                h.assertState(TcpState.CLOSED);
                assertEquals(TcpError.RESET, h.tcp.error(h.conn));
                assertArrayEquals("hi".getBytes(), h.read());
                h.tcp.close(h.conn, h.now());
                h.poll();
                h.expectNothing();
                assertEquals(0, h.tcp.connectionCount());
            }
        }

        /**
         * A SYN from a source with no route back (off-subnet, no gateway: a spoofed flood's) gets no half-open row,
         * counted as Linux's OutNoRoutes; once a default route exists the same source is answered.
         */
        @Test
        void aSynFromASourceWithNoRouteKeepsNoState() {
            try (TcpHarness h = listening(TcpHarness.config().build())) {
                h.remoteAddress = Ipv4Address.parse("198.19.0.5");
                h.send(SYN.seq(REMOTE_ISS));
                h.expectNothing();
                assertEquals(0, h.tcp.connectionCount(), "no half-open row");
                assertEquals(1, h.counter("tcp.drop.no_route"));
                h.stack.ipv4.defaultGateway(TcpHarness.PEER);
                h.send(SYN.seq(REMOTE_ISS));
                h.expect(SYN_ACK);
                assertEquals(1, h.tcp.connectionCount());
            }
        }

        @Test
        void aSynWithFinIsDroppedUnanswered() {
            try (TcpHarness h = listening(TcpHarness.config().build())) {
                h.send(SEG.flags(TcpFlags.SYN | TcpFlags.FIN).seq(REMOTE_ISS));
                h.expectNothing();
                assertEquals(0, h.tcp.connectionCount());
                assertEquals(1, h.counter("tcp.drop.syn_fin"));
                h.send(SYN.seq(REMOTE_ISS));
                h.expect(SYN_ACK.seq(LOCAL_ISS).ack(REMOTE_ISS + 1));
            }
        }

        @Test
        void anMssOfZeroCountsAsAbsentAndATinyOneIsRaisedToTheFloor() {
            try (TcpHarness h = TcpHarness.passiveOpen(TcpHarness.config().build(), TcpOptions.DEFAULT, SYN.mss(0))) {
                assertEquals(536, h.tcp.mss(h.conn));
                assertEquals(1, h.counter("tcp.rx.bad_options"));
            }
            try (TcpHarness h = TcpHarness.passiveOpen(TcpHarness.config().build(), TcpOptions.DEFAULT, SYN.mss(1))) {
                assertEquals(TcpInput.MIN_PEER_MSS, h.tcp.mss(h.conn));
                assertEquals(1, h.counter("tcp.rx.bad_options"));
            }
            try (TcpHarness h = TcpHarness.passiveOpen(TcpHarness.config().build(), TcpOptions.DEFAULT, SYN.mss(48))) {
                assertEquals(48, h.tcp.mss(h.conn));
                assertEquals(0, h.counter("tcp.rx.bad_options"));
            }
        }

        @Test
        void listeningTwiceOnAPortIsAddressInUse() {
            try (TcpHarness h = new TcpHarness(TcpHarness.config().build())) {
                assertTrue(h.tcp.listen(80, 1, h.events) >= 0);
                assertEquals(-TcpError.ADDRESS_IN_USE, h.tcp.listen(80, 1, h.events));
                assertEquals(-TcpError.ADDRESS_IN_USE, h.tcp.connect(TcpHarness.PEER, 9, 80, TcpOptions.DEFAULT,
                    h.events, h.now()));
            }
        }
    }

    @Nested
    class ClosedPort {
        @Test
        void synToClosedPortGetsRstAck() {
            try (TcpHarness h = new TcpHarness(TcpHarness.config().build())) {
                h.localPort = 9;
                h.send(SYN.seq(REMOTE_ISS));
                h.expect(RST_ACK.seq(0).ack(REMOTE_ISS + 1), noOptions());
                assertEquals(1, h.counter("tcp.drop.no_socket"));
            }
        }

        @Test
        void ackToClosedPortGetsRstAtItsAckNumber() {
            try (TcpHarness h = new TcpHarness(TcpHarness.config().build())) {
                h.localPort = 9;
                h.send(ACK.seq(REMOTE_ISS).ack(12345).payload("data"));
                h.expect(RST.seq(12345).ack(0));
            }
        }

        @Test
        void dataWithoutAckToClosedPortGetsRstAckCoveringIt() {
            try (TcpHarness h = new TcpHarness(TcpHarness.config().build())) {
                h.localPort = 9;
                h.send(SEG.flags(TcpFlags.FIN).seq(REMOTE_ISS).payload("data"));
                h.expect(RST_ACK.seq(0).ack(REMOTE_ISS + 5));
            }
        }

        /** Found by the conformance fuzzer: Tern answered segments from or to port 0 with resets addressed to port 0. */
        @Test
        void segmentsFromOrToPortZeroAreDroppedUnanswered() {
            try (TcpHarness h = new TcpHarness(TcpHarness.config().build())) {
                assertTrue(h.tcp.listen(80, 1, h.events) >= 0);
                h.localPort = 80;
                h.remotePort = 0;
                h.send(SYN.seq(REMOTE_ISS));
                h.expectNothing();
                h.remotePort = 40000;
                h.localPort = 0;
                h.send(ACK.seq(REMOTE_ISS).ack(12345).payload("data"));
                h.expectNothing();
                h.remotePort = 0;
                h.send(SYN.seq(REMOTE_ISS));
                h.expectNothing();
                assertEquals(3, h.counter("tcp.drop.zero_port"));
                assertEquals(0, h.counter("tcp.tx.resets"));
                assertEquals(0, h.counter("tcp.drop.no_socket"));
            }
        }

        @Test
        void rstToClosedPortIsNotAnswered() {
            try (TcpHarness h = new TcpHarness(TcpHarness.config().build())) {
                h.localPort = 9;
                h.send(RST.seq(REMOTE_ISS));
                h.expectNothing();
            }
        }
    }
}
