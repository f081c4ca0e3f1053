package dev.tern.tcp.testing;

import dev.tern.tcp.TcpState;
import dev.tern.tcp.wire.TcpFlags;

import static dev.tern.tcp.testing.Seg.ACK;
import static dev.tern.tcp.testing.Seg.FIN_ACK;
import static dev.tern.tcp.testing.TcpHarness.LOCAL_ISS;
import static dev.tern.tcp.testing.TcpHarness.REMOTE_ISS;

/**
 * One harness per synchronized state, each reached through real segments from ESTABLISHED (active open, MSS only).
 * {@link #ourNext} and {@link #peerNext} are SND.NXT and RCV.NXT in that state.
 */
public enum Fixtures {
    ESTABLISHED(TcpState.ESTABLISHED, 1, 1),
    FIN_WAIT_1(TcpState.FIN_WAIT_1, 2, 1),
    FIN_WAIT_2(TcpState.FIN_WAIT_2, 2, 1),
    CLOSING(TcpState.CLOSING, 2, 2),
    TIME_WAIT(TcpState.TIME_WAIT, 2, 2),
    CLOSE_WAIT(TcpState.CLOSE_WAIT, 1, 2),
    LAST_ACK(TcpState.LAST_ACK, 2, 2);

    public final int state;
    public final int ourNext;
    public final int peerNext;
    /** What the peer has acknowledged of ours so far (SND.UNA): our FIN only in FIN-WAIT-2 and TIME-WAIT. */
    public final int peerAcked;

    Fixtures(int state, int ourOffset, int peerOffset) {
        this.state = state;
        this.ourNext = LOCAL_ISS + ourOffset;
        this.peerNext = REMOTE_ISS + peerOffset;
        this.peerAcked = state == TcpState.FIN_WAIT_2 || state == TcpState.TIME_WAIT ? LOCAL_ISS + 2 : LOCAL_ISS + 1;
    }

    /** Whether the peer's FIN has been received here. */
    public boolean peerFinReceived() {
        return peerNext == REMOTE_ISS + 2;
    }

    public TcpHarness reach() {
        final TcpHarness h = TcpHarness.established();
        switch (this) {
            case ESTABLISHED -> {
            }
            case FIN_WAIT_1 -> finWait1(h);
            case FIN_WAIT_2 -> {
                finWait1(h);
                h.send(ACK.seq(REMOTE_ISS + 1).ack(LOCAL_ISS + 2));
                h.expectNothing();
            }
            case CLOSING -> {
                finWait1(h);
                h.send(FIN_ACK.seq(REMOTE_ISS + 1).ack(LOCAL_ISS + 1));
                h.expect(ACK.seq(LOCAL_ISS + 2).ack(REMOTE_ISS + 2));
            }
            case TIME_WAIT -> {
                finWait1(h);
                h.send(ACK.seq(REMOTE_ISS + 1).ack(LOCAL_ISS + 2));
                h.send(FIN_ACK.seq(REMOTE_ISS + 1).ack(LOCAL_ISS + 2));
                h.expect(ACK.seq(LOCAL_ISS + 2).ack(REMOTE_ISS + 2));
            }
            case CLOSE_WAIT -> closeWait(h);
            case LAST_ACK -> {
                closeWait(h);
                h.tcp.shutdownOutput(h.conn, h.now());
                h.poll();
                h.expect(FIN_ACK.seq(LOCAL_ISS + 1).ack(REMOTE_ISS + 2));
            }
            default -> throw new IllegalStateException();
        }
        h.assertState(state);
        h.expectNothing();
        return h;
    }

    private static void finWait1(TcpHarness h) {
        h.tcp.shutdownOutput(h.conn, h.now());
        h.poll();
        h.expect(FIN_ACK.seq(LOCAL_ISS + 1).ack(REMOTE_ISS + 1));
    }

    private static void closeWait(TcpHarness h) {
        h.send(Seg.SEG.flags(TcpFlags.FIN | TcpFlags.ACK).seq(REMOTE_ISS + 1).ack(LOCAL_ISS + 1));
        h.expect(ACK.seq(LOCAL_ISS + 1).ack(REMOTE_ISS + 2));
    }
}
