package dev.tern.tcp;

import dev.tern.core.memory.PageMemory;
import dev.tern.core.time.TimerWheel;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * When a paced connection's next segment or TSO frame may leave, and how large that frame is.
 *
 * <p>The rate is the row's {@code pacingRate}: set by a congestion control that paces itself (BBR), or, for one that
 * does not (CUBIC, NewReno), by {@link #updateRate} as Linux's {@code tcp_update_pacing_rate} when the connection's
 * settings ask for pacing ({@link TcpConfig#pacing}) or its owner set a cap. The owner's cap is Linux's
 * SO_MAX_PACING_RATE: setting one turns pacing on, as it does in Linux. A segment of {@code n} bytes holds the next
 * back by {@code n / rate}; the stack's timer wheel releases it.
 *
 * <p>The wheel fires at its tick, up to a tick after the deadline. The time lost to that lateness is credited to the
 * next deadline, at most one tick, so the rate holds at any speed: a sender released late catches up in one burst of
 * at most a tick's worth. After an idle spell of more than a tick nothing is credited.
 *
 * <p>The caps live in an off-heap table mapped by the page (resident only where a connection sets one). Owned by the
 * shard thread; not thread-safe. Nothing here allocates.
 */
final class Pacer {
    /** Linux's tcp_pacing_ss_ratio: twice cwnd per RTT while cwnd is below half of ssthresh. */
    static final int SLOW_START_RATIO = 200;
    /** Linux's tcp_pacing_ca_ratio: 1.2 times cwnd per RTT after. */
    static final int AVOIDANCE_RATIO = 120;
    /** Linux's tcp_min_tso_segs: the smallest frame autosizing builds. */
    static final int MIN_FRAME_SEGMENTS = 2;
    /** The largest frame: a GSO frame's 64 KiB. */
    static final int MAX_FRAME_BYTES = 65_536;
    /** Linux's sk_pacing_shift: a frame holds about 1 ms of the rate (2^-10 s). */
    private static final int PACING_SHIFT = 10;
    /** Linux's tcp_tso_rtt_log: on paths under about 16 ms frames grow by 64 KiB >> (min RTT / 512 µs). */
    private static final int RTT_LOG = 9;
    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG;

    private final TcpControlBlocks tcb;
    private final ConnectionSettings settings;
    private final PlugPointRegistry plugPoints;
    /** Per slot: the owner's cap in bytes per second, 0 for none. */
    private final MemorySegment caps;

    Pacer(TcpControlBlocks tcb, ConnectionSettings settings, PlugPointRegistry plugPoints) {
        this.tcb = tcb;
        this.settings = settings;
        this.plugPoints = plugPoints;
        final long bytes = (long) Math.max(1, tcb.capacity()) * Long.BYTES;
        final long page = PageMemory.pageSize();
        this.caps = PageMemory.map((bytes + page - 1) / page * page, Arena.ofAuto()).asSlice(0, bytes);
    }

    /** A new connection in slot {@code c}: no cap, nothing scheduled. */
    void clear(int c) {
        caps.set(LONG, (long) c * Long.BYTES, 0L);
        tcb.nextSendNs(c, 0);
    }

    /** SO_MAX_PACING_RATE in bytes per second; 0 removes the cap. */
    void maxRate(int c, long bytesPerSecond) {
        caps.set(LONG, (long) c * Long.BYTES, bytesPerSecond);
    }

    /** The cap came off a connection not paced by its settings: a control that does not pace itself goes unpaced. */
    void stopCwndPacing(int c) {
        if (!plugPoints.congestionControl(c).pacesItself()) {
            tcb.pacingRate(c, 0);
        }
    }

    /** The owner's cap in bytes per second, 0 for none. */
    long maxRate(int c) {
        return caps.get(LONG, (long) c * Long.BYTES);
    }

    /**
     * After an ACK (and at the handshake's end): the cwnd-based rate for a control that does not pace itself, when
     * the connection paces; then the owner's cap over whatever rate is set.
     */
    void updateRate(int c, int inFlight) {
        final long cap = maxRate(c);
        if (!plugPoints.congestionControl(c).pacesItself() && (cap > 0 || settings.of(c).pacing())) {
            tcb.pacingRate(c, linuxRate(tcb.cwnd(c), tcb.ssthresh(c), inFlight, tcb.srttUs(c)));
        }
        if (cap > 0 && (tcb.pacingRate(c) == 0 || tcb.pacingRate(c) > cap)) {
            tcb.pacingRate(c, cap);
        }
    }

    /**
     * Linux's tcp_update_pacing_rate in bytes per second: the larger of cwnd and the data in flight per smoothed
     * RTT, by {@link #SLOW_START_RATIO} in slow start's first half, else {@link #AVOIDANCE_RATIO}. 0 (unpaced)
     * before an RTT sample.
     */
    static long linuxRate(int cwnd, int ssthresh, int inFlight, int srttUs) {
        if (srttUs <= 0) {
            return 0;
        }
        final long ratio = cwnd < ssthresh / 2 ? SLOW_START_RATIO : AVOIDANCE_RATIO;
        return Math.max(cwnd, inFlight) * ratio * 10_000L / srttUs;
    }

    /** True when the connection paces and its next segment is not due at {@code nowNs}. */
    boolean holds(int c, long nowNs) {
        return tcb.pacingRate(c) > 0 && tcb.nextSendNs(c) - nowNs > 0;
    }

    /** {@code bytes} left at {@code nowNs}: the next may leave bytes / rate after the last deadline (see above). */
    void sent(int c, int bytes, long nowNs) {
        final long rate = tcb.pacingRate(c);
        if (rate > 0) {
            final long due = tcb.nextSendNs(c);
            final long from = nowNs - due > TimerWheel.TICK_NS ? nowNs : due;
            tcb.nextSendNs(c, from + bytes * 1_000_000_000L / rate);
        }
    }

    /**
     * The payload bytes of one TSO frame of a paced connection, as Linux's tcp_tso_autosize: about 1 ms of the
     * rate, more on short paths, at least {@link #MIN_FRAME_SEGMENTS} segments, at most {@code max}; whole
     * segments of {@code mss}. {@code max} alone while the connection does not pace.
     */
    int frameBytes(int c, int mss, int max) {
        final long rate = tcb.pacingRate(c);
        if (rate <= 0) {
            return max;
        }
        return Math.min(max, frameSegments(rate, mss, tcb.minRttUs(c)) * mss);
    }

    /** The segments of a frame at {@code rate} bytes per second on a path of {@code minRttUs} (tcp_tso_autosize). */
    static int frameSegments(long rate, int mss, int minRttUs) {
        long bytes = rate >> PACING_SHIFT;
        final int shift = minRttUs >> RTT_LOG;
        if (minRttUs > 0 && shift < Integer.SIZE) {
            bytes += MAX_FRAME_BYTES >> shift;
        }
        bytes = Math.min(bytes, MAX_FRAME_BYTES);
        return (int) Math.max(MIN_FRAME_SEGMENTS, bytes / Math.max(1, mss));
    }
}
