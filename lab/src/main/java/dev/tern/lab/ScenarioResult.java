package dev.tern.lab;

import java.util.List;

/**
 * What one scenario run gave: per flow and for the bottleneck, the fingerprint of the run, the UDP cross traffic
 * ({@code udp}, null when there was none), and its time series
 * (compared by identity: two runs are alike when their fingerprints are).
 */
public record ScenarioResult(String name, long seed, double simulatedSeconds, double wallSeconds,
                             List<FlowResult> flows, double utilisation, double jainIndex, long queueP50Us,
                             long queueP95Us, long queueP99Us, long randomLoss, long overflowDrops, long aqmDrops,
                             long aqmMarks, long thresholdMarks, long noBuffer, String fingerprint,
                             LabSeries series, UdpResult udp) {

    /** Jain's fairness index over the flows' goodputs: 1 when all are equal, 1/n when one takes everything. */
    static double jain(double[] values) {
        double sum = 0;
        double squares = 0;
        for (double v : values) {
            sum += v;
            squares += v * v;
        }
        return squares == 0 ? 0 : sum * sum / (values.length * squares);
    }

    public double goodputBps() {
        double total = 0;
        for (FlowResult flow : flows) {
            total += flow.goodputBps();
        }
        return total;
    }
}
