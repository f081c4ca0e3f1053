package dev.tern.tcp;

import dev.tern.core.net.Ipv4Address;
import dev.tern.tcp.testing.Captured;
import dev.tern.tcp.testing.TcpHarness;
import dev.tern.tcp.wire.TcpFlags;
import dev.tern.tcp.wire.TcpHeader;
import dev.tern.tcp.wire.TcpRepr;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.util.List;

import static dev.tern.tcp.testing.Seg.ACK;
import static dev.tern.tcp.testing.Seg.FIN_ACK;
import static dev.tern.tcp.testing.Seg.PSH_ACK;
import static dev.tern.tcp.testing.Seg.RST;
import static dev.tern.tcp.testing.Seg.SYN;
import static dev.tern.tcp.testing.Seg.SYN_ACK;
import static dev.tern.tcp.testing.TcpHarness.LOCAL_ISS;
import static dev.tern.tcp.testing.TcpHarness.MS;
import static dev.tern.tcp.testing.TcpHarness.PEER;
import static dev.tern.tcp.testing.TcpHarness.PEER_MAC;
import static dev.tern.tcp.testing.TcpHarness.REMOTE_ISS;
import static dev.tern.tcp.testing.TcpHarness.SECOND;
import static dev.tern.tcp.testing.TcpHarness.US;
import static dev.tern.tcp.testing.TcpHarness.bytes;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * RFC 9293 Appendix B requirements that no other test of this module covered, one test per requirement ID, named
 * after it. {@code docs/RFC9293.md} names these (and the other classes' tests) as evidence; {@link Rfc9293TableTest}
 * keeps that table honest.
 */
class Rfc9293RequirementsTest {
    static final int L = LOCAL_ISS + 1;
    static final int R = REMOTE_ISS + 1;

    /** A segment from the peer with {@code options} (raw bytes, padded by the caller to a multiple of 4). */
    private static byte[] rawSegment(TcpHarness h, int seq, int ack, int flags, byte[] options, byte[] payload) {
        final int headerLength = TcpHeader.MIN_LENGTH + options.length;
        final byte[] segment = new byte[headerLength + payload.length];
        final TcpHeader header = new TcpHeader().wrap(MemorySegment.ofArray(segment), 0, segment.length);
        header.write(h.remotePort, h.localPort, seq, ack, headerLength, flags, 65535);
        for (int i = 0; i < options.length; i++) {
            header.optionByte(i, options[i] & 0xFF);
        }
        System.arraycopy(payload, 0, segment, headerLength, payload.length);
        TcpRepr.fillChecksum(header, PEER, US, segment.length);
        return segment;
    }

    @Test
    void must1_aWindowAbove32767IsTakenAsUnsigned() {
        try (TcpHarness h = TcpHarness.established()) {
            h.send(ACK.seq(R).ack(L).window(65535));
            assertEquals(65535, h.tcp.sendWindow(h.conn));
            h.send(ACK.seq(R).ack(L).window(40000));
            assertEquals(40000, h.tcp.sendWindow(h.conn));
            h.write(bytes(3000));
            h.expect(ACK.seq(L).len(1460));
        }
    }

    @Test
    void must6_anOptionWeDoNotImplementIsSkippedWithoutError() {
        try (TcpHarness h = TcpHarness.established()) {
            // Kind 253 (RFC 4727 experiment), length 4, then a NOP pair: the segment's data is taken.
            final byte[] options = {(byte) 253, 4, 1, 2, 1, 1, 1, 0};
            h.sendIp(PEER, US, 6, rawSegment(h, R, L, TcpFlags.ACK, options, "abc".getBytes()));
            h.expect(ACK.ack(R + 3));
            assertEquals(0, h.counter("tcp.rx.bad_options"));
            assertEquals("abc", new String(h.read()));
        }
    }

    @Test
    void must64_optionsThatDoNotStartOnAWordBoundaryAreRead() {
        try (TcpHarness h = new TcpHarness(TcpHarness.config().build())) {
            h.localPort = TcpHarness.LISTEN_PORT;
            h.remotePort = TcpHarness.PEER_CLIENT_PORT;
            h.listener = h.tcp.listen(TcpHarness.LISTEN_PORT, 4, h.events);
            // NOP, then MSS 1000 at byte 1, then NOP, NOP, EOL.
            final byte[] options = {1, 2, 4, 0x03, (byte) 0xE8, 1, 1, 0};
            h.sendIp(PEER, US, 6, rawSegment(h, REMOTE_ISS, 0, TcpFlags.SYN, options, new byte[0]));
            h.expect(SYN_ACK.seq(LOCAL_ISS).ack(R));
            h.send(ACK.seq(R).ack(L));
            h.conn = h.tcp.accept(h.listener);
            h.assertState(TcpState.ESTABLISHED);
            assertEquals(1000, h.tcp.mss(h.conn));
        }
    }

    @Test
    void must65_noSegmentButASynCarriesAnMssOption() {
        try (TcpHarness h = TcpHarness.passiveOpen(TcpHarness.config().build(), TcpOptions.DEFAULT,
            SYN.mss(1460).sackOk().wscale(7).ts(100, 0))) {
            h.write(bytes(4000));
            h.send(ACK.seq(R).ack(L).payload("x").ts(101, 1));
            h.advance(SECOND);
            h.send(FIN_ACK.seq(R + 1).ack(L + 4000).ts(102, 1));
            h.tcp.close(h.conn, h.now());
            h.poll();
            int checked = 0;
            for (Captured c : h.all) {
                if ((c.tcp().flags() & TcpFlags.SYN) == 0) {
                    assertEquals(-1, c.tcp().mss(), "MSS option on " + c);
                    checked++;
                }
            }
            assertTrue(checked >= 4, "segments checked: " + checked);
        }
    }

    @Test
    void must66_aResetIsProcessedWhileOurReceiveWindowIsZero() {
        try (TcpHarness h = TcpHarness.established(TcpHarness.config().build(),
            TcpOptions.DEFAULT.withBuffers(16384, 1024))) {
            final int window = h.tcp.receiveWindow(h.conn);
            assertTrue(window > 0 && window <= 1024, "window " + window);
            h.send(ACK.seq(R).ack(L).payload(bytes(window)));
            h.advance(SECOND);
            assertEquals(0, h.tcp.receiveWindow(h.conn));
            h.send(RST.seq(R + window));
            h.assertState(TcpState.CLOSED);
            assertEquals(TcpError.RESET, h.tcp.error(h.conn));
        }
    }

    @Test
    void must16_theEffectiveSendMssIsTheSmallerOfThePeersMssAndOurMtu() {
        try (TcpHarness h = new TcpHarness(TcpHarness.config().build(), 1000)) {
            h.connect(TcpOptions.DEFAULT);
            h.expect(SYN.seq(LOCAL_ISS).mss(960));
            h.send(SYN_ACK.seq(REMOTE_ISS).ack(L).mss(1460));
            h.expect(ACK.seq(L).ack(R));
            assertEquals(960, h.tcp.mss(h.conn));
            h.write(bytes(2000));
            h.expect(ACK.seq(L).len(960));
        }
    }

    @Test
    void must67_theMssWeAdvertiseFollowsTheLargestDatagramWeCanReceive() {
        try (TcpHarness h = new TcpHarness(TcpHarness.config().build(), 1000)) {
            h.connect(TcpOptions.DEFAULT);
            h.expect(SYN.seq(LOCAL_ISS).mss(1000 - 40));
        }
        try (TcpHarness h = new TcpHarness(TcpHarness.config().build())) {
            h.connect(TcpOptions.DEFAULT);
            h.expect(SYN.seq(LOCAL_ISS).mss(1500 - 40));
        }
    }

    @Test
    void must28_keepaliveSwitchedOnWithoutAnIdleTimeWaitsTwoHours() {
        final TcpOptions on = new TcpOptions(0, 0, false, true, 0, 0, 0, null, null, null, 0, false, false, 0);
        try (TcpHarness h = TcpHarness.established(TcpHarness.config().build(), on)) {
            assertEquals(2 * 3600 * SECOND, h.advanceUntilSent(3 * 3600 * SECOND));
            h.expect(ACK.seq(L - 1).ack(R).len(0));
        }
    }

    @Test
    void must34_theSenderSurvivesAWindowShrunkBelowWhatItSent() {
        try (TcpHarness h = TcpHarness.established()) {
            h.send(ACK.seq(R).ack(L).window(3000));
            h.write(bytes(3000));
            h.expect(ACK.seq(L).len(1460));
            h.expect(ACK.seq(L + 1460).len(1460));
            h.expect(PSH_ACK.seq(L + 2920).len(80));
            // The peer takes the first segment back out of its window: the right edge moves from L + 3000 to
            // L + 1460, below SND.NXT.
            h.send(ACK.seq(R).ack(L + 1460).window(0));
            h.assertState(TcpState.ESTABLISHED);
            h.write(bytes(100));
            h.advance(10 * SECOND);
            h.send(ACK.seq(R).ack(L + 1460).window(65535));
            h.advance(10 * SECOND);
            h.send(ACK.seq(R).ack(L + 3000).window(65535));
            h.advance(SECOND);
            h.send(ACK.seq(R).ack(L + 3100).window(65535));
            h.assertState(TcpState.ESTABLISHED);
            assertEquals(3100, h.tcp.info(h.conn).bytesAcked());
            assertEquals(0, h.tcp.inFlight(h.conn));
            assertEquals(0, h.counter("stack.internal_errors"));
        }
    }

    @Test
    void must35_aWindowThatShrinksToZeroIsProbed() {
        try (TcpHarness h = TcpHarness.established()) {
            h.write(bytes(1000));
            h.expect(PSH_ACK.seq(L).len(1000));
            h.send(ACK.seq(R).ack(L + 1000).window(0));
            h.write("more");
            h.expectNothing();
            h.advanceUntilSent(10 * SECOND);
            h.expect(ACK.seq(L + 1000).payload("m"));
            assertTrue(h.counter("tcp.tx.window_probes") >= 1);
        }
    }

    @Test
    void must41_aNewListenerLeavesAnOpenConnectionAlone() {
        try (TcpHarness h = TcpHarness.established()) {
            final int other = h.tcp.listen(TcpHarness.LISTEN_PORT, 4, h.events);
            assertTrue(other >= 0);
            assertTrue(h.tcp.listen(TcpHarness.LISTEN_PORT, 4, h.events) < 0, "a second listen is an error");
            h.tcp.listen(TcpHarness.LOCAL_PORT, 4, h.events);
            h.assertState(TcpState.ESTABLISHED);
            h.send(ACK.seq(R).ack(L).payload("still here"));
            h.expect(ACK.seq(L).ack(R + 10));
            assertEquals("still here", new String(h.read()));
        }
    }

    @Test
    void must42_aPortCanBeListenedOnWhileAConnectionFromItIsOpening() {
        try (TcpHarness h = new TcpHarness(TcpHarness.config().build())) {
            h.connect(TcpOptions.DEFAULT);
            h.expect(SYN.seq(LOCAL_ISS));
            assertEquals(TcpState.SYN_SENT, h.tcp.state(h.conn));
            final int listener = h.tcp.listen(TcpHarness.LOCAL_PORT, 4, h.events);
            assertTrue(listener >= 0, "listen while SYN-SENT: " + listener);
            h.send(SYN_ACK.seq(REMOTE_ISS).ack(L).mss(1460));
            h.expect(ACK.seq(L).ack(R));
            h.assertState(TcpState.ESTABLISHED);
        }
    }

    @Test
    void must46_connectToABroadcastOrMulticastAddressIsRefused() {
        try (TcpHarness h = new TcpHarness(TcpHarness.config().build())) {
            for (String address : new String[] {"224.0.0.1", "239.1.2.3", "255.255.255.255", "198.18.0.255"}) {
                final int result = h.tcp.connect(Ipv4Address.parse(address), 80, 0, TcpOptions.DEFAULT, h.events,
                    h.now());
                assertEquals(-TcpError.NET_UNREACHABLE, result, address);
            }
            h.poll();
            h.expectNothing();
        }
    }

    @Test
    void must55_sourceQuenchIsDiscardedSilently() {
        try (TcpHarness h = TcpHarness.established()) {
            h.write("x");
            final Captured data = h.expect(PSH_ACK);
            final int cwnd = h.tcp.cwnd(h.conn);
            h.sendIp(PEER, US, 1, IcmpTest.icmpError(4, 0, 0, data));
            h.expectNothing();
            h.assertState(TcpState.ESTABLISHED);
            assertEquals(cwnd, h.tcp.cwnd(h.conn));
            assertEquals(0, h.counter("tcp.icmp_errors"));
        }
    }

    @Test
    void must56_timeExceededAndParameterProblemDoNotAbortAConnection() {
        try (TcpHarness h = TcpHarness.established()) {
            h.write("x");
            final Captured data = h.expect(PSH_ACK);
            h.sendIp(PEER, US, 1, IcmpTest.icmpError(11, 0, 0, data));
            h.sendIp(PEER, US, 1, IcmpTest.icmpError(12, 0, 0, data));
            h.sendIp(PEER, US, 1, IcmpTest.icmpError(3, 0, 0, data));
            h.sendIp(PEER, US, 1, IcmpTest.icmpError(3, 1, 0, data));
            h.sendIp(PEER, US, 1, IcmpTest.icmpError(3, 5, 0, data));
            h.assertState(TcpState.ESTABLISHED);
            assertEquals(TcpError.NONE, h.tcp.error(h.conn));
            assertEquals(5, h.counter("tcp.icmp_errors"));
            h.send(ACK.seq(R).ack(L + 1));
            h.assertState(TcpState.ESTABLISHED);
        }
    }

    @Test
    void must57_aSynToABroadcastOrMulticastAddressIsDiscardedSilently() {
        try (TcpHarness h = new TcpHarness(TcpHarness.config().build())) {
            h.localPort = TcpHarness.LISTEN_PORT;
            h.remotePort = TcpHarness.PEER_CLIENT_PORT;
            h.listener = h.tcp.listen(TcpHarness.LISTEN_PORT, 4, h.events);
            for (String address : new String[] {"198.18.0.255", "255.255.255.255", "224.0.0.1"}) {
                final byte[] syn = new byte[TcpHeader.MIN_LENGTH];
                final TcpHeader header = new TcpHeader().wrap(MemorySegment.ofArray(syn), 0, syn.length);
                header.write(h.remotePort, h.localPort, REMOTE_ISS, 0, TcpHeader.MIN_LENGTH, TcpFlags.SYN, 65535);
                TcpRepr.fillChecksum(header, PEER, Ipv4Address.parse(address), syn.length);
                h.sendIp(PEER, Ipv4Address.parse(address), 6, syn);
            }
            h.expectNothing();
            assertEquals(0, h.tcp.acceptable(h.listener));
            assertFalse(h.events.has("acceptable"));
        }
    }

    @Test
    void must11_aResetInSynReceivedAfterAnActiveOpenRefusesTheConnection() {
        try (TcpHarness h = new TcpHarness(TcpHarness.config().build())) {
            h.connect(TcpOptions.DEFAULT);
            h.expect(SYN.seq(LOCAL_ISS));
            h.send(SYN.seq(REMOTE_ISS).mss(1460));
            h.expect(SYN_ACK.seq(LOCAL_ISS).ack(R));
            h.assertState(TcpState.SYN_RECEIVED);
            h.send(RST.seq(R));
            h.assertState(TcpState.CLOSED);
            assertEquals(TcpError.REFUSED, h.tcp.error(h.conn));
            assertTrue(h.events.has("closed " + TcpError.REFUSED));
        }
    }

    @Test
    void must12_theApplicationLearnsWhetherThePeerClosedOrAborted() {
        try (TcpHarness h = TcpHarness.established()) {
            h.send(FIN_ACK.seq(R).ack(L));
            h.expect(ACK.ack(R + 1));
            assertTrue(h.tcp.receiveShutdown(h.conn));
            assertEquals(TcpError.NONE, h.tcp.error(h.conn));
            assertTrue(h.events.has("readable"));
            h.assertState(TcpState.CLOSE_WAIT);
        }
        try (TcpHarness h = TcpHarness.established()) {
            h.send(RST.seq(R));
            h.assertState(TcpState.CLOSED);
            assertEquals(TcpError.RESET, h.tcp.error(h.conn));
            assertTrue(h.events.has("closed " + TcpError.RESET));
        }
    }

    @Test
    void must63_aSynFromAnInvalidSourceAddressIsIgnored() {
        try (TcpHarness h = new TcpHarness(TcpHarness.config().build())) {
            h.localPort = TcpHarness.LISTEN_PORT;
            h.remotePort = TcpHarness.PEER_CLIENT_PORT;
            h.listener = h.tcp.listen(TcpHarness.LISTEN_PORT, 4, h.events);
            for (String address : new String[] {"0.0.0.0", "0.1.2.3", "127.0.0.1", "224.0.0.5", "255.255.255.255",
                "198.18.0.255", "240.0.0.1"}) {
                final int source = Ipv4Address.parse(address);
                final byte[] syn = new byte[TcpHeader.MIN_LENGTH];
                final TcpHeader header = new TcpHeader().wrap(MemorySegment.ofArray(syn), 0, syn.length);
                header.write(h.remotePort, h.localPort, REMOTE_ISS, 0, TcpHeader.MIN_LENGTH, TcpFlags.SYN, 65535);
                TcpRepr.fillChecksum(header, source, US, syn.length);
                h.sendIp(source, US, 6, syn);
            }
            h.expectNothing();
            assertEquals(0, h.tcp.connectionCount());
        }
    }

    @Test
    void must26_noKeepaliveWhileSentDataIsOutstanding() {
        final TcpOptions keepalive = TcpOptions.DEFAULT.withKeepalive(10 * SECOND, SECOND, 3);
        try (TcpHarness h = TcpHarness.established(TcpHarness.config().build(), keepalive)) {
            h.write("x");
            h.expect(PSH_ACK.seq(L).payload("x"));
            h.advance(60 * SECOND);
            assertEquals(0, h.counter("tcp.tx.keepalives"));
            for (Captured c : h.pending()) {
                assertEquals(L, c.tcp().seq(), "only retransmissions of the data: " + c);
            }
        }
    }

    @Test
    void shld2_aResetCarryingDataIsStillAReset() {
        try (TcpHarness h = TcpHarness.established()) {
            h.send(RST.seq(R).payload("diagnostic text"));
            h.assertState(TcpState.CLOSED);
            assertEquals(TcpError.RESET, h.tcp.error(h.conn));
        }
    }

    @Test
    void shld11_withTheDefaultsAConnectionOutlivesOneHundredSecondsOfSilence() {
        try (TcpHarness h = TcpHarness.established()) {
            h.write("x");
            h.advance(100 * SECOND);
            h.assertState(TcpState.ESTABLISHED);
            h.advance(3600 * SECOND);
            h.assertState(TcpState.CLOSED);
            assertEquals(TcpError.TIMED_OUT, h.tcp.error(h.conn));
        }
    }

    @Test
    void must49_theTtlOfOurSegmentsIsTheConfiguredOne() {
        final var d = dev.tern.ipv4.Ipv4Config.DEFAULT;
        final var ttl9 = new dev.tern.ipv4.Ipv4Config(9, d.reassemblySlots(), d.reassemblyTimeoutNs(),
            d.maxFragmentsPerDatagram(), d.icmpErrorsPerSecond(), d.icmpErrorBurst(), d.pathMtuEntries(),
            d.pathMtuTimeoutNs(), d.minPathMtu(), d.echoIgnoreBroadcasts(), d.icmpPeerIntervalNs(), d.icmpPeerBurst(),
            d.icmpPeerEntries(), d.identificationKey0(), d.identificationKey1());
        try (TcpHarness h = new TcpHarness(TcpHarness.config().build(), 1500, ttl9)) {
            h.connect(TcpOptions.DEFAULT);
            assertEquals(9, h.expect(SYN.seq(LOCAL_ISS)).ip().ttl());
            h.send(SYN_ACK.seq(REMOTE_ISS).ack(L).mss(1460));
            assertEquals(9, h.expect(ACK.seq(L).ack(R)).ip().ttl());
            h.write("x");
            assertEquals(9, h.expect(PSH_ACK.seq(L)).ip().ttl());
        }
        try (TcpHarness h = TcpHarness.established()) {
            h.write("x");
            assertEquals(64, h.expect(PSH_ACK.seq(L)).ip().ttl());
        }
    }

    /** TIME-WAIT after a passive open with timestamps (the peer's last TSval 101), our owner gone. */
    private static TcpHarness timeWaitWithTimestamps() {
        final TcpHarness h = TcpHarness.passiveOpen(TcpHarness.config().build(), TcpOptions.DEFAULT,
            SYN.mss(1460).ts(100, 0));
        h.tcp.shutdownOutput(h.conn, h.now());
        h.poll();
        h.expect(FIN_ACK.seq(L).ack(R));
        h.send(FIN_ACK.seq(R).ack(L + 1).ts(101, 0));
        h.expect(ACK.seq(L + 1).ack(R + 1));
        h.assertState(TcpState.TIME_WAIT);
        h.tcp.close(h.conn, h.now());
        return h;
    }

    @Test
    void shld4_aSynWithANewerTimestampEndsTimeWaitWhateverItsSequenceNumber() {
        try (TcpHarness h = timeWaitWithTimestamps()) {
            // Below RCV.NXT: by sequence number alone this SYN would be old; its timestamp shows it is new.
            h.send(SYN.seq(R - 5).mss(1460).ts(200, 0));
            h.expect(SYN_ACK.ack(R - 4));
            assertEquals(1, h.counter("tcp.conn.time_wait_reused"));
        }
        try (TcpHarness h = timeWaitWithTimestamps()) {
            // Above RCV.NXT, but with an older timestamp: an old duplicate, answered with an ACK of the old one.
            h.send(SYN.seq(R + 100_000).mss(1460).ts(50, 0));
            h.expect(ACK.seq(L + 1).ack(R + 1));
            assertEquals(0, h.counter("tcp.conn.time_wait_reused"));
        }
    }

    @Test
    void must30_urgentDataIsDeliveredInLineAndThePointerIgnored() {
        try (TcpHarness h = TcpHarness.established()) {
            final byte[] options = {};
            final byte[] segment = rawSegment(h, R, L, TcpFlags.ACK | TcpFlags.URG | TcpFlags.PSH, options,
                "ab!cd".getBytes());
            // Urgent pointer 3: the octet after the urgent data is at R + 3.
            segment[18] = 0;
            segment[19] = 3;
            segment[16] = 0;
            segment[17] = 0;
            final TcpHeader header = new TcpHeader().wrap(MemorySegment.ofArray(segment), 0, segment.length);
            TcpRepr.fillChecksum(header, PEER, US, segment.length);
            h.sendIp(PEER, US, 6, segment);
            h.expect(ACK.ack(R + 5));
            assertEquals("ab!cd", new String(h.read()), "every byte, in order, in line");
        }
    }

    @Test
    void must21_theApplicationSetsTheRetransmissionLimitOfOneConnection() {
        try (TcpHarness h = TcpHarness.established()) {
            assertEquals(0, h.tcp.maxRetries(h.conn, 2));
            h.write("hello");
            h.advance(60 * SECOND);
            assertEquals(3, h.pending().size(), "the segment and two retransmissions");
            h.assertState(TcpState.CLOSED);
            assertEquals(TcpError.TIMED_OUT, h.tcp.error(h.conn));
        }
        try (TcpHarness h = new TcpHarness(TcpHarness.config().build())) {
            h.connect(TcpOptions.DEFAULT);
            assertEquals(0, h.tcp.maxRetries(h.conn, 1));
            h.advance(60 * SECOND);
            assertEquals(2, h.pending().size(), "the SYN and one retransmission");
            assertEquals(TcpError.TIMED_OUT, h.tcp.error(h.conn));
        }
        try (TcpHarness h = TcpHarness.established()) {
            // 0 goes back to the layer's limit: the connection outlives the two retransmissions above.
            h.tcp.maxRetries(h.conn, 2);
            assertEquals(0, h.tcp.maxRetries(h.conn, 0));
            h.write("hello");
            h.advance(10 * SECOND);
            h.assertState(TcpState.ESTABLISHED);
            assertEquals(-TcpError.INVALID, h.tcp.maxRetries(h.conn, -1));
            assertEquals(-TcpError.INVALID, h.tcp.maxRetries(12345, 3));
        }
    }

    @Test
    void must48_theApplicationSetsTheDiffservFieldOfItsSegments() {
        try (TcpHarness h = TcpHarness.established()) {
            assertEquals(0, h.tcp.trafficClass(h.conn, 0xB8));
            h.write("x");
            assertEquals(0xB8, h.expect(PSH_ACK.seq(L)).ip().tos(), "DSCP EF, passed unchanged to IP");
            h.send(ACK.seq(R).ack(L + 1).payload("y"));
            assertEquals(0xB8, h.expect(ACK.ack(R + 1)).ip().tos(), "pure ACKs too");
            assertEquals(-TcpError.INVALID, h.tcp.trafficClass(h.conn, 256));
        }
    }

    @Test
    void shld21_theDiffservFieldCanChangeDuringTheConnection() {
        try (TcpHarness h = TcpHarness.established()) {
            h.write("a");
            assertEquals(0, h.expect(PSH_ACK.seq(L)).ip().tos());
            h.send(ACK.seq(R).ack(L + 1));
            h.tcp.trafficClass(h.conn, 0x28);
            h.write("b");
            assertEquals(0x28, h.expect(PSH_ACK.seq(L + 1)).ip().tos());
        }
    }

    @Test
    void must47_aSoftErrorIsReportedAndTheConnectionGoesOn() {
        try (TcpHarness h = TcpHarness.established()) {
            h.write("x");
            final Captured data = h.expect(PSH_ACK);
            assertEquals(TcpError.NONE, h.tcp.softError(h.conn));
            h.sendIp(PEER, US, 1, IcmpTest.icmpError(3, 1, 0, data));
            assertEquals(TcpError.HOST_UNREACHABLE, h.tcp.softError(h.conn));
            assertEquals(TcpError.NONE, h.tcp.error(h.conn));
            h.assertState(TcpState.ESTABLISHED);
            h.send(ACK.seq(R).ack(L + 1));
            h.assertState(TcpState.ESTABLISHED);
        }
        try (TcpHarness h = TcpHarness.established(TcpHarness.config().maxRetries(2).build(), TcpOptions.DEFAULT)) {
            h.write("x");
            final Captured data = h.expect(PSH_ACK);
            h.sendIp(PEER, US, 1, IcmpTest.icmpError(3, 0, 0, data));
            h.advance(60 * SECOND);
            h.assertState(TcpState.CLOSED);
            assertEquals(TcpError.NET_UNREACHABLE, h.tcp.error(h.conn), "the soft error, when the connection times out");
            assertTrue(h.events.has("closed " + TcpError.NET_UNREACHABLE));
        }
    }

    /** The neighbour cache's state for the peer ("reachable", "probe", "none", ...). */
    private static String peerNeighbour(TcpHarness h) {
        return h.stack.ipv4.neighbours().stateOf(PEER);
    }

    /** Waits for the next retransmission of our one byte of data and takes it. */
    private static void nextRetransmission(TcpHarness h) {
        nextRetransmission(h, L);
    }

    /** Waits for the next retransmission of our one byte of data at {@code seq} and takes it. */
    private static void nextRetransmission(TcpHarness h, int seq) {
        h.advanceUntilSent(60 * SECOND);
        h.expect(PSH_ACK.seq(seq).len(1));
    }

    @Test
    void must20_atR1TcpAdvisesIpAndTheNextHopIsProbedThenResolvedAgain() {
        try (TcpHarness h = TcpHarness.established()) {
            // A byte acknowledged: forward progress confirms the peer's neighbour entry (RFC 4861 §7.3.1; TCP
            // confirms at most once a second per connection).
            h.advance(SECOND);
            h.write("a");
            h.expect(PSH_ACK.seq(L).len(1));
            h.send(ACK.seq(R).ack(L + 1));
            assertEquals("reachable", peerNeighbour(h));
            h.answerArp = false;
            h.write("x");
            h.expect(PSH_ACK.seq(L + 1).len(1));
            nextRetransmission(h, L + 1);
            nextRetransmission(h, L + 1);
            assertEquals(List.of(), h.arpRequests, "below R1 nothing is asked of IP");
            assertEquals("reachable", peerNeighbour(h));
            assertEquals(0, h.counter("tcp.retrans.r1_advice"));

            // The third retransmission of the same segment reaches R1 (3): negative advice, and the next hop (the
            // peer, on-link) is probed at once by a unicast request to the MAC we hold (RFC 1122 §3.3.1.4).
            nextRetransmission(h, L + 1);
            final long r1Ns = h.now();
            assertEquals(1, h.counter("tcp.retrans.r1_advice"));
            assertEquals("probe", peerNeighbour(h));
            assertEquals(List.of(new TcpHarness.ArpRequest(r1Ns, PEER_MAC, PEER)), h.arpRequests);

            // Unanswered, the probes go on a second apart and the entry is forgotten after the third; the
            // retransmission meanwhile still goes to the MAC we hold.
            h.advance(3 * SECOND + 50 * MS);
            h.expect(PSH_ACK.seq(L + 1).len(1));
            assertEquals(3, h.arpRequests.size());
            for (int i = 0; i < 3; i++) {
                final TcpHarness.ArpRequest probe = h.arpRequests.get(i);
                assertEquals(PEER_MAC, probe.destinationMac(), "unicast probe " + i);
                assertEquals(i * SECOND, probe.atNs() - r1Ns, 5 * MS, "probe " + i + " a second after the last");
            }
            assertEquals("none", peerNeighbour(h));
            assertEquals(1, h.counter("tcp.retrans.r1_advice"), "advice once per stall");

            // The next retransmission resolves the peer again by broadcast; the answer lets the segment go.
            h.answerArp = true;
            nextRetransmission(h, L + 1);
            assertEquals(4, h.arpRequests.size());
            assertTrue(h.arpRequests.get(3).broadcast(), "resolved again from scratch: " + h.arpRequests.get(3));
            assertEquals(h.now(), h.arpRequests.get(3).atNs());
            assertEquals("reachable", peerNeighbour(h));
            h.send(ACK.seq(R).ack(L + 2));
            h.assertState(TcpState.ESTABLISHED);
        }
    }

    @Test
    void must20_anActiveOpensSynReachesR1Too() {
        try (TcpHarness h = new TcpHarness(TcpHarness.config().build())) {
            h.connect(TcpOptions.DEFAULT);
            h.expect(SYN.seq(LOCAL_ISS));
            for (int i = 0; i < 3; i++) {
                h.advanceUntilSent(60 * SECOND);
                h.expect(SYN.seq(LOCAL_ISS));
                assertEquals(i < 2 ? 0 : 1, h.counter("tcp.retrans.r1_advice"), "after retransmission " + (i + 1));
            }
            final long r1Ns = h.now();
            assertEquals(TcpError.TIMED_OUT, h.tcp.softError(h.conn));
            assertTrue(h.arpRequests.contains(new TcpHarness.ArpRequest(r1Ns, PEER_MAC, PEER)),
                "a unicast probe with the third SYN retransmission: " + h.arpRequests);
            h.assertState(TcpState.SYN_SENT);
        }
    }

    @Test
    void must20_behindAGatewayTheAdviceProbesTheGateway() {
        try (TcpHarness h = new TcpHarness(TcpHarness.config().build())) {
            // The peer is our gateway to 198.19.0.0/16 (RFC 2544's second test network).
            final int farAway = Ipv4Address.parse("198.19.0.5");
            h.stack.ipv4.defaultGateway(PEER);
            h.conn = h.tcp.connect(farAway, 80, TcpHarness.LOCAL_PORT, TcpOptions.DEFAULT, h.events, h.now());
            h.poll();
            assertEquals(farAway, h.expect(SYN.seq(LOCAL_ISS)).ip().destination(), "sent through the gateway");
            for (int i = 0; i < 3; i++) {
                h.advanceUntilSent(60 * SECOND);
                h.expect(SYN.seq(LOCAL_ISS));
            }
            assertTrue(h.arpRequests.contains(new TcpHarness.ArpRequest(h.now(), PEER_MAC, PEER)),
                "the gateway, the next hop, is probed at R1: " + h.arpRequests);
            assertEquals("none", h.stack.ipv4.neighbours().stateOf(farAway), "no entry for the far address");
        }
    }

    @Test
    void must20_behindAGatewayForwardProgressConfirmsTheGateway() {
        try (TcpHarness h = new TcpHarness(TcpHarness.config().build())) {
            final int farAway = Ipv4Address.parse("198.19.0.5");
            h.stack.ipv4.defaultGateway(PEER);
            h.remoteAddress = farAway;
            h.conn = h.tcp.connect(farAway, 80, TcpHarness.LOCAL_PORT, TcpOptions.DEFAULT, h.events, h.now());
            h.poll();
            h.expect(SYN.seq(LOCAL_ISS));
            h.send(SYN_ACK.mss(1460).seq(REMOTE_ISS).ack(LOCAL_ISS + 1));
            h.expect(ACK.seq(L).ack(R));
            h.advance(SECOND);
            assertEquals("delay", peerNeighbour(h), "the gateway's entry, in use, waits for a confirmation");
            h.write("a");
            h.expect(PSH_ACK.seq(L).len(1));
            h.send(ACK.seq(R).ack(L + 1));
            assertEquals("reachable", peerNeighbour(h), "the ACK of new data confirms the next hop, the gateway");
        }
    }

    @Test
    void shld9_theApplicationIsToldBetweenR1AndR2() {
        try (TcpHarness h = TcpHarness.established()) {
            h.write("x");
            h.expect(PSH_ACK.seq(L).len(1));
            nextRetransmission(h);
            nextRetransmission(h);
            assertEquals(TcpError.NONE, h.tcp.softError(h.conn), "below R1");
            nextRetransmission(h);
            assertEquals(TcpError.TIMED_OUT, h.tcp.softError(h.conn), "at R1, long before R2 (15)");
            assertEquals(TcpError.NONE, h.tcp.error(h.conn));
            h.assertState(TcpState.ESTABLISHED);
            h.send(ACK.seq(R).ack(L + 1));
            assertEquals(TcpError.NONE, h.tcp.softError(h.conn), "new data acknowledged: the path works again");
            h.write("y");
            h.expect(PSH_ACK.seq(L + 1).len(1));
            for (int i = 0; i < 3; i++) {
                nextRetransmission(h, L + 1);
            }
            assertEquals(TcpError.TIMED_OUT, h.tcp.takeSoftError(h.conn), "a second stall reaches R1 again");
            assertEquals(TcpError.NONE, h.tcp.softError(h.conn), "taken: told once, as Linux's SO_ERROR");
        }
        try (TcpHarness h = TcpHarness.established()) {
            h.write("x");
            final Captured data = h.expect(PSH_ACK.seq(L).len(1));
            h.sendIp(PEER, US, 1, IcmpTest.icmpError(3, 1, 0, data));
            nextRetransmission(h);
            nextRetransmission(h);
            nextRetransmission(h);
            assertEquals(TcpError.HOST_UNREACHABLE, h.tcp.softError(h.conn), "an ICMP error said more: it stays");
        }
    }

    @Test
    void shld10_r1IsThreeRetransmissionsByDefaultAndConfigurable() {
        assertEquals(3, TcpConfig.defaults().retries1());
        try (TcpHarness h = TcpHarness.established(TcpHarness.config().retries1(5).build(), TcpOptions.DEFAULT)) {
            h.write("x");
            h.expect(PSH_ACK.seq(L).len(1));
            for (int i = 1; i <= 5; i++) {
                nextRetransmission(h);
                assertEquals(i < 5 ? 0 : 1, h.counter("tcp.retrans.r1_advice"), "after retransmission " + i);
            }
            assertEquals(TcpError.TIMED_OUT, h.tcp.softError(h.conn));
        }
    }
}
