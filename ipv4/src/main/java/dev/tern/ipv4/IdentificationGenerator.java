package dev.tern.ipv4;

import dev.tern.core.hash.SipHash;

/**
 * IPv4 Identification values (RFC 6864 §4.1, RFC 7739 §5.3 "hash-based"): not one global counter, which would let
 * anyone who receives our datagrams count those we send to everybody else (idle scans, traffic analysis, RFC 7739
 * §4), but one of {@link #BUCKETS} counters chosen by a keyed hash of (source, destination, protocol):
 *
 * <pre>
 *   h      = SipHash-2-4(key, source || destination || protocol)
 *   bucket = h mod 2048                  (bits 0..10)
 *   offset = (h >>> 32) mod 65536        (bits 32..47)
 *   ID     = (counter[bucket] + offset) mod 65536;   counter[bucket] += 1
 * </pre>
 *
 * <p>Properties the tests hold it to: a tuple's IDs advance by one per datagram, so 65536 datagrams pass before one
 * repeats for that tuple, and within any 2^15 datagrams this stack sends (to whatever mix of destinations) no two to
 * the same tuple share an ID, which is what reassembly at the receiver needs (RFC 6864 §4.1: unique within the
 * maximum datagram lifetime). Sending to B does not move the IDs A sees unless A and B share a bucket (1 in 2048
 * for a random key); even then A learns only B's count, never B's values, which the per-tuple offset hides. The key is
 * random per stack (see {@link Ipv4Config#identificationKey0()}).
 *
 * <p>Atomic datagrams (DF set, not fragmented) take IDs the same way: RFC 6864 §4.1 lets them carry any value, and one
 * scheme for all keeps every ID as unpredictable across destinations as the others.
 *
 * <p>A TSO burst reserves one ID per segment it becomes ({@link #reserve}), since the link numbers the segments it
 * cuts with consecutive IDs.
 *
 * <p>Allocation-free: 4 KiB of counters and a one-entry hash cache (bulk transfers send to one tuple many times in
 * a row). Owned by the shard thread; not thread-safe.
 */
final class IdentificationGenerator {
    static final int BUCKETS = 2048;
    private static final long DOMAIN = 0x4950_4944L; // "IPID": keeps these hashes apart from other uses of a key

    private final long key0;
    private final long key1;
    private final char[] counters = new char[BUCKETS];
    private boolean cached;
    private int cachedSource;
    private int cachedDestination;
    private int cachedProtocol;
    private long cachedHash;

    IdentificationGenerator(long key0, long key1) {
        this.key0 = key0;
        this.key1 = key1;
    }

    /** The ID of the next datagram from {@code source} to {@code destination} carrying {@code protocol}. */
    int next(int source, int destination, int protocol) {
        return reserve(source, destination, protocol, 1);
    }

    /** Reserves {@code count} consecutive IDs (one per TSO segment) and returns the first. */
    int reserve(int source, int destination, int protocol, int count) {
        final long hash = hash(source, destination, protocol);
        final int bucket = (int) hash & (BUCKETS - 1);
        final int counter = counters[bucket];
        counters[bucket] = (char) (counter + count);
        return (counter + (int) (hash >>> 32)) & 0xFFFF;
    }

    /** Which of the {@link #BUCKETS} counters a tuple uses (tests). */
    int bucket(int source, int destination, int protocol) {
        return (int) hash(source, destination, protocol) & (BUCKETS - 1);
    }

    private long hash(int source, int destination, int protocol) {
        if (cached && source == cachedSource && destination == cachedDestination && protocol == cachedProtocol) {
            return cachedHash;
        }
        final long hash = SipHash.hash(key0, key1, ((long) source << 32) | (destination & 0xFFFF_FFFFL),
            (DOMAIN << 32) | (protocol & 0xFF));
        cached = true;
        cachedSource = source;
        cachedDestination = destination;
        cachedProtocol = protocol;
        cachedHash = hash;
        return hash;
    }
}
