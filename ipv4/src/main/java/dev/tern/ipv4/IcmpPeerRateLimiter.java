package dev.tern.ipv4;

/**
 * Token buckets limiting the ICMP errors we send to each peer (RFC 1812 §4.3.2.8: "the rate limiting parameters
 * SHOULD be settable"; RFC 1122 §3.2.2), beside the global {@link dev.tern.core.time.TokenBucket}: one peer provoking errors (a port
 * scan, a flood of bad datagrams) spends its own bucket, not the allowance every other peer shares. The numbers
 * follow Linux's per-destination limit (icmp_ratelimit 1000 ms, a burst of 6): a peer earns one error per
 * {@code intervalNs}, saving up to {@code burst}.
 *
 * <p>Bounded and allocation-free: a fixed open-addressed table of {@code entries} slots (a power of two) keyed by
 * address. A peer is looked for in the {@link #PROBES} slots after its hash; a new peer takes a free one or, when all
 * are taken, the one used least recently, whose history is forgotten. Address 0 marks a free slot (no error is ever
 * sent to 0.0.0.0). An attacker who spoofs many sources can thus refill a victim's bucket by eviction; the global
 * limit still caps the total.
 *
 * <pre>
 *   slot i:  addresses[i] (int)  creditNs[i] (long, 0..burst x intervalNs)  lastNs[i] (long, last refill)
 * </pre>
 *
 * <p>Owned by the shard thread; not thread-safe.
 */
final class IcmpPeerRateLimiter {
    static final int PROBES = 4;

    private final long intervalNs;
    private final long maxCreditNs;
    private final int mask;
    private final int[] addresses;
    private final long[] creditNs;
    private final long[] lastNs;

    /** {@code intervalNs} 0 turns the limit off. {@code entries} is rounded up to a power of two. */
    IcmpPeerRateLimiter(long intervalNs, int burst, int entries) {
        this.intervalNs = intervalNs;
        this.maxCreditNs = intervalNs * burst;
        final int size = Integer.highestOneBit(Math.max(PROBES, entries - 1) << 1);
        this.mask = size - 1;
        this.addresses = new int[size];
        this.creditNs = new long[size];
        this.lastNs = new long[size];
    }

    /** Takes one error's worth of credit from {@code peer}'s bucket if it has it. */
    boolean tryAcquire(int peer, long nowNs) {
        if (intervalNs == 0) {
            return true;
        }
        final int slot = slotOf(peer, nowNs);
        final long credit = Math.min(maxCreditNs, creditNs[slot] + Math.max(0, nowNs - lastNs[slot]));
        lastNs[slot] = nowNs;
        if (credit >= intervalNs) {
            creditNs[slot] = credit - intervalNs;
            return true;
        }
        creditNs[slot] = credit;
        return false;
    }

    /** The peer's slot; a peer seen for the first time starts with a full bucket (Linux starts it full too). */
    private int slotOf(int peer, long nowNs) {
        final int home = (peer * 0x9E37_79B1) >>> 16;
        int victim = -1;
        for (int probe = 0; probe < PROBES; probe++) {
            final int slot = (home + probe) & mask;
            final int address = addresses[slot];
            if (address == peer) {
                return slot;
            }
            if (address == 0) {
                if (victim < 0 || addresses[victim] != 0) {
                    victim = slot;
                }
            } else if (victim < 0 || (addresses[victim] != 0 && lastNs[slot] - lastNs[victim] < 0)) {
                victim = slot;
            }
        }
        addresses[victim] = peer;
        creditNs[victim] = maxCreditNs;
        lastNs[victim] = nowNs;
        return victim;
    }

    /** Peers the table holds now (tests). */
    int size() {
        int size = 0;
        for (int address : addresses) {
            size += address != 0 ? 1 : 0;
        }
        return size;
    }
}
