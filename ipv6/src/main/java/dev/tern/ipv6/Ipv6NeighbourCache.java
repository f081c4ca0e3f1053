package dev.tern.ipv6;

import dev.tern.core.hash.SipHash;
import dev.tern.ethernet.EthernetLayer;
import dev.tern.ethernet.PendingPackets;
import dev.tern.ethernet.wire.EtherType;
import org.agrona.collections.Long2LongHashMap;
import org.agrona.concurrent.status.AtomicCounter;

import java.lang.foreign.MemorySegment;
import java.security.SecureRandom;

/**
 * The neighbour cache of RFC 4861 §5.1 with the reachability states of §7.3.2: INCOMPLETE while a solicitation is
 * out, REACHABLE for ReachableTime after a solicited advertisement or an upper-layer confirmation ({@link #confirm}),
 * STALE after that or when an unsolicited message tells us a link-layer address (still used), DELAY when a STALE
 * entry is used (a few seconds for a confirmation), then PROBE (unicast solicitations; the entry is deleted when
 * they go unanswered, §7.3.3).
 *
 * <p>Entries are rows of parallel arrays. They are found by a keyed SipHash of the 128-bit address in Agrona's
 * {@link Long2LongHashMap} (the key is secret, so no peer can aim two addresses at one slot; the row also keeps the
 * address, which is compared). Packets waiting for resolution wait in {@link PendingPackets}, at most
 * {@code pendingPerNeighbour} each (the oldest is dropped, RFC 4861 §7.2.2).
 *
 * <p>Owned by the shard thread; not thread-safe.
 */
public final class Ipv6NeighbourCache {
    /** {@link #resolve} result when the packet must wait (queue it) or cannot be sent. */
    public static final long UNRESOLVED = -1;
    /** {@link Solicitor#solicit}'s MAC for a multicast solicitation to the solicited-node group. */
    static final long MULTICAST = -1;

    static final int FREE = 0;
    static final int INCOMPLETE = 1;
    static final int REACHABLE = 2;
    static final int STALE = 3;
    static final int DELAY = 4;
    static final int PROBE = 5;
    private static final String[] STATE_NAMES = {"FREE", "INCOMPLETE", "REACHABLE", "STALE", "DELAY", "PROBE"};

    /** Who sends the solicitations and keeps the timer: {@link NeighbourDiscovery}. */
    interface Solicitor {
        void solicit(long targetHigh, long targetLow, long mac, long nowNs);

        void armTimer(long deadlineNs);
    }

    private final Ipv6Config config;
    private final Solicitor solicitor;
    private final EthernetLayer ethernet;
    private final long key0;
    private final long key1;
    private final Long2LongHashMap index;
    private final long[] high;
    private final long[] low;
    private final long[] mac;
    private final int[] state;
    private final boolean[] router;
    private final long[] deadlineNs;
    private final int[] attempts;
    private final int[] freeEntries;
    private int freeCount;
    private final PendingPackets pending;

    private final AtomicCounter cacheFull;
    private final AtomicCounter pendingSent;
    private final AtomicCounter pendingLost;
    private final AtomicCounter resolveFailed;

    Ipv6NeighbourCache(Ipv6Config config, Solicitor solicitor, EthernetLayer ethernet, Ipv6Counters counters) {
        this.config = config;
        this.solicitor = solicitor;
        this.ethernet = ethernet;
        final SecureRandom random = new SecureRandom();
        this.key0 = random.nextLong();
        this.key1 = random.nextLong();
        final int n = config.neighbourCacheSize();
        this.index = new Long2LongHashMap(n * 2, 0.5f, -1);
        this.high = new long[n];
        this.low = new long[n];
        this.mac = new long[n];
        this.state = new int[n];
        this.router = new boolean[n];
        this.deadlineNs = new long[n];
        this.attempts = new int[n];
        this.freeEntries = new int[n];
        for (int i = 0; i < n; i++) {
            freeEntries[i] = n - 1 - i;
        }
        this.freeCount = n;
        this.pending = new PendingPackets(n, config.pendingPerNeighbour(), config.pendingTotal(), ethernet.mtu(),
            counters.ndPendingOverflow, counters.ndPendingNoBuffer);
        this.cacheFull = counters.ndCacheFull;
        this.pendingSent = counters.ndPendingSent;
        this.pendingLost = counters.ndPendingLost;
        this.resolveFailed = counters.ndResolveFailed;
    }

    private long key(long h, long l) {
        return SipHash.hash(key0, key1, h, l);
    }

    /** The row of ({@code h}, {@code l}), or -1. */
    private int find(long h, long l) {
        final int entry = (int) index.get(key(h, l));
        return entry >= 0 && high[entry] == h && low[entry] == l ? entry : -1;
    }

    /**
     * The MAC to send a packet for the on-link neighbour ({@code h}, {@code l}) to, or {@link #UNRESOLVED} when it
     * must wait ({@link #queueBegin}) while a solicitation goes out (RFC 4861 §7.2.2). Using a STALE entry moves it
     * to DELAY (§7.3.3) and still returns its MAC.
     */
    public long resolve(long h, long l, long nowNs) {
        int entry = find(h, l);
        if (entry < 0) {
            entry = create(h, l);
            if (entry < 0) {
                return UNRESOLVED;
            }
            state[entry] = INCOMPLETE;
            attempts[entry] = 1;
            deadlineNs[entry] = nowNs + config.retransmitNs();
            solicitor.solicit(h, l, MULTICAST, nowNs);
            solicitor.armTimer(deadlineNs[entry]);
            return UNRESOLVED;
        }
        switch (state[entry]) {
            case INCOMPLETE:
                return UNRESOLVED;
            case REACHABLE:
                if (deadlineNs[entry] - nowNs > 0) {
                    return mac[entry];
                }
                delay(entry, nowNs);
                return mac[entry];
            case STALE:
                delay(entry, nowNs);
                return mac[entry];
            default:
                return mac[entry];
        }
    }

    private void delay(int entry, long nowNs) {
        if (config.maxUnicastSolicit() == 0) {
            state[entry] = STALE;
            return;
        }
        state[entry] = DELAY;
        attempts[entry] = 0;
        deadlineNs[entry] = nowNs + config.delayFirstProbeNs();
        solicitor.armTimer(deadlineNs[entry]);
    }

    /** Forward progress seen by an upper layer confirms reachability (RFC 4861 §7.3.1). */
    public void confirm(long h, long l, long nowNs) {
        final int entry = find(h, l);
        if (entry >= 0 && state[entry] != INCOMPLETE) {
            state[entry] = REACHABLE;
            deadlineNs[entry] = nowNs + config.reachableTimeNs();
        }
    }

    /**
     * A link-layer address from a solicitation's Source Link-Layer Address option (RFC 4861 §7.2.3) or any message
     * but an advertisement: a new entry is STALE; an entry whose address changes goes STALE; an INCOMPLETE entry is
     * resolved by it (and its packets leave).
     */
    void learnFromSolicitation(long h, long l, long linkAddress, long nowNs) {
        int entry = find(h, l);
        if (entry < 0) {
            entry = create(h, l);
            if (entry < 0) {
                return;
            }
            mac[entry] = linkAddress;
            state[entry] = STALE;
            return;
        }
        final int previous = state[entry];
        if (previous == INCOMPLETE || mac[entry] != linkAddress) {
            mac[entry] = linkAddress;
            state[entry] = STALE;
        }
        if (previous == INCOMPLETE) {
            sendPending(entry);
        }
    }

    /**
     * A neighbour advertisement for ({@code h}, {@code l}) (RFC 4861 §7.2.5). {@code linkAddress} is its Target
     * Link-Layer Address option, or -1 without one. Without an entry it is ignored (§7.2.5: no entry is created).
     */
    void learnFromAdvertisement(long h, long l, long linkAddress, boolean solicited, boolean override,
                                boolean isRouter, long nowNs) {
        final int entry = find(h, l);
        if (entry < 0) {
            return;
        }
        if (state[entry] == INCOMPLETE) {
            if (linkAddress < 0) {
                return; // §7.2.5: an advertisement without the option cannot complete a resolution
            }
            mac[entry] = linkAddress;
            state[entry] = solicited ? REACHABLE : STALE;
            deadlineNs[entry] = nowNs + config.reachableTimeNs();
            router[entry] = isRouter;
            sendPending(entry);
            return;
        }
        final boolean different = linkAddress >= 0 && linkAddress != mac[entry];
        if (!override && different) {
            if (state[entry] == REACHABLE) {
                state[entry] = STALE; // §7.2.5: keep the address, stop trusting it
            }
            return;
        }
        if (linkAddress >= 0) {
            mac[entry] = linkAddress;
        }
        if (solicited) {
            state[entry] = REACHABLE;
            deadlineNs[entry] = nowNs + config.reachableTimeNs();
        } else if (different) {
            state[entry] = STALE;
        }
        router[entry] = isRouter;
    }

    /** Retransmits solicitations, moves DELAY to PROBE, deletes entries whose attempts ran out; the next deadline. */
    long expire(long nowNs) {
        long next = Long.MAX_VALUE;
        for (int entry = 0; entry < state.length; entry++) {
            final int s = state[entry];
            if (s != INCOMPLETE && s != DELAY && s != PROBE) {
                continue;
            }
            if (deadlineNs[entry] - nowNs > 0) {
                next = Math.min(next, deadlineNs[entry]);
                continue;
            }
            if (s == DELAY) {
                state[entry] = PROBE;
            } else if (attempts[entry] >= (s == INCOMPLETE ? config.maxMulticastSolicit() : config.maxUnicastSolicit())) {
                if (s == INCOMPLETE) {
                    resolveFailed.incrementRelease();
                }
                delete(entry);
                continue;
            }
            attempts[entry]++;
            deadlineNs[entry] = nowNs + config.retransmitNs();
            solicitor.solicit(high[entry], low[entry], state[entry] == INCOMPLETE ? MULTICAST : mac[entry], nowNs);
            next = Math.min(next, deadlineNs[entry]);
        }
        return next;
    }

    // -------------------------------------------------------------------------------------------- waiting packets

    /** A buffer to copy a waiting packet into, or -1 when every buffer is taken (counted). */
    public int queueBegin() {
        return pending.begin();
    }

    public MemorySegment pendingSegment() {
        return pending.segment();
    }

    public long pendingOffset(int buffer) {
        return pending.offset(buffer);
    }

    /** Queues the packet of {@code length} bytes in {@code buffer} until ({@code h}, {@code l}) resolves. */
    public void queueCommit(long h, long l, int buffer, int length) {
        final int entry = find(h, l);
        if (entry < 0 || state[entry] != INCOMPLETE) {
            pending.refuse(buffer);
            return;
        }
        pending.commit(entry, buffer, length);
    }

    public void queueAbort(int buffer) {
        pending.abort(buffer);
    }

    private void sendPending(int entry) {
        pending.transmit(entry, ethernet, mac[entry], EtherType.IPV6, pendingSent, pendingLost);
    }

    // ---------------------------------------------------------------------------------------------------- rows

    private int create(long h, long l) {
        if (freeCount == 0) {
            cacheFull.incrementRelease();
            return -1;
        }
        final int entry = freeEntries[--freeCount];
        high[entry] = h;
        low[entry] = l;
        router[entry] = false;
        pending.clear(entry);
        index.put(key(h, l), entry);
        return entry;
    }

    private void delete(int entry) {
        pending.clear(entry);
        index.remove(key(high[entry], low[entry]));
        state[entry] = FREE;
        freeEntries[freeCount++] = entry;
    }

    /** The MAC cached for ({@code h}, {@code l}) in any usable state, or -1 (tests, {@code tern stat}). */
    public long peek(long h, long l) {
        final int entry = find(h, l);
        return entry < 0 || state[entry] == INCOMPLETE ? -1 : mac[entry];
    }

    /** The state's name (RFC 4861 §7.3.2), or {@code NONE}. */
    public String stateOf(long h, long l) {
        final int entry = find(h, l);
        return entry < 0 ? "NONE" : STATE_NAMES[state[entry]];
    }

    public int size() {
        return state.length - freeCount;
    }

    void close() {
        pending.close();
    }
}
