package dev.tern.ipv4;

/**
 * IPv4 and ICMP settings. Defaults follow Linux and the RFCs where they set a number.
 *
 * @param defaultTtl             TTL of packets we originate (Linux ip_default_ttl 64)
 * @param reassemblySlots        datagrams reassembled at once; with 64 KiB each this is the global memory bound
 * @param reassemblyTimeoutNs    how long fragments wait for the rest (RFC 1122 §3.3.2: 60 s max; Linux 30 s)
 * @param maxFragmentsPerDatagram fragments one datagram may have; more is treated as an attack and dropped
 * @param icmpErrorsPerSecond    rate limit of ICMP errors we send (RFC 1812 §4.3.2.8; Linux icmp_msgs_per_sec 1000)
 * @param icmpErrorBurst         burst allowance of that limit (Linux icmp_msgs_burst 50)
 * @param pathMtuEntries         destinations whose path MTU is remembered
 * @param pathMtuTimeoutNs       how long a learned path MTU holds (RFC 1191 §6.3: 10 minutes)
 * @param minPathMtu             lowest path MTU believed from ICMP (Linux min_pmtu 552)
 * @param echoIgnoreBroadcasts   ignore echo requests to broadcast and multicast (Linux icmp_echo_ignore_broadcasts 1)
 * @param icmpPeerIntervalNs     per-peer ICMP error limit: one error per this interval to each peer (Linux
 *                               icmp_ratelimit 1000 ms); 0 turns the per-peer limit off
 * @param icmpPeerBurst          errors a peer may receive at once before that limit applies (Linux's burst factor 6)
 * @param icmpPeerEntries        peers the per-peer limit remembers (a bounded table; the least recently used goes)
 * @param identificationKey0     first half of the secret key of IPv4 identification values (RFC 7739 §5.3); with
 *                               the second half also 0, each layer draws a random key
 * @param identificationKey1     second half of that key
 */
public record Ipv4Config(int defaultTtl, int reassemblySlots, long reassemblyTimeoutNs, int maxFragmentsPerDatagram,
                         int icmpErrorsPerSecond, int icmpErrorBurst, int pathMtuEntries, long pathMtuTimeoutNs,
                         int minPathMtu, boolean echoIgnoreBroadcasts, long icmpPeerIntervalNs, int icmpPeerBurst,
                         int icmpPeerEntries, long identificationKey0, long identificationKey1) {
    public static final Ipv4Config DEFAULT = new Ipv4Config(64, 64, 30_000_000_000L, 128, 1000, 50, 256,
        600_000_000_000L, 552, true);

    public Ipv4Config {
        if (defaultTtl < 1 || defaultTtl > 255 || reassemblySlots < 1 || reassemblyTimeoutNs <= 0
            || maxFragmentsPerDatagram < 2 || icmpErrorsPerSecond < 0 || icmpErrorBurst < 0 || pathMtuEntries < 1
            || pathMtuTimeoutNs <= 0 || minPathMtu < 68 || icmpPeerIntervalNs < 0 || icmpPeerBurst < 1
            || icmpPeerEntries < 1 || icmpPeerEntries > (1 << 20)) {
            throw new IllegalArgumentException("invalid IPv4 configuration: " + this);
        }
    }

    /** The settings before per-peer ICMP limits and identification keys existed; those take their defaults. */
    public Ipv4Config(int defaultTtl, int reassemblySlots, long reassemblyTimeoutNs, int maxFragmentsPerDatagram,
                      int icmpErrorsPerSecond, int icmpErrorBurst, int pathMtuEntries, long pathMtuTimeoutNs,
                      int minPathMtu, boolean echoIgnoreBroadcasts) {
        this(defaultTtl, reassemblySlots, reassemblyTimeoutNs, maxFragmentsPerDatagram, icmpErrorsPerSecond,
            icmpErrorBurst, pathMtuEntries, pathMtuTimeoutNs, minPathMtu, echoIgnoreBroadcasts, 1_000_000_000L, 6, 256,
            0, 0);
    }

    public Ipv4Config withReassemblyTimeoutNs(long timeoutNs) {
        return new Ipv4Config(defaultTtl, reassemblySlots, timeoutNs, maxFragmentsPerDatagram, icmpErrorsPerSecond,
            icmpErrorBurst, pathMtuEntries, pathMtuTimeoutNs, minPathMtu, echoIgnoreBroadcasts, icmpPeerIntervalNs,
            icmpPeerBurst, icmpPeerEntries, identificationKey0, identificationKey1);
    }

    public Ipv4Config withReassemblySlots(int slots) {
        return new Ipv4Config(defaultTtl, slots, reassemblyTimeoutNs, maxFragmentsPerDatagram, icmpErrorsPerSecond,
            icmpErrorBurst, pathMtuEntries, pathMtuTimeoutNs, minPathMtu, echoIgnoreBroadcasts, icmpPeerIntervalNs,
            icmpPeerBurst, icmpPeerEntries, identificationKey0, identificationKey1);
    }

    public Ipv4Config withIcmpErrorRate(int perSecond, int burst) {
        return new Ipv4Config(defaultTtl, reassemblySlots, reassemblyTimeoutNs, maxFragmentsPerDatagram, perSecond,
            burst, pathMtuEntries, pathMtuTimeoutNs, minPathMtu, echoIgnoreBroadcasts, icmpPeerIntervalNs,
            icmpPeerBurst, icmpPeerEntries, identificationKey0, identificationKey1);
    }

    /** The per-peer ICMP error limit: one per {@code intervalNs} (0: off), {@code burst} at once, {@code entries} peers. */
    public Ipv4Config withIcmpPeerRate(long intervalNs, int burst, int entries) {
        return new Ipv4Config(defaultTtl, reassemblySlots, reassemblyTimeoutNs, maxFragmentsPerDatagram,
            icmpErrorsPerSecond, icmpErrorBurst, pathMtuEntries, pathMtuTimeoutNs, minPathMtu, echoIgnoreBroadcasts,
            intervalNs, burst, entries, identificationKey0, identificationKey1);
    }

    /** A fixed identification key (simulations that must replay frame for frame); 0, 0 means random per layer. */
    public Ipv4Config withIdentificationKey(long key0, long key1) {
        return new Ipv4Config(defaultTtl, reassemblySlots, reassemblyTimeoutNs, maxFragmentsPerDatagram,
            icmpErrorsPerSecond, icmpErrorBurst, pathMtuEntries, pathMtuTimeoutNs, minPathMtu, echoIgnoreBroadcasts,
            icmpPeerIntervalNs, icmpPeerBurst, icmpPeerEntries, key0, key1);
    }

    /** Hides the identification key: configurations get printed, secrets should not be. */
    @Override
    public String toString() {
        return "Ipv4Config[defaultTtl=" + defaultTtl + ", reassemblySlots=" + reassemblySlots + ", reassemblyTimeoutNs="
            + reassemblyTimeoutNs + ", maxFragmentsPerDatagram=" + maxFragmentsPerDatagram + ", icmpErrorsPerSecond="
            + icmpErrorsPerSecond + ", icmpErrorBurst=" + icmpErrorBurst + ", pathMtuEntries=" + pathMtuEntries
            + ", pathMtuTimeoutNs=" + pathMtuTimeoutNs + ", minPathMtu=" + minPathMtu + ", echoIgnoreBroadcasts="
            + echoIgnoreBroadcasts + ", icmpPeerIntervalNs=" + icmpPeerIntervalNs + ", icmpPeerBurst=" + icmpPeerBurst
            + ", icmpPeerEntries=" + icmpPeerEntries + ", identificationKey=" + (identificationKey0 == 0
            && identificationKey1 == 0 ? "random" : "fixed") + "]";
    }
}
