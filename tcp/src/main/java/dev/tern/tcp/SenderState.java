package dev.tern.tcp;

/**
 * The sender's state in a connection's row: {@code senderState} (RFC 6675 §5 and RFC 5681 §3.1's phases, as Linux's
 * ca_state) and the {@code senderFlags} bits the sender and its plug points keep (RACK, TLP, undo, F-RTO). Values
 * only: the sender ({@link TcpSender}) and the loss detections read and write them through the row.
 */
final class SenderState {
    /** Neither recovering nor after a timeout. */
    static final int OPEN = 0;
    /** Fast recovery after a detected loss until the recovery point (SND.MAX when it began) is acknowledged. */
    static final int RECOVERY = 1;
    /** After a retransmission timeout until the recovery point is acknowledged. */
    static final int LOSS = 2;
    /** Names of the sender states, by value, as traces and tools print them. */
    static final String[] STATE_NAMES = {"open", "recovery", "loss"};

    /** RACK.xmit_ts and RACK.end_seq hold a delivered segment. */
    static final int S_RACK_VALID = 1;
    /** RACK.reordering_seen (RFC 8985 §6.2 step 3). */
    static final int S_REORDERING_SEEN = 1 << 1;
    /** RACK.dsack_round is set. */
    static final int S_DSACK_ROUND = 1 << 2;
    /** A tail loss probe is unanswered (TLP.end_seq is set). */
    static final int S_TLP_OUTSTANDING = 1 << 3;
    /** That probe was a retransmission (TLP.is_retrans). */
    static final int S_TLP_IS_RETRANS = 1 << 4;
    /** A reduction may still be undone (undoMarker, priorCwnd, priorSsthresh are valid). */
    static final int S_UNDO_POSSIBLE = 1 << 5;
    /** undoTsVal holds the TSval of the episode's first retransmission. */
    static final int S_UNDO_TS = 1 << 6;
    /** A D-SACK reported one of the episode's retransmissions. */
    static final int S_UNDO_DSACKED = 1 << 7;
    /** RFC 6675 rule 4's rescue retransmission was sent in this recovery (RescueRxt is set). */
    static final int S_RESCUE_SENT = 1 << 8;
    /** F-RTO (RFC 5682) watches this timeout: a segment sent before it and never retransmitted may yet be delivered. */
    static final int S_FRTO = 1 << 9;
    /** TCP_CORK: short segments wait (until uncorked, the FIN, or the persist timer); full ones go. */
    static final int S_CORKED = 1 << 10;
    /** MSG_MORE: the output pass of this write holds a short tail, as TCP_CORK does; cleared after it. */
    static final int S_MORE = 1 << 11;
    /** The last write said MSG_MORE: the owner has not pushed, so the tail goes without PSH (RFC 9293 §3.9.1.2). */
    static final int S_UNPUSHED = 1 << 12;
    /**
     * The delayed ACK engine is started (Linux's nonzero ato): data arrived, or the handshake ended with data waiting to
     * go. From then on data sent soon after data arrived marks the exchange interactive ({@link #S_INTERACTIVE}).
     */
    static final int S_ACK_TIMED = 1 << 13;
    /** Interactive (Linux's pingpong mode): ACKs wait for the delayed ACK or a reply, not quick ACKs. */
    static final int S_INTERACTIVE = 1 << 14;

    private SenderState() {
    }
}
