package dev.tern.ipv4;

/**
 * Which multicast datagrams this host receives: the interface state of RFC 3376 §3.2 (group, filter mode and
 * source list) kept by the IGMP layer. Without one, only 224.0.0.1 (all systems) is received.
 */
@FunctionalInterface
public interface MulticastFilter {
    /**
     * True when a datagram of {@code protocol} from {@code source} to {@code group} should be received. IGMP
     * messages to a joined group pass whatever the source filter says: the filter selects data, not queriers.
     */
    boolean accepts(int group, int source, int protocol);
}
