package dev.tern.ethernet.memory;

import dev.tern.ethernet.link.FrameHandler;
import dev.tern.ethernet.link.FrameHolds;
import dev.tern.ethernet.link.Link;
import dev.tern.ethernet.link.MulticastMacSet;
import dev.tern.ethernet.link.ShardRule;
import dev.tern.ethernet.link.TxFrame;
import dev.tern.ethernet.wire.MacAddress;

import java.lang.foreign.MemorySegment;


/**
 * One port of a {@link MemoryWire}: a {@link Link} whose frames travel through process memory.
 *
 * <p>Receive hands frames in place in the wire's buffers and returns them to the wire when the batch is handled. Transmit claims a wire buffer, and {@link #flush()} sends everything committed.
 * The address filter accepts the port's own MAC, broadcast, and multicast MACs added with
 * {@link #addMulticast} (or everything when promiscuous).
 *
 * <p>Owned by one thread (see {@link MemoryWire} for the concurrent mode).
 */
public final class MemoryLink implements Link {
    private final MemoryWire wire;
    private final String name;
    private final long mac;
    final DeliveryQueue inbound;
    long egressFreeNs = Long.MIN_VALUE;
    /** Which shard of a stack this port is ({@link MemoryWire#attachShards}); 0 of 1 for a port of its own. */
    int shardIndex;
    int shardCount = 1;
    ShardRule shardRule = ShardRule.FLOW_HASH;

    final int[] batchBuffers;
    final int[] batchLengths;
    final int[] batchFlags;
    int batchSize;

    /** Frames lent past their batch ({@link #lendFrame}), and how many may be at once: a quarter of the batch. */
    private int lent;
    private final int lendLimit;

    private final int[] pendingBuffers;
    private final int[] pendingLengths;
    private int pendingCount;

    private final MulticastMacSet multicast = new MulticastMacSet();
    private volatile boolean promiscuous;
    private boolean closed;

    MemoryLink(MemoryWire wire, String name, long mac, int capacity) {
        this.wire = wire;
        this.name = name;
        this.mac = mac;
        this.inbound = new DeliveryQueue(capacity);
        this.batchBuffers = new int[capacity];
        this.batchLengths = new int[capacity];
        this.batchFlags = new int[capacity];
        this.pendingBuffers = new int[capacity];
        this.pendingLengths = new int[capacity];
        this.lendLimit = FrameHolds.lendLimit(capacity);
    }

    @Override
    public String name() {
        return "memory:" + name;
    }

    @Override
    public long macAddress() {
        return mac;
    }

    @Override
    public int mtu() {
        return wire.mtu();
    }

    @Override
    public int offloads() {
        return wire.offloads();
    }

    /** At least half of the inbound queue's capacity holds frames on their way to this link. */
    @Override
    public boolean receivePressure() {
        return inbound.size() * 2 >= batchBuffers.length;
    }

    @Override
    public int receive(FrameHandler handler, int maxFrames) {
        final int count = wire.takeDue(this, wire.clock().nanoTime(), Math.min(maxFrames, batchBuffers.length));
        if (count > 0) {
            try {
                wire.handleBatch(this, handler, count);
            } finally {
                wire.releaseBatch(this);
            }
        }
        return count;
    }

    /**
     * Lends a frame of the batch being handled: its buffer leaves the batch (not released with it) and goes back to
     * the wire's pool on {@link #returnFrame}. At most a quarter of the batch capacity at once, so a stack that holds
     * frames still receives.
     */
    @Override
    public int lendFrame(MemorySegment segment, long offset) {
        final MemorySegment slab = wire.pool.slab();
        final long at = segment.address() + offset - slab.address();
        if (lent >= lendLimit || segment.isNative() != slab.isNative() || at < 0 || at >= slab.byteSize()) {
            return -1;
        }
        final int buffer = (int) (at / wire.pool.bufferSize());
        for (int i = 0; i < batchSize; i++) {
            if (batchBuffers[i] == buffer) {
                batchBuffers[i] = -1;
                lent++;
                return buffer;
            }
        }
        return -1;
    }

    @Override
    public void returnFrame(int lease) {
        lent--;
        wire.release(lease);
    }

    @Override
    public boolean claim(TxFrame frame) {
        final int buffer = wire.acquire();
        if (buffer < 0) {
            return false;
        }
        frame.claimed(wire.pool.slab(), wire.pool.offset(buffer), wire.pool.bufferSize(), buffer);
        return true;
    }

    @Override
    public void commit(TxFrame frame) {
        pendingBuffers[pendingCount] = (int) frame.token();
        pendingLengths[pendingCount] = frame.length();
        pendingCount++;
    }

    @Override
    public void abort(TxFrame frame) {
        wire.release((int) frame.token());
    }

    @Override
    public int flush() {
        if (pendingCount == 0) {
            return 0;
        }
        final int sent = wire.transmit(this, pendingBuffers, pendingLengths, pendingCount);
        pendingCount = 0;
        return sent;
    }

    @Override
    public long nextArrivalNs() {
        return inbound.earliest();
    }

    void steering(int index, int count, ShardRule rule) {
        shardIndex = index;
        shardCount = count;
        shardRule = rule;
    }

    @Override
    public ShardRule shardRule() {
        return shardRule;
    }

    /** Accepts every frame on the wire, whatever its destination (like tcpdump on a hub). */
    public void promiscuous(boolean enabled) {
        promiscuous = enabled;
    }

    @Override
    public void addMulticast(long groupMac) {
        wire.lock();
        try {
            multicast.add(groupMac);
        } finally {
            wire.unlock();
        }
    }

    @Override
    public void removeMulticast(long groupMac) {
        wire.lock();
        try {
            multicast.remove(groupMac);
        } finally {
            wire.unlock();
        }
    }

    /** The address filter; called by the wire under its lock. */
    boolean accepts(long destination) {
        if (destination == mac || promiscuous || MacAddress.isBroadcast(destination)) {
            return true;
        }
        return MacAddress.isMulticast(destination) && multicast.contains(destination);
    }

    /** Returns the receive batch's buffers to the wire; called under the wire's lock. */
    void releaseBatch() {
        for (int i = 0; i < batchSize; i++) {
            if (batchBuffers[i] >= 0) { // -1: lent (lendFrame)
                wire.pool.release(batchBuffers[i]);
            }
        }
        batchSize = 0;
    }

    /** Returns every buffer this port holds; called under the wire's lock when the port closes. */
    void releaseAll() {
        releaseBatch();
        for (int i = 0; i < pendingCount; i++) {
            wire.pool.release(pendingBuffers[i]);
        }
        pendingCount = 0;
        inbound.drain(wire.pool::release);
    }

    @Override
    public void close() {
        if (!closed) {
            closed = true;
            wire.detach(this);
        }
    }

    @Override
    public String toString() {
        return name() + " " + MacAddress.format(mac);
    }
}
