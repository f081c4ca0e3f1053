package dev.tern.tcp;

import dev.tern.tcp.testing.TcpHarness;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Field;

import static dev.tern.tcp.TcpState.CLOSED;
import static dev.tern.tcp.TcpState.CLOSE_WAIT;
import static dev.tern.tcp.TcpState.CLOSING;
import static dev.tern.tcp.TcpState.ESTABLISHED;
import static dev.tern.tcp.TcpState.FIN_WAIT_1;
import static dev.tern.tcp.TcpState.FIN_WAIT_2;
import static dev.tern.tcp.TcpState.LAST_ACK;
import static dev.tern.tcp.TcpState.LISTEN;
import static dev.tern.tcp.TcpState.SYN_RECEIVED;
import static dev.tern.tcp.TcpState.SYN_SENT;
import static dev.tern.tcp.TcpState.TIME_WAIT;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The one state transition checks each move against RFC 9293 §3.3.2's state diagram ({@link TcpState#mayMove}): a
 * move the diagram does not have is a bug in the stack and is refused. Every move the other suites make passes the
 * same check, since each of them goes through it.
 */
class StateTransitionTest {
    @Test
    void everyMoveOfTheStateDiagramIsAllowed() {
        final int[][] diagram = {
            {CLOSED, LISTEN}, {CLOSED, SYN_SENT}, {LISTEN, SYN_RECEIVED}, {LISTEN, SYN_SENT}, {LISTEN, CLOSED},
            {SYN_SENT, SYN_RECEIVED}, {SYN_SENT, ESTABLISHED}, {SYN_SENT, CLOSED}, {SYN_RECEIVED, ESTABLISHED},
            {SYN_RECEIVED, FIN_WAIT_1}, {SYN_RECEIVED, LISTEN}, {ESTABLISHED, FIN_WAIT_1}, {ESTABLISHED, CLOSE_WAIT},
            {FIN_WAIT_1, FIN_WAIT_2}, {FIN_WAIT_1, CLOSING}, {FIN_WAIT_2, TIME_WAIT}, {CLOSING, TIME_WAIT},
            {CLOSE_WAIT, LAST_ACK}, {LAST_ACK, CLOSED}, {TIME_WAIT, CLOSED}};
        for (int[] move : diagram) {
            assertTrue(TcpState.mayMove(move[0], move[1]), TcpState.name(move[0]) + " -> " + TcpState.name(move[1]));
        }
        for (int state = CLOSED; state <= TIME_WAIT; state++) {
            assertTrue(TcpState.mayMove(state, CLOSED), "abort from " + TcpState.name(state));
        }
    }

    /**
     * The stack's own ways of walking the diagram: a passive row starts at CLOSED (it stands for its listener's
     * LISTEN), an owner may shut a connection down while it connects, and the handshake's last ACK may carry a FIN.
     */
    @Test
    void theMovesTheStackMakesBesideTheDiagramAreAllowed() {
        final int[][] stack = {{CLOSED, SYN_RECEIVED}, {SYN_SENT, FIN_WAIT_1}, {SYN_RECEIVED, CLOSE_WAIT}};
        for (int[] move : stack) {
            assertTrue(TcpState.mayMove(move[0], move[1]), TcpState.name(move[0]) + " -> " + TcpState.name(move[1]));
        }
    }

    @Test
    void movesTheDiagramDoesNotHaveAreRefused() {
        final int[][] illegal = {
            {CLOSED, ESTABLISHED}, {ESTABLISHED, SYN_SENT}, {ESTABLISHED, TIME_WAIT}, {ESTABLISHED, LAST_ACK},
            {FIN_WAIT_2, FIN_WAIT_1}, {CLOSE_WAIT, FIN_WAIT_1}, {LAST_ACK, TIME_WAIT}, {TIME_WAIT, ESTABLISHED},
            {CLOSING, FIN_WAIT_2}, {SYN_SENT, CLOSE_WAIT}, {ESTABLISHED, ESTABLISHED}, {TIME_WAIT, TIME_WAIT}};
        for (int[] move : illegal) {
            assertFalse(TcpState.mayMove(move[0], move[1]), TcpState.name(move[0]) + " -> " + TcpState.name(move[1]));
        }
        assertFalse(TcpState.mayMove(-1, CLOSED));
        assertFalse(TcpState.mayMove(ESTABLISHED, 11));
    }

    @Test
    void anIllegalTransitionThrowsNamingBothStatesAndChangesNothing() throws ReflectiveOperationException {
        try (TcpHarness h = TcpHarness.established()) {
            final Field field = TcpLayer.class.getDeclaredField("lifecycle");
            field.setAccessible(true);
            final ConnectionLifecycle lifecycle = (ConnectionLifecycle) field.get(h.tcp);
            final int c = h.conn & TcpControlBlocks.SLOT_MASK;
            final IllegalStateException refused = assertThrows(IllegalStateException.class,
                () -> lifecycle.transition(c, SYN_SENT, h.now()));
            assertTrue(refused.getMessage().contains("ESTABLISHED -> SYN-SENT"), refused.getMessage());
            h.assertState(ESTABLISHED);
        }
    }
}
