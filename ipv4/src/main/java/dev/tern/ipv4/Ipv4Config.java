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
 */
public record Ipv4Config(int defaultTtl, int reassemblySlots, long reassemblyTimeoutNs, int maxFragmentsPerDatagram,
                         int icmpErrorsPerSecond, int icmpErrorBurst, int pathMtuEntries, long pathMtuTimeoutNs,
                         int minPathMtu, boolean echoIgnoreBroadcasts) {
    public static final Ipv4Config DEFAULT = new Ipv4Config(64, 64, 30_000_000_000L, 128, 1000, 50, 256,
        600_000_000_000L, 552, true);

    public Ipv4Config {
        if (defaultTtl < 1 || defaultTtl > 255 || reassemblySlots < 1 || reassemblyTimeoutNs <= 0
            || maxFragmentsPerDatagram < 2 || icmpErrorsPerSecond < 0 || icmpErrorBurst < 0 || pathMtuEntries < 1
            || pathMtuTimeoutNs <= 0 || minPathMtu < 68) {
            throw new IllegalArgumentException("invalid IPv4 configuration: " + this);
        }
    }

    public Ipv4Config withReassemblyTimeoutNs(long timeoutNs) {
        return new Ipv4Config(defaultTtl, reassemblySlots, timeoutNs, maxFragmentsPerDatagram, icmpErrorsPerSecond,
            icmpErrorBurst, pathMtuEntries, pathMtuTimeoutNs, minPathMtu, echoIgnoreBroadcasts);
    }

    public Ipv4Config withReassemblySlots(int slots) {
        return new Ipv4Config(defaultTtl, slots, reassemblyTimeoutNs, maxFragmentsPerDatagram, icmpErrorsPerSecond,
            icmpErrorBurst, pathMtuEntries, pathMtuTimeoutNs, minPathMtu, echoIgnoreBroadcasts);
    }

    public Ipv4Config withIcmpErrorRate(int perSecond, int burst) {
        return new Ipv4Config(defaultTtl, reassemblySlots, reassemblyTimeoutNs, maxFragmentsPerDatagram, perSecond,
            burst, pathMtuEntries, pathMtuTimeoutNs, minPathMtu, echoIgnoreBroadcasts);
    }
}
