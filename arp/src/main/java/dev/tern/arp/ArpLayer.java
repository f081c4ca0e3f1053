package dev.tern.arp;

import dev.tern.arp.wire.ArpPacket;
import dev.tern.core.counters.CountersFile;
import dev.tern.core.net.InterfaceAddress;
import dev.tern.core.net.Ipv4Address;
import dev.tern.core.time.EarliestTimer;
import dev.tern.core.time.Timers;
import dev.tern.ethernet.EthernetLayer;
import dev.tern.ethernet.PendingPackets;
import dev.tern.ethernet.wire.EtherType;
import dev.tern.ethernet.wire.MacAddress;
import org.agrona.concurrent.status.AtomicCounter;

import java.lang.foreign.MemorySegment;

/**
 * ARP (RFC 826) for one interface: answers requests for our address, resolves neighbours through the
 * {@link NeighbourCache}, sends packets that waited for resolution, and announces our address when it comes up
 * (gratuitous ARP, RFC 5227 §2.3).
 *
 * <p>Malformed packets and packets for other hardware or protocol types are counted and dropped.
 *
 * <h2>Address defence (RFC 5227 §2.4)</h2>
 * A request or reply (a gratuitous one included) from another MAC whose sender IP is our address is a conflict,
 * counted. We then defend the address as §2.4 (c) describes for a host that must keep its address: one broadcast
 * ARP announcement, and no other until {@link #DEFEND_INTERVAL_NS} (10 s, RFC 5227 §1.1) has passed since that
 * defence; conflicts inside the interval are counted as not defended, so that two hosts configured with one
 * address cannot flood the link with announcements at each other. Tern never gives its address up (options (a) and
 * (b) of §2.4): its addresses are configured, not negotiated, so an operator has to settle the conflict; the
 * counters tell them to.
 *
 * <p>Owned by the shard thread; not thread-safe.
 */
public final class ArpLayer implements EthernetLayer.Handler {
    /** Told about each packet that waited for a neighbour that never answered: the sender learns "host unreachable". */
    @FunctionalInterface
    public interface UnreachableHandler {
        void onUnreachable(MemorySegment packet, long offset, int length, long nowNs);
    }

    /**
     * Told about every sender address an ARP packet taught the cache, as {@link #learn} takes it: the owner shard of
     * a sharded stack hands these to the other shards, which receive no ARP (docs/DESIGN.md, "Shards").
     */
    @FunctionalInterface
    public interface LearnedHandler {
        void onLearned(int senderIp, long senderMac, boolean addressedToUs, boolean isReply);
    }

    /**
     * Told about each neighbour forgotten because its requests or probes went unanswered, whatever started them: the
     * IPv4 layer's dead gateway detection (RFC 1122 §3.3.1.4) listens here.
     */
    @FunctionalInterface
    public interface FailedHandler {
        void onFailed(int neighbourIp, long nowNs);
    }

    private static final int DROP_BAD_SENDER = 4;
    private static final int DROP_OFF_SUBNET = 5;
    private static final long TIMER_NEIGHBOURS = 0;
    private static final long TIMER_ANNOUNCE = 1;
    /** RFC 5227 §1.1: DEFEND_INTERVAL, the least time between two defensive announcements of one address. */
    public static final long DEFEND_INTERVAL_NS = 10_000_000_000L;

    private final EthernetLayer ethernet;
    private final Timers timers;
    private final int timerOwner;
    private final InterfaceAddress address;
    private final ArpConfig config;
    private final NeighbourCache neighbours;
    private final ArpPacket rx = new ArpPacket();
    private final ArpPacket tx = new ArpPacket();
    private UnreachableHandler unreachable = (packet, offset, length, nowNs) -> { };
    private LearnedHandler learned;
    private FailedHandler failed = (neighbourIp, nowNs) -> { };
    private final EarliestTimer neighbourTimer;
    private int announcementsLeft;
    private boolean defended;
    private long lastDefenceNs;
    /** Time of the timer expiry being handled: resolution fails only from the timer. */
    private long lastNowNs;

    private final AtomicCounter rxRequests;
    private final AtomicCounter rxReplies;
    private final AtomicCounter txRequests;
    private final AtomicCounter txReplies;
    private final AtomicCounter[] drops;
    private final AtomicCounter conflicts;
    private final AtomicCounter defences;
    private final AtomicCounter conflictsNotDefended;
    private final AtomicCounter resolveFailed;
    private final AtomicCounter pendingSent;
    private final AtomicCounter pendingLost;
    private final AtomicCounter unsolicitedReplies;

    public ArpLayer(EthernetLayer ethernet, Timers timers, InterfaceAddress address, ArpConfig config,
                    CountersFile counters) {
        this.ethernet = ethernet;
        this.timers = timers;
        this.address = address;
        this.config = config;
        this.rxRequests = counters.counter("arp.rx.requests");
        this.rxReplies = counters.counter("arp.rx.replies");
        this.txRequests = counters.counter("arp.tx.requests");
        this.txReplies = counters.counter("arp.tx.replies");
        this.drops = counters.counters("arp.drop.", null, "too_short", "foreign_protocol", "bad_operation", "bad_sender",
            "off_subnet");
        this.conflicts = counters.counter("arp.address_conflicts");
        this.defences = counters.counter("arp.tx.defences");
        this.conflictsNotDefended = counters.counter("arp.address_conflicts_not_defended");
        this.resolveFailed = counters.counter("arp.resolve_failed");
        this.pendingSent = counters.counter("arp.pending.sent");
        this.pendingLost = counters.counter("arp.pending.no_tx_buffer");
        this.unsolicitedReplies = counters.counter("arp.rx.unsolicited_replies");
        this.neighbours = new NeighbourCache(config, this, ethernet.mtu(),
            counters.counter("arp.pending.overflow"), counters.counter("arp.pending.no_buffer"),
            counters.counter("arp.cache_full"));
        this.timerOwner = timers.register(this::onTimer);
        this.neighbourTimer = new EarliestTimer(timers, timerOwner, TIMER_NEIGHBOURS);
        ethernet.register(EtherType.ARP, this);
    }

    public NeighbourCache neighbours() {
        return neighbours;
    }

    public InterfaceAddress address() {
        return address;
    }

    /** Who hears about packets dropped because their next hop never resolved (the IPv4 layer). */
    public void onUnreachable(UnreachableHandler handler) {
        this.unreachable = handler;
    }

    /** Who hears about neighbours forgotten because they stopped answering (the IPv4 layer). */
    public void onFailed(FailedHandler handler) {
        this.failed = handler;
    }

    /** Who hears what each received ARP packet taught the cache (null: nobody). */
    public void onLearned(LearnedHandler handler) {
        this.learned = handler;
    }

    /**
     * Learns from an ARP packet another shard of this stack received (RFC 826's merge, as for our own packets): the
     * same update of the neighbour cache, with its waiting packets sent when the neighbour resolves.
     */
    public void learn(int senderIp, long senderMac, boolean addressedToUs, boolean isReply, long nowNs) {
        neighbours.learn(senderIp, senderMac, addressedToUs, isReply, nowNs);
    }

    /** The address came up: announce it with gratuitous ARP requests (RFC 5227 §2.3, RFC 5944 §4.6). */
    public void start(long nowNs) {
        announcementsLeft = config.announcements();
        if (announcementsLeft > 0) {
            announce();
            if (announcementsLeft > 0) {
                timers.schedule(timerOwner, nowNs + config.announceIntervalNs(), TIMER_ANNOUNCE);
            }
        }
    }

    private void announce() {
        announcementsLeft--;
        sendAnnouncement();
    }

    /** An announcement is a broadcast request whose sender and target protocol addresses are both ours. */
    private boolean sendAnnouncement() {
        if (!ethernet.begin(MacAddress.BROADCAST, EtherType.ARP)) {
            return false;
        }
        tx.wrap(ethernet.frame().segment(), ethernet.payloadOffset(), ArpPacket.LENGTH)
            .write(ArpPacket.OPERATION_REQUEST, ethernet.mac(), address.address(), MacAddress.ZERO, address.address());
        ethernet.send(ArpPacket.LENGTH);
        txRequests.incrementRelease();
        return true;
    }

    /** Another host claims our address (RFC 5227 §2.4): defend it at most once per DEFEND_INTERVAL. */
    private void addressConflict(long nowNs) {
        conflicts.incrementRelease();
        if (defended && nowNs - lastDefenceNs < DEFEND_INTERVAL_NS) {
            conflictsNotDefended.incrementRelease();
            return;
        }
        if (sendAnnouncement()) {
            defended = true;
            lastDefenceNs = nowNs;
            defences.incrementRelease();
        }
    }

    @Override
    public void onPacket(MemorySegment segment, long offset, int length, int rxFlags, long sourceMac,
                         long destinationMac, long nowNs) {
        rx.wrap(segment, offset, length);
        final int reason = rx.check();
        if (reason != ArpPacket.OK) {
            drops[reason].incrementRelease();
            return;
        }
        final int operation = rx.operation();
        final int senderIp = rx.senderIp();
        final long senderMac = rx.senderMac();
        final int targetIp = rx.targetIp();
        final boolean isRequest = operation == ArpPacket.OPERATION_REQUEST;
        (isRequest ? rxRequests : rxReplies).incrementRelease();

        if (senderIp == address.address()) {
            if (senderMac != ethernet.mac()) {
                addressConflict(nowNs);
            }
            return;
        }
        // A sender that cannot be a neighbour (a multicast, loopback or broadcast address, or a group MAC) is neither
        // answered nor learned: answering would send our reply to a group (Linux refuses these through its route
        // lookup).
        if (!MacAddress.isUnicast(senderMac) || (senderIp != 0 && !validNeighbour(senderIp))) {
            drops[DROP_BAD_SENDER].incrementRelease();
            return;
        }
        // A sender outside our subnet is no neighbour of ours either: Linux's route lookup for the reply finds no
        // on-link route back and stays silent, and so do we (we would answer a host that cannot be reached directly).
        if (senderIp != 0 && !address.contains(senderIp)) {
            drops[DROP_OFF_SUBNET].incrementRelease();
            return;
        }
        if (!isRequest && targetIp == address.address() && !neighbours.has(senderIp)) {
            // Linux's arp_accept=0: a reply we did not ask for teaches nothing (NeighbourCache.learn).
            unsolicitedReplies.incrementRelease();
        }
        final boolean forUs = targetIp == address.address();
        // RFC 5227 §2.1.1: a probe has sender IP 0.0.0.0 and must not be learned from.
        if (senderIp != 0) {
            neighbours.learn(senderIp, senderMac, forUs, !isRequest, nowNs);
            if (learned != null) {
                learned.onLearned(senderIp, senderMac, forUs, !isRequest);
            }
        }
        if (isRequest && forUs) {
            reply(senderMac, senderIp);
        }
    }

    /**
     * Whether {@code ip} can be a host's own address: not a group, loopback, reserved or broadcast address, nor our
     * subnet's network address (RFC 1122 §3.2.1.3 (e): host number 0 is not a host; RFC 3021 makes both addresses of a
     * /31 hosts, and a /32 has only ours).
     */
    private boolean validNeighbour(int ip) {
        return !Ipv4Address.isMulticast(ip) && !Ipv4Address.isLoopback(ip)
            && !Ipv4Address.isReserved(ip) && ip != Ipv4Address.LIMITED_BROADCAST
            && ip != address.broadcast() && (address.prefixLength() >= 31 || ip != address.network());
    }

    private void reply(long requesterMac, int requesterIp) {
        if (!ethernet.begin(requesterMac, EtherType.ARP)) {
            return;
        }
        tx.wrap(ethernet.frame().segment(), ethernet.payloadOffset(), ArpPacket.LENGTH)
            .write(ArpPacket.OPERATION_REPLY, ethernet.mac(), address.address(), requesterMac, requesterIp);
        ethernet.send(ArpPacket.LENGTH);
        txReplies.incrementRelease();
    }

    /** Sends a request for {@code targetIp}: broadcast while resolving, unicast to the cached MAC when probing. */
    void sendRequest(int targetIp, long destinationMac) {
        if (!ethernet.begin(destinationMac, EtherType.ARP)) {
            return;
        }
        tx.wrap(ethernet.frame().segment(), ethernet.payloadOffset(), ArpPacket.LENGTH)
            .write(ArpPacket.OPERATION_REQUEST, ethernet.mac(), address.address(), MacAddress.ZERO, targetIp);
        ethernet.send(ArpPacket.LENGTH);
        txRequests.incrementRelease();
    }

    /** The neighbour answered: send everything that waited for it, oldest first. */
    void sendPending(int neighbourIp, long neighbourMac, NeighbourCache cache, int entry) {
        cache.pending().transmit(entry, ethernet, neighbourMac, EtherType.IPV4, pendingSent, pendingLost);
    }

    /** Resolution gave up: every waiting packet is dropped, and its sender told the host is unreachable. */
    void resolutionFailed(int neighbourIp, NeighbourCache cache, int entry) {
        resolveFailed.incrementRelease();
        final PendingPackets pending = cache.pending();
        int buffer;
        while ((buffer = pending.poll(entry)) >= 0) {
            unreachable.onUnreachable(pending.segment(), pending.offset(buffer), pending.length(buffer), lastNowNs);
            pending.release(buffer);
        }
    }

    /** {@code neighbourIp} was forgotten because its requests or probes went unanswered. */
    void neighbourFailed(int neighbourIp, long nowNs) {
        failed.onFailed(neighbourIp, nowNs);
    }

    /** Keeps one wheel timer armed at the cache's earliest deadline. */
    void armTimer(long deadlineNs) {
        neighbourTimer.arm(deadlineNs);
    }

    private void onTimer(long value, long nowNs) {
        lastNowNs = nowNs;
        if (value == TIMER_ANNOUNCE) {
            announce();
            if (announcementsLeft > 0) {
                timers.schedule(timerOwner, nowNs + config.announceIntervalNs(), TIMER_ANNOUNCE);
            }
            return;
        }
        neighbourTimer.fired();
        final long next = neighbours.expire(nowNs);
        if (next != Long.MAX_VALUE) {
            armTimer(next);
        }
    }

    public void close() {
        neighbours.close();
    }
}
