package dev.tern.lab;

import dev.tern.lab.link.BottleneckStats;
import dev.tern.lab.link.CoDel;
import dev.tern.lab.link.DropTail;
import dev.tern.lab.link.DualPi2;
import dev.tern.lab.link.FqCoDel;
import dev.tern.lab.link.FrameSlots;
import dev.tern.lab.link.Pie;
import dev.tern.lab.link.QueueDiscipline;
import dev.tern.lab.link.QueueLimit;

import java.util.List;
import java.util.Locale;

/**
 * Which discipline a bottleneck runs and its parameters: drop-tail (with an optional CE threshold); CoDel and FQ-CoDel
 * with their target and interval (RFC 8289 §4.2's 5 ms and 100 ms by default); PIE (RFC 8033: 15 ms); DualPI2 (RFC
 * 9332: 15 ms for the classic queue). {@code ecn} makes CoDel, FQ-CoDel and PIE mark CE instead of dropping; DualPI2
 * always marks ECN-capable packets. The rest of each discipline's knobs are in {@link Tuning}.
 */
public record DisciplineSpec(String name, long targetNs, long intervalNs, boolean ecn, QueueLimit markThreshold,
                             Tuning tuning) {
    public static final List<String> NAMES = List.of("droptail", "codel", "fq_codel", "pie", "dualpi2");
    private static final long MS = 1_000_000L;

    /**
     * The knobs beyond target and interval. FQ-CoDel: {@code flows} queues and the DRR {@code quantum} in bytes
     * (RFC 8290 §5.2: 1024 and one MTU's frame). PIE: {@code updateNs}, {@code alpha} and {@code beta} in Hz,
     * {@code maxBurstNs}, and {@code markProbability}, the most at which it marks rather than drops (RFC 8033 §4.1,
     * §5.1: 15 ms, 0.125, 1.25, 150 ms, 10 %). DualPI2: {@code updateNs}, {@code alpha}, {@code beta}, the coupling
     * {@code coupling} (k), the L4S ramp's {@code l4sThresholdNs} and {@code l4sRangeNs}, {@code l4sMinPackets}
     * below which the L4S queue never marks on its own, the scheduler's {@code tShiftNs}, and {@code anyEct}: every
     * ECN-capable packet goes to the L4S queue, not only ECT(1) and CE (RFC 9332 Appendix A.1's defaults with a worst
     * round trip of 100 ms: 15 ms, 0.15, 3, 2, 800 us, 400 us, 1; the time shift is twice the target here).
     */
    public record Tuning(int flows, int quantum, long updateNs, double alpha, double beta, long maxBurstNs,
                         double markProbability, double coupling, long l4sThresholdNs, long l4sRangeNs,
                         int l4sMinPackets, long tShiftNs, boolean anyEct) {
        public static Tuning defaults(String discipline, long targetNs) {
            return discipline.equals("dualpi2")
                ? new Tuning(1024, 1514, Math.min(targetNs, 100 * MS / 3), 0.1 * Math.min(targetNs, 100 * MS / 3) / 1e9
                    / 0.01, 3.0, 150 * MS, 0.1, 2.0, 800_000L, 400_000L, 1, 2 * targetNs, false)
                : new Tuning(1024, 1514, 15 * MS, 0.125, 1.25, 150 * MS, 0.1, 2.0, 800_000L, 400_000L, 1,
                    2 * targetNs, false);
        }
    }

    public DisciplineSpec {
        if (!NAMES.contains(name)) {
            throw new IllegalArgumentException("unknown discipline '" + name + "' (valid: " + String.join(", ", NAMES) + ")");
        }
        if (tuning == null) {
            tuning = Tuning.defaults(name, targetNs);
        }
    }

    public DisciplineSpec(String name, long targetNs, long intervalNs, boolean ecn, QueueLimit markThreshold) {
        this(name, targetNs, intervalNs, ecn, markThreshold, null);
    }

    public static DisciplineSpec dropTail() {
        return new DisciplineSpec("droptail", 5_000_000L, 100_000_000L, false, null);
    }

    /** The target a discipline has when the scenario names none. */
    public static long defaultTargetNs(String name) {
        return name.equals("pie") || name.equals("dualpi2") ? 15 * MS : 5 * MS;
    }

    QueueDiscipline create(FrameSlots slots, QueueLimit limit, int maxFrame, long seed, BottleneckStats stats) {
        final Tuning t = tuning;
        final long aqmSeed = seed * 0x9E37_79B9L + 13;
        return switch (name) {
            case "codel" -> new CoDel(slots, limit, targetNs, intervalNs, ecn, maxFrame, stats);
            case "fq_codel" -> new FqCoDel(slots, limit, t.flows(), t.quantum(), targetNs, intervalNs, ecn, maxFrame,
                aqmSeed, stats);
            case "pie" -> new Pie(slots, limit, targetNs, t.updateNs(), t.alpha(), t.beta(), t.maxBurstNs(), ecn,
                t.markProbability(), aqmSeed, stats);
            case "dualpi2" -> new DualPi2(slots, limit, targetNs, t.updateNs(), t.alpha(), t.beta(), t.coupling(),
                t.l4sThresholdNs(), t.l4sRangeNs(), t.l4sMinPackets(), t.tShiftNs(), t.anyEct(), aqmSeed, stats);
            default -> new DropTail(slots, limit, markThreshold, stats);
        };
    }

    @Override
    public String toString() {
        return switch (name) {
            case "codel" -> "codel" + (ecn ? " ecn" : "");
            case "fq_codel", "pie" -> name + (ecn ? " ecn" : "") + " target " + ms(targetNs);
            case "dualpi2" -> "dualpi2 target " + ms(targetNs) + " l4s " + ms(tuning.l4sThresholdNs()) + "+"
                + ms(tuning.l4sRangeNs()) + (tuning.anyEct() ? " any_ect" : "");
            default -> markThreshold == null ? "droptail" : "droptail mark>" + markThreshold;
        };
    }

    private static String ms(long ns) {
        return String.format(Locale.ROOT, "%.1fms", ns / 1e6);
    }
}
