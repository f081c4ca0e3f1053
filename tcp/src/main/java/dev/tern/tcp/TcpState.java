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

    private TcpState() {
    }

    public static String name(int state) {
        return state >= 0 && state < NAMES.length ? NAMES[state] : "state " + state;
    }

    /** RFC 9293 §3.3.2: the states after the handshake, where both sequence numbers are known. */
    public static boolean isSynchronized(int state) {
        return state >= SYN_RECEIVED;
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
