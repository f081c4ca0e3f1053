package dev.tern.tcp;

import dev.tern.tcp.testing.Seg;
import dev.tern.tcp.testing.TcpHarness;
import dev.tern.tcp.wire.TcpFlags;
import org.junit.jupiter.api.Test;

import static dev.tern.tcp.testing.Seg.ACK;
import static dev.tern.tcp.testing.Seg.SYN;
import static dev.tern.tcp.testing.Seg.SYN_ACK;
import static dev.tern.tcp.testing.TcpHarness.LOCAL_ISS;
import static dev.tern.tcp.testing.TcpHarness.REMOTE_ISS;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

/** Text on a SYN-ACK in SYN-SENT (RFC 9293 §3.10.7.3), under each {@link TcpConfig.SynSentText}. */
class SynSentTextTest {
    private static TcpHarness connecting(TcpConfig.SynSentText policy) {
        final TcpHarness h = new TcpHarness(TcpHarness.config().synSentText(policy).build());
        h.connect(TcpOptions.DEFAULT);
        h.expect(SYN.seq(LOCAL_ISS));
        return h;
    }

    @Test
    void byDefaultAPlainConnectAcknowledgesTheSynOnlyAsLinux() {
        try (TcpHarness h = connecting(TcpConfig.SynSentText.FAST_OPEN_ONLY)) {
            h.send(SYN_ACK.seq(REMOTE_ISS).ack(LOCAL_ISS + 1).mss(1460).payload("abc"));
            h.expect(ACK.seq(LOCAL_ISS + 1).ack(REMOTE_ISS + 1).len(0));
            h.assertState(TcpState.ESTABLISHED);
            assertEquals(0, h.readable());
            assertEquals(1, h.counter("tcp.drop.syn_data"));
        }
    }

    @Test
    void alwaysTakesTheTextAfterTheSynsNumber() {
        try (TcpHarness h = connecting(TcpConfig.SynSentText.ALWAYS)) {
            h.send(SYN_ACK.seq(REMOTE_ISS).ack(LOCAL_ISS + 1).mss(1460).payload("abc"));
            h.expect(ACK.seq(LOCAL_ISS + 1).ack(REMOTE_ISS + 4).len(0));
            h.expectNothing();
            h.assertState(TcpState.ESTABLISHED);
            assertArrayEquals("abc".getBytes(), h.read());
            assertEquals(0, h.counter("tcp.drop.syn_data"));
        }
    }

    @Test
    void alwaysTakesAFinOnTheSynAckToo() {
        try (TcpHarness h = connecting(TcpConfig.SynSentText.ALWAYS)) {
            h.send(SYN_ACK.flags(TcpFlags.SYN | TcpFlags.ACK | TcpFlags.FIN).seq(REMOTE_ISS).ack(LOCAL_ISS + 1)
                .mss(1460).payload("abc"));
            h.expect(ACK.seq(LOCAL_ISS + 1).ack(REMOTE_ISS + 5).len(0));
            h.assertState(TcpState.CLOSE_WAIT);
        }
    }

    @Test
    void aFastOpenConnectTakesTheTextUnderEitherSetting() {
        try (TcpHarness h = new TcpHarness(TcpHarness.config().build())) {
            h.connect(TcpOptions.DEFAULT.withFastOpen(true));
            h.expect(SYN.seq(LOCAL_ISS));
            h.send(SYN_ACK.seq(REMOTE_ISS).ack(LOCAL_ISS + 1).mss(1460).payload("abc"));
            h.expect(Seg.ACK.seq(LOCAL_ISS + 1).ack(REMOTE_ISS + 4).len(0));
            assertArrayEquals("abc".getBytes(), h.read());
        }
    }
}
