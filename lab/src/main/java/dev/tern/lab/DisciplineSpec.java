package dev.tern.lab;

import dev.tern.lab.link.BottleneckStats;
import dev.tern.lab.link.CoDel;
import dev.tern.lab.link.DropTail;
import dev.tern.lab.link.FrameSlots;
import dev.tern.lab.link.QueueDiscipline;
import dev.tern.lab.link.QueueLimit;

import java.util.List;

/**
 * Which discipline a bottleneck runs and its parameters: drop-tail (with an optional CE threshold), or CoDel with
 * its target and interval (RFC 8289 §4.2's 5 ms and 100 ms by default), marking CE instead of dropping when
 * {@code ecn} is set.
 */
public record DisciplineSpec(String name, long targetNs, long intervalNs, boolean ecn, QueueLimit markThreshold) {
    public static final List<String> NAMES = List.of("droptail", "codel");

    public DisciplineSpec {
        if (!NAMES.contains(name)) {
            throw new IllegalArgumentException("unknown discipline '" + name + "' (valid: " + String.join(", ", NAMES) + ")");
        }
    }

    public static DisciplineSpec dropTail() {
        return new DisciplineSpec("droptail", 5_000_000L, 100_000_000L, false, null);
    }

    QueueDiscipline create(FrameSlots slots, QueueLimit limit, int maxFrame, BottleneckStats stats) {
        return switch (name) {
            case "codel" -> new CoDel(slots, limit, targetNs, intervalNs, ecn, maxFrame, stats);
            default -> new DropTail(slots, limit, markThreshold, stats);
        };
    }

    @Override
    public String toString() {
        return switch (name) {
            case "codel" -> "codel" + (ecn ? " ecn" : "");
            default -> markThreshold == null ? "droptail" : "droptail mark>" + markThreshold;
        };
    }
}
