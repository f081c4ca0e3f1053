package dev.tern.tcp;

/**
 * The kinds of deadline a connection keeps (RFC 9293 §3.8), each with its own field in the row and its bit in the
 * row's {@code timers} word ({@code T_*} of {@link TcpControlBlocks}): {@link TcpTimers#arm} switches over them
 * exhaustively, so a new kind does not compile until it has a deadline field.
 */
enum TimerKind {
    /** The sender's timer: SYN, retransmission, persist, tail loss probe or reordering (its kind in the row). */
    SENDER,
    /** RFC 9293 §3.8.6.3: the delayed ACK. */
    DELAYED_ACK,
    /** RFC 9293 §3.8.4: the keepalive probe. */
    KEEPALIVE,
    /** TIME-WAIT's 2 MSL, or an orphan's FIN-WAIT-2 timeout. */
    STATE,
    /** The pacer holds the next segment until then. */
    PACE
}
