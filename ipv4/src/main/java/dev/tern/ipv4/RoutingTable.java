package dev.tern.ipv4;

import dev.tern.core.net.Ipv4Address;

import java.util.Arrays;

/**
 * IPv4 routes with longest-prefix match: a connected route per interface address and, usually, a default route via
 * a gateway.
 *
 * <p>Routes are kept sorted by prefix length, longest first, so the first match is the longest. A host stack has a
 * handful of routes, for which this scan beats a trie; a router-sized table would want a trie (DIR-24-8 or a
 * Patricia tree) instead. Lookups allocate nothing. Changing routes is cold-path.
 *
 * <p>Owned by the shard thread; not thread-safe.
 */
public final class RoutingTable {
    /** {@link #lookup} result when no route matches. */
    public static final int NO_ROUTE = -1;

    private int[] networks = new int[4];
    private int[] prefixLengths = new int[4];
    private int[] gateways = new int[4];
    private int count;

    /** Adds (or replaces) the route to {@code network/prefixLength}; {@code gateway} 0 means the network is on-link. */
    public void add(int network, int prefixLength, int gateway) {
        if (prefixLength < 0 || prefixLength > 32) {
            throw new IllegalArgumentException("prefix length must be 0..32, got " + prefixLength);
        }
        final int masked = network & Ipv4Address.mask(prefixLength);
        remove(masked, prefixLength);
        if (count == networks.length) {
            networks = Arrays.copyOf(networks, count * 2);
            prefixLengths = Arrays.copyOf(prefixLengths, count * 2);
            gateways = Arrays.copyOf(gateways, count * 2);
        }
        int at = count;
        while (at > 0 && prefixLengths[at - 1] < prefixLength) {
            networks[at] = networks[at - 1];
            prefixLengths[at] = prefixLengths[at - 1];
            gateways[at] = gateways[at - 1];
            at--;
        }
        networks[at] = masked;
        prefixLengths[at] = prefixLength;
        gateways[at] = gateway;
        count++;
    }

    /** Removes the route to exactly {@code network/prefixLength}; returns whether there was one. */
    public boolean remove(int network, int prefixLength) {
        final int masked = network & Ipv4Address.mask(prefixLength);
        for (int i = 0; i < count; i++) {
            if (networks[i] == masked && prefixLengths[i] == prefixLength) {
                System.arraycopy(networks, i + 1, networks, i, count - i - 1);
                System.arraycopy(prefixLengths, i + 1, prefixLengths, i, count - i - 1);
                System.arraycopy(gateways, i + 1, gateways, i, count - i - 1);
                count--;
                return true;
            }
        }
        return false;
    }

    /** The route with the longest prefix containing {@code destination}, or {@link #NO_ROUTE}. */
    public int lookup(int destination) {
        for (int i = 0; i < count; i++) {
            if (Ipv4Address.inPrefix(destination, networks[i], prefixLengths[i])) {
                return i;
            }
        }
        return NO_ROUTE;
    }

    /** Where to send a packet for {@code destination} on {@code route}: its gateway, or the destination itself on-link. */
    public int nextHop(int route, int destination) {
        final int gateway = gateways[route];
        return gateway == 0 ? destination : gateway;
    }

    public int gateway(int route) {
        return gateways[route];
    }

    public int network(int route) {
        return networks[route];
    }

    public int prefixLength(int route) {
        return prefixLengths[route];
    }

    public int size() {
        return count;
    }

    @Override
    public String toString() {
        final StringBuilder text = new StringBuilder();
        for (int i = 0; i < count; i++) {
            text.append(Ipv4Address.format(networks[i])).append('/').append(prefixLengths[i])
                .append(gateways[i] == 0 ? " on-link" : " via " + Ipv4Address.format(gateways[i])).append('\n');
        }
        return text.toString();
    }
}
