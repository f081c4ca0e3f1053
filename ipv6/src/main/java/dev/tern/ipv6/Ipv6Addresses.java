package dev.tern.ipv6;

import dev.tern.core.net.Ipv6Address;
import dev.tern.core.net.Ipv6InterfaceAddress;

import java.util.ArrayList;
import java.util.List;

/**
 * The interface's unicast addresses and the states RFC 4862 gives them: TENTATIVE while duplicate address
 * detection runs (§5.4: not yet used, packets to it discarded), PREFERRED once it passed, DUPLICATE when another
 * node holds it (§5.4.5: never used; the operator is told through a counter and {@link #describe}), EXPIRED when the
 * valid lifetime of an address formed from a router's prefix ran out (§5.5.4). Index 0 is the link-local address
 * (§5.3), then the configured ones, then those formed by SLAAC (§5.5.3), at most
 * {@link #AUTOCONFIGURED}; an expired row is reused.
 *
 * <p>Owned by the shard thread; not thread-safe.
 */
public final class Ipv6Addresses {
    static final int TENTATIVE = 0;
    static final int PREFERRED = 1;
    static final int DUPLICATE = 2;
    static final int EXPIRED = 3;
    private static final String[] STATE_NAMES = {"tentative", "preferred", "duplicate", "expired"};
    /** Addresses SLAAC may add. */
    static final int AUTOCONFIGURED = 4;

    private final long[] high;
    private final long[] low;
    private final int[] prefixLength;
    private final int[] state;
    /** DAD solicitations still to send for each tentative address. */
    final int[] dadLeft;
    /** Formed by SLAAC from a router's prefix, rather than configured. */
    private final boolean[] autoconfigured;
    private int count;

    /** The link-local address gets {@code linkLocalIdentifier}: from the MAC by EUI-64, or opaque (RFC 7217). */
    Ipv6Addresses(long linkLocalIdentifier, List<Ipv6InterfaceAddress> configured, int dadTransmits) {
        final List<Ipv6InterfaceAddress> all = new ArrayList<>();
        all.add(new Ipv6InterfaceAddress(new Ipv6Address(Ipv6Address.LINK_LOCAL_HIGH, linkLocalIdentifier), 64));
        for (Ipv6InterfaceAddress a : configured) {
            if (all.stream().noneMatch(b -> b.address().equals(a.address()))) {
                all.add(a);
            }
        }
        count = all.size();
        final int capacity = count + AUTOCONFIGURED;
        high = new long[capacity];
        low = new long[capacity];
        prefixLength = new int[capacity];
        state = new int[capacity];
        dadLeft = new int[capacity];
        autoconfigured = new boolean[capacity];
        for (int i = 0; i < count; i++) {
            high[i] = all.get(i).address().high();
            low[i] = all.get(i).address().low();
            prefixLength[i] = all.get(i).prefixLength();
            state[i] = dadTransmits == 0 ? PREFERRED : TENTATIVE;
            dadLeft[i] = dadTransmits;
        }
    }

    public int count() {
        return count;
    }

    /** Rows there may be, SLAAC's included. */
    int capacity() {
        return high.length;
    }

    public long high(int i) {
        return high[i];
    }

    public long low(int i) {
        return low[i];
    }

    /** The address at {@code i} as a value (cold path). */
    public Ipv6InterfaceAddress address(int i) {
        return new Ipv6InterfaceAddress(new Ipv6Address(high[i], low[i]), prefixLength[i]);
    }

    int state(int i) {
        return state[i];
    }

    boolean autoconfigured(int i) {
        return autoconfigured[i];
    }

    /**
     * Adds an address formed by SLAAC, TENTATIVE with {@code dadTransmits} solicitations to send (PREFERRED at once
     * without DAD); its index, or -1 when there is no room (an expired row is reused first).
     */
    int addAutoconfigured(long h, long l, int prefix, int dadTransmits) {
        int row = -1;
        for (int i = 0; i < count; i++) {
            if (state[i] == EXPIRED && autoconfigured[i]) {
                row = i;
                break;
            }
        }
        if (row < 0) {
            if (count == high.length) {
                return -1;
            }
            row = count++;
        }
        high[row] = h;
        low[row] = l;
        prefixLength[row] = prefix;
        state[row] = dadTransmits == 0 ? PREFERRED : TENTATIVE;
        dadLeft[row] = dadTransmits;
        autoconfigured[row] = true;
        return row;
    }

    void state(int i, int newState) {
        state[i] = newState;
    }

    /** The index of ({@code h}, {@code l}) whatever its state, or -1. */
    int indexOf(long h, long l) {
        for (int i = 0; i < count; i++) {
            if (high[i] == h && low[i] == l) {
                return i;
            }
        }
        return -1;
    }

    /** True when ({@code h}, {@code l}) is one of our addresses in use (PREFERRED). */
    public boolean isOurs(long h, long l) {
        final int i = indexOf(h, l);
        return i >= 0 && state[i] == PREFERRED;
    }

    /** True when ({@code h}, {@code l}) is a multicast group we listen to: all nodes, or one of our solicited-node groups. */
    boolean listensTo(long h, long l) {
        if (h != Ipv6Address.LINK_SCOPE_MULTICAST_HIGH) {
            return false;
        }
        if (l == Ipv6Address.ALL_NODES.low()) {
            return true;
        }
        for (int i = 0; i < count; i++) {
            if (state[i] != DUPLICATE && state[i] != EXPIRED && Ipv6Address.solicitedNodeLow(low[i]) == l) {
                return true;
            }
        }
        return false;
    }

    /** True when ({@code h}, {@code l}) is on one of our links' prefixes (link-local addresses always are). */
    boolean onLink(long h, long l) {
        if (Ipv6Address.isLinkLocal(h)) {
            return true;
        }
        for (int i = 1; i < count; i++) {
            if (state[i] != EXPIRED && Ipv6Address.samePrefix(high[i], low[i], h, l, prefixLength[i])) {
                return true;
            }
        }
        return false;
    }

    /**
     * The source address for a packet to ({@code h}, {@code l}), after RFC 6724 §5 as far as a host with one
     * interface needs it: the link-local address for link-local and link-scope multicast destinations (rule 2,
     * scope), else the preferred address whose prefix matches most bits (rule 8), else any preferred global one,
     * else the link-local one. -1 when no address is usable yet (all tentative).
     */
    public int sourceFor(long h, long l) {
        final boolean linkScope = Ipv6Address.isLinkLocal(h)
            || (Ipv6Address.isMulticast(h) && ((h >>> 48) & 0xf) <= 2);
        int best = -1;
        int bestMatch = -1;
        if (!linkScope) {
            for (int i = 1; i < count; i++) {
                if (state[i] != PREFERRED) {
                    continue;
                }
                final int match = Long.numberOfLeadingZeros(high[i] ^ h)
                    + (high[i] == h ? Long.numberOfLeadingZeros(low[i] ^ l) : 0);
                if (match > bestMatch) {
                    best = i;
                    bestMatch = match;
                }
            }
        }
        if (best < 0 && state[0] == PREFERRED) {
            best = 0;
        }
        return best;
    }

    /** True when no address is waiting for duplicate address detection to end (what a first send may wait for). */
    public boolean settled() {
        for (int i = 0; i < count; i++) {
            if (state[i] == TENTATIVE) {
                return false;
            }
        }
        return true;
    }

    /** The address at {@code i} is no longer valid (§5.5.4): never used or answered again. */
    void expire(int i) {
        state[i] = EXPIRED;
    }

    /** One line per address, for {@code tern stat} and errors: {@code fe80::1/64 preferred}. */
    public List<String> describe() {
        final List<String> lines = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            lines.add(address(i) + " " + STATE_NAMES[state[i]] + (autoconfigured[i] ? " autoconfigured" : ""));
        }
        return lines;
    }
}
