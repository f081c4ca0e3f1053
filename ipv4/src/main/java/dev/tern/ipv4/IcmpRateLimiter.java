package dev.tern.ipv4;

/**
 * Token bucket limiting the ICMP errors we send (RFC 1812 §4.3.2.8; RFC 1122 §3.2.2 asks for a limit too):
 * {@code perSecond} tokens a second, up to {@code burst} saved. Owned by the shard thread.
 */
final class IcmpRateLimiter {
    private final long nanosPerToken;
    private final long burst;
    private long tokens;
    private long lastRefillNs;
    private boolean started;

    IcmpRateLimiter(int perSecond, int burst) {
        this.nanosPerToken = perSecond == 0 ? Long.MAX_VALUE : 1_000_000_000L / perSecond;
        this.burst = burst;
        this.tokens = burst;
    }

    /** Takes a token if one is available. */
    boolean tryAcquire(long nowNs) {
        if (!started) {
            started = true;
            lastRefillNs = nowNs;
        }
        if (nanosPerToken != Long.MAX_VALUE) {
            final long earned = (nowNs - lastRefillNs) / nanosPerToken;
            if (earned > 0) {
                tokens = Math.min(burst, tokens + earned);
                lastRefillNs += earned * nanosPerToken;
            }
        }
        if (tokens > 0) {
            tokens--;
            return true;
        }
        return false;
    }
}
