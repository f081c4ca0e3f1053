package dev.tern.lab;

import java.util.Arrays;
import java.util.Locale;

/**
 * A run's time series, one point per {@link #INTERVAL_NS} of simulated time: each flow's goodput over the interval
 * (bytes its receiver read) and the bottleneck's mean queue delay (the sojourn time of the frames that went onto the
 * link in it). Points are taken at the sender's RTT sampling instants, so an interval may end up to one sampling
 * period late; each point carries its own end time. Filled during the run into arrays sized at its start.
 */
public final class LabSeries {
    public static final long INTERVAL_NS = 100_000_000L;
    private static final int MAX_POINTS = 100_000;

    private final long[] endNs;
    private final double[][] goodputBps;
    private final double[] queueDelayMs;
    private int points;

    LabSeries(int flows, long durationNs) {
        final int capacity = (int) Math.min(MAX_POINTS, durationNs / INTERVAL_NS + 2);
        this.endNs = new long[capacity];
        this.goodputBps = new double[flows][capacity];
        this.queueDelayMs = new double[capacity];
    }

    /** Whether there is room for one more point. */
    boolean hasRoom() {
        return points < endNs.length;
    }

    /** Starts a point ending at {@code nowNs} with the queue's mean delay; {@link #goodput} fills its flows. */
    void point(long nowNs, double queueMs) {
        endNs[points] = nowNs;
        queueDelayMs[points] = queueMs;
        points++;
    }

    void goodput(int flow, double bps) {
        goodputBps[flow][points - 1] = bps;
    }

    public int points() {
        return points;
    }

    public int flows() {
        return goodputBps.length;
    }

    /** The end of each point's interval, in simulated seconds. */
    public double[] seconds() {
        final double[] s = new double[points];
        for (int i = 0; i < points; i++) {
            s[i] = endNs[i] / 1e9;
        }
        return s;
    }

    public double[] goodputBps(int flow) {
        return Arrays.copyOf(goodputBps[flow], points);
    }

    public double[] queueDelayMs() {
        return Arrays.copyOf(queueDelayMs, points);
    }

    /** The series as CSV: {@code time_s,queue_delay_ms,flow0_bps,...}. */
    public String csv() {
        final StringBuilder out = new StringBuilder("time_s,queue_delay_ms");
        for (int f = 0; f < flows(); f++) {
            out.append(",flow").append(f).append("_bps");
        }
        out.append('\n');
        for (int i = 0; i < points; i++) {
            out.append(String.format(Locale.ROOT, "%.3f,%.3f", endNs[i] / 1e9, queueDelayMs[i]));
            for (int f = 0; f < flows(); f++) {
                out.append(String.format(Locale.ROOT, ",%.0f", goodputBps[f][i]));
            }
            out.append('\n');
        }
        return out.toString();
    }
}
