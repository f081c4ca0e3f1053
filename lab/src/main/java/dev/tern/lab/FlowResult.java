package dev.tern.lab;

/** What one flow achieved: goodput over its active time, its share of all goodput, retransmits, CE marks and RTT. */
public record FlowResult(int index, String congestionControl, long bytes, double goodputBps, double share,
                         long retransmits, long ceMarks, long rttP50Us, long rttP95Us, long rttP99Us) {
}
