package dev.tern.tcp;

/**
 * Finds a connection by its 4-tuple with one hash and a short probe: an open-addressing table (linear probing,
 * backward-shift deletion) from a packed {@code long} key to a TCB slot. No boxing, no allocation after
 * construction.
 *
 * <pre>
 *  key (64 bits):  | remote address (32) | remote port (16) | local port (16) |
 * </pre>
 *
 * The local address is not in the key: a shard has one address; {@link TcpLayer} checks it on the row. The hash mixes
 * the key with a secret (from the ISN key), so a peer cannot aim its ports at one bucket chain.
 *
 * <p>Owned by the shard thread; not thread-safe.
 */
final class ConnectionTable {
    private static final int EMPTY = -1;

    private final long[] keys;
    private final int[] values;
    private final int mask;
    private final long secret;
    private int size;

    /** A table for up to {@code maxEntries} connections (the arrays are sized for a load of at most one half). */
    ConnectionTable(int maxEntries, long secret) {
        int capacity = 16;
        while (capacity < maxEntries * 2) {
            capacity <<= 1;
        }
        this.keys = new long[capacity];
        this.values = new int[capacity];
        java.util.Arrays.fill(values, EMPTY);
        this.mask = capacity - 1;
        this.secret = secret;
    }

    static long key(int remoteAddress, int remotePort, int localPort) {
        return ((long) remoteAddress << 32) | ((long) (remotePort & 0xFFFF) << 16) | (localPort & 0xFFFF);
    }

    private int index(long key) {
        long h = key ^ secret;
        h ^= h >>> 33;
        h *= 0xff51afd7ed558ccdL;
        h ^= h >>> 33;
        h *= 0xc4ceb9fe1a85ec53L;
        h ^= h >>> 33;
        return (int) h & mask;
    }

    /** The slot stored for {@code key}, or -1. */
    int get(long key) {
        int i = index(key);
        while (true) {
            final int value = values[i];
            if (value == EMPTY) {
                return -1;
            }
            if (keys[i] == key) {
                return value;
            }
            i = (i + 1) & mask;
        }
    }

    /** Stores {@code slot} for {@code key}; returns false when the key is already present. */
    boolean put(long key, int slot) {
        int i = index(key);
        while (values[i] != EMPTY) {
            if (keys[i] == key) {
                return false;
            }
            i = (i + 1) & mask;
        }
        keys[i] = key;
        values[i] = slot;
        size++;
        return true;
    }

    /** Removes {@code key}; returns its slot or -1. Later entries of the probe chain shift back into the hole. */
    int remove(long key) {
        int i = index(key);
        while (true) {
            final int value = values[i];
            if (value == EMPTY) {
                return -1;
            }
            if (keys[i] == key) {
                break;
            }
            i = (i + 1) & mask;
        }
        final int removed = values[i];
        int hole = i;
        int j = i;
        while (true) {
            j = (j + 1) & mask;
            if (values[j] == EMPTY) {
                break;
            }
            final int home = index(keys[j]);
            // Move j into the hole unless its home lies cyclically in (hole, j].
            final boolean homeBetween = hole <= j ? (hole < home && home <= j) : (hole < home || home <= j);
            if (!homeBetween) {
                keys[hole] = keys[j];
                values[hole] = values[j];
                hole = j;
            }
        }
        values[hole] = EMPTY;
        size--;
        return removed;
    }

    int size() {
        return size;
    }

    /** Bytes of the arrays, for the memory report. */
    long memoryBytes() {
        return (long) keys.length * Long.BYTES + (long) values.length * Integer.BYTES;
    }
}
