package dev.tern.tcp;

import dev.tern.core.counters.CountersFile;
import org.agrona.concurrent.status.AtomicCounter;

/**
 * The {@code tcp.*} counters of one layer, as {@code tern stat} shows them. Updated only by the shard thread
 * ({@code incrementRelease}: a plain store with ordering, no lock prefix).
 *
 * <p>Drop reasons are indexed by code ({@code DROP_*}) in {@link #drops}, named {@code tcp.drop.<reason>}.
 */
final class TcpCounters {
    static final int DROP_TOO_SHORT = 1;
    static final int DROP_BAD_DATA_OFFSET = 2;
    static final int DROP_BAD_CHECKSUM = 3;
    static final int DROP_NOT_UNICAST = 4;
    static final int DROP_NO_SOCKET = 5;
    static final int DROP_OUT_OF_WINDOW = 6;
    static final int DROP_RST_IGNORED = 7;
    static final int DROP_BAD_ACK = 8;
    static final int DROP_PAWS = 9;
    static final int DROP_NO_ACK = 10;
    static final int DROP_OUT_OF_ORDER_FULL = 11;
    static final int DROP_LISTEN_OVERFLOW = 12;
    static final int DROP_SYN_QUEUE_FULL = 13;
    static final int DROP_NO_CONNECTION_SLOT = 14;
    static final int DROP_BAD_COOKIE = 15;
    static final int DROP_DATA_AFTER_CLOSE = 16;
    static final int DROP_BAD_STATE = 17;
    static final int DROP_SYN_DATA = 18;
    static final int DROP_ZERO_PORT = 19;
    static final int DROP_SYN_FIN = 20;
    static final int DROP_MEMORY_LIMIT = 21;
    static final int DROP_SYN_PRESSURE = 22;
    /** Out-of-order text beyond the first held range, refused while the memory budget is at its limit. */
    static final int DROP_OUT_OF_ORDER_MEMORY = 23;
    /** A SYN from a source Tern has no route back to (Linux's OutNoRoutes): no state is kept for it. */
    static final int DROP_NO_ROUTE = 24;
    /** A segment whose connection key is another connection's (the other family, or a colliding IPv6 fold). */
    static final int DROP_KEY_COLLISION = 25;
    static final String[] DROP_NAMES = {null, "too_short", "bad_data_offset", "bad_checksum", "not_unicast",
        "no_socket", "out_of_window", "rst_ignored", "bad_ack", "paws", "no_ack", "out_of_order_full",
        "listen_overflow", "syn_queue_full", "no_connection_slot", "bad_cookie", "data_after_close", "bad_state",
        "syn_data", "zero_port", "syn_fin", "memory_limit", "syn_pressure", "out_of_order_memory",
        "no_route", "key_collision"};

    final AtomicCounter[] drops;
    final AtomicCounter rxSegments;
    final AtomicCounter rxBytes;
    final AtomicCounter rxOutOfOrder;
    final AtomicCounter rxDuplicateBytes;
    final AtomicCounter rxBeyondWindowBytes;
    final AtomicCounter rxBadOptions;
    final AtomicCounter rxCopiedBytes;
    final AtomicCounter rxZeroCopyBytes;
    final AtomicCounter rxHandlerRingBytes;
    final AtomicCounter rxHeldBytes;
    final AtomicCounter rxHandlerErrors;
    final AtomicCounter txSegments;
    final AtomicCounter txBytes;
    final AtomicCounter txRetransmits;
    final AtomicCounter completionsTracked;
    final AtomicCounter ecnNegotiated;
    final AtomicCounter ecnCeReceived;
    final AtomicCounter ecnEceSent;
    final AtomicCounter ecnEceReceived;
    final AtomicCounter ecnCwrSent;
    final AtomicCounter ecnCwrReceived;
    final AtomicCounter ecnReductions;
    /** Delivery rate samples discarded: no forward progress, or an interval empty or shorter than the minimum RTT. */
    final AtomicCounter rateSamplesDiscarded;
    final AtomicCounter ecnIgnored;
    final AtomicCounter completionsDone;
    final AtomicCounter completionNotices;
    final AtomicCounter completionsRefused;
    final AtomicCounter txTimeoutRetransmits;
    final AtomicCounter txFastRetransmits;
    final AtomicCounter txResets;
    final AtomicCounter txNoBuffer;
    final AtomicCounter txDelayedAcks;
    final AtomicCounter txDsack;
    final AtomicCounter txSackBlocks;
    final AtomicCounter txWindowProbes;
    final AtomicCounter txKeepalives;
    final AtomicCounter txWindowUpdates;
    final AtomicCounter txDuplicateAcksSuppressed;
    final AtomicCounter tsoSegments;
    final AtomicCounter challengeAcks;
    final AtomicCounter challengeAcksSuppressed;
    final AtomicCounter cookiesSent;
    final AtomicCounter cookiesValidated;
    final AtomicCounter fastOpenPassive;
    final AtomicCounter fastOpenPassiveFailures;
    final AtomicCounter fastOpenPassiveAlternateKey;
    final AtomicCounter fastOpenCookieRequests;
    final AtomicCounter fastOpenListenOverflows;
    final AtomicCounter fastOpenActive;
    final AtomicCounter fastOpenActiveFailures;
    final AtomicCounter fastOpenPathsDisabled;
    final AtomicCounter fastOpenActiveDisabled;
    final AtomicCounter activeOpens;
    final AtomicCounter passiveOpens;
    final AtomicCounter accepted;
    final AtomicCounter established;
    final AtomicCounter resetsReceived;
    final AtomicCounter refused;
    final AtomicCounter timedOut;
    /** Of timedOut: ended by TCP_USER_TIMEOUT (RFC 5482) rather than the retry or probe count. */
    final AtomicCounter userTimeouts;
    final AtomicCounter aborted;
    final AtomicCounter closed;
    final AtomicCounter timeWaitRecycled;
    /** Connections that skipped TIME-WAIT because maxTimeWait were in it (Linux TCPTimeWaitOverflow). */
    final AtomicCounter timeWaitOverflows;
    final AtomicCounter halfOpenExpired;
    final AtomicCounter connectTimeouts;
    /** Half-open passive connections ended by the peer's reset (Linux EmbryonicRsts): a SYN flood's usual end. */
    final AtomicCounter halfOpenResets;
    /** Connections reset for a SYN in their window (RFC 793's rule, {@link SegmentChecks#inWindowSyns}). */
    final AtomicCounter synResets;
    final AtomicCounter memoryPressureOpens;
    /** Times the layer went under memory pressure (Linux TCPMemoryPressures); a gauge, 1 while it lasts. */
    final AtomicCounter memoryPressureEpisodes;
    final AtomicCounter memoryPressureActive;
    /** Open connections whose advertised window memory pressure held back, once each until it reopened. */
    final AtomicCounter memoryPressureClamps;
    /** Of those, connections sent a window update when the pressure ended. */
    final AtomicCounter memoryPressureReopens;
    /** Pages of idle connections' empty receive rings the stack handed back under pressure, in bytes. */
    final AtomicCounter memoryReclaimedBytes;
    /** Segments for no connection left unanswered (no reset) while the link's receive ring was under pressure. */
    final AtomicCounter unansweredUnderPressure;
    /** Linux's ListenOverflows: segments dropped because a listener's accept queue was full. */
    final AtomicCounter listenOverflows;
    /** Linux's ListenDrops: every segment a listener dropped (the overflows included). */
    final AtomicCounter listenDrops;
    /** Gauges, set when connections take or give back buffers. */
    final AtomicCounter memoryInUseBytes;
    final AtomicCounter memoryAttachedBytes;
    final AtomicCounter memoryMappedBytes;
    final AtomicCounter ringsAttached;
    final AtomicCounter ringsReleasedIdle;
    /** Connections back from idle that attached their rings while the budget was beyond its limit. */
    final AtomicCounter memoryOverLimitAttaches;
    final AtomicCounter memoryReturnedBytes;
    final AtomicCounter timeWaitReused;
    final AtomicCounter pmtuUpdates;
    final AtomicCounter icmpErrors;
    final AtomicCounter rtoExpired;
    final AtomicCounter r1Advice;
    final AtomicCounter recoveries;
    final AtomicCounter sackRecoveries;
    final AtomicCounter txProbeRetransmits;
    final AtomicCounter txRescueRetransmits;
    final AtomicCounter txTailLossProbes;
    final AtomicCounter probeRepairs;
    final AtomicCounter reorderTimeoutLosses;
    final AtomicCounter undoDsack;
    final AtomicCounter undoTimestamp;
    final AtomicCounter undoFrto;
    final AtomicCounter rxDsack;
    final AtomicCounter rxBadSackBlocks;
    final AtomicCounter sackReneging;
    final AtomicCounter txRecordFull;
    final AtomicCounter txImmediateAcks;
    final AtomicCounter rackMarkedLost;
    final AtomicCounter dupThreshMarkedLost;

    TcpCounters(CountersFile counters) {
        drops = counters.counters("tcp.drop.", DROP_NAMES);
        rxSegments = counters.counter("tcp.rx.segments");
        rxBytes = counters.counter("tcp.rx.bytes");
        rxOutOfOrder = counters.counter("tcp.rx.out_of_order");
        rxDuplicateBytes = counters.counter("tcp.rx.duplicate_bytes");
        rxBeyondWindowBytes = counters.counter("tcp.rx.beyond_window_bytes");
        rxBadOptions = counters.counter("tcp.rx.bad_options");
        rxCopiedBytes = counters.counter("tcp.rx.copied_bytes");
        rxZeroCopyBytes = counters.counter("tcp.rx.zero_copy_bytes");
        rxHandlerRingBytes = counters.counter("tcp.rx.handler_ring_bytes");
        rxHeldBytes = counters.counter("tcp.rx.held_bytes");
        rxHandlerErrors = counters.counter("tcp.rx.handler_errors");
        txSegments = counters.counter("tcp.tx.segments");
        txBytes = counters.counter("tcp.tx.bytes");
        txRetransmits = counters.counter("tcp.tx.retransmits");
        completionsTracked = counters.counter("tcp.tx.completions.tracked");
        ecnNegotiated = counters.counter("tcp.ecn.negotiated");
        ecnCeReceived = counters.counter("tcp.ecn.ce_received");
        ecnEceSent = counters.counter("tcp.ecn.ece_sent");
        ecnEceReceived = counters.counter("tcp.ecn.ece_received");
        ecnCwrSent = counters.counter("tcp.ecn.cwr_sent");
        ecnCwrReceived = counters.counter("tcp.ecn.cwr_received");
        ecnReductions = counters.counter("tcp.ecn.reductions");
        rateSamplesDiscarded = counters.counter("tcp.rate.samples_discarded");
        ecnIgnored = counters.counter("tcp.ecn.ignored");
        completionsDone = counters.counter("tcp.tx.completions.done");
        completionNotices = counters.counter("tcp.tx.completions.notices");
        completionsRefused = counters.counter("tcp.tx.completions.refused");
        txTimeoutRetransmits = counters.counter("tcp.tx.retransmits.timeout");
        txFastRetransmits = counters.counter("tcp.tx.retransmits.fast");
        txResets = counters.counter("tcp.tx.resets");
        txNoBuffer = counters.counter("tcp.tx.no_buffer");
        txDelayedAcks = counters.counter("tcp.tx.delayed_acks");
        txDsack = counters.counter("tcp.tx.dsack");
        txSackBlocks = counters.counter("tcp.tx.sack_blocks");
        txWindowProbes = counters.counter("tcp.tx.window_probes");
        txKeepalives = counters.counter("tcp.tx.keepalives");
        txWindowUpdates = counters.counter("tcp.tx.window_updates");
        txDuplicateAcksSuppressed = counters.counter("tcp.tx.duplicate_acks_suppressed");
        tsoSegments = counters.counter("tcp.tx.tso_segments");
        challengeAcks = counters.counter("tcp.challenge_acks");
        challengeAcksSuppressed = counters.counter("tcp.challenge_acks.suppressed");
        cookiesSent = counters.counter("tcp.syncookies.sent");
        cookiesValidated = counters.counter("tcp.syncookies.validated");
        fastOpenPassive = counters.counter("tcp.fastopen.passive");
        fastOpenPassiveFailures = counters.counter("tcp.fastopen.passive_failures");
        fastOpenPassiveAlternateKey = counters.counter("tcp.fastopen.passive_backup_key");
        fastOpenCookieRequests = counters.counter("tcp.fastopen.cookie_requests");
        fastOpenListenOverflows = counters.counter("tcp.fastopen.listen_overflows");
        fastOpenActive = counters.counter("tcp.fastopen.active");
        fastOpenActiveFailures = counters.counter("tcp.fastopen.active_failures");
        fastOpenPathsDisabled = counters.counter("tcp.fastopen.paths_disabled");
        fastOpenActiveDisabled = counters.counter("tcp.fastopen.active_disabled");
        activeOpens = counters.counter("tcp.conn.active_opens");
        passiveOpens = counters.counter("tcp.conn.passive_opens");
        accepted = counters.counter("tcp.conn.accepted");
        established = counters.counter("tcp.conn.established");
        resetsReceived = counters.counter("tcp.conn.resets_received");
        refused = counters.counter("tcp.conn.refused");
        timedOut = counters.counter("tcp.conn.timed_out");
        userTimeouts = counters.counter("tcp.conn.user_timeouts");
        aborted = counters.counter("tcp.conn.aborted");
        closed = counters.counter("tcp.conn.closed");
        timeWaitRecycled = counters.counter("tcp.conn.time_wait_recycled");
        timeWaitOverflows = counters.counter("tcp.conn.time_wait_overflows");
        halfOpenExpired = counters.counter("tcp.conn.half_open_expired");
        connectTimeouts = counters.counter("tcp.conn.connect_timeouts");
        halfOpenResets = counters.counter("tcp.conn.half_open_resets");
        synResets = counters.counter("tcp.conn.syn_resets");
        memoryPressureOpens = counters.counter("tcp.memory.pressure_opens");
        memoryPressureEpisodes = counters.counter("tcp.memory.pressure_episodes");
        memoryPressureActive = counters.counter("tcp.memory.pressure");
        memoryPressureClamps = counters.counter("tcp.memory.pressure_clamps");
        memoryPressureReopens = counters.counter("tcp.memory.pressure_reopens");
        memoryReclaimedBytes = counters.counter("tcp.memory.reclaimed_bytes");
        unansweredUnderPressure = counters.counter("tcp.rx.unanswered_pressure");
        listenOverflows = counters.counter("tcp.listen.overflows");
        listenDrops = counters.counter("tcp.listen.drops");
        memoryInUseBytes = counters.counter("tcp.memory.in_use_bytes");
        memoryAttachedBytes = counters.counter("tcp.memory.attached_bytes");
        memoryMappedBytes = counters.counter("tcp.memory.mapped_bytes");
        ringsAttached = counters.counter("tcp.memory.rings_attached");
        ringsReleasedIdle = counters.counter("tcp.memory.rings_released_idle");
        memoryOverLimitAttaches = counters.counter("tcp.memory.over_limit_attaches");
        memoryReturnedBytes = counters.counter("tcp.memory.returned_bytes");
        timeWaitReused = counters.counter("tcp.conn.time_wait_reused");
        pmtuUpdates = counters.counter("tcp.pmtu_updates");
        icmpErrors = counters.counter("tcp.icmp_errors");
        rtoExpired = counters.counter("tcp.rto_expired");
        r1Advice = counters.counter("tcp.retrans.r1_advice");
        recoveries = counters.counter("tcp.fast_recoveries");
        sackRecoveries = counters.counter("tcp.fast_recoveries.sack");
        txProbeRetransmits = counters.counter("tcp.tx.retransmits.probe");
        txRescueRetransmits = counters.counter("tcp.tx.retransmits.rescue");
        txTailLossProbes = counters.counter("tcp.tx.tail_loss_probes");
        probeRepairs = counters.counter("tcp.tail_loss_probes.repaired");
        reorderTimeoutLosses = counters.counter("tcp.rack.reorder_timeouts");
        undoDsack = counters.counter("tcp.undo.dsack");
        undoTimestamp = counters.counter("tcp.undo.timestamp");
        undoFrto = counters.counter("tcp.undo.frto");
        rxDsack = counters.counter("tcp.rx.dsack");
        rxBadSackBlocks = counters.counter("tcp.rx.bad_sack_blocks");
        sackReneging = counters.counter("tcp.rx.sack_reneging");
        txRecordFull = counters.counter("tcp.tx.record_full");
        txImmediateAcks = counters.counter("tcp.tx.immediate_acks");
        rackMarkedLost = counters.counter("tcp.rack.marked_lost");
        dupThreshMarkedLost = counters.counter("tcp.dupthresh.marked_lost");
    }

    void drop(int reason) {
        drops[reason].incrementRelease();
    }
}
