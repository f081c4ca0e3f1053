package dev.tern.tcp;

import dev.tern.core.checksum.InternetChecksum;
import dev.tern.tcp.testing.Captured;
import dev.tern.tcp.testing.TcpHarness;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;

import static dev.tern.tcp.testing.Seg.ACK;
import static dev.tern.tcp.testing.Seg.PSH_ACK;
import static dev.tern.tcp.testing.Seg.SYN;
import static dev.tern.tcp.testing.TcpHarness.LOCAL_ISS;
import static dev.tern.tcp.testing.TcpHarness.PEER;
import static dev.tern.tcp.testing.TcpHarness.REMOTE_ISS;
import static dev.tern.tcp.testing.TcpHarness.US;
import static dev.tern.tcp.testing.TcpHarness.bytes;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** ICMP errors about our segments (RFC 1122 §4.2.3.9, RFC 5927, RFC 1191). */
class IcmpTest {
    static final int L = LOCAL_ISS + 1;
    static final int R = REMOTE_ISS + 1;

    /** An ICMP error from the peer quoting the IP header and first 8 bytes of {@code about}. */
    static byte[] icmpError(int type, int code, int nextHopMtu, Captured about) {
        return icmpError(type, code, nextHopMtu, about, about.tcp().seq());
    }

    /** The same, quoting {@code seq} as the segment's sequence number. */
    static byte[] icmpError(int type, int code, int nextHopMtu, Captured about, int seq) {
        final byte[] quote = new byte[28];
        final var ip = new dev.tern.ipv4.wire.Ipv4Header().wrap(MemorySegment.ofArray(quote), 0, 28);
        about.ip().emit(ip);
        final var tcp = MemorySegment.ofArray(quote);
        dev.tern.core.memory.BigEndian.u16(tcp, 20, about.tcp().sourcePort());
        dev.tern.core.memory.BigEndian.u16(tcp, 22, about.tcp().destinationPort());
        dev.tern.core.memory.BigEndian.i32(tcp, 24, seq);
        final byte[] message = new byte[8 + quote.length];
        message[0] = (byte) type;
        message[1] = (byte) code;
        message[6] = (byte) (nextHopMtu >>> 8);
        message[7] = (byte) nextHopMtu;
        System.arraycopy(quote, 0, message, 8, quote.length);
        final int checksum = InternetChecksum.compute(MemorySegment.ofArray(message), 0, message.length);
        message[2] = (byte) (checksum >>> 8);
        message[3] = (byte) checksum;
        return message;
    }

    @Test
    void portUnreachableWhileConnectingIsConnectionRefused() {
        try (TcpHarness h = new TcpHarness(TcpHarness.config().build())) {
            h.connect(TcpOptions.DEFAULT);
            final Captured syn = h.expect(SYN);
            h.sendIp(PEER, US, 1, icmpError(3, 3, 0, syn));
            h.assertState(TcpState.CLOSED);
            assertEquals(TcpError.REFUSED, h.tcp.error(h.conn));
        }
    }

    @Test
    void hostUnreachableWhileConnectingEndsTheAttempt() {
        try (TcpHarness h = new TcpHarness(TcpHarness.config().build())) {
            h.connect(TcpOptions.DEFAULT);
            final Captured syn = h.expect(SYN);
            h.sendIp(PEER, US, 1, icmpError(3, 1, 0, syn));
            assertEquals(TcpError.HOST_UNREACHABLE, h.tcp.error(h.conn));
        }
    }

    @Test
    void anErrorQuotingSndNxtWhileConnectingIsIgnored() {
        try (TcpHarness h = new TcpHarness(TcpHarness.config().build())) {
            h.connect(TcpOptions.DEFAULT);
            final Captured syn = h.expect(SYN);
            // RFC 5927 §4.1: SND.UNA =< SEG.SEQ < SND.NXT; the SYN is ISS, nothing was sent at ISS + 1.
            h.sendIp(PEER, US, 1, icmpError(3, 3, 0, syn, LOCAL_ISS + 1));
            h.assertState(TcpState.SYN_SENT);
            assertEquals(0, h.counter("tcp.icmp_errors"));
            h.sendIp(PEER, US, 1, icmpError(3, 3, 0, syn, LOCAL_ISS));
            assertEquals(TcpError.REFUSED, h.tcp.error(h.conn));
        }
    }

    @Test
    void anErrorQuotingSndNxtOfAConnectionWithNothingInFlightIsIgnored() {
        try (TcpHarness h = TcpHarness.established()) {
            final Captured ack = h.all.getLast();
            assertEquals(L, ack.tcp().seq());
            h.sendIp(PEER, US, 1, icmpError(3, 1, 0, ack));
            assertEquals(0, h.counter("tcp.icmp_errors"));
            assertEquals(TcpError.NONE, h.tcp.softError(h.conn));
        }
    }

    @Test
    void anErrorQuotingASequenceNumberOutsideTheFlightIsIgnored() {
        try (TcpHarness h = TcpHarness.established()) {
            h.write("x");
            final Captured data = h.expect(PSH_ACK);
            h.send(ACK.seq(R).ack(L + 1));
            h.sendIp(PEER, US, 1, icmpError(3, 3, 0, data));
            h.assertState(TcpState.ESTABLISHED);
            assertEquals(0, h.counter("tcp.icmp_errors"));
        }
    }

    @Test
    void unreachableOnAnEstablishedConnectionIsOnlyASoftError() {
        try (TcpHarness h = TcpHarness.established()) {
            h.write("x");
            final Captured data = h.expect(PSH_ACK);
            h.sendIp(PEER, US, 1, icmpError(3, 1, 0, data));
            h.assertState(TcpState.ESTABLISHED);
            assertEquals(1, h.counter("tcp.icmp_errors"));
        }
    }

    @Test
    void fragmentationNeededLowersTheMssAndResendsAtOnce() {
        try (TcpHarness h = TcpHarness.established()) {
            h.write(bytes(1460));
            final Captured big = h.expect(PSH_ACK.seq(L).len(1460));
            h.sendIp(PEER, US, 1, icmpError(3, 4, 1000, big));
            assertEquals(960, h.tcp.mss(h.conn));
            h.expect(ACK.seq(L).len(960));
            h.expect(PSH_ACK.seq(L + 960).len(500));
            assertTrue(h.counter("tcp.pmtu_updates") >= 1);
        }
    }

    @Test
    void theMssOfANewConnectionFollowsTheLearnedPathMtu() {
        try (TcpHarness h = TcpHarness.established()) {
            h.write(bytes(1460));
            final Captured big = h.expect(PSH_ACK.seq(L).len(1460));
            h.sendIp(PEER, US, 1, icmpError(3, 4, 1000, big));
            h.clearReceived();
            final int second = h.tcp.connect(PEER, 81, 0, TcpOptions.DEFAULT, h.events, h.now());
            assertTrue(second >= 0);
            h.poll();
            h.expect(SYN.mss(960));
        }
    }
}
