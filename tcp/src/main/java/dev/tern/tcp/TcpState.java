package dev.tern.tcp;

/** The connection states of RFC 9293 §3.3.2, as int constants (stored in the TCB table), plus {@link #name(int)}. */
public final class TcpState {
    public static final int CLOSED = 0;
    public static final int LISTEN = 1;
    public static final int SYN_SENT = 2;
    public static final int SYN_RECEIVED = 3;
    public static final int ESTABLISHED = 4;
    public static final int FIN_WAIT_1 = 5;
    public static final int FIN_WAIT_2 = 6;
    public static final int CLOSE_WAIT = 7;
    public static final int CLOSING = 8;
    public static final int LAST_ACK = 9;
    public static final int TIME_WAIT = 10;

    private static final String[] NAMES = {"CLOSED", "LISTEN", "SYN-SENT", "SYN-RECEIVED", "ESTABLISHED",
        "FIN-WAIT-1", "FIN-WAIT-2", "CLOSE-WAIT", "CLOSING", "LAST-ACK", "TIME-WAIT"};

    /**
     * The moves each state may make, one bit per state it may move to: RFC 9293 §3.3.2's state diagram, with the
     * stack's own ways of walking it. A row stands for its listener's LISTEN until the SYN arrives, so a passive
     * connection starts with CLOSED to SYN-RECEIVED. Any state may end in CLOSED (ABORT, a reset, a timeout; CLOSED
     * again when a closed connection is aborted). SYN-SENT and SYN-RECEIVED may go straight to FIN-WAIT-1 when the
     * owner shut down while connecting, SYN-RECEIVED to CLOSE-WAIT when the handshake's last ACK carries the FIN
     * (§3.10.7.4, eighth check). The diagram's own moves stay allowed where the stack walks them another way today:
     * LISTEN's row, SYN-RECEIVED back to LISTEN, and FIN-WAIT-1 to TIME-WAIT (the stack passes FIN-WAIT-2 on the way
     * within one segment).
     */
    private static final int[] NEXT = new int[NAMES.length];

    static {
        allow(CLOSED, CLOSED, LISTEN, SYN_SENT, SYN_RECEIVED);
        allow(LISTEN, CLOSED, SYN_SENT, SYN_RECEIVED);
        allow(SYN_SENT, CLOSED, SYN_RECEIVED, ESTABLISHED, FIN_WAIT_1);
        allow(SYN_RECEIVED, CLOSED, LISTEN, ESTABLISHED, FIN_WAIT_1, CLOSE_WAIT);
        allow(ESTABLISHED, CLOSED, FIN_WAIT_1, CLOSE_WAIT);
        allow(FIN_WAIT_1, CLOSED, FIN_WAIT_2, CLOSING, TIME_WAIT);
        allow(FIN_WAIT_2, CLOSED, TIME_WAIT);
        allow(CLOSE_WAIT, CLOSED, LAST_ACK);
        allow(CLOSING, CLOSED, TIME_WAIT);
        allow(LAST_ACK, CLOSED);
        allow(TIME_WAIT, CLOSED);
    }

    private static void allow(int from, int... to) {
        for (int state : to) {
            NEXT[from] |= 1 << state;
        }
    }

    private TcpState() {
    }

    /** Whether a connection in {@code from} may move to {@code to} (the table above); false for unknown states. */
    public static boolean mayMove(int from, int to) {
        return from >= 0 && from < NEXT.length && to >= 0 && to < NEXT.length && (NEXT[from] & (1 << to)) != 0;
    }

    public static String name(int state) {
        return state >= 0 && state < NAMES.length ? NAMES[state] : "state " + state;
    }

    /** RFC 9293 §3.3.2: the states after the handshake, where both sequence numbers are known. */
    public static boolean isSynchronized(int state) {
        return state >= SYN_RECEIVED;
    }

    /** Everything we send, our FIN included, is acknowledged, or the connection is gone. */
    public static boolean outputAcknowledged(int state) {
        return state == FIN_WAIT_2 || state == TIME_WAIT || state == CLOSED;
    }

    /** The peer's FIN has arrived (or the connection is gone): no more data comes. */
    public static boolean finReceived(int state) {
        return state == CLOSE_WAIT || state == CLOSING || state == LAST_ACK || state == TIME_WAIT || state == CLOSED;
    }

    /** States in which we may still send data (our FIN not yet queued). */
    public static boolean canSend(int state) {
        return state == ESTABLISHED || state == CLOSE_WAIT;
    }

    /** States in which data from the peer is still accepted (its FIN not yet received). */
    public static boolean canReceive(int state) {
        return state == ESTABLISHED || state == FIN_WAIT_1 || state == FIN_WAIT_2;
    }
}
