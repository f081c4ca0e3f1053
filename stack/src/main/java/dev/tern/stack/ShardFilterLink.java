package dev.tern.stack;

import dev.tern.core.counters.CountersFile;
import dev.tern.ethernet.link.FrameHandler;
import dev.tern.ethernet.link.ForwardingLink;
import dev.tern.ethernet.link.Link;
import dev.tern.ethernet.link.ShardRule;
import dev.tern.ethernet.link.ShardSteering;
import dev.tern.ethernet.link.UdpPortOwners;
import org.agrona.concurrent.status.AtomicCounter;

import java.lang.foreign.MemorySegment;

/**
 * The receive side of one shard of a sharded stack: every frame goes to the shard that owns it. A frame that
 * {@link ShardSteering} gives to another shard is counted ({@code shard.rx.wrong_shard}) and handed to its owner
 * through the owner's {@link ShardInbox}, before any layer here sees it: such a frame means the link's steering and
 * Tern's disagree (a fanout group still forming while the shards join it, a group that lost a member, a link that
 * steers by another rule), and this shard must not answer it, because it does not know the other shard's connections
 * and TCP answers a segment for an unknown connection with a reset (RFC 9293 §3.10.7.1). On shard 0, which receives
 * every ICMP message, an ICMP error about another shard's flow and an echo reply to another shard's ping are handed on
 * the same way ({@link ShardSteering#icmpShardOf}), so that path MTU discovery, soft errors and ping work on every
 * shard. Handed-over frames are counted as {@code shard.tx.handed_over} by the giver and {@code shard.rx.handed_in}
 * by the owner, which delivers them at its next receive; a full inbox drops the frame ({@code shard.handoff_full}).
 * A unicast UDP datagram to a port another shard claimed ({@link UdpPortOwners}) is handed to that shard the same
 * way, counted as {@code shard.rx.udp_port_claimed} instead of as wrong. Shard 0 also passes a copy of each IPv6
 * neighbour discovery message it receives to the others (their neighbour caches and routers are their own).
 *
 * <p>Owned by the shard's thread; not thread-safe (the inboxes are). Allocates nothing: one handler object per shard,
 * re-pointed at the stack's handler on each receive.
 */
final class ShardFilterLink extends ForwardingLink implements FrameHandler {
    private final int shard;
    private final int shards;
    private final AtomicCounter wrongShard;
    private final AtomicCounter handedOver;
    private final AtomicCounter handedIn;
    private final AtomicCounter handOffFull;
    private final AtomicCounter claimedPort;
    private final AtomicCounter wokeOwner;
    private final AtomicCounter ndPassedOn;
    /** UDP ports the shards claimed ({@link UdpSocket#steerPortHere}), shared by all of them; null when alone. */
    private final UdpPortOwners udpOwners;
    /** How the link steers flows (and so how this filter checks them). */
    private final ShardRule rule;
    private final WrongShardSample sample;
    private final ShardInbox inbox = new ShardInbox();
    /** Every shard's inbox, by shard index (set by {@link StackShards} once all are built; null until then). */
    private ShardInbox[] inboxes;
    private FrameHandler handler;

    ShardFilterLink(Link link, int shard, int shards, CountersFile counters, AtomicCounter wrongShard,
                    WrongShardSample sample, UdpPortOwners udpOwners) {
        super(link);
        this.udpOwners = udpOwners;
        this.rule = link.shardRule();
        this.claimedPort = counters.counter("shard.rx.udp_port_claimed");
        this.wokeOwner = counters.counter("shard.tx.woke_owner");
        this.ndPassedOn = counters.counter("shard.tx.nd_passed_on");
        this.sample = sample;
        this.shard = shard;
        this.shards = shards;
        this.wrongShard = wrongShard;
        this.handedOver = counters.counter("shard.tx.handed_over");
        this.handedIn = counters.counter("shard.rx.handed_in");
        this.handOffFull = counters.counter("shard.handoff_full");
    }

    /** This shard's inbox, for the other shards to post to. */
    ShardInbox inbox() {
        return inbox;
    }

    /** Every shard's inbox, by shard index; until set, a frame for another shard is counted and dropped. */
    void inboxes(ShardInbox[] inboxes) {
        this.inboxes = inboxes.clone();
    }

    @Override
    public int receive(FrameHandler handler, int maxFrames) {
        this.handler = handler;
        final int handed = inbox.drain(handler, maxFrames);
        if (handed > 0) {
            handedIn.getAndAddRelease(handed);
            if (handed >= maxFrames) {
                return handed;
            }
        }
        return handed + link.receive(this, maxFrames - handed);
    }

    @Override
    public boolean awaitFrames(int timeoutMs) {
        // A frame posted before is taken at once. One another shard posts while this one sleeps (in NetStack's
        // awaitWork) wakes it through the link, an event counter beside the socket in poll(2); on a link that cannot
        // be woken it waits for the sleep's end, at most the idle strategy's longest wait.
        return inbox.hasFrames() || link.awaitFrames(timeoutMs);
    }

    @Override
    public void onFrame(MemorySegment segment, long offset, int length, int flags) {
        final int owner = ShardSteering.shardOf(segment, offset, length, shards, rule, udpOwners);
        if (owner == shard) {
            final int icmpOwner = shard == 0 ? ShardSteering.icmpShardOf(segment, offset, length, shards, rule, udpOwners) : 0;
            if (icmpOwner == 0) {
                if (shard == 0 && ShardSteering.isNeighbourDiscovery(segment, offset, length)) {
                    passOnNeighbourDiscovery(segment, offset, length, flags);
                }
                handler.onFrame(segment, offset, length, flags);
            } else {
                handOver(icmpOwner, segment, offset, length, flags);
            }
            return;
        }
        if (ShardSteering.shardOf(segment, offset, length, shards, rule, null) == shard) {
            claimedPort.incrementRelease(); // steered here rightly, but its UDP port is another shard's
        } else {
            wrongShard.incrementRelease();
            sample.record(segment, offset, length);
        }
        handOver(owner, segment, offset, length, flags);
    }

    /**
     * On shard 0: a copy of a neighbour discovery message to every other shard, each of which keeps its own neighbour
     * cache and routers from it (its IPv6 layer answers nothing, shard 0 does). Counted as
     * {@code shard.tx.nd_passed_on}; a full inbox drops the copy ({@code shard.handoff_full}), and that shard then
     * resolves again by its own solicitations.
     */
    private void passOnNeighbourDiscovery(MemorySegment segment, long offset, int length, int flags) {
        final ShardInbox[] all = inboxes;
        if (all == null) {
            return;
        }
        for (int k = 1; k < all.length; k++) {
            if (all[k].post(segment, offset, length, flags)) {
                ndPassedOn.incrementRelease();
                all[k].wakeOwnerIfAsleep();
            } else {
                handOffFull.incrementRelease();
            }
        }
    }

    /**
     * Posts a copy of the frame to shard {@code owner}'s inbox, counted; returns whether it went (a full inbox, or
     * none known yet, drops it, counted as {@code shard.handoff_full}). Also for a datagram this shard reassembled
     * ({@link ShardReassembledHandOver}).
     */
    boolean handOver(int owner, MemorySegment segment, long offset, int length, int flags) {
        final ShardInbox[] all = inboxes;
        if (all != null && all[owner].post(segment, offset, length, flags)) {
            handedOver.incrementRelease();
            if (all[owner].wakeOwnerIfAsleep()) {
                wokeOwner.incrementRelease();
            }
            return true;
        }
        handOffFull.incrementRelease();
        return false;
    }
}
