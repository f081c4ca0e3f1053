package dev.tern.stack;

/**
 * Connection-opening SYNs counted by IPv4 source over a sliding window, so that shedding can tell a flood from a few
 * sources (which can be dropped by address, sparing everyone else) from one whose sources are spread (where only
 * dropping at random is left). A space-saving heavy-hitter table of {@link #SLOTS} entries: a source that is not in
 * the table takes the place of the entry with the smallest count and inherits that count as its error, so every
 * source that sent more than a {@code 1/SLOTS} share of the SYNs is in the table, and its count less its error
 * never exceeds what it really sent. Every {@link #WINDOW_NS} all counts halve: what a source sent a second ago
 * weighs a thousandth of what it sends now.
 *
 * <p>Fixed size, allocation-free, for the stack's thread only: {@link #record} runs per SYN (a scan of the table),
 * {@link #heavy} once per poll under pressure.
 */
final class SynSources {
    /** Entries of the table; a source needs a share above one in this many SYNs to be sure to hold one. */
    static final int SLOTS = 32;
    /** The most sources a link is asked to drop by address (a classic BPF filter tests each in turn). */
    static final int MAX_HEAVY = 8;
    /** A source is heavy with at least one in {@code HEAVY_SHARE} of the window's SYNs (at most MAX_HEAVY are). */
    static final int HEAVY_SHARE = MAX_HEAVY;
    /** How often the counts halve. */
    static final long WINDOW_NS = 100_000_000L;
    /** Fewer SYNs than this in the window name no source: too little to tell a flood from a busy client. */
    static final int MIN_SYNS = 64;

    private final int[] addresses = new int[SLOTS];
    private final int[] counts = new int[SLOTS];
    private final int[] errors = new int[SLOTS];
    private int used;
    private int total;
    private long halvesAtNs = Long.MIN_VALUE;

    /** One connection-opening SYN from {@code source}. */
    void record(int source) {
        total++;
        int smallest = 0;
        for (int i = 0; i < used; i++) {
            if (addresses[i] == source) {
                counts[i]++;
                return;
            }
            if (counts[i] < counts[smallest]) {
                smallest = i;
            }
        }
        if (used < SLOTS) {
            addresses[used] = source;
            counts[used] = 1;
            errors[used] = 0;
            used++;
            return;
        }
        addresses[smallest] = source;
        errors[smallest] = counts[smallest];
        counts[smallest]++;
    }

    /** Moves the window to {@code nowNs}: the counts halve once per {@link #WINDOW_NS} passed. */
    void advance(long nowNs) {
        if (halvesAtNs == Long.MIN_VALUE) {
            halvesAtNs = nowNs + WINDOW_NS;
            return;
        }
        while (nowNs >= halvesAtNs && total > 0) {
            total >>= 1;
            int kept = 0;
            for (int i = 0; i < used; i++) {
                if (counts[i] > 1) {
                    addresses[kept] = addresses[i];
                    counts[kept] = counts[i] >> 1;
                    errors[kept] = errors[i] >> 1;
                    kept++;
                }
            }
            used = kept;
            halvesAtNs += WINDOW_NS;
        }
        if (nowNs >= halvesAtNs) {
            halvesAtNs = nowNs + WINDOW_NS; // nothing counted: no halving to catch up on
        }
    }

    /**
     * The sources that carry most of the window's SYNs: each with at least one in {@link #HEAVY_SHARE} of them
     * (counted surely: count less error), together at least three quarters. Writes them to {@code into} (at least
     * {@link #MAX_HEAVY} long) and returns how many; 0 when no few sources stand out (a flood from spread or random
     * sources, or too few SYNs to tell).
     */
    int heavy(int[] into) {
        if (total < MIN_SYNS) {
            return 0;
        }
        int found = 0;
        long carried = 0;
        for (int i = 0; i < used; i++) {
            final int sure = counts[i] - errors[i];
            if ((long) sure * HEAVY_SHARE >= total && found < MAX_HEAVY) {
                into[found++] = addresses[i];
                carried += sure;
            }
        }
        return carried * 4 >= 3L * total ? found : 0;
    }

    /**
     * Takes {@code source} out of the count (the link now drops its SYNs): what is left shows who else floods.
     */
    void forget(int source) {
        for (int i = 0; i < used; i++) {
            if (addresses[i] == source) {
                total -= Math.min(total, counts[i] - errors[i]);
                used--;
                addresses[i] = addresses[used];
                counts[i] = counts[used];
                errors[i] = errors[used];
                return;
            }
        }
    }

    /** SYNs in the window (halved with it). */
    int total() {
        return total;
    }
}
