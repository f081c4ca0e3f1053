package dev.tern.arp;

import dev.tern.ethernet.PendingPackets;
import dev.tern.ethernet.wire.MacAddress;
import org.agrona.collections.Int2IntHashMap;
import org.agrona.concurrent.status.AtomicCounter;

import java.lang.foreign.MemorySegment;

/**
 * IPv4-to-Ethernet neighbour cache with the reachability states of Linux's neighbour code (after RFC 4861 §7.3,
 * applied to ARP): INCOMPLETE while resolving, REACHABLE for {@code reachableTime} after a reply or an upper-layer
 * confirmation ({@link #confirm}), STALE after that (still used), DELAY when a STALE entry is used again (a few
 * seconds for a confirmation to arrive), then PROBE (unicast requests confirm it or it is forgotten).
 *
 * <p>Entries are rows of parallel arrays addressed by index, found by address through Agrona's
 * {@link Int2IntHashMap}. Packets waiting for resolution wait in {@link PendingPackets}: a neighbour holds at most
 * {@code pendingPerNeighbour} (the oldest is dropped beyond that, as Linux does), all together at most
 * {@code pendingTotal}.
 *
 * <p>Nothing here touches the wire: requests go out through the {@link ArpLayer} that owns this cache.
 *
 * <p>Owned by the shard thread; not thread-safe.
 */
public final class NeighbourCache {
    /** {@link #resolve} result when the packet must wait (queue it) or cannot be sent. */
    public static final long UNRESOLVED = -1;

    static final int FREE = 0;
    static final int INCOMPLETE = 1;
    static final int REACHABLE = 2;
    static final int STALE = 3;
    static final int PROBE = 4;
    static final int DELAY = 5;

    private final ArpConfig config;
    private final ArpLayer arp;
    private final Int2IntHashMap index;
    private final int[] ip;
    private final long[] mac;
    private final int[] state;
    private final long[] deadlineNs;
    private final long[] lastUsedNs;
    private final int[] attempts;
    private final int[] freeEntries;
    private int freeCount;
    private final PendingPackets pending;
    private final AtomicCounter cacheFull;

    NeighbourCache(ArpConfig config, ArpLayer arp, int maxPacketLength, AtomicCounter pendingOverflow,
                   AtomicCounter pendingNoBuffer, AtomicCounter cacheFull) {
        this.config = config;
        this.arp = arp;
        final int n = config.cacheSize();
        this.index = new Int2IntHashMap(n * 2, 0.5f, -1);
        this.ip = new int[n];
        this.mac = new long[n];
        this.state = new int[n];
        this.deadlineNs = new long[n];
        this.lastUsedNs = new long[n];
        this.attempts = new int[n];
        this.freeEntries = new int[n];
        for (int i = 0; i < n; i++) {
            freeEntries[i] = n - 1 - i;
        }
        this.freeCount = n;
        this.pending = new PendingPackets(n, config.pendingPerNeighbour(), config.pendingTotal(), maxPacketLength,
            pendingOverflow, pendingNoBuffer);
        this.cacheFull = cacheFull;
    }

    /**
     * The MAC to send a packet for {@code nextHop} to, or {@link #UNRESOLVED} when the packet must be queued
     * ({@link #queueBegin}) while a request goes out. Using a STALE entry starts a unicast probe (RFC 4861 §7.3.3,
     * with the DELAY state folded into PROBE) and still returns the cached MAC.
     */
    public long resolve(int nextHop, long nowNs) {
        int entry = index.get(nextHop);
        if (entry < 0) {
            entry = create(nextHop, nowNs);
            if (entry < 0) {
                return UNRESOLVED;
            }
            state[entry] = INCOMPLETE;
            attempts[entry] = 1;
            deadlineNs[entry] = nowNs + config.retransmitNs();
            arp.sendRequest(nextHop, MacAddress.BROADCAST);
            arp.armTimer(deadlineNs[entry]);
            return UNRESOLVED;
        }
        lastUsedNs[entry] = nowNs;
        switch (state[entry]) {
            case INCOMPLETE:
                return UNRESOLVED;
            case REACHABLE:
                if (deadlineNs[entry] - nowNs > 0) {
                    return mac[entry];
                }
                startProbe(entry, nowNs);
                return mac[entry];
            case STALE:
                startProbe(entry, nowNs);
                return mac[entry];
            default: // DELAY or PROBE: keep using the address while confirming it
                return mac[entry];
        }
    }

    /** A STALE entry is in use again: wait in DELAY for a confirmation before probing (RFC 4861 §7.3.3). */
    private void startProbe(int entry, long nowNs) {
        if (config.maxProbes() == 0) {
            state[entry] = STALE;
            return;
        }
        state[entry] = DELAY;
        attempts[entry] = 0;
        deadlineNs[entry] = nowNs + config.delayFirstProbeNs();
        arp.armTimer(deadlineNs[entry]);
    }

    /**
     * Forward progress seen by an upper layer (a TCP ACK for new data) confirms the neighbour is reachable, so no
     * probe is needed (RFC 4861 §7.3.1).
     */
    public void confirm(int address, long nowNs) {
        final int entry = index.get(address);
        if (entry >= 0 && state[entry] != INCOMPLETE) {
            state[entry] = REACHABLE;
            deadlineNs[entry] = nowNs + config.reachableTimeNs();
        }
    }

    /**
     * Negative advice from an upper layer (RFC 1122 §3.3.1.4): a transport saw no progress through this neighbour
     * (TCP retransmitted one segment R1 times, RFC 1122 §4.2.3.5), so its address is confirmed again instead of
     * trusted: a REACHABLE, STALE or DELAY entry goes to PROBE at once with a unicast request (RFC 4861 §7.3.3's
     * probing, without the DELAY wait, which is for a confirmation the advice says is not coming). Unanswered probes
     * forget the entry (as for any probe) and tell the {@link ArpLayer}'s failed handler (dead gateway detection), and
     * the next packet resolves it again by broadcast. With probes configured off the entry is forgotten at once. An
     * entry already resolving or probing, or none, is left alone. Returns whether the advice started a probe or forgot
     * the entry.
     */
    public boolean suspect(int address, long nowNs) {
        final int entry = index.get(address);
        if (entry < 0 || state[entry] == INCOMPLETE || state[entry] == PROBE) {
            return false;
        }
        if (config.maxProbes() == 0) {
            remove(entry);
            arp.neighbourFailed(address, nowNs);
            return true;
        }
        probe(entry, nowNs);
        arp.armTimer(deadlineNs[entry]);
        return true;
    }

    /**
     * PROBE: the first unicast request to the cached MAC now, more from {@link #expire} (RFC 4861 §7.3.3); the caller
     * arms the timer.
     */
    private void probe(int entry, long nowNs) {
        state[entry] = PROBE;
        attempts[entry] = 1;
        deadlineNs[entry] = nowNs + config.retransmitNs();
        arp.sendRequest(ip[entry], mac[entry]);
    }

    /** A buffer to copy a waiting packet into (see {@link #pendingSegment()}), or -1 when every buffer is taken (counted). */
    public int queueBegin() {
        return pending.begin();
    }

    public MemorySegment pendingSegment() {
        return pending.segment();
    }

    public long pendingOffset(int buffer) {
        return pending.offset(buffer);
    }

    public int pendingCapacity() {
        return pending.capacity();
    }

    /** Queues the packet of {@code length} bytes written into {@code buffer} until {@code nextHop} resolves. */
    public void queueCommit(int nextHop, int buffer, int length) {
        final int entry = index.get(nextHop);
        if (entry < 0 || state[entry] != INCOMPLETE) {
            // Resolved meanwhile (cannot happen within one poll) or no entry could be made: nothing to wait for.
            pending.refuse(buffer);
            return;
        }
        pending.commit(entry, buffer, length);
    }

    /** Gives a buffer from {@link #queueBegin} back without queueing it. */
    public void queueAbort(int buffer) {
        pending.abort(buffer);
    }

    /**
     * Learns from a received ARP packet (RFC 826 "merge", with Linux's states): an entry we have is updated;
     * a new one is made only by a request for our address.
     */
    void learn(int senderIp, long senderMac, boolean addressedToUs, boolean isReply, long nowNs) {
        int entry = index.get(senderIp);
        if (entry < 0) {
            // Only a request for our address creates an entry, as Linux does with arp_accept=0: we are about to
            // answer that sender. A reply we never asked for (RFC 826 would merge it) updates an existing entry only,
            // so a host on the LAN cannot plant a mapping ahead of our first use of the address.
            if (!addressedToUs || isReply) {
                return;
            }
            entry = create(senderIp, nowNs);
            if (entry < 0) {
                return;
            }
            mac[entry] = senderMac;
            state[entry] = STALE;
            deadlineNs[entry] = nowNs + config.reachableTimeNs();
            return;
        }
        final boolean changed = mac[entry] != senderMac;
        final int previous = state[entry];
        mac[entry] = senderMac;
        if (isReply && addressedToUs && (previous == INCOMPLETE || previous == PROBE || !changed)) {
            // A reply to our request, or one that confirms the address we have, confirms reachability (RFC 4861
            // §7.3.3 for solicited advertisements). One we did not ask for that moves the address is not trusted as
            // far: the entry goes STALE with the new address and is probed before it is relied on (RFC 4861 §7.2.5
            // keeps an unsolicited override STALE too).
            state[entry] = REACHABLE;
            deadlineNs[entry] = nowNs + config.reachableTimeNs();
        } else if (previous == INCOMPLETE) {
            // A request from the neighbour we are resolving still tells us its address.
            state[entry] = STALE;
        } else if (changed) {
            state[entry] = STALE;
        }
        if (previous == INCOMPLETE) {
            arp.sendPending(senderIp, senderMac, this, entry);
        }
    }

    /** Retransmits, and fails resolutions and probes whose attempts ran out; returns the next deadline. */
    long expire(long nowNs) {
        long next = Long.MAX_VALUE;
        for (int entry = 0; entry < state.length; entry++) {
            final int s = state[entry];
            if (s != INCOMPLETE && s != PROBE && s != DELAY) {
                continue;
            }
            if (deadlineNs[entry] - nowNs > 0) {
                next = Math.min(next, deadlineNs[entry]);
                continue;
            }
            if (s == DELAY) {
                probe(entry, nowNs);
                next = Math.min(next, deadlineNs[entry]);
                continue;
            }
            final int limit = s == INCOMPLETE ? config.maxRequests() : config.maxProbes();
            if (attempts[entry] >= limit) {
                if (s == INCOMPLETE) {
                    arp.resolutionFailed(ip[entry], this, entry);
                }
                final int failedIp = ip[entry];
                remove(entry);
                // RFC 1122 §3.3.1.4: an unanswered neighbour is dead; if it was a gateway, IP may choose another.
                arp.neighbourFailed(failedIp, nowNs);
                continue;
            }
            attempts[entry]++;
            deadlineNs[entry] = nowNs + config.retransmitNs();
            arp.sendRequest(ip[entry], s == INCOMPLETE ? MacAddress.BROADCAST : mac[entry]);
            next = Math.min(next, deadlineNs[entry]);
        }
        return next;
    }

    /** The packets waiting for resolution (ArpLayer sends them, or reports them unreachable). */
    PendingPackets pending() {
        return pending;
    }

    private int create(int address, long nowNs) {
        if (freeCount == 0 && !evictOneStale()) {
            cacheFull.incrementRelease();
            return -1;
        }
        final int entry = freeEntries[--freeCount];
        ip[entry] = address;
        mac[entry] = 0;
        attempts[entry] = 0;
        lastUsedNs[entry] = nowNs;
        pending.clear(entry);
        index.put(address, entry);
        return entry;
    }

    /** Makes room by forgetting the least recently used REACHABLE or STALE neighbour. */
    private boolean evictOneStale() {
        int victim = -1;
        for (int entry = 0; entry < state.length; entry++) {
            if ((state[entry] == STALE || state[entry] == REACHABLE)
                && (victim < 0 || lastUsedNs[entry] - lastUsedNs[victim] < 0)) {
                victim = entry;
            }
        }
        if (victim < 0) {
            return false;
        }
        remove(victim);
        return true;
    }

    private void remove(int entry) {
        pending.clear(entry);
        index.remove(ip[entry]);
        state[entry] = FREE;
        freeEntries[freeCount++] = entry;
    }

    /** The cached MAC of {@code address} whatever its state, or {@link #UNRESOLVED}; for tools and tests. */
    public long peek(int address) {
        final int entry = index.get(address);
        return entry < 0 || state[entry] == INCOMPLETE ? UNRESOLVED : mac[entry];
    }

    /** Whether the cache has an entry for {@code address}, in any state. */
    boolean has(int address) {
        return index.get(address) >= 0;
    }

    /** The state name of {@code address} ("none", "incomplete", "reachable", "stale", "delay", "probe"); for tools and tests. */
    public String stateOf(int address) {
        final int entry = index.get(address);
        if (entry < 0) {
            return "none";
        }
        return switch (state[entry]) {
            case INCOMPLETE -> "incomplete";
            case REACHABLE -> "reachable";
            case STALE -> "stale";
            case PROBE -> "probe";
            case DELAY -> "delay";
            default -> "none";
        };
    }

    public int size() {
        return index.size();
    }

    /** Packets waiting for resolution, all neighbours together. */
    public int pendingPackets() {
        return pending.inUse();
    }

    void close() {
        pending.close();
    }
}
