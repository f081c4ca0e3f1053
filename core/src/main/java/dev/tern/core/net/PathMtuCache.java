package dev.tern.core.net;

import org.agrona.collections.Long2LongHashMap;

/**
 * Path MTUs learned from ICMP "fragmentation needed" (RFC 1191) or ICMPv6 "packet too big" (RFC 8201), per
 * destination, each valid for a while (RFC 1191 §6.3, RFC 8201 §4: at least 10 minutes, then the path is tried at
 * the interface MTU again). A destination is a {@code long} key: an IPv4 address as it is, an IPv6 address as a
 * keyed hash of its two words (its family's choice).
 *
 * <p>Bounded: when full, the entry closest to expiry makes room. Lookups and updates allocate nothing.
 *
 * <p>Owned by the shard thread; not thread-safe.
 */
public final class PathMtuCache {
    private final Long2LongHashMap index;
    private final long[] destination;
    private final int[] mtu;
    private final long[] expiresNs;
    private final int[] free;
    private int freeCount;
    private final long timeoutNs;

    public PathMtuCache(int capacity, long timeoutNs) {
        this.index = new Long2LongHashMap(capacity * 2, 0.5f, -1);
        this.destination = new long[capacity];
        this.mtu = new int[capacity];
        this.expiresNs = new long[capacity];
        this.free = new int[capacity];
        for (int i = 0; i < capacity; i++) {
            free[i] = capacity - 1 - i;
        }
        this.freeCount = capacity;
        this.timeoutNs = timeoutNs;
    }

    /** The MTU to use towards {@code address}: the learned path MTU if one holds, else {@code interfaceMtu}. */
    public int mtu(long address, int interfaceMtu, long nowNs) {
        if (index.isEmpty()) {
            return interfaceMtu;
        }
        final int entry = (int) index.get(address);
        if (entry < 0) {
            return interfaceMtu;
        }
        if (expiresNs[entry] - nowNs <= 0) {
            remove(entry);
            return interfaceMtu;
        }
        return Math.min(mtu[entry], interfaceMtu);
    }

    /** Records a smaller path MTU towards {@code address}; a larger value than what is known is ignored (RFC 1191 §6.3). */
    public void reduce(long address, int pathMtu, long nowNs) {
        int entry = (int) index.get(address);
        if (entry >= 0) {
            if (pathMtu >= mtu[entry] && expiresNs[entry] - nowNs > 0) {
                return;
            }
        } else {
            if (freeCount == 0) {
                remove(soonestToExpire());
            }
            entry = free[--freeCount];
            destination[entry] = address;
            index.put(address, entry);
        }
        mtu[entry] = pathMtu;
        expiresNs[entry] = nowNs + timeoutNs;
    }

    public int size() {
        return index.size();
    }

    private int soonestToExpire() {
        int victim = -1;
        for (int entry = 0; entry < destination.length; entry++) {
            if (index.get(destination[entry]) == entry && (victim < 0 || expiresNs[entry] - expiresNs[victim] < 0)) {
                victim = entry;
            }
        }
        return victim;
    }

    private void remove(int entry) {
        index.remove(destination[entry]);
        free[freeCount++] = entry;
    }
}
