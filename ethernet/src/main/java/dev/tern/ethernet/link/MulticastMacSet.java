package dev.tern.ethernet.link;

import java.util.Arrays;

/**
 * The multicast MACs a receiver listens to, each with a reference count: several IP groups can map to one MAC
 * (RFC 1112 section 6.4 keeps only 23 of the group's 28 bits), so a MAC stays in the filter until the last group
 * that needs it is left. Used by the Ethernet layer's destination check and by links that filter in software.
 *
 * <p>Lookups are a scan of a small array: a host joins a handful of groups, and the scan allocates nothing.
 * Not thread-safe; the owner serialises access.
 */
public final class MulticastMacSet {
    private long[] macs = new long[8];
    private int[] references = new int[8];
    private int size;

    /** Adds a reference to {@code mac}; returns true when it is new to the set (the hardware filter must learn it). */
    public boolean add(long mac) {
        final int index = indexOf(mac);
        if (index >= 0) {
            references[index]++;
            return false;
        }
        if (size == macs.length) {
            macs = Arrays.copyOf(macs, size * 2);
            references = Arrays.copyOf(references, size * 2);
        }
        macs[size] = mac;
        references[size] = 1;
        size++;
        return true;
    }

    /** Drops one reference to {@code mac}; returns true when that was the last (the filter may forget it). */
    public boolean remove(long mac) {
        final int index = indexOf(mac);
        if (index < 0 || --references[index] > 0) {
            return false;
        }
        size--;
        macs[index] = macs[size];
        references[index] = references[size];
        return true;
    }

    public boolean contains(long mac) {
        return indexOf(mac) >= 0;
    }

    /** Distinct MACs in the set. */
    public int size() {
        return size;
    }

    private int indexOf(long mac) {
        for (int i = 0; i < size; i++) {
            if (macs[i] == mac) {
                return i;
            }
        }
        return -1;
    }
}
