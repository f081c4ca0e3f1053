package dev.tern.stack;

import dev.tern.core.counters.CountersFile;
import dev.tern.ethernet.link.Link;
import dev.tern.tcp.TcpLayer;
import org.agrona.concurrent.status.AtomicCounter;

/**
 * What a stack does when it falls behind its link (the rule: a SYN flood at the link's full rate must not
 * starve established connections). Once per poll, before the frames are handled, it asks the link whether half its
 * receive ring or more is waiting ({@link Link#receivePressure()}). Under pressure TCP leaves segments for no
 * connection unanswered ({@code tcp.rx.unanswered_pressure}), and drops SYNs to listeners
 * ({@code tcp.drop.syn_pressure}) only during a SYN flood no few sources carry (below); and the link is asked to drop connection-opening SYNs itself, before its ring ({@link Link#shedUnsolicitedSyns}),
 * so that a flood costs neither ring slots nor cycles, once the pressure has lasted {@link #SUSTAIN_NS} (every poll
 * in that time under pressure): a thread that lost its processor for a few milliseconds finds half its ring waiting
 * at one poll and drains it at the next, and filtering on that alone cut a listener that was keeping up with 100,000
 * SYNs/s to one SYN in eight for seconds (one poll under pressure, one episode, 14,610 SYN-ACKs/s against 92,319
 * without the filter); a flood beyond the stack's rate keeps the ring half full poll after poll and is filtered
 * after that millisecond. With the flood filtered out the ring drains, so pressure
 * cannot say when the flood ended: the filter stays on for a hold time after the last poll under pressure, then
 * comes off, and goes back on at the next sign of pressure. Each time it must go back on within two holds of coming
 * off, the hold doubles (from {@link #HOLD_MIN_NS} up to {@link #HOLD_MAX_NS}): every time the filter comes off
 * during a flood the ring overflows within milliseconds and established connections lose segments, so a lasting
 * flood should see that rarely. A calm spell resets it.
 *
 * <p>Pressure is attributed before anything is filtered: the stack counts, over the polls of a run under pressure,
 * the frames it handled and the connection-opening SYNs among them ({@link SynTap}), and asks the link to filter only
 * when SYNs are at least half of those frames. Half, because a ring that fills with something else (ARP, UDP, a
 * bulk transfer's ACKs) would not drain by filtering SYNs: the filter would refuse clients and leave the pressure;
 * while a SYN flood that is half of what comes in is enough to keep the ring full by itself. A reset counts with the
 * SYNs, up to one for each: a flood whose SYNs are answered (cookies) brings a reset back for each SYN-ACK from a
 * sender that has no such connection (hping3's kernel does), so a flood the stack nearly keeps up with is half SYNs
 * and half resets, and those resets end with the SYNs. A run that lasts
 * {@link #SUSTAIN_NS} without that is counted once ({@code stack.shed.pressure_without_syn_flood}) and filters
 * nothing. A run needs {@link SynSources#MIN_SYNS} SYNs to be judged a SYN flood: a poll that handled no frame is no
 * evidence either way.
 *
 * <p>A run is judged only once the table of sources holds enough SYNs to say who sends them: a stack short of
 * processor time handles few SYNs per poll, and the table's window halves them, so its first judgement could find
 * "no few sources" for a single-source flood and shed every client's SYNs at random. It waits for more, while the
 * run brings fewer than {@link #UNDECIDED_MAX_SYNS}.
 *
 * <p>The heaviest sources go first. {@link SynSources} counts SYNs by source; when a few sources (at most eight,
 * each with an eighth of the SYNs, three quarters together) carry the flood, the link is asked to drop every SYN
 * from those sources and none other ({@link Link#shedSynsFrom}), and under pressure the stack drops those sources'
 * SYNs itself while TCP leaves other SYNs through: a second client connects at once where a filter of seven in
 * eight for everyone held it back for seconds (its retries at 1, 3, 7 s). Pressure that lasts again while the
 * link drops by source adds the new heavy sources to its list, or, when no few sources stand out or the list would
 * grow past eight, turns the random filter on as well. When no few sources stand out (a flood from spread or
 * random sources, at least {@link SynSources#MIN_SYNS} in the table) the link drops seven in eight SYNs for all
 * ({@link Link#shedUnsolicitedSyns}) and TCP drops SYNs to listeners, as the only choice left; a link that cannot
 * filter by source gets the random filter.
 *
 * <p>Counters: {@code stack.shed.pressure_polls} (polls that began under pressure), {@code stack.shed.episodes}
 * (times the link's filter went on), {@code stack.shed.active} (1 while it is on),
 * {@code stack.shed.pressure_without_syn_flood}, {@code stack.shed.source_filters} (times the link was given a
 * list of sources), {@code stack.shed.random_filters} (times the random filter went on), {@code stack.shed.sources}
 * (sources the link's filter names now), {@code stack.shed.syn_source_drops} (SYNs the stack dropped by source).
 */
final class ReceiveShedding {
    /** How long the link first keeps shedding after the last poll under pressure. */
    static final long HOLD_MIN_NS = 200_000_000L;
    /** The longest hold, reached after repeated episodes (a lasting flood). */
    static final long HOLD_MAX_NS = 6_400_000_000L;
    /**
     * How long every poll must find the ring under pressure before the link is asked to filter. 1 ms: at 300,000
     * SYNs/s that is 300 frames, within the half of the AF_PACKET throughput ring (1024 slots) beyond the half that
     * signals pressure; a flood of a million frames a second may overflow the ring once before the filter is on.
     */
    static final long SUSTAIN_NS = 1_000_000L;
    /**
     * How many SYNs a run may bring unjudged because the table holds too few to name sources or call them spread (a
     * stack short of processor time handles few, and the window halves them): then the link sheds at random. Counted
     * in SYNs, not time: a stack that was not polled for a while has learnt nothing in that time.
     */
    static final int UNDECIDED_MAX_SYNS = 8 * SynSources.MIN_SYNS;

    private final Link link;
    private final TcpLayer tcp;
    private final SynSources sources = new SynSources();
    private final AtomicCounter pressurePolls;
    private final AtomicCounter episodes;
    private final AtomicCounter active;
    private final AtomicCounter pressureWithoutSynFlood;
    private final AtomicCounter sourceFilters;
    private final AtomicCounter randomFilters;
    private final AtomicCounter filteredSources;
    private final AtomicCounter synSourceDrops;
    /** Whether any of the link's filters is on. */
    private boolean linkSheds;
    private boolean linkShedsAtRandom;
    private boolean linkCannotShed;
    private boolean linkCannotShedBySource;
    /** False with {@code -Dtern.shed.by_source=false}: every flood is shed at random (for comparison). */
    private final boolean bySource;
    /** The sources the link drops SYNs from now: the first {@link #listed}. */
    private final int[] linkList = new int[SynSources.MAX_HEAVY];
    private int listed;
    /** The heavy sources as of this poll, when it is under pressure: the first {@link #heavyCount}. */
    private final int[] heavy = new int[SynSources.MAX_HEAVY];
    private int heavyCount;
    private final int[] union = new int[2 * SynSources.MAX_HEAVY];
    /**
     * The sources the link's list held when the hold last ran out: the first {@link #releasedCount}. Pressure that
     * comes back within two holds blames them at once (see {@link #beforeReceive}).
     */
    private final int[] released = new int[SynSources.MAX_HEAVY];
    private int releasedCount;
    private boolean pressureNow;
    /** This poll is under a SYN flood that no few sources carry: TCP drops SYNs to listeners. */
    private boolean spreadFlood;
    private int synsThisPoll;
    private int resetsThisPoll;
    /** Frames, SYNs and resets handled in the polls of the current run under pressure. */
    private long runFrames;
    private long runSyns;
    private long runResets;
    private boolean runCounted;
    private long lastPressureNs;
    /** When the current run of polls under pressure began; {@link #NO_PRESSURE} when the last poll had none. */
    private long pressureSinceNs = NO_PRESSURE;
    private static final long NO_PRESSURE = Long.MIN_VALUE;
    private long releasedNs = Long.MIN_VALUE / 2;
    private long holdNs = HOLD_MIN_NS;

    ReceiveShedding(Link link, TcpLayer tcp, CountersFile counters) {
        this.link = link;
        this.tcp = tcp;
        this.pressurePolls = counters.counter("stack.shed.pressure_polls");
        this.episodes = counters.counter("stack.shed.episodes");
        this.active = counters.counter("stack.shed.active");
        this.pressureWithoutSynFlood = counters.counter("stack.shed.pressure_without_syn_flood");
        this.sourceFilters = counters.counter("stack.shed.source_filters");
        this.randomFilters = counters.counter("stack.shed.random_filters");
        this.filteredSources = counters.counter("stack.shed.sources");
        this.synSourceDrops = counters.counter("stack.shed.syn_source_drops");
        this.linkCannotShed = !Boolean.parseBoolean(System.getProperty("tern.shed.filter", "true"));
        this.bySource = Boolean.parseBoolean(System.getProperty("tern.shed.by_source", "true"));
    }

    /** Once per poll, before the link's frames are handled. Allocates nothing; a system call only on a change. */
    void beforeReceive(long nowNs) {
        sources.advance(nowNs);
        final boolean pressure = link.receivePressure();
        pressureNow = pressure;
        heavyCount = pressure && bySource ? sources.heavy(heavy) : 0;
        if (heavyCount == 0 && pressure && listed == 0 && releasedCount > 0 && nowNs - releasedNs < 2 * holdNs) {
            // The flood outlived the hold and is back, and the table forgot its sources when they were listed: blame
            // them again at once rather than have TCP drop every SYN to a listener, other clients' too, while the
            // table relearns them.
            System.arraycopy(released, 0, heavy, 0, releasedCount);
            heavyCount = releasedCount;
        }
        // TCP drops every SYN to a listener only for a SYN flood that no few sources can be blamed for: the link sheds
        // at random, or this run's SYNs are spread. Pressure alone is no such evidence: frames of another kind fill
        // the ring as well, and a flood's first SYNs, before the table holds enough to name its sources, would take
        // other clients' with them (their retry comes a second later).
        spreadFlood = pressure && heavyCount == 0 && (linkShedsAtRandom
            || listed == 0 && synFloodRun() && sources.total() >= SynSources.MIN_SYNS);
        tcp.receivePressure(pressure, spreadFlood);
        if (pressure) {
            pressurePolls.incrementRelease();
            lastPressureNs = nowNs;
            if (pressureSinceNs == NO_PRESSURE) {
                newRun(nowNs);
                runCounted = false;
            }
            if (!linkCannotShed && !linkShedsAtRandom && nowNs - pressureSinceNs >= SUSTAIN_NS) {
                if (synFloodRun()) {
                    if (undecided()) {
                        return; // judged again at the next poll, with the SYNs it brings
                    }
                    if (linkSheds) {
                        tighten();
                    } else {
                        turnOn(nowNs);
                    }
                    newRun(nowNs); // the next step, if any, after another run of pressure
                } else if (!synsDominate() && !linkSheds && !runCounted) {
                    runCounted = true;
                    pressureWithoutSynFlood.incrementRelease();
                }
            }
            return;
        }
        pressureSinceNs = NO_PRESSURE;
        if (linkSheds && nowNs - lastPressureNs >= holdNs) {
            turnOff();
            releasedNs = nowNs;
        }
    }

    /**
     * Whether the run so far is a SYN flood: SYNs at least half of the frames handled other than the resets that
     * answer them, and enough of them to tell
     * (a poll that handled no frame is no evidence either way).
     */
    private boolean synFloodRun() {
        return runSyns >= SynSources.MIN_SYNS && synsDominate();
    }

    /** SYNs are at least half of the run's frames, the resets that answer them (one each at most) left out. */
    private boolean synsDominate() {
        return 2 * runSyns >= runFrames - Math.min(runResets, runSyns);
    }

    /**
     * Whether the table holds too few SYNs to say whether a few sources carry the flood (its window halved them),
     * until the run brought {@link #UNDECIDED_MAX_SYNS}: filtering at random then would hold every client back.
     */
    private boolean undecided() {
        return bySource && heavyCount == 0 && sources.total() < SynSources.MIN_SYNS && runSyns < UNDECIDED_MAX_SYNS;
    }

    private void newRun(long nowNs) {
        pressureSinceNs = nowNs;
        runFrames = 0;
        runSyns = 0;
        runResets = 0;
    }

    /** After the poll's frames: {@code frames} were handled. */
    void afterReceive(int frames) {
        if (pressureNow) {
            runFrames += frames;
            runSyns += synsThisPoll;
            runResets += resetsThisPoll;
        }
        synsThisPoll = 0;
        resetsThisPoll = 0;
    }

    /** A TCP segment with RST set (per segment, from {@link SynTap}). */
    void resetArrives() {
        resetsThisPoll++;
    }

    /**
     * A connection-opening SYN whose source the table cannot hold (IPv6's): evidence of a flood, never of who sends it,
     * so such a flood is shed at random once the run has brought {@link #UNDECIDED_MAX_SYNS} SYNs.
     */
    void synArrivesUnnamed() {
        synsThisPoll++;
    }

    /**
     * A connection-opening SYN from {@code source} (per SYN, from {@link SynTap}); returns whether the stack drops it
     * here: under pressure, when its source is one of the heavy ones.
     */
    boolean synArrives(int source) {
        if (listed > 0 && contains(linkList, listed, source)) {
            // Already blamed (one that was waiting in the ring when the link's filter went on, or a link that
            // cannot filter): neither counted again nor evidence of a new flood.
            if (pressureNow) {
                synSourceDrops.incrementRelease();
                return true;
            }
            return false;
        }
        synsThisPoll++;
        sources.record(source);
        if (pressureNow && contains(heavy, heavyCount, source)) {
            synSourceDrops.incrementRelease();
            return true;
        }
        return false;
    }

    private void turnOn(long nowNs) {
        final boolean bySource = heavyCount > 0 && listSources(heavy, heavyCount);
        if (!bySource && !shedAtRandom()) {
            linkCannotShed = true; // the stack's own drop does the work; do not ask again every poll
            return;
        }
        linkSheds = true;
        holdNs = nowNs - releasedNs < 2 * holdNs ? Math.min(2 * holdNs, HOLD_MAX_NS) : HOLD_MIN_NS;
        episodes.incrementRelease();
        active.setRelease(1);
    }

    /**
     * Pressure lasted again, mostly SYNs from sources not on the list, with the link dropping by source only: the
     * flood has new sources. They join the list when they are few and it stays within eight; else the random filter
     * goes on as well.
     */
    private void tighten() {
        int merged = 0;
        if (heavyCount > 0) {
            System.arraycopy(linkList, 0, union, 0, listed);
            merged = listed;
            for (int i = 0; i < heavyCount; i++) {
                if (!contains(union, merged, heavy[i])) {
                    union[merged++] = heavy[i];
                }
            }
        }
        if (merged > listed && merged <= SynSources.MAX_HEAVY && listSources(union, merged)) {
            return;
        }
        shedAtRandom();
    }

    private boolean listSources(int[] addresses, int count) {
        if (linkCannotShedBySource || !link.shedSynsFrom(addresses, count)) {
            linkCannotShedBySource = true;
            return false;
        }
        System.arraycopy(addresses, 0, linkList, 0, count);
        listed = count;
        for (int i = 0; i < count; i++) {
            sources.forget(addresses[i]);
        }
        sourceFilters.incrementRelease();
        filteredSources.setRelease(count);
        return true;
    }

    private boolean shedAtRandom() {
        if (!link.shedUnsolicitedSyns(true)) {
            return false;
        }
        linkShedsAtRandom = true;
        randomFilters.incrementRelease();
        return true;
    }

    private void turnOff() {
        if (linkShedsAtRandom) {
            link.shedUnsolicitedSyns(false);
            linkShedsAtRandom = false;
        }
        System.arraycopy(linkList, 0, released, 0, listed);
        releasedCount = listed;
        if (listed > 0) {
            link.shedSynsFrom(linkList, 0);
            listed = 0;
            filteredSources.setRelease(0);
        }
        linkSheds = false;
        active.setRelease(0);
    }

    private static boolean contains(int[] addresses, int count, int address) {
        for (int i = 0; i < count; i++) {
            if (addresses[i] == address) {
                return true;
            }
        }
        return false;
    }

    /**
     * When this wants the next poll: the link's filter is due to come off if no pressure comes first, or pressure
     * that lasts until then turns it on; {@link Long#MAX_VALUE} when neither is pending.
     */
    long nextPollAtNs() {
        if (linkSheds) {
            return lastPressureNs + holdNs;
        }
        // A run already judged no SYN flood, or one past its first millisecond and still to be judged, waits for
        // frames, which wake the poll anyway.
        final long judgeAtNs = pressureSinceNs + SUSTAIN_NS;
        return pressureSinceNs != NO_PRESSURE && !linkCannotShed && !runCounted && judgeAtNs > lastPressureNs
            ? judgeAtNs : Long.MAX_VALUE;
    }

    /** Takes the link's filter off (the stack closes). */
    void close() {
        if (linkSheds) {
            turnOff();
        }
    }
}
