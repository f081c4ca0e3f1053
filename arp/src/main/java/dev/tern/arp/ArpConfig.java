package dev.tern.arp;

/**
 * Neighbour discovery settings. Defaults follow Linux's (net.ipv4.neigh.default.*): 30 s reachable time, 1 s
 * retransmit, 3 broadcast solicitations, 5 s delay then 3 unicast probes.
 *
 * @param cacheSize            neighbours remembered at most
 * @param reachableTimeNs      how long a confirmed neighbour stays REACHABLE
 * @param retransmitNs         interval between requests while resolving or probing
 * @param maxRequests          broadcast requests before resolution fails ("host unreachable")
 * @param maxProbes            unicast probes of a STALE neighbour before it is forgotten
 * @param delayFirstProbeNs    how long a STALE neighbour in use waits for an upper-layer confirmation before probing
 * @param pendingPerNeighbour  packets queued per neighbour while it resolves (older ones are dropped)
 * @param pendingTotal         packets queued for all neighbours together (the buffer pool)
 * @param announcements        gratuitous ARP announcements when the address comes up (RFC 5227 §2.3)
 * @param announceIntervalNs   interval between announcements
 */
public record ArpConfig(int cacheSize, long reachableTimeNs, long retransmitNs, int maxRequests, int maxProbes,
                        long delayFirstProbeNs,
                        int pendingPerNeighbour, int pendingTotal, int announcements, long announceIntervalNs) {
    public static final ArpConfig DEFAULT = new ArpConfig(1024, 30_000_000_000L, 1_000_000_000L, 3, 3, 5_000_000_000L, 64, 512, 2,
        2_000_000_000L);

    public ArpConfig {
        if (cacheSize < 1 || maxRequests < 1 || maxProbes < 0 || pendingPerNeighbour < 1 || pendingTotal < 1
            || announcements < 0 || delayFirstProbeNs <= 0 || reachableTimeNs <= 0 || retransmitNs <= 0 || announceIntervalNs <= 0) {
            throw new IllegalArgumentException("invalid ARP configuration: " + this);
        }
    }
}
