package dev.tern.ethernet.memory;

import dev.tern.core.memory.BigEndian;
import dev.tern.core.memory.FramePool;
import dev.tern.core.time.Clock;
import dev.tern.core.time.SystemClock;
import dev.tern.ethernet.link.FrameHandler;
import dev.tern.ethernet.link.Offloads;
import dev.tern.ethernet.link.ShardRule;
import dev.tern.ethernet.link.ShardSteering;
import dev.tern.ethernet.wire.EthernetHeader;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * An Ethernet segment in process memory joining any number of {@link MemoryLink}s, with seeded impairments: loss,
 * duplication, reordering, corruption, delay with jitter, a bandwidth limit with a bounded bottleneck queue, and
 * Congestion Experienced marks on ECN-capable IPv4 packets (RFC 3168 §5), as an AQM or nftables' {@code ip ecn set ce}
 * would set them.
 *
 * <p>Every frame a port flushes is offered to every other port whose address filter accepts its destination (a
 * switch that floods, in front of NICs that filter). For each receiver the wire decides, from one seeded random
 * stream, whether the copy is lost, corrupted (one bit flipped after the Ethernet header, as if it escaped the link
 * CRC), delayed for reordering, or duplicated. The copy is then scheduled for delivery at
 * {@code departure + delay + jitter (+ reorder delay)}, where departure accounts for the sender's serialisation at
 * the configured bandwidth. A frame that would make the sender's queue exceed its limit is dropped (tail drop).
 *
 * <p><b>Determinism.</b> On a {@code VirtualClock}, driven from one thread, the same seed and the same sequence of
 * sends give the same deliveries, frame for frame. Frames due at the same instant are delivered in send order.
 *
 * <p><b>Memory.</b> Frames live in one {@link FramePool}; a unicast frame moves from sender to receiver without a
 * copy, and only broadcast, multicast and duplicates copy. Nothing is allocated per frame.
 *
 * <p><b>Threads.</b> By default every port must be used from one thread (a simulation). With
 * {@link Builder#concurrent(boolean)} each port may be polled by its own thread (benchmarks, a
 * {@code StackRunner} per stack): the wire then serialises its bookkeeping with a spin lock, never held while a
 * receive handler runs.
 */
public final class MemoryWire implements AutoCloseable {
    private static final VarHandle LOCK;

    static {
        try {
            LOCK = MethodHandles.lookup().findVarHandle(MemoryWire.class, "lock", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final Clock clock;
    private final SplittableRandom random;
    private final double lossRate;
    private final double burstRate;
    private final double burstEndRate;
    /** In a loss burst (Gilbert's model: bursts start with burstRate, each frame in one ends it with burstEndRate). */
    private boolean inBurst;
    private long lastBurstCheckNs;
    /** A loss burst ends after this long without a frame. */
    static final long BURST_GAP_NS = 1_000_000L;
    private final double duplicateRate;
    private final double corruptRate;
    private final double ceMarkRate;
    private final double reorderRate;
    private final long reorderDelayNs;
    private final long delayNs;
    private final long jitterNs;
    private final long bandwidthBitsPerSecond;
    private final long queueLimitBytes;
    private final int mtu;
    private final int maxFrameLength;
    private final boolean checksumOffload;
    private final boolean concurrent;
    final FramePool pool;
    private final List<MemoryLink> ports = new ArrayList<>();
    private MemoryLink[] portArray = new MemoryLink[0];
    private long sequence;
    @SuppressWarnings("unused") // accessed through LOCK
    private volatile int lock;

    /** What happened to frames on this wire, for tests and the demo. Read under no lock: approximate while running. */
    public final WireStats stats = new WireStats();

    private MemoryWire(Builder builder) {
        this.clock = builder.clock;
        this.random = new SplittableRandom(builder.seed);
        this.lossRate = builder.lossRate;
        this.burstRate = builder.burstRate;
        this.burstEndRate = builder.burstEndRate;
        this.duplicateRate = builder.duplicateRate;
        this.corruptRate = builder.corruptRate;
        this.ceMarkRate = builder.ceMarkRate;
        this.reorderRate = builder.reorderRate;
        this.reorderDelayNs = builder.reorderDelayNs;
        this.delayNs = builder.delayNs;
        this.jitterNs = builder.jitterNs;
        this.bandwidthBitsPerSecond = builder.bandwidthBitsPerSecond;
        this.queueLimitBytes = builder.queueLimitBytes;
        this.mtu = builder.mtu;
        this.maxFrameLength = builder.mtu + EthernetHeader.VLAN_LENGTH;
        this.checksumOffload = builder.checksumOffload;
        this.concurrent = builder.concurrent;
        this.pool = FramePool.allocate(builder.frames, maxFrameLength);
    }

    public static Builder builder() {
        return new Builder();
    }

    /** Plugs a new port with address {@code mac} into the wire. Cold path. */
    public MemoryLink attach(String name, long mac) {
        lock();
        try {
            final MemoryLink port = new MemoryLink(this, name, mac, pool.capacity());
            ports.add(port);
            portArray = ports.toArray(new MemoryLink[0]);
            return port;
        } finally {
            unlock();
        }
    }

    /**
     * Plugs {@code shards} ports sharing the address {@code mac} into the wire, as the shards of one stack: each frame
     * for that address reaches only the port {@link ShardSteering#shardOf} names (ARP, ICMP, multicast and the rest:
     * port 0), as an AF_PACKET fanout group with Tern's steering program would hand it. Cold path.
     */
    public MemoryLink[] attachShards(String name, long mac, int shards) {
        return attachShards(name, mac, shards, ShardRule.FLOW_HASH);
    }

    /** {@link #attachShards(String, long, int)} steering by {@code rule}, as a link of that kind would (tests). */
    public MemoryLink[] attachShards(String name, long mac, int shards, ShardRule rule) {
        if (shards < 1) {
            throw new IllegalArgumentException("shards must be at least 1, got " + shards);
        }
        rule.checkShards(shards);
        final MemoryLink[] links = new MemoryLink[shards];
        for (int i = 0; i < shards; i++) {
            links[i] = attach(shards == 1 ? name : name + "." + i, mac);
            links[i].steering(i, shards, rule);
        }
        return links;
    }

    void detach(MemoryLink port) {
        lock();
        try {
            ports.remove(port);
            portArray = ports.toArray(new MemoryLink[0]);
            port.releaseAll();
        } finally {
            unlock();
        }
    }

    public Clock clock() {
        return clock;
    }

    public int mtu() {
        return mtu;
    }

    int offloads() {
        return checksumOffload ? Offloads.TX_IPV4_CHECKSUM | Offloads.TX_L4_CHECKSUM | Offloads.RX_CHECKSUM : 0;
    }

    /** Earliest time any port has a frame due, or {@link Long#MAX_VALUE}: how far a simulation may jump. */
    public long nextDeliveryNs() {
        lock();
        try {
            long earliest = Long.MAX_VALUE;
            for (MemoryLink port : portArray) {
                earliest = Math.min(earliest, port.inbound.earliest());
            }
            return earliest;
        } finally {
            unlock();
        }
    }

    /** Frame buffers currently held (in flight, queued or being handled); zero when the wire is idle and drained. */
    public int framesInUse() {
        lock();
        try {
            return pool.inUse();
        } finally {
            unlock();
        }
    }

    int acquire() {
        lock();
        try {
            final int buffer = pool.acquire();
            if (buffer < 0) {
                stats.noBuffer++;
            }
            return buffer;
        } finally {
            unlock();
        }
    }

    void release(int buffer) {
        lock();
        try {
            pool.release(buffer);
        } finally {
            unlock();
        }
    }

    /** Sends the frames a port committed since its last flush. */
    int transmit(MemoryLink from, int[] buffers, int[] lengths, int count) {
        final long nowNs = clock.nanoTime();
        lock();
        try {
            for (int i = 0; i < count; i++) {
                transmitOne(from, buffers[i], lengths[i], nowNs);
            }
        } finally {
            unlock();
        }
        return count;
    }

    private void transmitOne(MemoryLink from, int buffer, int length, long nowNs) {
        stats.transmitted++;
        if (length > maxFrameLength || length < EthernetHeader.LENGTH) {
            stats.malformed++;
            pool.release(buffer);
            return;
        }
        long departureNs = nowNs;
        if (bandwidthBitsPerSecond > 0) {
            final long startNs = Math.max(nowNs, from.egressFreeNs);
            final long backlogBytes = (startNs - nowNs) * bandwidthBitsPerSecond / 8_000_000_000L;
            if (backlogBytes + length > queueLimitBytes) {
                stats.queueDrops++;
                pool.release(buffer);
                return;
            }
            departureNs = startNs + length * 8_000_000_000L / bandwidthBitsPerSecond;
            from.egressFreeNs = departureNs;
        }
        final long destination = BigEndian.u48(pool.slab(), pool.offset(buffer));
        boolean originalUsed = false;
        for (MemoryLink to : portArray) {
            if (to == from || !to.accepts(destination)) {
                continue;
            }
            if (to.shardCount > 1
                && ShardSteering.shardOf(pool.slab(), pool.offset(buffer), length, to.shardCount, to.shardRule, null)
                    != to.shardIndex) {
                continue;
            }
            if (lossRate > 0 && random.nextDouble() < lossRate || burstLost(nowNs)) {
                stats.lost++;
                continue;
            }
            final int copy = originalUsed ? copyOf(buffer, length) : buffer;
            if (copy < 0) {
                continue;
            }
            originalUsed = true;
            deliver(to, copy, length, departureNs);
            if (duplicateRate > 0 && random.nextDouble() < duplicateRate) {
                final int duplicate = copyOf(copy, length);
                if (duplicate >= 0) {
                    stats.duplicated++;
                    deliver(to, duplicate, length, departureNs);
                }
            }
        }
        if (!originalUsed) {
            pool.release(buffer);
        }
    }

    private void deliver(MemoryLink to, int buffer, int length, long departureNs) {
        long arrivalNs = departureNs + delayNs;
        if (jitterNs > 0) {
            arrivalNs += random.nextLong(jitterNs + 1);
        }
        if (reorderRate > 0 && random.nextDouble() < reorderRate) {
            stats.reordered++;
            arrivalNs += reorderDelayNs;
        }
        int flags = checksumOffload ? Offloads.RX_CHECKSUM_OK : 0;
        if (corruptRate > 0 && random.nextDouble() < corruptRate && length > EthernetHeader.LENGTH) {
            stats.corrupted++;
            final long at = pool.offset(buffer) + EthernetHeader.LENGTH + random.nextInt(length - EthernetHeader.LENGTH);
            final int bit = 1 << random.nextInt(8);
            BigEndian.u8(pool.slab(), at, BigEndian.u8(pool.slab(), at) ^ bit);
            flags = 0;
        }
        if (ceMarkRate > 0 && random.nextDouble() < ceMarkRate && markCe(pool.offset(buffer), length)) {
            stats.ceMarked++;
        }
        if (!to.inbound.offer(arrivalNs, sequence++, buffer, length, flags)) {
            stats.queueDrops++;
            pool.release(buffer);
            return;
        }
        stats.delivered++;
    }

    /**
     * Sets CE on an IPv4 packet that is ECT(0) or ECT(1) (RFC 3168 §5: a router never marks Not-ECT, and CE stays CE)
     * and mends the header checksum (RFC 1624's incremental update). Returns whether it marked.
     */
    private boolean markCe(long at, int length) {
        final MemorySegment slab = pool.slab();
        if (length < EthernetHeader.LENGTH + IPV4_MIN_HEADER
            || BigEndian.u16(slab, at + ETHER_TYPE_OFFSET) != ETHERTYPE_IPV4) {
            return false;
        }
        final long ip = at + EthernetHeader.LENGTH;
        final int firstWord = BigEndian.u16(slab, ip);
        final int ecn = firstWord & 0b11;
        if (ecn == 0 || ecn == 0b11) {
            return false;
        }
        final int marked = firstWord | 0b11;
        BigEndian.u16(slab, ip, marked);
        final int checksum = BigEndian.u16(slab, ip + IPV4_CHECKSUM_OFFSET);
        int sum = (~checksum & 0xFFFF) + (~firstWord & 0xFFFF) + marked;
        sum = (sum & 0xFFFF) + (sum >>> 16);
        sum = (sum & 0xFFFF) + (sum >>> 16);
        BigEndian.u16(slab, ip + IPV4_CHECKSUM_OFFSET, ~sum & 0xFFFF);
        return true;
    }

    private static final int ETHER_TYPE_OFFSET = 12;
    private static final int ETHERTYPE_IPV4 = 0x0800;
    private static final int IPV4_MIN_HEADER = 20;
    private static final int IPV4_CHECKSUM_OFFSET = 10;

    private int copyOf(int buffer, int length) {
        final int copy = pool.acquire();
        if (copy < 0) {
            stats.noBuffer++;
            return -1;
        }
        MemorySegment.copy(pool.slab(), pool.offset(buffer), pool.slab(), pool.offset(copy), length);
        return copy;
    }

    /** Moves frames due at {@code nowNs} from a port's inbound queue into its receive batch. */
    int takeDue(MemoryLink port, long nowNs, int maxFrames) {
        lock();
        try {
            return port.inbound.takeDue(nowNs, maxFrames, port);
        } finally {
            unlock();
        }
    }

    void releaseBatch(MemoryLink port) {
        lock();
        try {
            port.releaseBatch();
        } finally {
            unlock();
        }
    }

    void handleBatch(MemoryLink port, FrameHandler handler, int count) {
        for (int i = 0; i < count; i++) {
            handler.onFrame(pool.slab(), pool.offset(port.batchBuffers[i]), port.batchLengths[i], port.batchFlags[i]);
        }
    }

    void lock() {
        if (concurrent) {
            while (!LOCK.compareAndSet(this, 0, 1)) {
                Thread.onSpinWait();
            }
        }
    }

    void unlock() {
        if (concurrent) {
            LOCK.setRelease(this, 0);
        }
    }

    @Override
    public void close() {
        for (MemoryLink port : List.copyOf(ports)) {
            port.close();
        }
        pool.close();
    }

    /** Counts of what the wire did with frames. */
    public static final class WireStats {
        public long transmitted;
        public long delivered;
        public long lost;
        public long duplicated;
        public long corrupted;
        public long ceMarked;
        public long reordered;
        public long queueDrops;
        public long noBuffer;
        public long malformed;

        @Override
        public String toString() {
            return "transmitted " + transmitted + ", delivered " + delivered + ", lost " + lost + ", duplicated "
                + duplicated + ", corrupted " + corrupted + ", reordered " + reordered + ", queue drops " + queueDrops
                + (ceMarked > 0 ? ", CE marked " + ceMarked : "")
                + (noBuffer > 0 ? ", no buffer " + noBuffer : "") + (malformed > 0 ? ", malformed " + malformed : "");
        }
    }

    /**
     * True when a loss burst takes this copy: one starts with probability burstRate, and lasts a geometric number of
     * frames, but no longer than the moment it belongs to: a burst is a spell of congestion, so a pause of
     * {@link #BURST_GAP_NS} with no frame ends it (else a few frames spaced by retransmission back-off would all fall
     * into one burst, minutes apart).
     */
    private boolean burstLost(long nowNs) {
        if (burstRate <= 0) {
            return false;
        }
        final long sinceLast = nowNs - lastBurstCheckNs;
        lastBurstCheckNs = nowNs;
        if (inBurst && sinceLast > BURST_GAP_NS) {
            inBurst = false;
        }
        if (inBurst) {
            if (random.nextDouble() < burstEndRate) {
                inBurst = false;
            }
            return true;
        }
        if (random.nextDouble() < burstRate) {
            inBurst = random.nextDouble() >= burstEndRate;
            return true;
        }
        return false;
    }

    /** Configuration of a wire. Rates are probabilities per delivered copy, between 0 and 1. */
    public static final class Builder {
        private Clock clock = SystemClock.INSTANCE;
        private long seed = 1;
        private double lossRate;
        private double burstRate;
        private double burstEndRate = 1;
        private double duplicateRate;
        private double corruptRate;
        private double ceMarkRate;
        private double reorderRate;
        private long reorderDelayNs = 1_000_000;
        private long delayNs;
        private long jitterNs;
        private long bandwidthBitsPerSecond;
        private long queueLimitBytes = 1 << 20;
        private int mtu = 1500;
        private int frames = 4096;
        private boolean checksumOffload;
        private boolean concurrent;

        public Builder clock(Clock clock) {
            this.clock = clock;
            return this;
        }

        public Builder seed(long seed) {
            this.seed = seed;
            return this;
        }

        public Builder loss(double rate) {
            this.lossRate = rate(rate, "loss");
            return this;
        }

        /**
         * Loss in bursts (Gilbert's two-state model): a burst starts on a frame with probability {@code rate} and
         * takes {@code meanLength} consecutive frames on average (geometrically distributed) within one spell (a
         * millisecond without frames ends it), besides any {@link #loss} of single frames.
         */
        public Builder burstLoss(double rate, double meanLength) {
            this.burstRate = rate(rate, "burst loss");
            if (!(meanLength >= 1)) {
                throw new IllegalArgumentException("mean burst length must be at least 1, got " + meanLength);
            }
            this.burstEndRate = 1 / meanLength;
            return this;
        }

        public Builder duplication(double rate) {
            this.duplicateRate = rate(rate, "duplication");
            return this;
        }

        public Builder corruption(double rate) {
            this.corruptRate = rate(rate, "corruption");
            return this;
        }

        /** A fraction {@code rate} of frames is held back an extra {@code extraDelayNs}, so later frames overtake them. */
        /** Marks this share of ECN-capable IPv4 packets Congestion Experienced (RFC 3168 §5). */
        public Builder ceMarking(double rate) {
            this.ceMarkRate = rate(rate, "CE marking");
            return this;
        }

        public Builder reordering(double rate, long extraDelayNs) {
            this.reorderRate = rate(rate, "reordering");
            this.reorderDelayNs = nonNegative(extraDelayNs, "reorder delay");
            return this;
        }

        /** Propagation delay, plus a uniformly random extra of up to {@code jitterNs}. */
        public Builder delay(long delayNs, long jitterNs) {
            this.delayNs = nonNegative(delayNs, "delay");
            this.jitterNs = nonNegative(jitterNs, "jitter");
            return this;
        }

        /** A bottleneck of {@code bitsPerSecond} (0 = unlimited) at each sender, with a queue of {@code queueLimitBytes}. */
        public Builder bandwidth(long bitsPerSecond, long queueLimitBytes) {
            this.bandwidthBitsPerSecond = nonNegative(bitsPerSecond, "bandwidth");
            this.queueLimitBytes = nonNegative(queueLimitBytes, "queue limit");
            return this;
        }

        public Builder mtu(int mtu) {
            if (mtu < 68 || mtu > 65535) {
                throw new IllegalArgumentException("MTU must be 68..65535, got " + mtu);
            }
            this.mtu = mtu;
            return this;
        }

        /** Number of frame buffers shared by the wire: frames in flight, queued and being handled. */
        public Builder frames(int frames) {
            this.frames = frames;
            return this;
        }

        /** Ports advertise checksum offload: frames arrive marked verified unless the wire corrupted them (like veth). */
        public Builder checksumOffload(boolean enabled) {
            this.checksumOffload = enabled;
            return this;
        }

        /** Lets each port be used from its own thread; needs a real clock. */
        public Builder concurrent(boolean enabled) {
            this.concurrent = enabled;
            return this;
        }

        public MemoryWire build() {
            return new MemoryWire(this);
        }

        private static double rate(double rate, String what) {
            if (!(rate >= 0 && rate <= 1)) {
                throw new IllegalArgumentException(what + " rate must be between 0 and 1, got " + rate);
            }
            return rate;
        }

        private static long nonNegative(long value, String what) {
            if (value < 0) {
                throw new IllegalArgumentException(what + " must not be negative, got " + value);
            }
            return value;
        }
    }
}
