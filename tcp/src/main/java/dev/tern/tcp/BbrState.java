package dev.tern.tcp;

import dev.tern.core.memory.PageMemory;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * BBR's per-connection state (draft-ietf-ccwg-bbr §4.2's BBR.* variables), far more than the row's cc cells hold:
 * an off-heap table with one fixed-size slot per connection slot of the layer's {@link TcpControlBlocks}, read and
 * written through accessors taking the slot, as the row is. Every field is aligned to its width; OffHeapLayoutsTest
 * checks the offsets against {@link #SLOT_BYTES}.
 *
 * <p>Mapped once, when a layer registers {@link BbrCongestionControl}, by the page and not allocated (as the
 * control-block table): a page becomes resident only when a BBR connection first takes a slot in it, so a layer sized
 * for a million connections that never uses BBR costs address space only. The automatic arena unmaps it when the
 * layer's control is unreachable. A slot is cleared by {@link BbrCongestionControl#init}, so a reused slot holds
 * nothing stale. Owned by the shard thread; not thread-safe.
 */
final class BbrState {
    /** Bytes per slot: a whole number of cache lines. */
    static final int SLOT_BYTES = 256;
    /** Startup has seen the pipe full (BBR.filled_pipe, §4.3.1.2). */
    static final int F_FILLED_PIPE = 1;
    /** This ACK started a round (BBR.round_start). */
    static final int F_ROUND_START = 1 << 1;
    /** This ACK started a loss round (BBR.loss_round_start). */
    static final int F_LOSS_ROUND_START = 1 << 2;
    /** A loss (or an ECE) was seen in this loss round (BBR.loss_in_round). */
    static final int F_LOSS_IN_ROUND = 1 << 3;
    /** Sending restarted after idle and nothing was delivered since (BBR.idle_restart). */
    static final int F_IDLE_RESTART = 1 << 4;
    /** The first round of fast recovery (BBR.packet_conservation, §4.6.4.4). */
    static final int F_PACKET_CONSERVATION = 1 << 5;
    /** In fast recovery or after a timeout, with prior_cwnd saved (BBR.in_loss_recovery). */
    static final int F_IN_LOSS_RECOVERY = 1 << 6;
    /** ProbeRTT has held its window for a round (BBR.probe_rtt_round_done). */
    static final int F_PROBE_RTT_ROUND_DONE = 1 << 7;
    /** Samples now come from data sent while probing bandwidth (BBR.bw_probe_samples). */
    static final int F_BW_PROBE_SAMPLES = 1 << 8;
    /** An ECE arrived in this loss round. */
    static final int F_ECN_IN_ROUND = 1 << 9;

    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT;
    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG;
    private static final int MAX_BW0_OFFSET = 0;
    private static final int MAX_BW1_OFFSET = 8;
    private static final int BW_LO_OFFSET = 16;
    private static final int BW_LATEST_OFFSET = 24;
    private static final int MIN_RTT_NS_OFFSET = 32;
    private static final int MIN_RTT_STAMP_NS_OFFSET = 40;
    private static final int PROBE_RTT_MIN_NS_OFFSET = 48;
    private static final int PROBE_RTT_MIN_STAMP_NS_OFFSET = 56;
    private static final int PROBE_RTT_DONE_NS_OFFSET = 64;
    private static final int CYCLE_STAMP_NS_OFFSET = 72;
    private static final int BW_PROBE_WAIT_NS_OFFSET = 80;
    private static final int NEXT_ROUND_DELIVERED_OFFSET = 88;
    private static final int LOSS_ROUND_DELIVERED_OFFSET = 96;
    private static final int ROUND_COUNT_OFFSET = 104;
    private static final int FULL_BW_OFFSET = 112;
    private static final int EXTRA_ACKED_START_NS_OFFSET = 120;
    private static final int EXTRA_ACKED_DELIVERED_OFFSET = 128;
    private static final int RANDOM_OFFSET = 136;
    private static final int PACING_RATE_OFFSET = 144;
    private static final int STATE_OFFSET = 152;
    private static final int FLAGS_OFFSET = 156;
    private static final int CWND_OFFSET = 160;
    private static final int PRIOR_CWND_OFFSET = 164;
    private static final int INFLIGHT_HI_OFFSET = 168;
    private static final int INFLIGHT_LO_OFFSET = 172;
    private static final int INFLIGHT_LATEST_OFFSET = 176;
    private static final int FULL_BW_COUNT_OFFSET = 180;
    private static final int ROUNDS_SINCE_BW_PROBE_OFFSET = 184;
    private static final int BW_PROBE_UP_CNT_OFFSET = 188;
    private static final int BW_PROBE_UP_ACKS_OFFSET = 192;
    private static final int BW_PROBE_UP_ROUNDS_OFFSET = 196;
    private static final int ACK_PHASE_OFFSET = 200;
    private static final int EXTRA_ACKED0_OFFSET = 204;
    private static final int EXTRA_ACKED1_OFFSET = 208;
    private static final int EXTRA_ACKED_ROUNDS_OFFSET = 212;
    private static final int LOSS_EVENTS_IN_ROUND_OFFSET = 216;
    private static final int SEND_QUANTUM_OFFSET = 220;
    private static final int INITIAL_CWND_OFFSET = 224;
    private static final int ROUND_LOST_OFFSET = 228;
    private static final int ROUND_DELIVERED_OFFSET = 232;

    private final MemorySegment memory;
    private final int capacity;

    /** A table for {@code capacity} connection slots. */
    BbrState(int capacity) {
        this.capacity = capacity;
        final long bytes = (long) Math.max(1, capacity) * SLOT_BYTES;
        final long page = PageMemory.pageSize();
        this.memory = PageMemory.map((bytes + page - 1) / page * page, Arena.ofAuto()).asSlice(0, bytes);
    }

    int capacity() {
        return capacity;
    }

    private static long base(int c) {
        return (long) c * SLOT_BYTES;
    }

    /** Clears slot {@code c} (a new connection). */
    void clear(int c) {
        final long base = base(c);
        for (int at = 0; at < SLOT_BYTES; at += Long.BYTES) {
            memory.set(LONG, base + at, 0L);
        }
    }

    boolean has(int c, int flag) {
        return (flags(c) & flag) != 0;
    }

    void set(int c, int flag, boolean on) {
        final int flags = flags(c);
        flags(c, on ? flags | flag : flags & ~flag);
    }

    /** BBR.max_bw's filter, the older of its two ProbeBW cycles (bytes/s, §4.5.2.4). */
    long maxBw0(int c) {
        return memory.get(LONG, base(c) + MAX_BW0_OFFSET);
    }

    void maxBw0(int c, long value) {
        memory.set(LONG, base(c) + MAX_BW0_OFFSET, value);
    }

    /** BBR.max_bw's filter, the current ProbeBW cycle (bytes/s). */
    long maxBw1(int c) {
        return memory.get(LONG, base(c) + MAX_BW1_OFFSET);
    }

    void maxBw1(int c, long value) {
        memory.set(LONG, base(c) + MAX_BW1_OFFSET, value);
    }

    /** BBR.bw_lo (bytes/s; Long.MAX_VALUE: no bound, §4.5.10). */
    long bwLo(int c) {
        return memory.get(LONG, base(c) + BW_LO_OFFSET);
    }

    void bwLo(int c, long value) {
        memory.set(LONG, base(c) + BW_LO_OFFSET, value);
    }

    /** BBR.bw_latest: the highest delivery rate of the current loss round (bytes/s). */
    long bwLatest(int c) {
        return memory.get(LONG, base(c) + BW_LATEST_OFFSET);
    }

    void bwLatest(int c, long value) {
        memory.set(LONG, base(c) + BW_LATEST_OFFSET, value);
    }

    /** BBR.min_rtt (ns; Long.MAX_VALUE: none yet, §4.5.3). */
    long minRttNs(int c) {
        return memory.get(LONG, base(c) + MIN_RTT_NS_OFFSET);
    }

    void minRttNs(int c, long value) {
        memory.set(LONG, base(c) + MIN_RTT_NS_OFFSET, value);
    }

    /** BBR.min_rtt_stamp. */
    long minRttStampNs(int c) {
        return memory.get(LONG, base(c) + MIN_RTT_STAMP_NS_OFFSET);
    }

    void minRttStampNs(int c, long value) {
        memory.set(LONG, base(c) + MIN_RTT_STAMP_NS_OFFSET, value);
    }

    /** BBR.probe_rtt_min_delay (ns, §4.6.4.3). */
    long probeRttMinNs(int c) {
        return memory.get(LONG, base(c) + PROBE_RTT_MIN_NS_OFFSET);
    }

    void probeRttMinNs(int c, long value) {
        memory.set(LONG, base(c) + PROBE_RTT_MIN_NS_OFFSET, value);
    }

    /** BBR.probe_rtt_min_stamp. */
    long probeRttMinStampNs(int c) {
        return memory.get(LONG, base(c) + PROBE_RTT_MIN_STAMP_NS_OFFSET);
    }

    void probeRttMinStampNs(int c, long value) {
        memory.set(LONG, base(c) + PROBE_RTT_MIN_STAMP_NS_OFFSET, value);
    }

    /** BBR.probe_rtt_done_stamp (0: not yet draining down to the ProbeRTT window). */
    long probeRttDoneNs(int c) {
        return memory.get(LONG, base(c) + PROBE_RTT_DONE_NS_OFFSET);
    }

    void probeRttDoneNs(int c, long value) {
        memory.set(LONG, base(c) + PROBE_RTT_DONE_NS_OFFSET, value);
    }

    /** BBR.cycle_stamp: when the current ProbeBW phase began. */
    long cycleStampNs(int c) {
        return memory.get(LONG, base(c) + CYCLE_STAMP_NS_OFFSET);
    }

    void cycleStampNs(int c, long value) {
        memory.set(LONG, base(c) + CYCLE_STAMP_NS_OFFSET, value);
    }

    /** BBR.bw_probe_wait: how long after Down to probe again. */
    long bwProbeWaitNs(int c) {
        return memory.get(LONG, base(c) + BW_PROBE_WAIT_NS_OFFSET);
    }

    void bwProbeWaitNs(int c, long value) {
        memory.set(LONG, base(c) + BW_PROBE_WAIT_NS_OFFSET, value);
    }

    /** BBR.next_round_delivered: the delivered count that ends this round (§4.5.1). */
    long nextRoundDelivered(int c) {
        return memory.get(LONG, base(c) + NEXT_ROUND_DELIVERED_OFFSET);
    }

    void nextRoundDelivered(int c, long value) {
        memory.set(LONG, base(c) + NEXT_ROUND_DELIVERED_OFFSET, value);
    }

    /** BBR.loss_round_delivered: the delivered count that ends this loss round. */
    long lossRoundDelivered(int c) {
        return memory.get(LONG, base(c) + LOSS_ROUND_DELIVERED_OFFSET);
    }

    void lossRoundDelivered(int c, long value) {
        memory.set(LONG, base(c) + LOSS_ROUND_DELIVERED_OFFSET, value);
    }

    /** BBR.round_count. */
    long roundCount(int c) {
        return memory.get(LONG, base(c) + ROUND_COUNT_OFFSET);
    }

    void roundCount(int c, long value) {
        memory.set(LONG, base(c) + ROUND_COUNT_OFFSET, value);
    }

    /** BBR.full_bw: the bandwidth Startup last grew to by 25 % (bytes/s, §4.3.1.2). */
    long fullBw(int c) {
        return memory.get(LONG, base(c) + FULL_BW_OFFSET);
    }

    void fullBw(int c, long value) {
        memory.set(LONG, base(c) + FULL_BW_OFFSET, value);
    }

    /** BBR.extra_acked_interval_start (§4.5.5). */
    long extraAckedStartNs(int c) {
        return memory.get(LONG, base(c) + EXTRA_ACKED_START_NS_OFFSET);
    }

    void extraAckedStartNs(int c, long value) {
        memory.set(LONG, base(c) + EXTRA_ACKED_START_NS_OFFSET, value);
    }

    /** BBR.extra_acked_delivered: bytes acknowledged since the aggregation interval began. */
    long extraAckedDelivered(int c) {
        return memory.get(LONG, base(c) + EXTRA_ACKED_DELIVERED_OFFSET);
    }

    void extraAckedDelivered(int c, long value) {
        memory.set(LONG, base(c) + EXTRA_ACKED_DELIVERED_OFFSET, value);
    }

    /** The state of the connection's pseudo-random generator (probe wait times), seeded at init. */
    long random(int c) {
        return memory.get(LONG, base(c) + RANDOM_OFFSET);
    }

    void random(int c, long value) {
        memory.set(LONG, base(c) + RANDOM_OFFSET, value);
    }

    /** BBR.pacing_rate (bytes/s), kept here as the row's may be read by others. */
    long pacingRate(int c) {
        return memory.get(LONG, base(c) + PACING_RATE_OFFSET);
    }

    void pacingRate(int c, long value) {
        memory.set(LONG, base(c) + PACING_RATE_OFFSET, value);
    }

    /** The state (§4.1): STARTUP, DRAIN, PROBE_BW_DOWN .. PROBE_BW_UP, PROBE_RTT. */
    int state(int c) {
        return memory.get(INT, base(c) + STATE_OFFSET);
    }

    void state(int c, int value) {
        memory.set(INT, base(c) + STATE_OFFSET, value);
    }

    /** The F_* booleans. */
    int flags(int c) {
        return memory.get(INT, base(c) + FLAGS_OFFSET);
    }

    void flags(int c, int value) {
        memory.set(INT, base(c) + FLAGS_OFFSET, value);
    }

    /** The congestion window BBR computed last (bytes): the recovery may have written the row's. */
    int cwnd(int c) {
        return memory.get(INT, base(c) + CWND_OFFSET);
    }

    void cwnd(int c, int value) {
        memory.set(INT, base(c) + CWND_OFFSET, value);
    }

    /** BBR.prior_cwnd: the window before recovery or ProbeRTT (§4.6.4.4). */
    int priorCwnd(int c) {
        return memory.get(INT, base(c) + PRIOR_CWND_OFFSET);
    }

    void priorCwnd(int c, int value) {
        memory.set(INT, base(c) + PRIOR_CWND_OFFSET, value);
    }

    /** BBR.inflight_hi (bytes; Integer.MAX_VALUE: no bound, §4.5.10). */
    int inflightHi(int c) {
        return memory.get(INT, base(c) + INFLIGHT_HI_OFFSET);
    }

    void inflightHi(int c, int value) {
        memory.set(INT, base(c) + INFLIGHT_HI_OFFSET, value);
    }

    /** BBR.inflight_lo (bytes; Integer.MAX_VALUE: no bound). */
    int inflightLo(int c) {
        return memory.get(INT, base(c) + INFLIGHT_LO_OFFSET);
    }

    void inflightLo(int c, int value) {
        memory.set(INT, base(c) + INFLIGHT_LO_OFFSET, value);
    }

    /** BBR.inflight_latest: the most delivered in one sample of this loss round (bytes). */
    int inflightLatest(int c) {
        return memory.get(INT, base(c) + INFLIGHT_LATEST_OFFSET);
    }

    void inflightLatest(int c, int value) {
        memory.set(INT, base(c) + INFLIGHT_LATEST_OFFSET, value);
    }

    /** BBR.full_bw_count: rounds without 25 % growth. */
    int fullBwCount(int c) {
        return memory.get(INT, base(c) + FULL_BW_COUNT_OFFSET);
    }

    void fullBwCount(int c, int value) {
        memory.set(INT, base(c) + FULL_BW_COUNT_OFFSET, value);
    }

    /** BBR.rounds_since_bw_probe. */
    int roundsSinceBwProbe(int c) {
        return memory.get(INT, base(c) + ROUNDS_SINCE_BW_PROBE_OFFSET);
    }

    void roundsSinceBwProbe(int c, int value) {
        memory.set(INT, base(c) + ROUNDS_SINCE_BW_PROBE_OFFSET, value);
    }

    /** BBR.bw_probe_up_cnt: bytes acknowledged per segment inflight_hi grows (Integer.MAX_VALUE: not growing). */
    int bwProbeUpCnt(int c) {
        return memory.get(INT, base(c) + BW_PROBE_UP_CNT_OFFSET);
    }

    void bwProbeUpCnt(int c, int value) {
        memory.set(INT, base(c) + BW_PROBE_UP_CNT_OFFSET, value);
    }

    /** BBR.bw_probe_up_acks: bytes acknowledged towards the next growth. */
    int bwProbeUpAcks(int c) {
        return memory.get(INT, base(c) + BW_PROBE_UP_ACKS_OFFSET);
    }

    void bwProbeUpAcks(int c, int value) {
        memory.set(INT, base(c) + BW_PROBE_UP_ACKS_OFFSET, value);
    }

    /** BBR.bw_probe_up_rounds. */
    int bwProbeUpRounds(int c) {
        return memory.get(INT, base(c) + BW_PROBE_UP_ROUNDS_OFFSET);
    }

    void bwProbeUpRounds(int c, int value) {
        memory.set(INT, base(c) + BW_PROBE_UP_ROUNDS_OFFSET, value);
    }

    /** BBR.ack_phase (§4.3.3.6): ACKS_INIT .. ACKS_PROBE_FEEDBACK. */
    int ackPhase(int c) {
        return memory.get(INT, base(c) + ACK_PHASE_OFFSET);
    }

    void ackPhase(int c, int value) {
        memory.set(INT, base(c) + ACK_PHASE_OFFSET, value);
    }

    /** BBR.extra_acked's filter, the older window of rounds (bytes). */
    int extraAcked0(int c) {
        return memory.get(INT, base(c) + EXTRA_ACKED0_OFFSET);
    }

    void extraAcked0(int c, int value) {
        memory.set(INT, base(c) + EXTRA_ACKED0_OFFSET, value);
    }

    /** BBR.extra_acked's filter, the current window of rounds (bytes). */
    int extraAcked1(int c) {
        return memory.get(INT, base(c) + EXTRA_ACKED1_OFFSET);
    }

    void extraAcked1(int c, int value) {
        memory.set(INT, base(c) + EXTRA_ACKED1_OFFSET, value);
    }

    /** Rounds in the current window of the extra_acked filter. */
    int extraAckedRounds(int c) {
        return memory.get(INT, base(c) + EXTRA_ACKED_ROUNDS_OFFSET);
    }

    void extraAckedRounds(int c, int value) {
        memory.set(INT, base(c) + EXTRA_ACKED_ROUNDS_OFFSET, value);
    }

    /** ACKs that revealed a loss (or ECEs) in this loss round, for Startup's exit (§4.3.1.3). */
    int lossEventsInRound(int c) {
        return memory.get(INT, base(c) + LOSS_EVENTS_IN_ROUND_OFFSET);
    }

    void lossEventsInRound(int c, int value) {
        memory.set(INT, base(c) + LOSS_EVENTS_IN_ROUND_OFFSET, value);
    }

    /** BBR.send_quantum (bytes, §4.6.2). */
    int sendQuantum(int c) {
        return memory.get(INT, base(c) + SEND_QUANTUM_OFFSET);
    }

    void sendQuantum(int c, int value) {
        memory.set(INT, base(c) + SEND_QUANTUM_OFFSET, value);
    }

    /** The initial window (bytes): the BDP before any RTT is known (§4.6.4.2). */
    int initialCwnd(int c) {
        return memory.get(INT, base(c) + INITIAL_CWND_OFFSET);
    }

    void initialCwnd(int c, int value) {
        memory.set(INT, base(c) + INITIAL_CWND_OFFSET, value);
    }

    /** Bytes marked lost in this loss round (the round's loss rate gates the lower bounds). */
    int roundLost(int c) {
        return memory.get(INT, base(c) + ROUND_LOST_OFFSET);
    }

    void roundLost(int c, int value) {
        memory.set(INT, base(c) + ROUND_LOST_OFFSET, value);
    }

    /** Bytes delivered in this loss round. */
    long roundDelivered(int c) {
        return memory.get(LONG, base(c) + ROUND_DELIVERED_OFFSET);
    }

    void roundDelivered(int c, long value) {
        memory.set(LONG, base(c) + ROUND_DELIVERED_OFFSET, value);
    }
}
