package dev.tern.stack;

import dev.tern.core.counters.CountersFile;
import dev.tern.ethernet.link.Link;
import dev.tern.tcp.TcpLayer;
import org.agrona.concurrent.status.AtomicCounter;

/**
 * What a stack does when it falls behind its link (the rule: a SYN flood at the link's full rate must not
 * starve established connections). Once per poll, before the frames are handled, it asks the link whether half its
 * receive ring or more is waiting ({@link Link#receivePressure()}). Under pressure TCP drops SYNs to listeners and
 * leaves segments for no connection unanswered ({@code tcp.drop.syn_pressure}, {@code tcp.rx.unanswered_pressure}),
 * and the link is asked to drop connection-opening SYNs itself, before its ring ({@link Link#shedUnsolicitedSyns}),
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
 * <p>Counters: {@code stack.shed.pressure_polls} (polls that began under pressure), {@code stack.shed.episodes}
 * (times the link's filter went on), {@code stack.shed.active} (1 while it is on).
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

    private final Link link;
    private final TcpLayer tcp;
    private final AtomicCounter pressurePolls;
    private final AtomicCounter episodes;
    private final AtomicCounter active;
    private boolean linkSheds;
    private boolean linkCannotShed;
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
        this.linkCannotShed = !Boolean.parseBoolean(System.getProperty("tern.shed.filter", "true"));
    }

    /** Once per poll, before the link's frames are handled. Allocates nothing; a system call only on a change. */
    void beforeReceive(long nowNs) {
        final boolean pressure = link.receivePressure();
        tcp.receivePressure(pressure);
        if (pressure) {
            pressurePolls.incrementRelease();
            lastPressureNs = nowNs;
            if (pressureSinceNs == NO_PRESSURE) {
                pressureSinceNs = nowNs;
            }
            if (!linkSheds && !linkCannotShed && nowNs - pressureSinceNs >= SUSTAIN_NS) {
                if (link.shedUnsolicitedSyns(true)) {
                    linkSheds = true;
                    holdNs = nowNs - releasedNs < 2 * holdNs ? Math.min(2 * holdNs, HOLD_MAX_NS) : HOLD_MIN_NS;
                    episodes.incrementRelease();
                    active.setRelease(1);
                } else {
                    linkCannotShed = true; // the stack's own drop does the work; do not ask again every poll
                }
            }
            return;
        }
        pressureSinceNs = NO_PRESSURE;
        if (linkSheds && nowNs - lastPressureNs >= holdNs) {
            link.shedUnsolicitedSyns(false);
            linkSheds = false;
            releasedNs = nowNs;
            active.setRelease(0);
        }
    }

    /**
     * When this wants the next poll: the link's filter is due to come off if no pressure comes first, or pressure
     * that lasts until then turns it on; {@link Long#MAX_VALUE} when neither is pending.
     */
    long nextPollAtNs() {
        if (linkSheds) {
            return lastPressureNs + holdNs;
        }
        return pressureSinceNs != NO_PRESSURE && !linkCannotShed ? pressureSinceNs + SUSTAIN_NS : Long.MAX_VALUE;
    }

    /** Takes the link's filter off (the stack closes). */
    void close() {
        if (linkSheds) {
            link.shedUnsolicitedSyns(false);
            linkSheds = false;
            active.setRelease(0);
        }
    }
}
