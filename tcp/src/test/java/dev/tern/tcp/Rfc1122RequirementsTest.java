package dev.tern.tcp;

import dev.tern.core.checksum.InternetChecksum;
import dev.tern.ipv4.Ipv4Config;
import dev.tern.tcp.testing.TcpHarness;
import dev.tern.tcp.wire.TcpFlags;
import dev.tern.tcp.wire.TcpHeader;
import dev.tern.tcp.wire.TcpRepr;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;

import static dev.tern.tcp.testing.Seg.SYN_ACK;
import static dev.tern.tcp.testing.TcpHarness.LOCAL_ISS;
import static dev.tern.tcp.testing.TcpHarness.PEER;
import static dev.tern.tcp.testing.TcpHarness.REMOTE_ISS;
import static dev.tern.tcp.testing.TcpHarness.US;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * RFC 1122 IP-layer requirements that no other test covered, one test per row of {@code docs/RFC1122.md}, named after
 * its ID there ({@link Rfc9293TableTest} checks that table too).
 */
class Rfc1122RequirementsTest {

    @Test
    void ip8_aTtlOfZeroCannotBeConfigured() {
        final Ipv4Config d = Ipv4Config.DEFAULT;
        assertThrows(IllegalArgumentException.class, () -> new Ipv4Config(0, d.reassemblySlots(),
            d.reassemblyTimeoutNs(), d.maxFragmentsPerDatagram(), d.icmpErrorsPerSecond(), d.icmpErrorBurst(),
            d.pathMtuEntries(), d.pathMtuTimeoutNs(), d.minPathMtu(), d.echoIgnoreBroadcasts(),
            d.icmpPeerIntervalNs(), d.icmpPeerBurst(), d.icmpPeerEntries(), d.identificationKey0(),
            d.identificationKey1()));
        assertEquals(64, d.defaultTtl());
    }

    @Test
    void ip9_aSynWithTtlOneIsAnswered() {
        try (TcpHarness h = new TcpHarness(TcpHarness.config().build())) {
            h.localPort = TcpHarness.LISTEN_PORT;
            h.remotePort = TcpHarness.PEER_CLIENT_PORT;
            h.listener = h.tcp.listen(TcpHarness.LISTEN_PORT, 4, h.events);
            final byte[] syn = new byte[TcpHeader.MIN_LENGTH];
            final TcpHeader header = new TcpHeader().wrap(MemorySegment.ofArray(syn), 0, syn.length);
            header.write(h.remotePort, h.localPort, REMOTE_ISS, 0, TcpHeader.MIN_LENGTH, TcpFlags.SYN, 65535);
            TcpRepr.fillChecksum(header, PEER, US, syn.length);
            h.sendIp(PEER, US, 6, 1, syn);
            h.expect(SYN_ACK.seq(LOCAL_ISS).ack(REMOTE_ISS + 1));
        }
    }

    @Test
    void icmp1_anUnknownIcmpTypeIsDiscardedSilently() {
        try (TcpHarness h = TcpHarness.established()) {
            final long before = h.counter("icmp.rx.other_types");
            final byte[] message = new byte[16];
            message[0] = (byte) 99;
            final int checksum = InternetChecksum.compute(MemorySegment.ofArray(message), 0, message.length);
            message[2] = (byte) (checksum >>> 8);
            message[3] = (byte) checksum;
            h.sendIp(PEER, US, 1, message);
            h.expectNothing();
            h.assertState(TcpState.ESTABLISHED);
            assertEquals(before + 1, h.counter("icmp.rx.other_types"));
        }
    }
}
