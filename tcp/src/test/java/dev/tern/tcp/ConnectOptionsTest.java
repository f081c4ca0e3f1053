package dev.tern.tcp;

import dev.tern.tcp.testing.Seg;
import dev.tern.tcp.testing.TcpHarness;
import org.junit.jupiter.api.Test;

import static dev.tern.tcp.testing.FrameCheck.flags;
import static dev.tern.tcp.testing.FrameCheck.noOptions;
import static dev.tern.tcp.testing.FrameCheck.timestamp;
import static dev.tern.tcp.testing.FrameCheck.windowScale;
import static dev.tern.tcp.wire.TcpFlags.ACK;
import static dev.tern.tcp.wire.TcpFlags.SYN;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * FreeBSD's two connect options, as Tern has them: a SYN without any option (TCP_NOOPT, {@link TcpOptions#noOptions})
 * and a time limit on the attempt (TCP_KEEPINIT, {@link TcpOptions#connectTimeoutMs} and the settings' default
 * {@link TcpConfig#connectTimeoutNs}).
 */
class ConnectOptionsTest {
    @Test
    void aSynWithoutOptionsOffersNothingAndTheConnectionUsesNothing() {
        try (TcpHarness h = new TcpHarness(TcpHarness.config().build())) {
            h.connect(TcpOptions.DEFAULT.withNoOptions(true));
            h.expect(flags(SYN), noOptions());
            // The peer's SYN-ACK offers everything; none of it may be used, since Tern's SYN offered none.
            h.send(Seg.SYN_ACK.seq(TcpHarness.REMOTE_ISS).ack(TcpHarness.LOCAL_ISS + 1).mss(1460).wscale(7)
                .sackOk().ts(1, 0));
            h.assertState(TcpState.ESTABLISHED);
            h.expect(flags(ACK), noOptions(), timestamp(false));
            final TcpInfo info = h.tcp.info(h.conn);
            assertFalse(info.timestamps(), "no timestamps");
            assertFalse(info.sack(), "no SACK");
            assertEquals(0, info.sndScale(), "the peer's window is not scaled");
            assertEquals(0, info.rcvScale(), "nor ours");
        }
    }

    @Test
    void byDefaultTheSynOffersItsOptions() {
        try (TcpHarness h = new TcpHarness(TcpHarness.config().build())) {
            h.connect(TcpOptions.DEFAULT);
            h.expect(flags(SYN), timestamp(true), windowScale(h.tcp.info(h.conn).rcvScale()));
        }
    }

    @Test
    void aConnectTimeoutEndsTheAttemptWhateverRetriesRemain() {
        try (TcpHarness h = new TcpHarness(TcpHarness.config().synRetries(6).build())) {
            h.connect(TcpOptions.DEFAULT.withConnectTimeout(5000));
            // SYNs at 0, 1 and 3 s; the next would go at 7 s, after the 5 s limit.
            h.advance(4 * TcpHarness.SECOND + TcpHarness.SECOND / 2);
            h.assertState(TcpState.SYN_SENT);
            h.advance(TcpHarness.SECOND);
            h.assertState(TcpState.CLOSED);
            assertEquals(TcpError.TIMED_OUT, h.tcp.error(h.conn));
            assertEquals(1, h.counter("tcp.conn.connect_timeouts"));
        }
    }

    @Test
    void theSettingsDefaultTimesOutEveryAttemptAndAHandshakeInTimeIsUntouched() {
        try (TcpHarness h = new TcpHarness(TcpHarness.config().connectTimeoutNs(2 * TcpHarness.SECOND).build())) {
            h.connect(TcpOptions.DEFAULT);
            h.advance(TcpHarness.SECOND + TcpHarness.SECOND / 2);
            h.send(Seg.SYN_ACK.seq(TcpHarness.REMOTE_ISS).ack(TcpHarness.LOCAL_ISS + 1));
            h.assertState(TcpState.ESTABLISHED);
            h.advance(5 * TcpHarness.SECOND);
            h.assertState(TcpState.ESTABLISHED);
            assertEquals(0, h.counter("tcp.conn.connect_timeouts"));
        }
        assertThrows(IllegalArgumentException.class, () -> TcpConfig.builder().connectTimeoutNs(-1));
        assertThrows(IllegalArgumentException.class, () -> TcpOptions.DEFAULT.withConnectTimeout(-1));
    }
}
