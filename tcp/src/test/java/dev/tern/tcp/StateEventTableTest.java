package dev.tern.tcp;

import dev.tern.tcp.testing.Fixtures;
import dev.tern.tcp.testing.Seg;
import dev.tern.tcp.testing.TcpHarness;
import dev.tern.tcp.wire.TcpFlags;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import static dev.tern.tcp.testing.Seg.ACK;
import static dev.tern.tcp.testing.Seg.SEG;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Every synchronized state against every kind of segment (RFC 9293 §3.10.7.4 with RFC 5961): what is sent back,
 * the state after, and the error reported. Each state is reached through real segments ({@link Fixtures}).
 */
class StateEventTableTest {
    enum Event {
        RST_AT_RCV_NXT, RST_IN_WINDOW, RST_OUT_OF_WINDOW, SYN_IN_WINDOW, SYN_OUT_OF_WINDOW, ACK_OF_UNSENT_DATA,
        ACK_TOO_OLD, DATA_IN_WINDOW, OLD_DUPLICATE_DATA, FIN, RETRANSMITTED_FIN, DATA_WITHOUT_ACK
    }

    /** What the peer sends for an event, in a state. */
    static Seg segment(Fixtures f, Event e) {
        final int seq = f.peerNext;
        final int ack = f.peerAcked;
        return switch (e) {
            case RST_AT_RCV_NXT -> Seg.RST.seq(seq);
            case RST_IN_WINDOW -> Seg.RST.seq(seq + 10);
            case RST_OUT_OF_WINDOW -> Seg.RST.seq(seq + 100_000);
            case SYN_IN_WINDOW -> Seg.SYN.seq(seq + 5);
            case SYN_OUT_OF_WINDOW -> Seg.SYN.seq(seq - 100_000);
            case ACK_OF_UNSENT_DATA -> ACK.seq(seq).ack(f.ourNext + 1000);
            case ACK_TOO_OLD -> ACK.seq(seq).ack(ack - 200_000);
            case DATA_IN_WINDOW -> ACK.seq(seq).ack(ack).payload("xyz");
            case OLD_DUPLICATE_DATA -> ACK.seq(seq - 3 - (f.peerFinReceived() ? 1 : 0)).ack(ack).payload("old");
            case FIN -> Seg.FIN_ACK.seq(seq).ack(ack);
            case RETRANSMITTED_FIN -> Seg.FIN_ACK.seq(f.peerFinReceived() ? seq - 1 : seq).ack(ack);
            case DATA_WITHOUT_ACK -> SEG.flags(TcpFlags.PSH).seq(seq).payload("xyz");
        };
    }

    record Outcome(Seg reply, int state, int error) {
    }

    /** The expected reply (null: nothing), state and error. */
    static Outcome expected(Fixtures f, Event e) {
        final Seg ack = ACK.seq(f.ourNext).ack(f.peerNext).len(0);
        final boolean canReceive = TcpState.canReceive(f.state);
        return switch (e) {
            case RST_AT_RCV_NXT -> switch (f) {
                case ESTABLISHED, FIN_WAIT_1, FIN_WAIT_2, CLOSE_WAIT -> new Outcome(null, TcpState.CLOSED, TcpError.RESET);
                // Linux's and FreeBSD's ECONNRESET, where RFC 9293 gives no signal (TCP.md).
                case CLOSING, LAST_ACK -> new Outcome(null, TcpState.CLOSED, TcpError.RESET);
                case TIME_WAIT -> new Outcome(null, TcpState.TIME_WAIT, TcpError.NONE); // RFC 1337
            };
            case RST_IN_WINDOW, SYN_IN_WINDOW, SYN_OUT_OF_WINDOW, ACK_OF_UNSENT_DATA, ACK_TOO_OLD, OLD_DUPLICATE_DATA ->
                new Outcome(ack, f.state, TcpError.NONE);
            case RST_OUT_OF_WINDOW, DATA_WITHOUT_ACK -> new Outcome(null, f.state, TcpError.NONE);
            // TIME-WAIT answers all but a bare ACK at RCV.NXT, as Linux and FreeBSD (TCP.md): the FIN as RFC 9293's
            // eighth step says, the ignored text too.
            case DATA_IN_WINDOW -> canReceive
                ? new Outcome(ACK.seq(f.ourNext).ack(f.peerNext + 3).len(0), f.state, TcpError.NONE)
                : new Outcome(f == Fixtures.TIME_WAIT ? ack : null, f.state, TcpError.NONE);
            case FIN, RETRANSMITTED_FIN -> switch (f) {
                case ESTABLISHED -> new Outcome(ACK.seq(f.ourNext).ack(f.peerNext + 1), TcpState.CLOSE_WAIT, 0);
                case FIN_WAIT_1 -> new Outcome(ACK.seq(f.ourNext).ack(f.peerNext + 1), TcpState.CLOSING, 0);
                case FIN_WAIT_2 -> new Outcome(ACK.seq(f.ourNext).ack(f.peerNext + 1), TcpState.TIME_WAIT, 0);
                default -> e == Event.RETRANSMITTED_FIN || f == Fixtures.TIME_WAIT ? new Outcome(ack, f.state, 0)
                    : new Outcome(null, f.state, 0);
            };
        };
    }

    static Stream<Arguments> table() {
        final List<Arguments> rows = new ArrayList<>();
        for (Fixtures f : Fixtures.values()) {
            for (Event e : Event.values()) {
                rows.add(Arguments.of(f, e));
            }
        }
        return rows.stream();
    }

    @ParameterizedTest(name = "{0} + {1}")
    @MethodSource("table")
    void eachStateAnswersEachSegmentAsTheRfcsSay(Fixtures f, Event e) {
        try (TcpHarness h = f.reach()) {
            final Outcome outcome = expected(f, e);
            h.send(segment(f, e));
            if (outcome.reply() == null) {
                h.expectNothing();
            } else {
                h.expect(outcome.reply());
                h.expectNothing();
            }
            assertEquals(TcpState.name(outcome.state()), TcpState.name(h.tcp.state(h.conn)), "state after");
            assertEquals(outcome.error(), h.tcp.error(h.conn), "error");
            assertEquals(0, h.counter("stack.internal_errors"));
        }
    }

    @ParameterizedTest
    @EnumSource(Fixtures.class)
    void eachFixtureHoldsTheSequenceNumbersItsTransitionsImply(Fixtures f) {
        try (TcpHarness h = f.reach()) {
            final TcpInfo info = h.tcp.info(h.conn);
            assertEquals(f.ourNext, info.sndNxt(), "SND.NXT");
            assertEquals(f.peerNext, info.rcvNxt(), "RCV.NXT");
            assertEquals(TcpState.name(f.state), TcpState.name(info.state()));
        }
    }
}
