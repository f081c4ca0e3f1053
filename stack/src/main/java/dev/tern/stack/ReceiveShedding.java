package dev.tern.stack;

import dev.tern.core.counters.CountersFile;
import dev.tern.ethernet.link.Link;
import dev.tern.tcp.TcpLayer;
import org.agrona.concurrent.status.AtomicCounter;

/**
 * What a stack does when it falls behind its link (issue 15 item 5: a SYN flood at the link's full rate must not
 * starve established connections). Once per poll, before the frames are handled, it asks the link whether half its
 * receive ring or more is waiting ({@link Link#receivePressure()}). Under pressure TCP drops SYNs to listeners and
 * leaves segments for no connection unanswered ({@code tcp.drop.syn_pressure}, {@code tcp.rx.unanswered_pressure}),
 * and the link is asked to drop connection-opening SYNs itself, before its ring ({@link Link#shedUnsolicitedSyns}),
 * so that a flood costs neither ring slots nor cycles. With the flood filtered out the ring drains, so pressure
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

    private final Link link;
    private final TcpLayer tcp;
    private final AtomicCounter pressurePolls;
    private final AtomicCounter episodes;
    private final AtomicCounter active;
    private boolean linkSheds;
    private boolean linkCannotShed;
    private long lastPressureNs;
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
            if (!linkSheds && !linkCannotShed) {
                if (link.shedUnsolicitedSyns(true)) {
                    linkSheds = true;
                    holdNs = nowNs - releasedNs < 2 * holdNs ? Math.min(2 * holdNs, HOLD_MAX_NS) : HOLD_MIN_NS;
                    episodes.incrementRelease();
                    active.setRelease(1);
                } else {
                    linkCannotShed = true; // the stack's own drop does the work; do not ask again every poll
                }
            }
        } else if (linkSheds && nowNs - lastPressureNs >= holdNs) {
            link.shedUnsolicitedSyns(false);
            linkSheds = false;
            releasedNs = nowNs;
            active.setRelease(0);
        }
    }

    /** When the link's filter is due to come off if no pressure comes first; {@link Long#MAX_VALUE} while it is off. */
    long releaseAtNs() {
        return linkSheds ? lastPressureNs + holdNs : Long.MAX_VALUE;
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
