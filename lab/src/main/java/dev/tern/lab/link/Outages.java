package dev.tern.lab.link;

/**
 * Spells when the link is silent: it sends nothing, while frames keep arriving and queueing (a radio fade, a route
 * flap). Given as start and length pairs, in order and not overlapping. A frame already on the link finishes.
 */
public final class Outages {
    private final long[] startNs;
    private final long[] endNs;
    private int next;

    public Outages(long[] startNs, long[] lengthNs) {
        if (startNs.length != lengthNs.length) {
            throw new IllegalArgumentException("each outage needs a start and a length");
        }
        this.startNs = startNs.clone();
        this.endNs = new long[startNs.length];
        for (int i = 0; i < startNs.length; i++) {
            if (startNs[i] < 0 || lengthNs[i] <= 0 || i > 0 && startNs[i] < endNs[i - 1]) {
                throw new IllegalArgumentException("outages must be in order, not overlapping, with positive lengths");
            }
            endNs[i] = startNs[i] + lengthNs[i];
        }
    }

    public static Outages none() {
        return new Outages(new long[0], new long[0]);
    }

    /** The earliest instant at or after {@code ns} when the link may send (time only moves forward). */
    public long sendableAt(long ns) {
        while (next < endNs.length && endNs[next] - ns <= 0) {
            next++;
        }
        if (next < endNs.length && startNs[next] - ns <= 0) {
            return endNs[next];
        }
        return ns;
    }

    /** The silent time within {@code [0, untilNs)}. */
    public long silentNs(long untilNs) {
        long total = 0;
        for (int i = 0; i < startNs.length; i++) {
            total += Math.max(0, Math.min(endNs[i], untilNs) - startNs[i]);
        }
        return total;
    }

    public int count() {
        return startNs.length;
    }
}
