package dev.tern.lab;

/**
 * One bulk TCP flow of a scenario: its congestion control, whether it asks for ECN, when it starts, how much it
 * sends (0: no limit) or for how long (0: to the end), and its access delay (one way, added to its round trip twice).
 */
public record FlowSpec(String congestionControl, boolean ecn, long startNs, long bytes, long durationNs,
                       long accessDelayNs) {
    public FlowSpec {
        if (startNs < 0 || bytes < 0 || durationNs < 0 || accessDelayNs < 0) {
            throw new IllegalArgumentException("flow start, size, duration and delay must not be negative");
        }
    }
}
