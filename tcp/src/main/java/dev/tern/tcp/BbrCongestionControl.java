package dev.tern.tcp;

/**
 * BBR version 3 (draft-ietf-ccwg-bbr): a model-based congestion control. From delivery rate samples it keeps the
 * path's bottleneck bandwidth (a windowed maximum) and round-trip propagation delay (a windowed minimum), paces at
 * a gain times that bandwidth and bounds the data in flight by a gain times their product, the BDP. Losses and ECN
 * marks do not halve a window; they set bounds on the model (inflight_hi above, bw_lo and inflight_lo below, §4.5.10).
 *
 * <p>States (§4.1): Startup doubles the sending rate per round until the bandwidth stops growing by a quarter for
 * three rounds, or losses show the queue overflowed; Drain empties the queue Startup built; ProbeBW cycles Down,
 * Cruise, Refill and Up to find more bandwidth now and then and to leave a little headroom otherwise; ProbeRTT cuts
 * the data in flight for a moment when the minimum RTT has not been refreshed for a while, so that the queue drains
 * and a true minimum is seen.
 *
 * <p>The state is in a {@link BbrState} table of this instance, one slot per connection slot: the template the catalog
 * returns has none, {@link #forLayer} gives each layer its own. BBR sees every ACK ({@link #seesEveryAck}), in
 * recovery too, and writes the row's {@code cwnd} and {@code pacingRate} on each; it leaves {@code ssthresh} open, so
 * the recovery conserves packets and BBR's window has the last word. Where the draft and Linux's tcp_bbr.c differ the
 * choices are in docs/TCP.md, section "BBR". Nothing here allocates per ACK.
 */
public final class BbrCongestionControl implements CongestionControl {
    public static final String NAME = "bbr";

    static final int STARTUP = 0;
    static final int DRAIN = 1;
    static final int PROBE_BW_DOWN = 2;
    static final int PROBE_BW_CRUISE = 3;
    static final int PROBE_BW_REFILL = 4;
    static final int PROBE_BW_UP = 5;
    static final int PROBE_RTT = 6;

    // §4.3.3.6: where the ACKs are relative to a bandwidth probe.
    static final int ACKS_INIT = 0;
    static final int ACKS_REFILLING = 1;
    static final int ACKS_PROBE_STARTING = 2;
    static final int ACKS_PROBE_FEEDBACK = 3;
    static final int ACKS_PROBE_STOPPING = 4;

    /** §4.3.1: BBRStartupPacingGain, 4 ln 2, which doubles the rate per round. */
    static final double STARTUP_PACING_GAIN = 2.77;
    /** §4.3.2: BBRDrainPacingGain. */
    static final double DRAIN_PACING_GAIN = 0.35;
    /** §4.3.1: BBRDefaultCwndGain, enough for delayed and aggregated ACKs. */
    static final double CWND_GAIN = 2.0;
    /** §4.3.3: ProbeBW_UP's pacing and cwnd gains, ProbeBW_DOWN's pacing gain. */
    static final double UP_PACING_GAIN = 1.25;
    static final double UP_CWND_GAIN = 2.25;
    static final double DOWN_PACING_GAIN = 0.90;
    /** §4.3.4: BBRProbeRTTCwndGain. */
    static final double PROBE_RTT_CWND_GAIN = 0.5;
    /** §4.5.10.2: BBRLossThresh, the loss rate of a flight taken as the queue overflowing. */
    static final double LOSS_THRESH = 0.02;
    /** §4.5.10: BBRBeta, how far a loss lowers the lower bounds; BBRHeadroom, what Cruise leaves under inflight_hi. */
    static final double BETA = 0.7;
    static final double HEADROOM = 0.15;
    /** §4.3.1.2: growth under BBRStartupFullBwThresh for BBRStartupFullBwCnt rounds fills the pipe. */
    static final double FULL_BW_THRESH = 1.25;
    static final int FULL_BW_COUNT = 3;
    /** §4.3.1.3: BBRStartupFullLossCnt, loss events in a round that end Startup. */
    static final int FULL_LOSS_COUNT = 6;
    /** §4.6.1: BBRPacingMarginPercent, paced a little under the estimate so the queue stays drained. */
    static final int PACING_MARGIN_PERCENT = 1;
    /** §4.6.3: BBRMinPipeCwnd, in segments. */
    static final int MIN_PIPE_SEGMENTS = 4;
    /** §4.5.3: MinRTTFilterLen. */
    static final long MIN_RTT_FILTER_NS = 10_000_000_000L;
    /** §4.3.4: ProbeRTTInterval and ProbeRTTDuration. */
    static final long PROBE_RTT_INTERVAL_NS = 5_000_000_000L;
    static final long PROBE_RTT_DURATION_NS = 200_000_000L;
    /** §4.5.5: ExtraAckedFilterLen, in rounds, kept as two halves. */
    static final int EXTRA_ACKED_HALF_ROUNDS = 5;
    /** §4.3.3.5: the probe wait is BBR_PROBE_WAIT_BASE plus up to one more second, at random. */
    static final long PROBE_WAIT_BASE_NS = 2_000_000_000L;
    static final long PROBE_WAIT_RANDOM_NS = 1_000_000_000L;
    /** §4.3.3.5: the Reno coexistence bound on rounds between probes. */
    static final int MAX_RENO_ROUNDS = 63;
    /** §4.6.2: the send quantum is the data of one millisecond of pacing, at most this. */
    static final int MAX_SEND_QUANTUM = 64 * 1024;
    private static final long NS_PER_MS = 1_000_000L;
    private static final long NS_PER_S = 1_000_000_000L;
    private static final int NO_BOUND = Integer.MAX_VALUE;
    private static final long NO_BW_BOUND = Long.MAX_VALUE;
    private static final long NO_RTT = Long.MAX_VALUE;

    /** Null in the catalog's template; a layer's instance has its own. */
    private final BbrState t;

    /** The catalog's template: it names BBR; {@link #forLayer} makes the instances connections use. */
    public BbrCongestionControl() {
        this.t = null;
    }

    private BbrCongestionControl(int connections) {
        this.t = new BbrState(connections);
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public boolean seesEveryAck() {
        return true;
    }

    @Override
    public boolean pacesItself() {
        return true;
    }

    @Override
    public CongestionControl forLayer(int connections) {
        return new BbrCongestionControl(connections);
    }

    /** The table (for tests). */
    BbrState state() {
        return t;
    }

    /** BBR.max_bw of connection {@code c}: the larger of the filter's two cycles (§4.5.2.4). */
    long maxBw(int c) {
        return Math.max(t.maxBw0(c), t.maxBw1(c));
    }

    /** BBR.bw: max_bw bounded by bw_lo (§4.5.10.3, BBRBoundBWForModel). */
    long bw(int c) {
        return Math.min(maxBw(c), t.bwLo(c));
    }

    // --------------------------------------------------------------------------------------- initialization

    @Override
    public void init(TcpControlBlocks tcb, int c, int mss, int initialSegments, long nowNs) {
        if (t == null) {
            throw new IllegalStateException("BBR's catalog template has no table; register it with a layer");
        }
        t.clear(c);
        final int initialCwnd = initialSegments * mss;
        t.cwnd(c, initialCwnd);
        t.initialCwnd(c, initialCwnd);
        t.bwLo(c, NO_BW_BOUND);
        t.inflightHi(c, NO_BOUND);
        t.inflightLo(c, NO_BOUND);
        t.bwProbeUpCnt(c, NO_BOUND);
        final long srttNs = tcb.srttUs(c) * 1000L;
        t.minRttNs(c, srttNs > 0 ? srttNs : NO_RTT);
        t.minRttStampNs(c, nowNs);
        t.probeRttMinNs(c, t.minRttNs(c));
        t.probeRttMinStampNs(c, nowNs);
        t.extraAckedStartNs(c, nowNs);
        t.nextRoundDelivered(c, tcb.delivered(c));
        t.lossRoundDelivered(c, tcb.delivered(c));
        t.random(c, (c + 1) * 0x9E3779B97F4A7C15L ^ nowNs | 1);
        // §4.6.2 BBRInitPacingRate: the initial window over the handshake's RTT (or a millisecond), Startup's gain.
        final long nominal = DeliveryRateSampler.rate(initialCwnd, srttNs > 0 ? srttNs : NS_PER_MS);
        t.pacingRate(c, (long) (STARTUP_PACING_GAIN * nominal));
        t.sendQuantum(c, 2 * mss);
        enterStartup(c);
        tcb.cwnd(c, initialCwnd);
        tcb.ssthresh(c, TcpControlBlocks.MAX_CWND);
        tcb.pacingRate(c, t.pacingRate(c));
    }

    // ------------------------------------------------------------------------------------------- every ACK

    @Override
    public void onAck(TcpControlBlocks tcb, int c, AckSample ack) {
        final long nowNs = ack.nowNs();
        final int mss = ack.mss();
        if (t.has(c, BbrState.F_IN_LOSS_RECOVERY) && tcb.senderState(c) == SenderState.OPEN
            && !t.has(c, BbrState.F_PACKET_CONSERVATION)) {
            // §4.6.4.4: a timeout's recovery, or a repair by a tail loss probe, is over (fast recovery's end comes
            // through onRecoveryExit).
            restoreCwnd(c);
        }
        updateModelAndState(tcb, c, ack, nowNs, mss);
        updateControlParameters(tcb, c, ack, mss);
    }

    /** §4.2's BBRUpdateModelAndState. */
    private void updateModelAndState(TcpControlBlocks tcb, int c, AckSample ack, long nowNs, int mss) {
        updateRound(tcb, c, ack);
        updateLatestDeliverySignals(tcb, c, ack);
        updateCongestionSignals(c, ack);
        updateAckAggregation(c, ack, nowNs);
        checkFullBwReached(c, ack);
        checkStartupDone(c, ack, mss);
        checkDrainDone(tcb, c, ack, nowNs, mss);
        updateProbeBwCyclePhase(tcb, c, ack, nowNs, mss);
        final boolean probeRttExpired = updateMinRtt(c, ack, nowNs);
        checkProbeRtt(tcb, c, ack, nowNs, mss, probeRttExpired);
        advanceLatestDeliverySignals(c, ack);
    }

    /** §4.2's BBRUpdateControlParameters. */
    private void updateControlParameters(TcpControlBlocks tcb, int c, AckSample ack, int mss) {
        setPacingRate(c, pacingGain(t.state(c)));
        setSendQuantum(c, mss);
        setCwnd(tcb, c, ack, mss);
        tcb.pacingRate(c, t.pacingRate(c));
        tcb.cwnd(c, t.cwnd(c));
    }

    /** §4.5.1: a round ends when a segment sent after the previous round ended is delivered. */
    private void updateRound(TcpControlBlocks tcb, int c, AckSample ack) {
        t.set(c, BbrState.F_ROUND_START, false);
        if (ack.deliveredBytes() > 0 && ack.priorDelivered() >= t.nextRoundDelivered(c)) {
            startRound(tcb, c);
            t.roundCount(c, t.roundCount(c) + 1);
            t.roundsSinceBwProbe(c, t.roundsSinceBwProbe(c) + 1);
            t.set(c, BbrState.F_ROUND_START, true);
            if (t.has(c, BbrState.F_PACKET_CONSERVATION)) {
                // §4.6.4.4: packet conservation lasts the first round of recovery.
                t.set(c, BbrState.F_PACKET_CONSERVATION, false);
            }
        }
    }

    private void startRound(TcpControlBlocks tcb, int c) {
        t.nextRoundDelivered(c, tcb.delivered(c));
    }

    /** §4.5.10.1 BBRUpdateLatestDeliverySignals: the loss round, and the round's best rate and delivered data. */
    private void updateLatestDeliverySignals(TcpControlBlocks tcb, int c, AckSample ack) {
        t.set(c, BbrState.F_LOSS_ROUND_START, false);
        if (ack.hasRate()) {
            t.bwLatest(c, Math.max(t.bwLatest(c), ack.deliveryRate()));
            t.inflightLatest(c, (int) Math.max(t.inflightLatest(c), Math.min(NO_BOUND - 1, ack.rateDelivered())));
        }
        if (ack.deliveredBytes() > 0 && ack.priorDelivered() >= t.lossRoundDelivered(c)) {
            t.lossRoundDelivered(c, tcb.delivered(c));
            t.set(c, BbrState.F_LOSS_ROUND_START, true);
        }
    }

    /** §4.5.10.1 BBRAdvanceLatestDeliverySignals: a new loss round starts from this ACK's sample. */
    private void advanceLatestDeliverySignals(int c, AckSample ack) {
        if (t.has(c, BbrState.F_LOSS_ROUND_START)) {
            t.bwLatest(c, ack.deliveryRate());
            t.inflightLatest(c, (int) Math.min(NO_BOUND - 1, ack.rateDelivered()));
        }
    }

    /**
     * §4.5.10.3 BBRUpdateCongestionSignals: the bandwidth filter, and at the end of a loss round with losses, the lower
     * bounds (unless BBR is probing for bandwidth, when losses are expected).
     *
     * <p>Deviation (docs/TCP.md, "BBR"): the lower bounds come down only for a round whose loss rate is above
     * BBRLossThresh, or that brought an ECE. The draft and Linux react to any loss in the round; on a path with
     * random loss under the threshold, each such round lowers bw_lo to what the round delivered, which is less than
     * the rate it was paced at, so the bounds ratchet down until the next Refill.
     */
    private void updateCongestionSignals(int c, AckSample ack) {
        updateMaxBw(c, ack);
        if (ack.newlyLostBytes() > 0) {
            t.set(c, BbrState.F_LOSS_IN_ROUND, true);
            t.lossEventsInRound(c, Math.min(t.lossEventsInRound(c) + 1, 1 << 16));
            t.roundLost(c, (int) Math.min((long) t.roundLost(c) + ack.newlyLostBytes(), NO_BOUND - 1));
        }
        t.roundDelivered(c, t.roundDelivered(c) + Math.max(0, ack.deliveredBytes()));
        if (!t.has(c, BbrState.F_LOSS_ROUND_START)) {
            return;
        }
        final long lost = t.roundLost(c);
        final boolean tooMuch = lost > LOSS_THRESH * (lost + t.roundDelivered(c)) || t.has(c, BbrState.F_ECN_IN_ROUND);
        if (t.has(c, BbrState.F_LOSS_IN_ROUND) && tooMuch && !isProbingBw(t.state(c))) {
            initLowerBounds(c);
            lossLowerBounds(c);
        }
        t.set(c, BbrState.F_LOSS_IN_ROUND, false);
        if (t.state(c) != STARTUP) {
            // Startup reads the round's ECE itself, after this (checkStartupDone), and clears it there.
            t.set(c, BbrState.F_ECN_IN_ROUND, false);
        }
        t.roundLost(c, 0);
        t.roundDelivered(c, 0);
    }

    /** §4.5.2.4 BBRUpdateMaxBw: an application-limited sample counts only when it shows more than the estimate. */
    private void updateMaxBw(int c, AckSample ack) {
        if (!ack.hasRate()) {
            return;
        }
        final long rate = ack.deliveryRate();
        if (rate >= maxBw(c) || !ack.rateAppLimited()) {
            t.maxBw1(c, Math.max(t.maxBw1(c), rate));
        }
    }

    /**
     * §4.5.2.4 BBRAdvanceMaxBwFilter: a new ProbeBW cycle; the filter keeps the last two. As Linux, a cycle that
     * measured nothing does not push out the one before it.
     */
    private void advanceMaxBwFilter(int c) {
        if (t.maxBw1(c) == 0) {
            return;
        }
        t.maxBw0(c, t.maxBw1(c));
        t.maxBw1(c, 0);
    }

    private void initLowerBounds(int c) {
        if (t.bwLo(c) == NO_BW_BOUND) {
            t.bwLo(c, maxBw(c));
        }
        if (t.inflightLo(c) == NO_BOUND) {
            t.inflightLo(c, t.cwnd(c));
        }
    }

    /** §4.5.10.3 BBRLossLowerBounds: down by beta, but not below what the round just delivered. */
    private void lossLowerBounds(int c) {
        t.bwLo(c, Math.max(t.bwLatest(c), (long) (BETA * t.bwLo(c))));
        t.inflightLo(c, Math.max(t.inflightLatest(c), (int) (BETA * t.inflightLo(c))));
    }

    private void resetLowerBounds(int c) {
        t.bwLo(c, NO_BW_BOUND);
        t.inflightLo(c, NO_BOUND);
    }

    private void resetCongestionSignals(int c) {
        t.set(c, BbrState.F_LOSS_IN_ROUND | BbrState.F_ECN_IN_ROUND, false);
        t.bwLatest(c, 0);
        t.inflightLatest(c, 0);
    }

    /** §4.5.5 BBRUpdateACKAggregation: how far ACKs ran ahead of the bandwidth estimate, a max over ten rounds. */
    private void updateAckAggregation(int c, AckSample ack, long nowNs) {
        if (t.has(c, BbrState.F_ROUND_START)) {
            final int rounds = t.extraAckedRounds(c) + 1;
            if (rounds >= EXTRA_ACKED_HALF_ROUNDS) {
                t.extraAckedRounds(c, 0);
                t.extraAcked0(c, t.extraAcked1(c));
                t.extraAcked1(c, 0);
            } else {
                t.extraAckedRounds(c, rounds);
            }
        }
        final long interval = nowNs - t.extraAckedStartNs(c);
        long expected = (long) ((double) bw(c) * interval / NS_PER_S);
        if (t.extraAckedDelivered(c) <= expected) {
            t.extraAckedDelivered(c, 0);
            t.extraAckedStartNs(c, nowNs);
            expected = 0;
        }
        t.extraAckedDelivered(c, t.extraAckedDelivered(c) + ack.deliveredBytes());
        final long extra = Math.min(t.extraAckedDelivered(c) - expected, t.cwnd(c));
        if (extra > t.extraAcked1(c)) {
            t.extraAcked1(c, (int) extra);
        }
    }

    private int extraAcked(int c) {
        return Math.max(t.extraAcked0(c), t.extraAcked1(c));
    }

    // ---------------------------------------------------------------------------------------- Startup, Drain

    private void enterStartup(int c) {
        t.state(c, STARTUP);
    }

    /**
     * §4.3.1.2 BBRCheckStartupFullBandwidth: once per round, with a sample not limited by the application, whether
     * max_bw grew by a quarter; three rounds without fill the pipe.
     */
    private void checkFullBwReached(int c, AckSample ack) {
        if (t.has(c, BbrState.F_FILLED_PIPE) || !t.has(c, BbrState.F_ROUND_START) || ack.rateAppLimited()) {
            return;
        }
        final long maxBw = maxBw(c);
        if (maxBw >= FULL_BW_THRESH * t.fullBw(c)) {
            t.fullBw(c, maxBw);
            t.fullBwCount(c, 0);
            return;
        }
        t.fullBwCount(c, t.fullBwCount(c) + 1);
        if (t.fullBwCount(c) >= FULL_BW_COUNT) {
            t.set(c, BbrState.F_FILLED_PIPE, true);
        }
    }

    /**
     * §4.3.1.3 BBRCheckStartupHighLoss: at the end of a loss round with enough loss events and a flight that lost
     * more than the threshold, or an ECE, the queue overflowed: the pipe is full, and inflight_hi starts at what the
     * round carried.
     */
    private void checkStartupDone(int c, AckSample ack, int mss) {
        if (t.state(c) != STARTUP) {
            return;
        }
        if (!t.has(c, BbrState.F_FILLED_PIPE) && t.has(c, BbrState.F_LOSS_ROUND_START)) {
            final boolean lossy = t.lossEventsInRound(c) >= FULL_LOSS_COUNT && isInflightTooHigh(ack);
            if (lossy || t.has(c, BbrState.F_ECN_IN_ROUND)) {
                t.set(c, BbrState.F_FILLED_PIPE, true);
                t.inflightHi(c, (int) Math.max(bdpMultiple(c, 1.0, mss), t.inflightLatest(c)));
            }
            t.lossEventsInRound(c, 0);
            t.set(c, BbrState.F_ECN_IN_ROUND, false);
        }
        if (t.has(c, BbrState.F_FILLED_PIPE)) {
            t.state(c, DRAIN); // §4.3.2 BBREnterDrain
        }
    }

    /** §4.3.2 BBRCheckDrainDone: Drain ends once the data in flight is down to the BDP. */
    private void checkDrainDone(TcpControlBlocks tcb, int c, AckSample ack, long nowNs, int mss) {
        if (t.state(c) == DRAIN && ack.inFlight() <= inflight(c, bw(c), 1.0, mss)) {
            startProbeBwDown(tcb, c, nowNs);
        }
    }

    // ------------------------------------------------------------------------------------------------ ProbeBW

    /** §4.3.3.6 BBRUpdateProbeBWCyclePhase. */
    private void updateProbeBwCyclePhase(TcpControlBlocks tcb, int c, AckSample ack, long nowNs, int mss) {
        if (!t.has(c, BbrState.F_FILLED_PIPE)) {
            return;
        }
        adaptUpperBounds(tcb, c, ack, nowNs, mss);
        switch (t.state(c)) {
            case PROBE_BW_DOWN -> {
                if (!checkTimeToProbeBw(tcb, c, nowNs, mss) && checkTimeToCruise(c, ack.inFlight(), mss)) {
                    t.state(c, PROBE_BW_CRUISE);
                }
            }
            case PROBE_BW_CRUISE -> checkTimeToProbeBw(tcb, c, nowNs, mss);
            case PROBE_BW_REFILL -> {
                // §4.3.3.3: after a round of refilling, samples reflect the probe.
                if (t.has(c, BbrState.F_ROUND_START)) {
                    t.set(c, BbrState.F_BW_PROBE_SAMPLES, true);
                    startProbeBwUp(tcb, c, nowNs);
                }
            }
            case PROBE_BW_UP -> {
                if (nowNs - t.cycleStampNs(c) > t.minRttNs(c)
                    && ack.inFlight() > inflight(c, maxBw(c), UP_PACING_GAIN, mss)) {
                    startProbeBwDown(tcb, c, nowNs);
                }
            }
            default -> {
            }
        }
    }

    /**
     * §4.5.10.2 BBRAdaptUpperBounds: the probe's ACK phase; inflight_hi lowered by a probe whose flight lost too
     * much, raised by one that went through.
     */
    private void adaptUpperBounds(TcpControlBlocks tcb, int c, AckSample ack, long nowNs, int mss) {
        final boolean roundStart = t.has(c, BbrState.F_ROUND_START);
        if (t.ackPhase(c) == ACKS_PROBE_STARTING && roundStart) {
            t.ackPhase(c, ACKS_PROBE_FEEDBACK);
        }
        if (t.ackPhase(c) == ACKS_PROBE_STOPPING && roundStart) {
            // The ACKs of the probe are all in: the cycle is over, the filter moves on.
            if (isInProbeBw(t.state(c)) && !ack.rateAppLimited()) {
                advanceMaxBwFilter(c);
            }
            t.ackPhase(c, ACKS_INIT);
        }
        if (checkInflightTooHigh(tcb, c, ack, nowNs, mss)) {
            return;
        }
        if (t.inflightHi(c) == NO_BOUND) {
            return;
        }
        if (ack.txInFlight() > t.inflightHi(c)) {
            t.inflightHi(c, ack.txInFlight());
        }
        if (t.state(c) == PROBE_BW_UP) {
            probeInflightHiUpward(c, ack, mss);
        }
    }

    /** §4.5.10.2 IsInflightTooHigh: the flight the sample's segment was sent in lost more than the threshold. */
    static boolean isInflightTooHigh(AckSample ack) {
        return ack.txInFlight() > 0 && ack.lostOfThatFlight() > (long) (ack.txInFlight() * LOSS_THRESH);
    }

    /**
     * §4.5.10.2 BBRHandleInflightTooHigh, for samples of data sent while probing: inflight_hi comes down to what the
     * flight carried (not below beta times the target), and an Up probe ends.
     */
    private boolean checkInflightTooHigh(TcpControlBlocks tcb, int c, AckSample ack, long nowNs, int mss) {
        if (!isInflightTooHigh(ack)) {
            return false;
        }
        if (t.has(c, BbrState.F_BW_PROBE_SAMPLES)) {
            t.set(c, BbrState.F_BW_PROBE_SAMPLES, false);
            if (!ack.rateAppLimited()) {
                t.inflightHi(c, (int) Math.max(ack.txInFlight(), (long) (BETA * targetInflight(c, mss))));
            }
            if (t.state(c) == PROBE_BW_UP) {
                startProbeBwDown(tcb, c, nowNs);
            }
        }
        return true;
    }

    /**
     * §4.3.3.4 BBRProbeInflightHiUpward: while the window is used up to inflight_hi, inflight_hi grows, by a
     * doubling number of segments per round.
     */
    private void probeInflightHiUpward(int c, AckSample ack, int mss) {
        if (!ack.windowLimited() || t.cwnd(c) < t.inflightHi(c)) {
            return;
        }
        long acks = (long) t.bwProbeUpAcks(c) + ack.deliveredBytes();
        final int count = t.bwProbeUpCnt(c);
        if (acks >= count) {
            final long segments = acks / count;
            acks -= segments * count;
            t.inflightHi(c, (int) Math.min(TcpControlBlocks.MAX_CWND, t.inflightHi(c) + segments * mss));
        }
        t.bwProbeUpAcks(c, (int) Math.min(acks, NO_BOUND - 1));
        if (t.has(c, BbrState.F_ROUND_START)) {
            raiseInflightHiSlope(c);
        }
    }

    /** §4.3.3.4 BBRRaiseInflightHiSlope: one segment more per round each round: 1, 2, 4 ... per round. */
    private void raiseInflightHiSlope(int c) {
        final int rounds = t.bwProbeUpRounds(c);
        final long growth = 1L << rounds;
        t.bwProbeUpRounds(c, Math.min(rounds + 1, 30));
        // Bytes acknowledged per segment of growth: a window's worth, halved each round.
        t.bwProbeUpCnt(c, (int) Math.max(t.cwnd(c) / growth, 1));
    }

    /** §4.3.3.5 BBRCheckTimeToProbeBW: after the probe wait, or as many rounds as Reno would take, Refill. */
    private boolean checkTimeToProbeBw(TcpControlBlocks tcb, int c, long nowNs, int mss) {
        if (nowNs - t.cycleStampNs(c) > t.bwProbeWaitNs(c) || isRenoCoexistenceProbeTime(c, mss)) {
            startProbeBwRefill(tcb, c);
            return true;
        }
        return false;
    }

    private boolean isRenoCoexistenceProbeTime(int c, int mss) {
        final long renoRounds = targetInflight(c, mss) / mss;
        return t.roundsSinceBwProbe(c) >= Math.min(renoRounds, MAX_RENO_ROUNDS);
    }

    /** §4.3.3.2 BBRCheckTimeToCruise: the queue Down made room for has drained. */
    private boolean checkTimeToCruise(int c, int inFlight, int mss) {
        if (inFlight > inflightWithHeadroom(c, mss)) {
            return false;
        }
        return inFlight <= inflight(c, maxBw(c), 1.0, mss);
    }

    private void startProbeBwDown(TcpControlBlocks tcb, int c, long nowNs) {
        resetCongestionSignals(c);
        t.bwProbeUpCnt(c, NO_BOUND);
        pickProbeWait(c);
        t.cycleStampNs(c, nowNs);
        t.ackPhase(c, ACKS_PROBE_STOPPING);
        startRound(tcb, c);
        t.state(c, PROBE_BW_DOWN);
    }

    private void startProbeBwRefill(TcpControlBlocks tcb, int c) {
        resetLowerBounds(c);
        t.bwProbeUpRounds(c, 0);
        t.bwProbeUpAcks(c, 0);
        t.ackPhase(c, ACKS_REFILLING);
        startRound(tcb, c);
        t.state(c, PROBE_BW_REFILL);
    }

    private void startProbeBwUp(TcpControlBlocks tcb, int c, long nowNs) {
        t.ackPhase(c, ACKS_PROBE_STARTING);
        startRound(tcb, c);
        t.cycleStampNs(c, nowNs);
        t.state(c, PROBE_BW_UP);
        raiseInflightHiSlope(c);
    }

    /** §4.3.3.5 BBRPickProbeWait: the rounds and the time until the next probe, a little random to desynchronize. */
    private void pickProbeWait(int c) {
        final long r = nextRandom(c);
        t.roundsSinceBwProbe(c, (int) (r & 1));
        t.bwProbeWaitNs(c, PROBE_WAIT_BASE_NS + ((r >>> 1) % PROBE_WAIT_RANDOM_NS));
    }

    /** xorshift64: deterministic per connection, so that a simulation replays from its seed. */
    private long nextRandom(int c) {
        long x = t.random(c);
        x ^= x << 13;
        x ^= x >>> 7;
        x ^= x << 17;
        t.random(c, x);
        return x & Long.MAX_VALUE;
    }

    static boolean isInProbeBw(int state) {
        return state >= PROBE_BW_DOWN && state <= PROBE_BW_UP;
    }

    /** §4.5.10.3 BBRIsProbingBW: Startup, Refill and Up expect losses; the lower bounds ignore them. */
    static boolean isProbingBw(int state) {
        return state == STARTUP || state == PROBE_BW_REFILL || state == PROBE_BW_UP;
    }

    // ------------------------------------------------------------------------------------------------ ProbeRTT

    /**
     * §4.3.4 BBRUpdateMinRTT: the ProbeRTT filter (five seconds) and the min_rtt filter (ten) take the least RTT
     * sample; returns whether the ProbeRTT filter had expired, which calls for a ProbeRTT.
     */
    private boolean updateMinRtt(int c, AckSample ack, long nowNs) {
        final boolean probeRttExpired = nowNs - t.probeRttMinStampNs(c) > PROBE_RTT_INTERVAL_NS;
        final long rttNs = ack.rttUs() >= 0 ? ack.rttUs() * 1000L : -1;
        if (rttNs >= 0 && (rttNs < t.probeRttMinNs(c) || probeRttExpired)) {
            t.probeRttMinNs(c, rttNs);
            t.probeRttMinStampNs(c, nowNs);
        }
        final boolean minRttExpired = nowNs - t.minRttStampNs(c) > MIN_RTT_FILTER_NS;
        if (t.probeRttMinNs(c) < t.minRttNs(c) || minRttExpired) {
            t.minRttNs(c, t.probeRttMinNs(c));
            t.minRttStampNs(c, t.probeRttMinStampNs(c));
        }
        return probeRttExpired;
    }

    /** §4.3.4.4 BBRCheckProbeRTT. */
    private void checkProbeRtt(TcpControlBlocks tcb, int c, AckSample ack, long nowNs, int mss, boolean expired) {
        if (t.state(c) != PROBE_RTT && expired && !t.has(c, BbrState.F_IDLE_RESTART)) {
            saveCwnd(tcb, c);
            t.probeRttDoneNs(c, 0);
            t.ackPhase(c, ACKS_PROBE_STOPPING);
            startRound(tcb, c);
            t.state(c, PROBE_RTT);
        }
        if (t.state(c) == PROBE_RTT) {
            handleProbeRtt(tcb, c, ack, nowNs, mss);
        }
        if (ack.deliveredBytes() > 0) {
            t.set(c, BbrState.F_IDLE_RESTART, false);
        }
    }

    /**
     * §4.3.4.4 BBRHandleProbeRTT: the window is held at the ProbeRTT window; once the flight is down to it, for
     * ProbeRTTDuration and at least a round. The connection counts as application limited meanwhile, so the
     * lower rates it measures do not lower max_bw.
     */
    private void handleProbeRtt(TcpControlBlocks tcb, int c, AckSample ack, long nowNs, int mss) {
        final int mark = (int) tcb.delivered(c) + ack.inFlight();
        tcb.appLimited(c, mark != 0 ? mark : 1);
        if (t.probeRttDoneNs(c) == 0 && ack.inFlight() <= probeRttCwnd(c, mss)) {
            t.probeRttDoneNs(c, nowNs + PROBE_RTT_DURATION_NS);
            t.set(c, BbrState.F_PROBE_RTT_ROUND_DONE, false);
            startRound(tcb, c);
        } else if (t.probeRttDoneNs(c) != 0) {
            if (t.has(c, BbrState.F_ROUND_START)) {
                t.set(c, BbrState.F_PROBE_RTT_ROUND_DONE, true);
            }
            if (t.has(c, BbrState.F_PROBE_RTT_ROUND_DONE)) {
                checkProbeRttDone(tcb, c, nowNs);
            }
        }
    }

    private void checkProbeRttDone(TcpControlBlocks tcb, int c, long nowNs) {
        if (t.probeRttDoneNs(c) != 0 && nowNs - t.probeRttDoneNs(c) > 0) {
            t.probeRttMinStampNs(c, nowNs);
            restoreCwnd(c);
            exitProbeRtt(tcb, c, nowNs);
        }
    }

    /** §4.3.4.5 BBRExitProbeRTT: back to Startup if the pipe was never filled, else ProbeBW, cruising. */
    private void exitProbeRtt(TcpControlBlocks tcb, int c, long nowNs) {
        resetLowerBounds(c);
        if (t.has(c, BbrState.F_FILLED_PIPE)) {
            startProbeBwDown(tcb, c, nowNs);
            t.state(c, PROBE_BW_CRUISE);
        } else {
            enterStartup(c);
        }
    }

    // ----------------------------------------------------------------------------------- pacing, window

    static double pacingGain(int state) {
        return switch (state) {
            case STARTUP -> STARTUP_PACING_GAIN;
            case DRAIN -> DRAIN_PACING_GAIN;
            case PROBE_BW_DOWN -> DOWN_PACING_GAIN;
            case PROBE_BW_UP -> UP_PACING_GAIN;
            default -> 1.0;
        };
    }

    static double cwndGain(int state) {
        return state == PROBE_BW_UP ? UP_CWND_GAIN : CWND_GAIN;
    }

    /**
     * §4.6.2 BBRSetPacingRateWithGain: gain times the bandwidth, a margin under it; before the pipe is full the rate
     * only rises, so a slow first sample does not stall Startup.
     */
    private void setPacingRate(int c, double gain) {
        final long rate = (long) (gain * bw(c) * (100 - PACING_MARGIN_PERCENT) / 100);
        if (rate > 0 && (t.has(c, BbrState.F_FILLED_PIPE) || rate > t.pacingRate(c))) {
            t.pacingRate(c, rate);
        }
    }

    /** §4.6.2 BBRSetSendQuantum: a millisecond of pacing, between two segments and 64 KiB. */
    private void setSendQuantum(int c, int mss) {
        final long quantum = t.pacingRate(c) / (NS_PER_S / NS_PER_MS);
        t.sendQuantum(c, (int) Math.max(2L * mss, Math.min(quantum, MAX_SEND_QUANTUM)));
    }

    /** §4.6.4.2 BBRBDPMultiple: gain times bw times min_rtt; the initial window before any RTT is known. */
    private long bdpMultiple(int c, double gain, int mss) {
        if (t.minRttNs(c) == NO_RTT) {
            return t.initialCwnd(c);
        }
        return (long) (gain * ((double) bw(c) * t.minRttNs(c) / NS_PER_S));
    }

    /** §4.6.4.2 BBRInflight: the BDP multiple with the quantization budget. */
    private long inflight(int c, long bw, double gain, int mss) {
        final long bdp = t.minRttNs(c) == NO_RTT ? bdpMultiple(c, gain, mss)
            : (long) (gain * ((double) bw * t.minRttNs(c) / NS_PER_S));
        return quantizationBudget(c, bdp, mss);
    }

    /**
     * §4.6.4.2 BBRQuantizationBudget: room for three send quanta (offload, delayed ACKs), at least the minimum
     * window, two segments more in Up so the probe does reach past the BDP.
     */
    private long quantizationBudget(int c, long inflight, int mss) {
        long budget = Math.max(inflight, 3L * t.sendQuantum(c));
        budget = Math.max(budget, (long) MIN_PIPE_SEGMENTS * mss);
        if (t.state(c) == PROBE_BW_UP) {
            budget += 2L * mss;
        }
        return budget;
    }

    /** §4.3.3.5 BBRTargetInflight: the BDP, or cwnd when smaller. */
    private long targetInflight(int c, int mss) {
        return Math.min(bdpMultiple(c, 1.0, mss), t.cwnd(c));
    }

    /** §4.5.10.2 BBRInflightWithHeadroom: inflight_hi less the headroom left for other flows. */
    private long inflightWithHeadroom(int c, int mss) {
        final int hi = t.inflightHi(c);
        if (hi == NO_BOUND) {
            return NO_BOUND;
        }
        final long headroom = Math.max(mss, (long) (HEADROOM * hi));
        return Math.max(hi - headroom, (long) MIN_PIPE_SEGMENTS * mss);
    }

    /** §4.6.4.5: the ProbeRTT window, half the BDP, at least the minimum window. */
    private long probeRttCwnd(int c, int mss) {
        return Math.max(bdpMultiple(c, PROBE_RTT_CWND_GAIN, mss), (long) MIN_PIPE_SEGMENTS * mss);
    }

    /**
     * §4.6.4.6 BBRSetCwnd: towards the BDP times the cwnd gain plus the aggregation allowance (only once the pipe is
     * full, as Linux), by what was delivered; in recovery minus what was lost, and during the first round of
     * recovery not below what is in flight plus what was delivered (packet conservation). Then the ProbeRTT and
     * model bounds.
     */
    private void setCwnd(TcpControlBlocks tcb, int c, AckSample ack, int mss) {
        final boolean filled = t.has(c, BbrState.F_FILLED_PIPE);
        long maxInflight = bdpMultiple(c, cwndGain(t.state(c)), mss) + (filled ? extraAcked(c) : 0);
        maxInflight = quantizationBudget(c, maxInflight, mss);
        long cwnd = t.cwnd(c);
        final int acked = ack.deliveredBytes();
        // §4.6.4.4 BBRModulateCwndForRecovery.
        if (ack.newlyLostBytes() > 0 && t.has(c, BbrState.F_IN_LOSS_RECOVERY)) {
            cwnd = Math.max(cwnd - ack.newlyLostBytes(), mss);
        }
        if (t.has(c, BbrState.F_PACKET_CONSERVATION)) {
            cwnd = Math.max(cwnd, (long) ack.inFlight() + acked);
        } else {
            if (filled) {
                cwnd = Math.min(cwnd + acked, maxInflight);
            } else if (cwnd < maxInflight || tcb.delivered(c) < (long) MIN_PIPE_SEGMENTS * mss) {
                cwnd += acked;
            }
            cwnd = Math.max(cwnd, (long) MIN_PIPE_SEGMENTS * mss);
        }
        if (t.state(c) == PROBE_RTT) {
            cwnd = Math.min(cwnd, probeRttCwnd(c, mss));
        }
        cwnd = Math.min(cwnd, cwndCap(c, mss));
        t.cwnd(c, (int) Math.max(mss, Math.min(cwnd, TcpControlBlocks.MAX_CWND)));
    }

    /**
     * §4.6.4.7 BBRBoundCwndForModel: inflight_hi while probing, inflight_hi less the headroom when cruising or in
     * ProbeRTT, and inflight_lo always, never below the minimum window.
     */
    private long cwndCap(int c, int mss) {
        final int state = t.state(c);
        long cap = NO_BOUND;
        if (isInProbeBw(state) && state != PROBE_BW_CRUISE) {
            cap = t.inflightHi(c);
        } else if (state == PROBE_RTT || state == PROBE_BW_CRUISE) {
            cap = inflightWithHeadroom(c, mss);
        }
        cap = Math.min(cap, t.inflightLo(c));
        return Math.max(cap, (long) MIN_PIPE_SEGMENTS * mss);
    }

    /** §4.6.4.4 BBRSaveCwnd: the window to come back to after recovery or ProbeRTT. */
    private void saveCwnd(TcpControlBlocks tcb, int c) {
        final boolean already = t.has(c, BbrState.F_IN_LOSS_RECOVERY) || t.state(c) == PROBE_RTT;
        t.priorCwnd(c, already ? Math.max(t.priorCwnd(c), t.cwnd(c)) : t.cwnd(c));
    }

    /** §4.6.4.4 BBRRestoreCwnd. */
    private void restoreCwnd(int c) {
        t.cwnd(c, Math.max(t.cwnd(c), t.priorCwnd(c)));
        t.set(c, BbrState.F_IN_LOSS_RECOVERY | BbrState.F_PACKET_CONSERVATION, false);
    }

    // --------------------------------------------------------------------------------- loss, ECN, idle, undo

    /**
     * §4.6.4.4 on entering fast recovery (or a tail loss probe's repair): save the window, conserve packets for a
     * round. ssthresh stays open, so the recovery sends what is delivered and BBR's window decides.
     */
    @Override
    public void onCongestion(TcpControlBlocks tcb, int c, int flightSize, int mss, long nowNs) {
        saveCwnd(tcb, c);
        t.set(c, BbrState.F_IN_LOSS_RECOVERY | BbrState.F_PACKET_CONSERVATION, true);
        startRound(tcb, c);
        tcb.ssthresh(c, TcpControlBlocks.MAX_CWND);
    }

    /**
     * An ECE (RFC 3168), taken as a loss signal: it counts as a loss in the round, so the lower bounds come down at the
     * round's end outside the probing states, and in Startup it ends Startup. The draft's L4S response (an
     * ECN-marked fraction and inflight_hi from it) is not implemented.
     */
    @Override
    public void onEcn(TcpControlBlocks tcb, int c, int flightSize, int mss, long nowNs) {
        t.set(c, BbrState.F_LOSS_IN_ROUND | BbrState.F_ECN_IN_ROUND, true);
        tcb.ssthresh(c, TcpControlBlocks.MAX_CWND);
    }

    @Override
    public void onRecoveryExit(TcpControlBlocks tcb, int c, int mss, long nowNs) {
        restoreCwnd(c);
        tcb.cwnd(c, t.cwnd(c));
    }

    /** §4.6.4.4 BBROnEnterRTO: save the window, then one segment (the timeout marked the flight lost). */
    @Override
    public void onRetransmitTimeout(TcpControlBlocks tcb, int c, int flightSize, int mss, long nowNs) {
        saveCwnd(tcb, c);
        t.set(c, BbrState.F_IN_LOSS_RECOVERY, true);
        t.set(c, BbrState.F_PACKET_CONSERVATION, false);
        t.cwnd(c, mss);
        tcb.cwnd(c, mss);
        tcb.ssthresh(c, TcpControlBlocks.MAX_CWND);
    }

    /**
     * A spurious reduction: the saved window comes back, and the lower bounds and Startup's counts the false losses
     * set are forgotten (as Linux's bbr_undo_cwnd).
     */
    @Override
    public void onUndo(TcpControlBlocks tcb, int c, long nowNs) {
        restoreCwnd(c);
        resetLowerBounds(c);
        t.fullBwCount(c, 0);
        t.lossEventsInRound(c, 0);
        tcb.cwnd(c, t.cwnd(c));
        tcb.ssthresh(c, TcpControlBlocks.MAX_CWND);
    }

    /**
     * §4.4.3 BBRHandleRestartFromIdle: the window stays (the model still holds), ProbeBW paces at the estimate
     * rather than a gain, and a ProbeRTT due may end now.
     */
    @Override
    public void onIdleRestart(TcpControlBlocks tcb, int c, int mss, int initialSegments, long nowNs) {
        t.set(c, BbrState.F_IDLE_RESTART, true);
        t.extraAckedStartNs(c, nowNs);
        if (isInProbeBw(t.state(c))) {
            setPacingRate(c, 1.0);
            tcb.pacingRate(c, t.pacingRate(c));
        } else if (t.state(c) == PROBE_RTT) {
            checkProbeRttDone(tcb, c, nowNs);
            tcb.cwnd(c, t.cwnd(c));
        }
    }
}
