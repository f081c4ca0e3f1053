package dev.tern.tcp;

import dev.tern.core.memory.BigEndian;
import dev.tern.core.memory.PageMemory;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The transmission control blocks (RFC 9293 §3.3.1) of one shard: one 640-byte row ({@link #ROW_BYTES}) per connection in an off-heap
 * table, addressed by slot index. Fields carry RFC 9293's names ({@code sndUna}, {@code rcvNxt}, ...) and are read
 * and written through accessors taking the slot, so a reader can hold the RFC next to the code and code that handles
 * two connections at once (a listener's child, an event handler calling back in) never loses its place.
 *
 * <pre>
 *  table: capacity x 640-byte rows, 64-byte aligned; row c starts at c * 640
 *
 *    0         8         16        24        32        40        48        56        64
 *    +---------+---------+---------+---------+---------+---------+---------+---------+
 *    | timerId | timerAt | sndTmr  | delAck  | keepDdl | stateDdl| rttStart| lastRecv|    0   longs: ns, ids,
 *    | lastSend| tsRecAge| finPos  | retrans | bytesAck| bytesRcv| ccLong0 | ccLong1 |   64   positions, stats
 *    +----+----+----+----+----+----+----+----+----+----+----+----+----+----+----+----+
 *    |stat|flag|evts|tmrs|lAdr|rAdr|lPrt|rPrt|iss |irs |sUna|sNxt|sMax|sWnd|sWl1|sWl2|  128   ints: state and
 *    |mxSW|rNxt|rAdv|sMss|rMss|aMss|sScl|rScl|tsRc|lAck|tsOf|srtt|rvar|rto |rtSq|bkof|  192   RFC 9293 variables
 *    |cwnd|ssth|dupA|recv|ccId|unAk|qAck|prob|err |sErr|lstn|gen |dsSt|dsEn|rFin|ooo |  256
 *    |kIdl|kInt|kPrb|fSeq|prev|next|cc0 |cc1 |rtry|sSml| lastOowAck|rtTs|appL| dlvrdAt |  320
 *    +---------+---------+---------+---------+---------+---------+---------+---------+
 *    | rackXmit| rtoExp  | pacRate | nextSend|delivered| minRttAt| ccLong2 | ccLong3 |  384   sender longs
 *    +----+----+----+----+----+----+----+----+----+----+----+----+----+----+----+----+
 *    |sSt |sTmK|sFlg|rEnd|rRtt|fack|mRtt|reoM|reoP|dsRd|tlpE|prrD|prrO|rcFS|hRxt|rRxt|  448   sender ints:
 *    |pCwn|pSst|unMk|unRt|ldId|rcId|cc2 |cc3 |cc4 |cc5 |uTsV|uHor|prbC|lost| lossAt  |  512   recovery, RACK,
 *    |mxRt|tos |ecnS|ecnH|firstSnt |dSeg|uMss| stallAt | zwndAt  |lDataRcv |uTmo|nsLw|  576   TLP, PRR, undo,
 *                                                                                       rate samples;
 *                                                                                       owner's settings
 *    +----+----+----+----+----+----+----+----+----+----+----+----+----+----+----+----+
 *    | ipv6    | l6High  | l6Low   | r6High  | r6Low   |flow|dlCe|reo |reoN|         |  640   IPv6; TCP_INFO
 *    +----+----+----+----+----+----+----+----+----+----+----+----+----+----+----+----+
 *    each cell 4 bytes; the field names are the accessors below, in this order
 * </pre>
 *
 * <p>Sequence numbers are ints holding 32 bits, compared only through {@link SeqNum}. Windows, MSS and buffer sizes
 * are bytes. RTT values are microseconds (RTO max 120 s fits an int).
 *
 * <p>Free rows are kept on an int stack; a row is written in full by {@link #allocate} (a freed row holds stale
 * values). The generation field survives reuse and makes handles of earlier incarnations invalid.
 *
 * <p>Owned by the shard thread; not thread-safe. The table lives until {@link #close}.
 */
public final class TcpControlBlocks implements AutoCloseable {
    public static final int ROW_BYTES = 704;
    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT;
    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG;

    // ------------------------------------------------------------------------------------------- flags (F_*)
    /** The owner closed or aborted the handle: no more events; the row is freed once the protocol is done. */
    static final int F_RELEASED = 1;
    /** shutdownOutput or close: a FIN follows the data up to finPosition. */
    static final int F_FIN_QUEUED = 1 << 1;
    /** Our FIN has been sent at least once (finSeq is valid). */
    static final int F_FIN_SENT = 1 << 2;
    static final int F_NO_DELAY = 1 << 3;
    static final int F_KEEPALIVE = 1 << 4;
    /** Timestamps negotiated (RFC 7323). */
    static final int F_TIMESTAMPS = 1 << 5;
    /** SACK negotiated (RFC 2018). */
    static final int F_SACK = 1 << 6;
    /** Opened by Fast Open (RFC 7413), its handshake not yet completed: counted in its listener's Fast Open queue. */
    static final int F_FAST_OPEN = 1 << 7;
    /** An ACK must go out at the next output. */
    static final int F_ACK_NOW = 1 << 8;
    /** The row is in use. */
    static final int F_ALLOCATED = 1 << 9;
    /** The owner knows the handle (connect, or accept): events go to it, and only it frees the row. */
    static final int F_OWNED = 1 << 10;
    /** Made by a listener (passive open). */
    static final int F_PASSIVE = 1 << 11;
    /** Established, waiting in the listener's accept queue. */
    static final int F_ACCEPT_QUEUED = 1 << 12;
    /** A FIN arrived beyond RCV.NXT (rcvFinSeq). */
    static final int F_FIN_PENDING = 1 << 13;
    /** A D-SACK block (dsackStart, dsackEnd) goes in the next ACK (RFC 2883). */
    static final int F_DSACK = 1 << 14;
    /** The data of a SYN was acknowledged by Fast Open (Linux's TCPI_OPT_SYN_DATA). */
    static final int F_SYN_DATA = 1 << 15;
    /** A segment is being timed (rttSeq, rttStartNs). */
    static final int F_RTT_TIMING = 1 << 16;
    /** The closed event was delivered (or is pending). */
    static final int F_CLOSED_SIGNALLED = 1 << 17;
    /** In the connection table (reachable by 4-tuple). */
    static final int F_IN_TABLE = 1 << 18;
    /** Send and receive rings and the record of sent segments are attached (see F_BUFFERS_RESERVED). */
    static final int F_RINGS = 1 << 19;
    /** On the TIME-WAIT list. */
    static final int F_TIME_WAIT_LISTED = 1 << 20;
    /** The last output stopped because the congestion window was full (cwnd may grow, RFC 7661). */
    static final int F_CWND_LIMITED = 1 << 21;
    /** Window scaling negotiated (RFC 7323 §2). */
    static final int F_WINDOW_SCALING = 1 << 22;
    /** An active open asked for Fast Open (TcpOptions.fastOpen): its first SYN asks for a cookie or carries data. */
    static final int F_FAST_OPEN_ACTIVE = 1 << 23;
    /** At least one retransmission since the last RTT sample (Karn). */
    static final int F_RETRANSMITTED = 1 << 24;
    /** Counted in its listener's SYN queue (a passive connection in SYN-RECEIVED). */
    static final int F_IN_SYN_QUEUE = 1 << 25;
    /**
     * The connection's buffer sizes are counted against the memory budget: it may attach its rings (F_RINGS) when
     * it first needs them, without asking the budget again.
     */
    static final int F_BUFFERS_RESERVED = 1 << 26;
    /**
     * Memory pressure held the advertised window below the receive ring's free room ({@link TcpMemoryPressure}): a
     * window update is owed when the pressure ends.
     */
    static final int F_WINDOW_CLAMPED = 1 << 27;
    /** The receive ring was empty and idle under memory pressure and its pages went back to the system. */
    static final int F_RECEIVE_RECLAIMED = 1 << 28;
    /**
     * The owner let the idle connection's buffers go ({@code TcpLayer.releaseIdleBuffers}): its buffer sizes are not
     * counted against the budget until it attaches rings again. F_BUFFERS_RESERVED stays: it may attach them without
     * asking the budget.
     */
    static final int F_BUDGET_RETURNED = 1 << 29;
    /** A Fast Open connect holds its SYN back for the owner's first data (TcpLayer.sendable). */
    static final int F_SYN_DEFERRED = 1 << 30;
    /** The last SYN or SYN-ACK found no transmit buffer: the SYN timer sends it again soon, as no retransmission. */
    static final int F_SYN_UNSENT = 1 << 31;

    // ------------------------------------------------------------------------------------------ events (EV_*)
    static final int EV_ESTABLISHED = 1;
    static final int EV_READABLE = 1 << 1;
    static final int EV_WRITABLE = 1 << 2;
    static final int EV_CLOSED = 1 << 3;
    /** A send completion notice waits (SendCompletions). */
    static final int EV_COMPLETED = 1 << 4;

    // ------------------------------------------------------------------------------------------ timers (T_*)
    /** The sender's timer: SYN, retransmission, persist, tail loss probe or reordering (senderTimerKind). */
    static final int T_SENDER = 1;
    static final int T_DELAYED_ACK = 1 << 1;
    static final int T_KEEPALIVE = 1 << 2;
    static final int T_STATE = 1 << 3;
    /** The wheel timer (timerId, timerAtNs) is armed. */
    static final int T_ARMED = 1 << 4;
    /** The pacer holds the next segment until nextSendNs. */
    static final int T_PACE = 1 << 5;

    static final int TIMER_ID_OFFSET = 0;
    static final int TIMER_AT_OFFSET = 8;
    static final int SENDER_TIMER_OFFSET = 16;
    static final int DELACK_DEADLINE_OFFSET = 24;
    static final int KEEPALIVE_DEADLINE_OFFSET = 32;
    static final int STATE_DEADLINE_OFFSET = 40;
    static final int RTT_START_OFFSET = 48;
    static final int LAST_RECEIVE_OFFSET = 56;
    static final int LAST_SEND_OFFSET = 64;
    static final int TS_RECENT_AGE_OFFSET = 72;
    static final int FIN_POSITION_OFFSET = 80;
    static final int RETRANSMITS_OFFSET = 88;
    static final int BYTES_ACKED_OFFSET = 96;
    static final int BYTES_RECEIVED_OFFSET = 104;
    static final int CC_LONG0_OFFSET = 112;
    static final int CC_LONG1_OFFSET = 120;
    static final int STATE_OFFSET = 128;
    static final int FLAGS_OFFSET = 132;
    static final int EVENTS_OFFSET = 136;
    static final int TIMERS_OFFSET = 140;
    static final int LOCAL_ADDRESS_OFFSET = 144;
    static final int REMOTE_ADDRESS_OFFSET = 148;
    static final int LOCAL_PORT_OFFSET = 152;
    static final int REMOTE_PORT_OFFSET = 156;
    static final int ISS_OFFSET = 160;
    static final int IRS_OFFSET = 164;
    static final int SND_UNA_OFFSET = 168;
    static final int SND_NXT_OFFSET = 172;
    static final int SND_MAX_OFFSET = 176;
    static final int SND_WND_OFFSET = 180;
    static final int SND_WL1_OFFSET = 184;
    static final int SND_WL2_OFFSET = 188;
    static final int MAX_SND_WND_OFFSET = 192;
    static final int RCV_NXT_OFFSET = 196;
    static final int RCV_ADV_OFFSET = 200;
    static final int SND_MSS_OFFSET = 204;
    static final int RCV_MSS_OFFSET = 208;
    static final int ADV_MSS_OFFSET = 212;
    static final int SND_SCALE_OFFSET = 216;
    static final int RCV_SCALE_OFFSET = 220;
    static final int TS_RECENT_OFFSET = 224;
    static final int LAST_ACK_SENT_OFFSET = 228;
    static final int TS_OFFSET_OFFSET = 232;
    static final int SRTT_US_OFFSET = 236;
    static final int RTTVAR_US_OFFSET = 240;
    static final int RTO_US_OFFSET = 244;
    static final int RTT_SEQ_OFFSET = 248;
    static final int BACKOFF_OFFSET = 252;
    static final int CWND_OFFSET = 256;
    static final int SSTHRESH_OFFSET = 260;
    static final int DUP_ACKS_OFFSET = 264;
    static final int RECOVER_OFFSET = 268;
    static final int CC_ID_OFFSET = 272;
    static final int UNACKED_BYTES_OFFSET = 276;
    static final int QUICK_ACKS_OFFSET = 280;
    static final int PROBES_OFFSET = 284;
    static final int ERROR_OFFSET = 288;
    static final int SOFT_ERROR_OFFSET = 292;
    static final int LISTENER_OFFSET = 296;
    static final int GENERATION_OFFSET = 300;
    static final int DSACK_START_OFFSET = 304;
    static final int DSACK_END_OFFSET = 308;
    static final int RCV_FIN_SEQ_OFFSET = 312;
    static final int OOO_BLOCK_OFFSET = 316;
    static final int KEEP_IDLE_MS_OFFSET = 320;
    static final int KEEP_INTERVAL_MS_OFFSET = 324;
    static final int KEEP_PROBES_OFFSET = 328;
    static final int FIN_SEQ_OFFSET = 332;
    static final int LIST_PREV_OFFSET = 336;
    static final int LIST_NEXT_OFFSET = 340;
    static final int CC_INT0_OFFSET = 344;
    static final int CC_INT1_OFFSET = 348;
    static final int RETRIES_OFFSET = 352;
    static final int SND_SML_OFFSET = 356;
    static final int LAST_OOW_ACK_OFFSET = 360;
    static final int RETRANSMIT_TS_VAL_OFFSET = 368;
    // Delivery rate samples (DeliveryRateSampler).
    static final int APP_LIMITED_OFFSET = 372;
    static final int DELIVERED_AT_OFFSET = 376;
    // The sender (TcpSender and its plug points): RACK, TLP, recovery, PRR, undo, pacing.
    static final int RACK_XMIT_OFFSET = 384;
    static final int RTO_EXPIRY_OFFSET = 392;
    static final int PACING_RATE_OFFSET = 400;
    static final int NEXT_SEND_OFFSET = 408;
    static final int DELIVERED_OFFSET = 416;
    static final int MIN_RTT_AT_OFFSET = 424;
    static final int CC_LONG2_OFFSET = 432;
    static final int CC_LONG3_OFFSET = 440;
    static final int SENDER_STATE_OFFSET = 448;
    static final int SENDER_TIMER_KIND_OFFSET = 452;
    static final int SENDER_FLAGS_OFFSET = 456;
    static final int RACK_END_SEQ_OFFSET = 460;
    static final int RACK_RTT_US_OFFSET = 464;
    static final int FACK_OFFSET = 468;
    static final int MIN_RTT_US_OFFSET = 472;
    static final int REO_WND_MULT_OFFSET = 476;
    static final int REO_WND_PERSIST_OFFSET = 480;
    static final int DSACK_ROUND_OFFSET = 484;
    static final int TLP_END_SEQ_OFFSET = 488;
    static final int PRR_DELIVERED_OFFSET = 492;
    static final int PRR_OUT_OFFSET = 496;
    static final int RECOVER_FS_OFFSET = 500;
    static final int HIGH_RXT_OFFSET = 504;
    static final int RESCUE_RXT_OFFSET = 508;
    static final int PRIOR_CWND_OFFSET = 512;
    static final int PRIOR_SSTHRESH_OFFSET = 516;
    static final int UNDO_MARKER_OFFSET = 520;
    static final int UNDO_RETRANS_OFFSET = 524;
    static final int LOSS_DETECTION_ID_OFFSET = 528;
    static final int RECOVERY_ID_OFFSET = 532;
    static final int CC_INT2_OFFSET = 536;
    static final int CC_INT3_OFFSET = 540;
    static final int CC_INT4_OFFSET = 544;
    static final int CC_INT5_OFFSET = 548;
    static final int UNDO_TS_VAL_OFFSET = 552;
    static final int UNDO_HORIZON_OFFSET = 556;
    static final int PROBE_COUNT_OFFSET = 560;
    static final int LOST_TOTAL_OFFSET = 564;
    static final int LOSS_AT_OFFSET = 568;
    static final int MAX_RETRIES_OFFSET = 576;
    static final int TOS_OFFSET = 580;
    // Explicit Congestion Notification (Ecn).
    static final int ECN_STATE_OFFSET = 584;
    static final int ECN_HIGH_OFFSET = 588;
    static final int FIRST_SENT_OFFSET = 592;
    /** TCP_INFO's delivered segments (TcpSender.countDelivered). */
    static final int DELIVERED_SEGMENTS_OFFSET = 600;
    // The owner's socket options and what they time (TcpSocketOptions, UserTimeout).
    static final int USER_MSS_OFFSET = 604;
    static final int STALL_START_OFFSET = 608;
    static final int ZERO_WINDOW_SINCE_OFFSET = 616;
    static final int LAST_DATA_RECEIVE_OFFSET = 624;
    static final int USER_TIMEOUT_MS_OFFSET = 632;
    static final int NOTSENT_LOWAT_OFFSET = 636;
    // IPv6 (RFC 8200): the family, and both addresses whole; LOCAL_ADDRESS and REMOTE_ADDRESS then hold their keyed
    // folds (IsnGenerator.fold), which the connection table, ISNs and cookies use as they use IPv4 addresses.
    static final int IPV6_OFFSET = 640;
    static final int LOCAL6_HIGH_OFFSET = 648;
    static final int LOCAL6_LOW_OFFSET = 656;
    static final int REMOTE6_HIGH_OFFSET = 664;
    static final int REMOTE6_LOW_OFFSET = 672;
    /** The IPv6 flow label the connection's packets carry (RFC 6437). */
    static final int FLOW_LABEL_OFFSET = 680;
    /** Of the delivered segments, those whose ACK echoed congestion (ECE). */
    static final int DELIVERED_CE_OFFSET = 684;
    /** The reordering degree seen, in segments (ReorderingDegree). */
    static final int REORDERING_OFFSET = 688;
    /** How many times reordering was seen (ReorderingDegree). */
    static final int REORDERINGS_OFFSET = 692;

    private final Arena arena;
    private final MemorySegment rows;
    private final int capacity;
    private final int[] free;
    private int freeCount;
    private int highWater;

    public TcpControlBlocks(int capacity) {
        this.capacity = capacity;
        this.arena = Arena.ofShared();
        // Mapped by the page, not allocated (which zeroes every row at once): a row becomes resident when a
        // connection first takes it, so a table sized for a million connections costs what the connections use.
        final long bytes = (long) capacity * ROW_BYTES;
        final long page = PageMemory.pageSize();
        this.rows = PageMemory.map((bytes + page - 1) / page * page, arena).asSlice(0, bytes);
        this.free = new int[capacity];
        for (int i = 0; i < capacity; i++) {
            free[i] = capacity - 1 - i;
        }
        this.freeCount = capacity;
    }

    public int capacity() {
        return capacity;
    }

    public int inUse() {
        return capacity - freeCount;
    }

    /**
     * One past the highest row ever taken: rows at and above it were never touched (their pages are not resident), so
     * a scan of the table stops there.
     */
    int highWater() {
        return highWater;
    }

    /** Bytes of the table resident now (rows ever taken; asked of the system, so not per packet). */
    long residentBytes() {
        return PageMemory.residentBytes(rows);
    }

    /** Takes a free row and clears it (the generation moves on); returns its slot, or -1 when the table is full. */
    int allocate() {
        if (freeCount == 0) {
            return -1;
        }
        final int c = free[--freeCount];
        highWater = Math.max(highWater, c + 1);
        final int generation = generation(c) + 1;
        BigEndian.zero(rows, base(c), ROW_BYTES);
        generation(c, generation & 0x7FF);
        listener(c, -1);
        oooBlock(c, -1);
        listPrev(c, -1);
        listNext(c, -1);
        flags(c, F_ALLOCATED);
        return c;
    }

    /** Returns a row to the free stack. */
    void release(int c) {
        state(c, TcpState.CLOSED);
        flags(c, 0);
        timers(c, 0);
        events(c, 0);
        free[freeCount++] = c;
    }

    private static long base(int c) {
        return (long) c * ROW_BYTES;
    }

    boolean hasFlag(int c, int flag) {
        return (flags(c) & flag) != 0;
    }

    void setFlag(int c, int flag) {
        flags(c, flags(c) | flag);
    }

    void clearFlag(int c, int flag) {
        flags(c, flags(c) & ~flag);
    }

    boolean hasSenderFlag(int c, int flag) {
        return (senderFlags(c) & flag) != 0;
    }

    void setSenderFlag(int c, int flag) {
        senderFlags(c, senderFlags(c) | flag);
    }

    void clearSenderFlag(int c, int flag) {
        senderFlags(c, senderFlags(c) & ~flag);
    }

    @Override
    public void close() {
        arena.close();
    }

    // ---------------------------------------------------------------------------------------------- fields

    /** Wheel timer armed for this connection (valid with TIMER_ARMED). */
    public long timerId(int c) {
        return rows.get(LONG, base(c) + TIMER_ID_OFFSET);
    }

    public void timerId(int c, long value) {
        rows.set(LONG, base(c) + TIMER_ID_OFFSET, value);
    }

    /** Deadline the wheel timer is armed for. */
    public long timerAtNs(int c) {
        return rows.get(LONG, base(c) + TIMER_AT_OFFSET);
    }

    public void timerAtNs(int c, long value) {
        rows.set(LONG, base(c) + TIMER_AT_OFFSET, value);
    }

    /** Deadline of the sender timer: retransmission, persist, tail loss probe, reordering or SYN (senderTimerKind). */
    public long senderTimerNs(int c) {
        return rows.get(LONG, base(c) + SENDER_TIMER_OFFSET);
    }

    public void senderTimerNs(int c, long value) {
        rows.set(LONG, base(c) + SENDER_TIMER_OFFSET, value);
    }

    /** Delayed ACK deadline. */
    public long delayedAckDeadlineNs(int c) {
        return rows.get(LONG, base(c) + DELACK_DEADLINE_OFFSET);
    }

    public void delayedAckDeadlineNs(int c, long value) {
        rows.set(LONG, base(c) + DELACK_DEADLINE_OFFSET, value);
    }

    /** Next keepalive probe. */
    public long keepaliveDeadlineNs(int c) {
        return rows.get(LONG, base(c) + KEEPALIVE_DEADLINE_OFFSET);
    }

    public void keepaliveDeadlineNs(int c, long value) {
        rows.set(LONG, base(c) + KEEPALIVE_DEADLINE_OFFSET, value);
    }

    /** End of TIME-WAIT or of the FIN-WAIT-2 timeout. */
    public long stateDeadlineNs(int c) {
        return rows.get(LONG, base(c) + STATE_DEADLINE_OFFSET);
    }

    public void stateDeadlineNs(int c, long value) {
        rows.set(LONG, base(c) + STATE_DEADLINE_OFFSET, value);
    }

    /** When the timed segment (RTT_SEQ) was sent. */
    public long rttStartNs(int c) {
        return rows.get(LONG, base(c) + RTT_START_OFFSET);
    }

    public void rttStartNs(int c, long value) {
        rows.set(LONG, base(c) + RTT_START_OFFSET, value);
    }

    /** Last segment received (keepalive idle time). */
    public long lastReceiveNs(int c) {
        return rows.get(LONG, base(c) + LAST_RECEIVE_OFFSET);
    }

    public void lastReceiveNs(int c, long value) {
        rows.set(LONG, base(c) + LAST_RECEIVE_OFFSET, value);
    }

    /** Last data sent (congestion window restart after idle). */
    public long lastSendNs(int c) {
        return rows.get(LONG, base(c) + LAST_SEND_OFFSET);
    }

    public void lastSendNs(int c, long value) {
        rows.set(LONG, base(c) + LAST_SEND_OFFSET, value);
    }

    /** When TS.Recent was set (RFC 7323 §5.5, 24 days). */
    public long tsRecentAgeNs(int c) {
        return rows.get(LONG, base(c) + TS_RECENT_AGE_OFFSET);
    }

    public void tsRecentAgeNs(int c, long value) {
        rows.set(LONG, base(c) + TS_RECENT_AGE_OFFSET, value);
    }

    /** Send ring position where data ends once shutdownOutput was called. */
    public long finPosition(int c) {
        return rows.get(LONG, base(c) + FIN_POSITION_OFFSET);
    }

    public void finPosition(int c, long value) {
        rows.set(LONG, base(c) + FIN_POSITION_OFFSET, value);
    }

    /** Segments retransmitted (statistics). */
    public long retransmits(int c) {
        return rows.get(LONG, base(c) + RETRANSMITS_OFFSET);
    }

    public void retransmits(int c, long value) {
        rows.set(LONG, base(c) + RETRANSMITS_OFFSET, value);
    }

    /** Data bytes acknowledged by the peer (statistics). */
    public long bytesAcked(int c) {
        return rows.get(LONG, base(c) + BYTES_ACKED_OFFSET);
    }

    public void bytesAcked(int c, long value) {
        rows.set(LONG, base(c) + BYTES_ACKED_OFFSET, value);
    }

    /** Data bytes received in order (statistics). */
    public long bytesReceived(int c) {
        return rows.get(LONG, base(c) + BYTES_RECEIVED_OFFSET);
    }

    public void bytesReceived(int c, long value) {
        rows.set(LONG, base(c) + BYTES_RECEIVED_OFFSET, value);
    }

    /** Congestion control private. */
    public long ccLong0(int c) {
        return rows.get(LONG, base(c) + CC_LONG0_OFFSET);
    }

    public void ccLong0(int c, long value) {
        rows.set(LONG, base(c) + CC_LONG0_OFFSET, value);
    }

    /** Congestion control private. */
    public long ccLong1(int c) {
        return rows.get(LONG, base(c) + CC_LONG1_OFFSET);
    }

    public void ccLong1(int c, long value) {
        rows.set(LONG, base(c) + CC_LONG1_OFFSET, value);
    }

    /** TcpState. */
    public int state(int c) {
        return rows.get(INT, base(c) + STATE_OFFSET);
    }

    public void state(int c, int value) {
        rows.set(INT, base(c) + STATE_OFFSET, value);
    }

    /** F_* bits. */
    public int flags(int c) {
        return rows.get(INT, base(c) + FLAGS_OFFSET);
    }

    public void flags(int c, int value) {
        rows.set(INT, base(c) + FLAGS_OFFSET, value);
    }

    /** Pending TcpEvents, EV_* bits. */
    public int events(int c) {
        return rows.get(INT, base(c) + EVENTS_OFFSET);
    }

    public void events(int c, int value) {
        rows.set(INT, base(c) + EVENTS_OFFSET, value);
    }

    /** Active deadlines, T_* bits. */
    public int timers(int c) {
        return rows.get(INT, base(c) + TIMERS_OFFSET);
    }

    public void timers(int c, int value) {
        rows.set(INT, base(c) + TIMERS_OFFSET, value);
    }

    public int localAddress(int c) {
        return rows.get(INT, base(c) + LOCAL_ADDRESS_OFFSET);
    }

    public void localAddress(int c, int value) {
        rows.set(INT, base(c) + LOCAL_ADDRESS_OFFSET, value);
    }

    public int remoteAddress(int c) {
        return rows.get(INT, base(c) + REMOTE_ADDRESS_OFFSET);
    }

    public void remoteAddress(int c, int value) {
        rows.set(INT, base(c) + REMOTE_ADDRESS_OFFSET, value);
    }

    /** Whether the connection runs over IPv6. */
    public boolean ipv6(int c) {
        return rows.get(INT, base(c) + IPV6_OFFSET) != 0;
    }

    /** Makes the connection an IPv6 one between the given addresses (the folds are set apart, as for IPv4). */
    void ipv6(int c, long localHigh, long localLow, long remoteHigh, long remoteLow) {
        rows.set(INT, base(c) + IPV6_OFFSET, 1);
        localAddressHigh(c, localHigh);
        localAddressLow(c, localLow);
        remoteAddressHigh(c, remoteHigh);
        remoteAddressLow(c, remoteLow);
    }

    public int flowLabel(int c) {
        return rows.get(INT, base(c) + FLOW_LABEL_OFFSET);
    }

    void flowLabel(int c, int value) {
        rows.set(INT, base(c) + FLOW_LABEL_OFFSET, value);
    }

    void localAddressHigh(int c, long value) {
        rows.set(LONG, base(c) + LOCAL6_HIGH_OFFSET, value);
    }

    void localAddressLow(int c, long value) {
        rows.set(LONG, base(c) + LOCAL6_LOW_OFFSET, value);
    }

    void remoteAddressHigh(int c, long value) {
        rows.set(LONG, base(c) + REMOTE6_HIGH_OFFSET, value);
    }

    void remoteAddressLow(int c, long value) {
        rows.set(LONG, base(c) + REMOTE6_LOW_OFFSET, value);
    }

    public long localAddressHigh(int c) {
        return rows.get(LONG, base(c) + LOCAL6_HIGH_OFFSET);
    }

    public long localAddressLow(int c) {
        return rows.get(LONG, base(c) + LOCAL6_LOW_OFFSET);
    }

    public long remoteAddressHigh(int c) {
        return rows.get(LONG, base(c) + REMOTE6_HIGH_OFFSET);
    }

    public long remoteAddressLow(int c) {
        return rows.get(LONG, base(c) + REMOTE6_LOW_OFFSET);
    }

    /** Whether the connection is the one {@code seg} belongs to by family and whole addresses (its key matched). */
    boolean sameAddresses(int c, TcpSegment seg) {
        if (!seg.ipv6) {
            return !ipv6(c);
        }
        return ipv6(c) && remoteAddressHigh(c) == seg.sourceHigh && remoteAddressLow(c) == seg.sourceLow
            && localAddressHigh(c) == seg.destinationHigh && localAddressLow(c) == seg.destinationLow;
    }

    public int localPort(int c) {
        return rows.get(INT, base(c) + LOCAL_PORT_OFFSET);
    }

    public void localPort(int c, int value) {
        rows.set(INT, base(c) + LOCAL_PORT_OFFSET, value);
    }

    public int remotePort(int c) {
        return rows.get(INT, base(c) + REMOTE_PORT_OFFSET);
    }

    public void remotePort(int c, int value) {
        rows.set(INT, base(c) + REMOTE_PORT_OFFSET, value);
    }

    /** Initial send sequence number. */
    public int iss(int c) {
        return rows.get(INT, base(c) + ISS_OFFSET);
    }

    public void iss(int c, int value) {
        rows.set(INT, base(c) + ISS_OFFSET, value);
    }

    /** Initial receive sequence number. */
    public int irs(int c) {
        return rows.get(INT, base(c) + IRS_OFFSET);
    }

    public void irs(int c, int value) {
        rows.set(INT, base(c) + IRS_OFFSET, value);
    }

    /** Oldest unacknowledged sequence number. */
    public int sndUna(int c) {
        return rows.get(INT, base(c) + SND_UNA_OFFSET);
    }

    public void sndUna(int c, int value) {
        rows.set(INT, base(c) + SND_UNA_OFFSET, value);
    }

    /** Next sequence number to send. */
    public int sndNxt(int c) {
        return rows.get(INT, base(c) + SND_NXT_OFFSET);
    }

    public void sndNxt(int c, int value) {
        rows.set(INT, base(c) + SND_NXT_OFFSET, value);
    }

    /** Highest sequence number sent (SND.NXT before a go-back-N rewind). */
    public int sndMax(int c) {
        return rows.get(INT, base(c) + SND_MAX_OFFSET);
    }

    public void sndMax(int c, int value) {
        rows.set(INT, base(c) + SND_MAX_OFFSET, value);
    }

    /** Send window, scaled, in bytes. */
    public int sndWnd(int c) {
        return rows.get(INT, base(c) + SND_WND_OFFSET);
    }

    public void sndWnd(int c, int value) {
        rows.set(INT, base(c) + SND_WND_OFFSET, value);
    }

    /** Segment sequence number used for the last window update. */
    public int sndWl1(int c) {
        return rows.get(INT, base(c) + SND_WL1_OFFSET);
    }

    public void sndWl1(int c, int value) {
        rows.set(INT, base(c) + SND_WL1_OFFSET, value);
    }

    /** Segment acknowledgment number used for the last window update. */
    public int sndWl2(int c) {
        return rows.get(INT, base(c) + SND_WL2_OFFSET);
    }

    public void sndWl2(int c, int value) {
        rows.set(INT, base(c) + SND_WL2_OFFSET, value);
    }

    /** Largest window the peer offered (SWS avoidance, RFC 5961 §5.2). */
    public int maxSndWnd(int c) {
        return rows.get(INT, base(c) + MAX_SND_WND_OFFSET);
    }

    public void maxSndWnd(int c, int value) {
        rows.set(INT, base(c) + MAX_SND_WND_OFFSET, value);
    }

    /** Next sequence number expected. */
    public int rcvNxt(int c) {
        return rows.get(INT, base(c) + RCV_NXT_OFFSET);
    }

    public void rcvNxt(int c, int value) {
        rows.set(INT, base(c) + RCV_NXT_OFFSET, value);
    }

    /** Right edge of the window we advertised: RCV.NXT + RCV.WND when sent. */
    public int rcvAdv(int c) {
        return rows.get(INT, base(c) + RCV_ADV_OFFSET);
    }

    public void rcvAdv(int c, int value) {
        rows.set(INT, base(c) + RCV_ADV_OFFSET, value);
    }

    /** Largest payload we send, before options (min of the peer's MSS and path MTU - 40). */
    public int sndMss(int c) {
        return rows.get(INT, base(c) + SND_MSS_OFFSET);
    }

    public void sndMss(int c, int value) {
        rows.set(INT, base(c) + SND_MSS_OFFSET, value);
    }

    /** Largest payload seen from the peer (delayed ACK 'full-sized segment'). */
    public int rcvMss(int c) {
        return rows.get(INT, base(c) + RCV_MSS_OFFSET);
    }

    public void rcvMss(int c, int value) {
        rows.set(INT, base(c) + RCV_MSS_OFFSET, value);
    }

    /** MSS we advertised. */
    public int advMss(int c) {
        return rows.get(INT, base(c) + ADV_MSS_OFFSET);
    }

    public void advMss(int c, int value) {
        rows.set(INT, base(c) + ADV_MSS_OFFSET, value);
    }

    /** Window shift the peer applies (Snd.Wind.Shift). */
    public int sndScale(int c) {
        return rows.get(INT, base(c) + SND_SCALE_OFFSET);
    }

    public void sndScale(int c, int value) {
        rows.set(INT, base(c) + SND_SCALE_OFFSET, value);
    }

    /** Window shift we apply (Rcv.Wind.Shift). */
    public int rcvScale(int c) {
        return rows.get(INT, base(c) + RCV_SCALE_OFFSET);
    }

    public void rcvScale(int c, int value) {
        rows.set(INT, base(c) + RCV_SCALE_OFFSET, value);
    }

    /** TS.Recent (RFC 7323 §4.3). */
    public int tsRecent(int c) {
        return rows.get(INT, base(c) + TS_RECENT_OFFSET);
    }

    public void tsRecent(int c, int value) {
        rows.set(INT, base(c) + TS_RECENT_OFFSET, value);
    }

    /** Last.ACK.sent (RFC 7323 §4.3). */
    public int lastAckSent(int c) {
        return rows.get(INT, base(c) + LAST_ACK_SENT_OFFSET);
    }

    public void lastAckSent(int c, int value) {
        rows.set(INT, base(c) + LAST_ACK_SENT_OFFSET, value);
    }

    /** Random offset of our TSval clock (RFC 7323 §5.4). */
    public int tsOffset(int c) {
        return rows.get(INT, base(c) + TS_OFFSET_OFFSET);
    }

    public void tsOffset(int c, int value) {
        rows.set(INT, base(c) + TS_OFFSET_OFFSET, value);
    }

    /** Smoothed RTT in µs, 0 before the first sample. */
    public int srttUs(int c) {
        return rows.get(INT, base(c) + SRTT_US_OFFSET);
    }

    public void srttUs(int c, int value) {
        rows.set(INT, base(c) + SRTT_US_OFFSET, value);
    }

    /** RTT variation in µs. */
    public int rttvarUs(int c) {
        return rows.get(INT, base(c) + RTTVAR_US_OFFSET);
    }

    public void rttvarUs(int c, int value) {
        rows.set(INT, base(c) + RTTVAR_US_OFFSET, value);
    }

    /** Retransmission timeout in µs, before backoff. */
    public int rtoUs(int c) {
        return rows.get(INT, base(c) + RTO_US_OFFSET);
    }

    public void rtoUs(int c, int value) {
        rows.set(INT, base(c) + RTO_US_OFFSET, value);
    }

    /** Sequence number being timed (valid with F_RTT_TIMING). */
    public int rttSeq(int c) {
        return rows.get(INT, base(c) + RTT_SEQ_OFFSET);
    }

    public void rttSeq(int c, int value) {
        rows.set(INT, base(c) + RTT_SEQ_OFFSET, value);
    }

    /** Consecutive RTO expiries (the RTO is doubled this many times). */
    public int backoff(int c) {
        return rows.get(INT, base(c) + BACKOFF_OFFSET);
    }

    public void backoff(int c, int value) {
        rows.set(INT, base(c) + BACKOFF_OFFSET, value);
    }

    /**
     * The largest congestion window or ssthresh any control or recovery sets: larger means nothing on a 32-bit
     * sequence space (RFC 7323 §2.3 caps the window at 2^30), and cwnd plus one more segment still fits an int.
     */
    static final int MAX_CWND = 1 << 30;

    /** Congestion window in bytes. */
    public int cwnd(int c) {
        return rows.get(INT, base(c) + CWND_OFFSET);
    }

    public void cwnd(int c, int value) {
        rows.set(INT, base(c) + CWND_OFFSET, value);
    }

    /** Slow start threshold in bytes. */
    public int ssthresh(int c) {
        return rows.get(INT, base(c) + SSTHRESH_OFFSET);
    }

    public void ssthresh(int c, int value) {
        rows.set(INT, base(c) + SSTHRESH_OFFSET, value);
    }

    /** Duplicate ACKs in a row. */
    public int dupAcks(int c) {
        return rows.get(INT, base(c) + DUP_ACKS_OFFSET);
    }

    public void dupAcks(int c, int value) {
        rows.set(INT, base(c) + DUP_ACKS_OFFSET, value);
    }

    /** NewReno 'recover' (RFC 6582 §3.2). */
    public int recover(int c) {
        return rows.get(INT, base(c) + RECOVER_OFFSET);
    }

    public void recover(int c, int value) {
        rows.set(INT, base(c) + RECOVER_OFFSET, value);
    }

    /** Index of the congestion control. */
    public int ccId(int c) {
        return rows.get(INT, base(c) + CC_ID_OFFSET);
    }

    public void ccId(int c, int value) {
        rows.set(INT, base(c) + CC_ID_OFFSET, value);
    }

    /** Data bytes received since we last sent an ACK. */
    public int unackedBytes(int c) {
        return rows.get(INT, base(c) + UNACKED_BYTES_OFFSET);
    }

    public void unackedBytes(int c, int value) {
        rows.set(INT, base(c) + UNACKED_BYTES_OFFSET, value);
    }

    /** ACKs still to send without delay (start of the connection). */
    public int quickAcks(int c) {
        return rows.get(INT, base(c) + QUICK_ACKS_OFFSET);
    }

    public void quickAcks(int c, int value) {
        rows.set(INT, base(c) + QUICK_ACKS_OFFSET, value);
    }

    /** Unanswered keepalive or zero-window probes. */
    public int probes(int c) {
        return rows.get(INT, base(c) + PROBES_OFFSET);
    }

    public void probes(int c, int value) {
        rows.set(INT, base(c) + PROBES_OFFSET, value);
    }

    /** TcpError the connection ended with. */
    public int error(int c) {
        return rows.get(INT, base(c) + ERROR_OFFSET);
    }

    public void error(int c, int value) {
        rows.set(INT, base(c) + ERROR_OFFSET, value);
    }

    /** Last ICMP error while connecting (reported if it then times out). */
    public int softError(int c) {
        return rows.get(INT, base(c) + SOFT_ERROR_OFFSET);
    }

    public void softError(int c, int value) {
        rows.set(INT, base(c) + SOFT_ERROR_OFFSET, value);
    }

    /** Listener a passive connection came from, or -1. */
    public int listener(int c) {
        return rows.get(INT, base(c) + LISTENER_OFFSET);
    }

    public void listener(int c, int value) {
        rows.set(INT, base(c) + LISTENER_OFFSET, value);
    }

    /** Incarnation of this slot (in handles, so stale ones are refused). */
    public int generation(int c) {
        return rows.get(INT, base(c) + GENERATION_OFFSET);
    }

    public void generation(int c, int value) {
        rows.set(INT, base(c) + GENERATION_OFFSET, value);
    }

    // ------------------------------------------------------------------------------------------ handles

    /** Bits of a handle that name the slot; the rest is the slot's generation. */
    static final int SLOT_BITS = 20;
    static final int SLOT_MASK = (1 << SLOT_BITS) - 1;

    /** The handle of row {@code c}: {@code generation << 20 | slot}, so a handle of an earlier connection is stale. */
    int handle(int c) {
        return (generation(c) << SLOT_BITS) | c;
    }

    /** The row of a valid handle its owner still holds (owned, not released), or -1. */
    int ownedSlot(int handle) {
        if (handle < 0) {
            return -1;
        }
        final int c = handle & SLOT_MASK;
        if (c >= capacity || (flags(c) & (F_ALLOCATED | F_OWNED | F_RELEASED)) != (F_ALLOCATED | F_OWNED)
            || generation(c) != handle >>> SLOT_BITS) {
            return -1;
        }
        return c;
    }

    /** The row of a handle whose connection still has its row, held by its owner or not, or -1. */
    int liveSlot(int handle) {
        final int c = handle & SLOT_MASK;
        if (handle < 0 || c >= capacity || !hasFlag(c, F_ALLOCATED) || generation(c) != handle >>> SLOT_BITS) {
            return -1;
        }
        return c;
    }

    /** Duplicate range to report (RFC 2883), with F_DSACK. */
    public int dsackStart(int c) {
        return rows.get(INT, base(c) + DSACK_START_OFFSET);
    }

    public void dsackStart(int c, int value) {
        rows.set(INT, base(c) + DSACK_START_OFFSET, value);
    }

    public int dsackEnd(int c) {
        return rows.get(INT, base(c) + DSACK_END_OFFSET);
    }

    public void dsackEnd(int c, int value) {
        rows.set(INT, base(c) + DSACK_END_OFFSET, value);
    }

    /** Sequence number of a FIN received out of order, with F_FIN_PENDING. */
    public int rcvFinSeq(int c) {
        return rows.get(INT, base(c) + RCV_FIN_SEQ_OFFSET);
    }

    public void rcvFinSeq(int c, int value) {
        rows.set(INT, base(c) + RCV_FIN_SEQ_OFFSET, value);
    }

    /** ReassemblyQueue block, or -1. */
    public int oooBlock(int c) {
        return rows.get(INT, base(c) + OOO_BLOCK_OFFSET);
    }

    public void oooBlock(int c, int value) {
        rows.set(INT, base(c) + OOO_BLOCK_OFFSET, value);
    }

    /** Keepalive idle time in ms. */
    public int keepIdleMs(int c) {
        return rows.get(INT, base(c) + KEEP_IDLE_MS_OFFSET);
    }

    public void keepIdleMs(int c, int value) {
        rows.set(INT, base(c) + KEEP_IDLE_MS_OFFSET, value);
    }

    /** Keepalive probe interval in ms. */
    public int keepIntervalMs(int c) {
        return rows.get(INT, base(c) + KEEP_INTERVAL_MS_OFFSET);
    }

    public void keepIntervalMs(int c, int value) {
        rows.set(INT, base(c) + KEEP_INTERVAL_MS_OFFSET, value);
    }

    /** Keepalive probes before timing out. */
    public int keepProbes(int c) {
        return rows.get(INT, base(c) + KEEP_PROBES_OFFSET);
    }

    public void keepProbes(int c, int value) {
        rows.set(INT, base(c) + KEEP_PROBES_OFFSET, value);
    }

    /** Sequence number of our FIN, with F_FIN_SENT. */
    public int finSeq(int c) {
        return rows.get(INT, base(c) + FIN_SEQ_OFFSET);
    }

    public void finSeq(int c, int value) {
        rows.set(INT, base(c) + FIN_SEQ_OFFSET, value);
    }

    /** TIME-WAIT list links. */
    public int listPrev(int c) {
        return rows.get(INT, base(c) + LIST_PREV_OFFSET);
    }

    public void listPrev(int c, int value) {
        rows.set(INT, base(c) + LIST_PREV_OFFSET, value);
    }

    public int listNext(int c) {
        return rows.get(INT, base(c) + LIST_NEXT_OFFSET);
    }

    public void listNext(int c, int value) {
        rows.set(INT, base(c) + LIST_NEXT_OFFSET, value);
    }

    /** Congestion control private. */
    public int ccInt0(int c) {
        return rows.get(INT, base(c) + CC_INT0_OFFSET);
    }

    public void ccInt0(int c, int value) {
        rows.set(INT, base(c) + CC_INT0_OFFSET, value);
    }

    /** Congestion control private. */
    public int ccInt1(int c) {
        return rows.get(INT, base(c) + CC_INT1_OFFSET);
    }

    public void ccInt1(int c, int value) {
        rows.set(INT, base(c) + CC_INT1_OFFSET, value);
    }

    /** Retransmissions of the current head segment without progress. */
    /** End of the last segment sent shorter than the MSS (Minshall's Nagle variant). */
    public int sndSml(int c) {
        return rows.get(INT, base(c) + SND_SML_OFFSET);
    }

    public void sndSml(int c, int value) {
        rows.set(INT, base(c) + SND_SML_OFFSET, value);
    }

    /** When we last answered an out-of-window segment without data (rate limit against ACK wars). */
    public long lastOowAckNs(int c) {
        return rows.get(LONG, base(c) + LAST_OOW_ACK_OFFSET);
    }

    public void lastOowAckNs(int c, long value) {
        rows.set(LONG, base(c) + LAST_OOW_ACK_OFFSET, value);
    }

    /** Our TSval when we last retransmitted (valid with F_RETRANSMITTED). */
    public int retransmitTsVal(int c) {
        return rows.get(INT, base(c) + RETRANSMIT_TS_VAL_OFFSET);
    }

    public void retransmitTsVal(int c, int value) {
        rows.set(INT, base(c) + RETRANSMIT_TS_VAL_OFFSET, value);
    }

    public int retries(int c) {
        return rows.get(INT, base(c) + RETRIES_OFFSET);
    }

    public void retries(int c, int value) {
        rows.set(INT, base(c) + RETRIES_OFFSET, value);
    }

    /** RACK.xmit_ts (RFC 8985 §6.1): the latest transmission time of a segment delivered so far. */
    public long rackXmitNs(int c) {
        return rows.get(LONG, base(c) + RACK_XMIT_OFFSET);
    }

    public void rackXmitNs(int c, long value) {
        rows.set(LONG, base(c) + RACK_XMIT_OFFSET, value);
    }

    /** When the retransmission timer expires if nothing restarts it (the sender timer may be armed earlier, for a probe or the reordering timer). */
    public long rtoExpiryNs(int c) {
        return rows.get(LONG, base(c) + RTO_EXPIRY_OFFSET);
    }

    public void rtoExpiryNs(int c, long value) {
        rows.set(LONG, base(c) + RTO_EXPIRY_OFFSET, value);
    }

    /** Pacing rate in bytes per second set by the congestion control; 0: not paced. */
    public long pacingRate(int c) {
        return rows.get(LONG, base(c) + PACING_RATE_OFFSET);
    }

    public void pacingRate(int c, long value) {
        rows.set(LONG, base(c) + PACING_RATE_OFFSET, value);
    }

    /** Earliest time the pacer lets the next segment go. */
    public long nextSendNs(int c) {
        return rows.get(LONG, base(c) + NEXT_SEND_OFFSET);
    }

    public void nextSendNs(int c, long value) {
        rows.set(LONG, base(c) + NEXT_SEND_OFFSET, value);
    }

    /** Bytes delivered to the peer so far, acknowledged or SACKed (rate samples). */
    public long delivered(int c) {
        return rows.get(LONG, base(c) + DELIVERED_OFFSET);
    }

    public void delivered(int c, long value) {
        rows.set(LONG, base(c) + DELIVERED_OFFSET, value);
    }

    /**
     * Segments delivered to the peer, as Linux's tp->delivered (TCP_INFO's tcpi_delivered): the handshake's SYN or
     * SYN-ACK, then each segment the first time it is cumulatively acknowledged or SACKed.
     */
    public int deliveredSegments(int c) {
        return rows.get(INT, base(c) + DELIVERED_SEGMENTS_OFFSET);
    }

    public void deliveredSegments(int c, int value) {
        rows.set(INT, base(c) + DELIVERED_SEGMENTS_OFFSET, value);
    }

    /** Of {@link #deliveredSegments}, those an ACK with ECE delivered (Linux's delivered_ce). */
    public int deliveredCe(int c) {
        return rows.get(INT, base(c) + DELIVERED_CE_OFFSET);
    }

    public void deliveredCe(int c, int value) {
        rows.set(INT, base(c) + DELIVERED_CE_OFFSET, value);
    }

    /** Linux's tp->reordering (TCP_INFO's tcpi_reordering): how far segments were reordered, in segments. */
    public int reordering(int c) {
        return rows.get(INT, base(c) + REORDERING_OFFSET);
    }

    public void reordering(int c, int value) {
        rows.set(INT, base(c) + REORDERING_OFFSET, value);
    }

    /** Linux's tp->reord_seen (TCP_INFO's tcpi_reord_seen): how many times reordering was seen. */
    public int reorderings(int c) {
        return rows.get(INT, base(c) + REORDERINGS_OFFSET);
    }

    public void reorderings(int c, int value) {
        rows.set(INT, base(c) + REORDERINGS_OFFSET, value);
    }

    /** When the windowed minimum RTT was taken. */
    public long minRttAtNs(int c) {
        return rows.get(LONG, base(c) + MIN_RTT_AT_OFFSET);
    }

    public void minRttAtNs(int c, long value) {
        rows.set(LONG, base(c) + MIN_RTT_AT_OFFSET, value);
    }

    /** Congestion control private. */
    public long ccLong2(int c) {
        return rows.get(LONG, base(c) + CC_LONG2_OFFSET);
    }

    public void ccLong2(int c, long value) {
        rows.set(LONG, base(c) + CC_LONG2_OFFSET, value);
    }

    /** Congestion control private. */
    public long ccLong3(int c) {
        return rows.get(LONG, base(c) + CC_LONG3_OFFSET);
    }

    public void ccLong3(int c, long value) {
        rows.set(LONG, base(c) + CC_LONG3_OFFSET, value);
    }

    /**
     * C.app_limited (draft-cheng-iccrg-delivery-rate-estimation §3.2): the delivered count, low 32 bits, at which the
     * application-limited period ends; 0 when the sender is not application limited.
     */
    public int appLimited(int c) {
        return rows.get(INT, base(c) + APP_LIMITED_OFFSET);
    }

    public void appLimited(int c, int value) {
        rows.set(INT, base(c) + APP_LIMITED_OFFSET, value);
    }

    /** C.delivered_time: when {@link #delivered} last grew (or the flight started from empty). */
    public long deliveredAtNs(int c) {
        return rows.get(LONG, base(c) + DELIVERED_AT_OFFSET);
    }

    public void deliveredAtNs(int c, long value) {
        rows.set(LONG, base(c) + DELIVERED_AT_OFFSET, value);
    }

    /** C.first_sent_time: the send time of the newest segment delivered so far (the start of a send interval). */
    public long firstSentNs(int c) {
        return rows.get(LONG, base(c) + FIRST_SENT_OFFSET);
    }

    public void firstSentNs(int c, long value) {
        rows.set(LONG, base(c) + FIRST_SENT_OFFSET, value);
    }

    /** Bytes ever marked lost, wrapping at 32 bits (only differences are read: the loss of one flight). */
    public int lostTotal(int c) {
        return rows.get(INT, base(c) + LOST_TOTAL_OFFSET);
    }

    public void lostTotal(int c, int value) {
        rows.set(INT, base(c) + LOST_TOTAL_OFFSET, value);
    }

    /** SenderState.OPEN, RECOVERY (fast recovery) or LOSS (after a retransmission timeout). */
    public int senderState(int c) {
        return rows.get(INT, base(c) + SENDER_STATE_OFFSET);
    }

    public void senderState(int c, int value) {
        rows.set(INT, base(c) + SENDER_STATE_OFFSET, value);
    }

    /** What the sender timer (T_SENDER) is armed for: TcpSender.TIMER_*. */
    public int senderTimerKind(int c) {
        return rows.get(INT, base(c) + SENDER_TIMER_KIND_OFFSET);
    }

    public void senderTimerKind(int c, int value) {
        rows.set(INT, base(c) + SENDER_TIMER_KIND_OFFSET, value);
    }

    /** SenderState.S_* bits. */
    public int senderFlags(int c) {
        return rows.get(INT, base(c) + SENDER_FLAGS_OFFSET);
    }

    public void senderFlags(int c, int value) {
        rows.set(INT, base(c) + SENDER_FLAGS_OFFSET, value);
    }

    /** RACK.end_seq (RFC 8985 §6.1). */
    public int rackEndSeq(int c) {
        return rows.get(INT, base(c) + RACK_END_SEQ_OFFSET);
    }

    public void rackEndSeq(int c, int value) {
        rows.set(INT, base(c) + RACK_END_SEQ_OFFSET, value);
    }

    /** RACK.rtt: the RTT of the segment that set RACK.xmit_ts, µs. */
    public int rackRttUs(int c) {
        return rows.get(INT, base(c) + RACK_RTT_US_OFFSET);
    }

    public void rackRttUs(int c, int value) {
        rows.set(INT, base(c) + RACK_RTT_US_OFFSET, value);
    }

    /** RACK.fack: the highest sequence number acknowledged or SACKed so far (end, exclusive). */
    public int fack(int c) {
        return rows.get(INT, base(c) + FACK_OFFSET);
    }

    public void fack(int c, int value) {
        rows.set(INT, base(c) + FACK_OFFSET, value);
    }

    /** Windowed minimum RTT in µs (RACK.min_RTT), 0 before the first sample. */
    public int minRttUs(int c) {
        return rows.get(INT, base(c) + MIN_RTT_US_OFFSET);
    }

    public void minRttUs(int c, int value) {
        rows.set(INT, base(c) + MIN_RTT_US_OFFSET, value);
    }

    /** RACK.reo_wnd_mult (RFC 8985 §6.2 step 4). */
    public int reoWndMult(int c) {
        return rows.get(INT, base(c) + REO_WND_MULT_OFFSET);
    }

    public void reoWndMult(int c, int value) {
        rows.set(INT, base(c) + REO_WND_MULT_OFFSET, value);
    }

    /** RACK.reo_wnd_persist. */
    public int reoWndPersist(int c) {
        return rows.get(INT, base(c) + REO_WND_PERSIST_OFFSET);
    }

    public void reoWndPersist(int c, int value) {
        rows.set(INT, base(c) + REO_WND_PERSIST_OFFSET, value);
    }

    /** RACK.dsack_round: SND.MAX when a D-SACK last widened the reordering window (valid with S_DSACK_ROUND). */
    public int dsackRound(int c) {
        return rows.get(INT, base(c) + DSACK_ROUND_OFFSET);
    }

    public void dsackRound(int c, int value) {
        rows.set(INT, base(c) + DSACK_ROUND_OFFSET, value);
    }

    /** TLP.end_seq (RFC 8985 §7.4), valid with S_TLP_OUTSTANDING. */
    public int tlpEndSeq(int c) {
        return rows.get(INT, base(c) + TLP_END_SEQ_OFFSET);
    }

    public void tlpEndSeq(int c, int value) {
        rows.set(INT, base(c) + TLP_END_SEQ_OFFSET, value);
    }

    /** prr_delivered (RFC 9937): bytes delivered since recovery began. */
    public int prrDelivered(int c) {
        return rows.get(INT, base(c) + PRR_DELIVERED_OFFSET);
    }

    public void prrDelivered(int c, int value) {
        rows.set(INT, base(c) + PRR_DELIVERED_OFFSET, value);
    }

    /** prr_out: bytes sent since recovery began. */
    public int prrOut(int c) {
        return rows.get(INT, base(c) + PRR_OUT_OFFSET);
    }

    public void prrOut(int c, int value) {
        rows.set(INT, base(c) + PRR_OUT_OFFSET, value);
    }

    /** RecoverFS: the flight size when recovery began. */
    public int recoverFs(int c) {
        return rows.get(INT, base(c) + RECOVER_FS_OFFSET);
    }

    public void recoverFs(int c, int value) {
        rows.set(INT, base(c) + RECOVER_FS_OFFSET, value);
    }

    /** HighRxt (RFC 6675 §2): the end of the highest retransmitted segment in this recovery. */
    public int highRxt(int c) {
        return rows.get(INT, base(c) + HIGH_RXT_OFFSET);
    }

    public void highRxt(int c, int value) {
        rows.set(INT, base(c) + HIGH_RXT_OFFSET, value);
    }

    /** RescueRxt (RFC 6675 §2), valid with S_RESCUE_SENT. */
    public int rescueRxt(int c) {
        return rows.get(INT, base(c) + RESCUE_RXT_OFFSET);
    }

    public void rescueRxt(int c, int value) {
        rows.set(INT, base(c) + RESCUE_RXT_OFFSET, value);
    }

    /** cwnd before the last reduction (undo, RFC 3708 / RFC 3522). */
    public int priorCwnd(int c) {
        return rows.get(INT, base(c) + PRIOR_CWND_OFFSET);
    }

    public void priorCwnd(int c, int value) {
        rows.set(INT, base(c) + PRIOR_CWND_OFFSET, value);
    }

    /** ssthresh before the last reduction. */
    public int priorSsthresh(int c) {
        return rows.get(INT, base(c) + PRIOR_SSTHRESH_OFFSET);
    }

    public void priorSsthresh(int c, int value) {
        rows.set(INT, base(c) + PRIOR_SSTHRESH_OFFSET, value);
    }

    /** SND.UNA when the episode that may be undone began (valid with S_UNDO_POSSIBLE). */
    public int undoMarker(int c) {
        return rows.get(INT, base(c) + UNDO_MARKER_OFFSET);
    }

    public void undoMarker(int c, int value) {
        rows.set(INT, base(c) + UNDO_MARKER_OFFSET, value);
    }

    /** Retransmissions of the episode not yet shown spurious by a D-SACK (RFC 3708). */
    public int undoRetrans(int c) {
        return rows.get(INT, base(c) + UNDO_RETRANS_OFFSET);
    }

    public void undoRetrans(int c, int value) {
        rows.set(INT, base(c) + UNDO_RETRANS_OFFSET, value);
    }

    /** Index of the loss detection. */
    public int lossDetectionId(int c) {
        return rows.get(INT, base(c) + LOSS_DETECTION_ID_OFFSET);
    }

    public void lossDetectionId(int c, int value) {
        rows.set(INT, base(c) + LOSS_DETECTION_ID_OFFSET, value);
    }

    /** Index of the loss recovery. */
    public int recoveryId(int c) {
        return rows.get(INT, base(c) + RECOVERY_ID_OFFSET);
    }

    public void recoveryId(int c, int value) {
        rows.set(INT, base(c) + RECOVERY_ID_OFFSET, value);
    }

    /** Congestion control private. */
    public int ccInt2(int c) {
        return rows.get(INT, base(c) + CC_INT2_OFFSET);
    }

    public void ccInt2(int c, int value) {
        rows.set(INT, base(c) + CC_INT2_OFFSET, value);
    }

    /** Congestion control private. */
    public int ccInt3(int c) {
        return rows.get(INT, base(c) + CC_INT3_OFFSET);
    }

    public void ccInt3(int c, int value) {
        rows.set(INT, base(c) + CC_INT3_OFFSET, value);
    }

    /** Congestion control private. */
    public int ccInt4(int c) {
        return rows.get(INT, base(c) + CC_INT4_OFFSET);
    }

    public void ccInt4(int c, int value) {
        rows.set(INT, base(c) + CC_INT4_OFFSET, value);
    }

    /** Congestion control private. */
    public int ccInt5(int c) {
        return rows.get(INT, base(c) + CC_INT5_OFFSET);
    }

    public void ccInt5(int c, int value) {
        rows.set(INT, base(c) + CC_INT5_OFFSET, value);
    }

    /** Our TSval of the episode's first retransmission (Eifel detection, RFC 3522). */
    public int undoTsVal(int c) {
        return rows.get(INT, base(c) + UNDO_TS_VAL_OFFSET);
    }

    public void undoTsVal(int c, int value) {
        rows.set(INT, base(c) + UNDO_TS_VAL_OFFSET, value);
    }

    /** SND.MAX when the episode ended: D-SACKs for it may undo until SND.UNA passes this. */
    public int undoHorizon(int c) {
        return rows.get(INT, base(c) + UNDO_HORIZON_OFFSET);
    }

    public void undoHorizon(int c, int value) {
        rows.set(INT, base(c) + UNDO_HORIZON_OFFSET, value);
    }

    /** Tail loss probes sent since the last new acknowledgment. */
    public int probeCount(int c) {
        return rows.get(INT, base(c) + PROBE_COUNT_OFFSET);
    }

    public void probeCount(int c, int value) {
        rows.set(INT, base(c) + PROBE_COUNT_OFFSET, value);
    }

    /** This connection's retransmission limit (RFC 9293 R2, MUST-21); 0: the layer's ({@link TcpConfig}). */
    public int maxRetries(int c) {
        return rows.get(INT, base(c) + MAX_RETRIES_OFFSET);
    }

    public void maxRetries(int c, int value) {
        rows.set(INT, base(c) + MAX_RETRIES_OFFSET, value);
    }

    /** The IPv4 TOS byte (DSCP and ECN bits) of this connection's segments (RFC 9293 MUST-48); 0 by default. */
    public int tos(int c) {
        return rows.get(INT, base(c) + TOS_OFFSET);
    }

    public void tos(int c, int value) {
        rows.set(INT, base(c) + TOS_OFFSET, value);
    }

    /** ECN's state bits ({@link Ecn}); 0 (no ECN) by default. */
    int ecnState(int c) {
        return rows.get(INT, base(c) + ECN_STATE_OFFSET);
    }

    void ecnState(int c, int value) {
        rows.set(INT, base(c) + ECN_STATE_OFFSET, value);
    }

    /** SND.MAX when the window was last reduced: ECE is answered again only for an ACK beyond it (RFC 3168 §6.1.2). */
    int ecnHigh(int c) {
        return rows.get(INT, base(c) + ECN_HIGH_OFFSET);
    }

    void ecnHigh(int c, int value) {
        rows.set(INT, base(c) + ECN_HIGH_OFFSET, value);
    }

    /** When the retransmission timer of the current timeout episode fired (F-RTO, RFC 5682). */
    public long lossAtNs(int c) {
        return rows.get(LONG, base(c) + LOSS_AT_OFFSET);
    }

    public void lossAtNs(int c, long value) {
        rows.set(LONG, base(c) + LOSS_AT_OFFSET, value);
    }

    /** TCP_MAXSEG: the owner's bound on the MSS offered and used (bytes before options); 0: none. */
    public int userMss(int c) {
        return rows.get(INT, base(c) + USER_MSS_OFFSET);
    }

    public void userMss(int c, int value) {
        rows.set(INT, base(c) + USER_MSS_OFFSET, value);
    }

    /**
     * When the data now waiting for its acknowledgment was first sent, taken at its first retransmission (Linux's
     * retrans_stamp); 0 while nothing was retransmitted since the last new acknowledgment. The user timeout counts
     * from here.
     */
    public long stallStartNs(int c) {
        return rows.get(LONG, base(c) + STALL_START_OFFSET);
    }

    public void stallStartNs(int c, long value) {
        rows.set(LONG, base(c) + STALL_START_OFFSET, value);
    }

    /** When the first probe of the current zero window went (Linux's icsk_probes_tstamp); 0 while none did. */
    public long zeroWindowSinceNs(int c) {
        return rows.get(LONG, base(c) + ZERO_WINDOW_SINCE_OFFSET);
    }

    public void zeroWindowSinceNs(int c, long value) {
        rows.set(LONG, base(c) + ZERO_WINDOW_SINCE_OFFSET, value);
    }

    /** When new data last arrived in order (TCP_INFO's last_data_recv). */
    public long lastDataReceiveNs(int c) {
        return rows.get(LONG, base(c) + LAST_DATA_RECEIVE_OFFSET);
    }

    public void lastDataReceiveNs(int c, long value) {
        rows.set(LONG, base(c) + LAST_DATA_RECEIVE_OFFSET, value);
    }

    /** TCP_USER_TIMEOUT (RFC 5482) in milliseconds; 0: none, the retry count bounds the connection. */
    public int userTimeoutMs(int c) {
        return rows.get(INT, base(c) + USER_TIMEOUT_MS_OFFSET);
    }

    public void userTimeoutMs(int c, int value) {
        rows.set(INT, base(c) + USER_TIMEOUT_MS_OFFSET, value);
    }

    /** TCP_NOTSENT_LOWAT: writable only while fewer unsent bytes wait than this; 0: the layer's default. */
    public int notsentLowat(int c) {
        return rows.get(INT, base(c) + NOTSENT_LOWAT_OFFSET);
    }

    public void notsentLowat(int c, int value) {
        rows.set(INT, base(c) + NOTSENT_LOWAT_OFFSET, value);
    }
}
