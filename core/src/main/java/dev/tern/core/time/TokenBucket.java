package dev.tern.core.time;

/**
 * A token bucket: {@code perSecond} tokens a second, up to {@code burst} saved (0 a second: only the burst, never
 * refilled). It limits the ICMP and ICMPv6 errors a stack sends (RFC 1812 §4.3.2.8, RFC 4443 §2.4(f)). Owned by the
 * shard thread.
 */
public final class TokenBucket {
    private final long nanosPerToken;
    private final long burst;
    private long tokens;
    private long lastRefillNs;
    private boolean started;

    public TokenBucket(int perSecond, int burst) {
        this.nanosPerToken = perSecond == 0 ? Long.MAX_VALUE : 1_000_000_000L / perSecond;
        this.burst = burst;
        this.tokens = burst;
    }

    /** Takes a token if one is available. */
    public boolean tryAcquire(long nowNs) {
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
