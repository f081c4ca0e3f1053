package dev.tern.tcp;

/**
 * Which new-data segments carry PSH. RFC 9293 §3.9.1.2 leaves it to the sender when to push buffered data; PSH marks
 * no record, so stacks differ and both rules here deliver the same bytes.
 */
public enum PushRule {
    /**
     * RFC 1122 §4.2.2.2's: the segment that carries the last buffered byte, unless the application asked to hold it
     * back (MSG_MORE). FreeBSD's rule.
     */
    LAST_BUFFERED,
    /**
     * Linux's: as {@link #LAST_BUFFERED}, and also the last segment of every frame of two or more segments. Linux
     * cuts each output pass into frames of {@link #frameSegments} segments (its TSO autosizing), pushes every frame
     * that carries more than one segment so that the receiver's GRO flushes it, and segmentation leaves the flag
     * on the frame's last segment. A frame of one segment goes without PSH unless it ends the buffered data.
     */
    LINUX;

    /** Linux's tcp_min_tso_segs default: the smallest frame its autosizing builds. */
    static final int MIN_FRAME_SEGMENTS = 2;
    /** The largest frame (a GSO frame's 64 KiB). */
    static final int MAX_FRAME_BYTES = 65_536;
    /** Linux's sk_pacing_shift: a frame holds about 1 ms of the pacing rate (2^-10 s). */
    private static final int PACING_SHIFT = 10;
    /** Linux's tcp_tso_rtt_log: on short paths frames grow by 64 KiB >> (min RTT / 512 µs). */
    private static final int RTT_LOG = 9;

    /**
     * Whether a new-data segment gets PSH: {@code lastBuffered} when it carries the last byte the application
     * pushed, {@code endsBurst} when nothing more goes in this pass, {@code index} its place among the new-data
     * segments this pass sends (0 for the first), {@code frame} the segments of a frame ({@link #frameSegments}).
     */
    boolean push(boolean lastBuffered, boolean endsBurst, int index, int frame) {
        if (lastBuffered || this != LINUX) {
            return lastBuffered;
        }
        return (index + 1) % frame == 0 || endsBurst && index % frame > 0;
    }

    /**
     * The segments of one frame, as Linux's TSO autosizing (tcp_tso_autosize) picks them from its pacing rate
     * (tcp_update_pacing_rate: cwnd per smoothed RTT, doubled in slow start's first half, else 1.2 times): about
     * 1 ms of that rate, more on paths under 16 ms, at least {@link #MIN_FRAME_SEGMENTS}, at most 64 KiB.
     */
    static int frameSegments(int cwnd, int ssthresh, int mss, int srttUs, int minRttUs) {
        long bytes = MAX_FRAME_BYTES;
        if (srttUs > 0) {
            final long ratio = cwnd < ssthresh / 2 ? 200 : 120;
            final long rate = (long) cwnd * ratio * 10_000L / srttUs;
            bytes = Math.min(bytes, rate >> PACING_SHIFT);
        }
        final int shift = minRttUs >> RTT_LOG;
        if (minRttUs > 0 && shift < Integer.SIZE) {
            bytes = Math.min(MAX_FRAME_BYTES, bytes + (MAX_FRAME_BYTES >> shift));
        }
        return (int) Math.max(MIN_FRAME_SEGMENTS, bytes / Math.max(1, mss));
    }
}
