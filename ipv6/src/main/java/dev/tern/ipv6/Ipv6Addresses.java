package dev.tern.ipv6;

import dev.tern.core.net.Ipv6Address;
import dev.tern.core.net.Ipv6InterfaceAddress;

import java.util.ArrayList;
import java.util.List;

/**
 * The interface's unicast addresses and the states RFC 4862 gives them: TENTATIVE while duplicate address
 * detection runs (§5.4: not yet used, packets to it discarded), PREFERRED once it passed, DUPLICATE when another
 * node holds it (§5.4.5: never used; the operator is told through a counter and {@link #describe}). Index 0 is the
 * link-local address formed from the MAC (§5.3), the rest are the configured ones.
 *
 * <p>Owned by the shard thread; not thread-safe.
 */
public final class Ipv6Addresses {
    static final int TENTATIVE = 0;
    static final int PREFERRED = 1;
    static final int DUPLICATE = 2;
    private static final String[] STATE_NAMES = {"tentative", "preferred", "duplicate"};

    private final long[] high;
    private final long[] low;
    private final int[] prefixLength;
    private final int[] state;
    /** DAD solicitations still to send for each tentative address. */
    final int[] dadLeft;
    private final int count;

    Ipv6Addresses(long mac, List<Ipv6InterfaceAddress> configured, int dadTransmits) {
        final List<Ipv6InterfaceAddress> all = new ArrayList<>();
        all.add(new Ipv6InterfaceAddress(Ipv6Address.linkLocal(mac), 64));
        for (Ipv6InterfaceAddress a : configured) {
            if (all.stream().noneMatch(b -> b.address().equals(a.address()))) {
                all.add(a);
            }
        }
        count = all.size();
        high = new long[count];
        low = new long[count];
        prefixLength = new int[count];
        state = new int[count];
        dadLeft = new int[count];
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
            if (state[i] != DUPLICATE && Ipv6Address.solicitedNodeLow(low[i]) == l) {
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
            if (Ipv6Address.samePrefix(high[i], low[i], h, l, prefixLength[i])) {
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
    int sourceFor(long h, long l) {
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

    /** One line per address, for {@code tern stat} and errors: {@code fe80::1/64 preferred}. */
    public List<String> describe() {
        final List<String> lines = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            lines.add(address(i) + " " + STATE_NAMES[state[i]]);
        }
        return lines;
    }
}
