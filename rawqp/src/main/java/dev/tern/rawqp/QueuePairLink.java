package dev.tern.rawqp;

import dev.tern.core.memory.FramePool;
import dev.tern.ethernet.link.FrameHandler;
import dev.tern.ethernet.link.FrameHolds;
import dev.tern.ethernet.link.Link;
import dev.tern.ethernet.link.Offloads;
import dev.tern.ethernet.link.TxFrame;
import dev.tern.ethernet.wire.MacAddress;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.List;

/**
 * What both raw-packet queue-pair links share, whatever drives the rings: identity (name, MAC, MTU, offloads), the
 * registered slab, flow steering and multicast, the control plane to tear down, the counters every link keeps and
 * their publication as {@link #statisticNames() statistics}. {@link Mlx5Link} and {@link RawQpLink} add the data
 * path: receive, claim, commit, flush and reclaiming send completions.
 *
 * <p>The helpers the data paths call ({@link #handUp}, {@link #claimIf}, {@link #abort}) are final, and the
 * counters are plain fields the subclasses increment: the per-frame path makes no virtual call here.
 *
 * <p>Statistics, published by the stack as {@code link.NAME}: first the ones every queue-pair link has, in this order,
 * then the link's own.
 * <pre>
 *   rx.frames rx.bytes rx.errors rx.dropped tx.frames tx.dropped tx.errors tx.busy buffers_in_use | own ...
 * </pre>
 * Every value but {@code buffers_in_use} (a gauge) only grows.
 *
 * <p>Owned by one stack shard thread; not thread-safe.
 */
abstract class QueuePairLink implements Link {
    static final int ETHERNET_HEADER = 14;
    /** Until {@link #attach} gives the link real rules (tests on a model or a fake provider never do). */
    private static final FlowTable.Installer NO_STEERING = new FlowTable.Installer() {
        @Override
        public long install(FlowRule rule) {
            return 0;
        }

        @Override
        public void remove(long handle) {
        }
    };
    private static final String[] COMMON_STATISTICS = {"rx.frames", "rx.bytes", "rx.errors", "rx.dropped", "tx.frames",
        "tx.dropped", "tx.errors", "tx.busy", "buffers_in_use"};

    private final String name;
    private final long mac;
    private final int mtu;
    final int offloads;
    final FramePool pool;
    final MemorySegment slab;
    private final String[] statisticNames;
    private FlowTable flows = new FlowTable(NO_STEERING, List.of());
    private AutoCloseable resources;
    /** Transmit buffers claimed and neither committed nor aborted yet. */
    int claimed;
    /** The slab buffer of the frame being handed up (lendable, {@link #lendFrame}), else -1. */
    private int handingBuffer = -1;
    /** Receive buffers lent to the stack now, and how many may be at once (a quarter of the receive queue). */
    private int lent;
    private int lendLimit;
    boolean closed;

    long rxFrames;
    long rxBytes;
    long rxErrors;
    long rxDropped;
    long txFrames;
    long txDropped;
    long txErrors;
    long txBusy;

    /**
     * @param pool              the registered slab; owned by the link from now on (closing the link closes it last)
     * @param offloads          what the device does ({@link Offloads} bits): only those requests reach the device
     * @param ownStatisticNames the names of the statistics {@link #ownStatistics} writes, in its order
     */
    QueuePairLink(String name, long mac, int mtu, int offloads, FramePool pool, String[] ownStatisticNames) {
        this.name = name;
        this.mac = mac;
        this.mtu = mtu;
        this.offloads = offloads;
        this.pool = pool;
        this.slab = pool.slab();
        this.statisticNames = Arrays.copyOf(COMMON_STATISTICS, COMMON_STATISTICS.length + ownStatisticNames.length);
        System.arraycopy(ownStatisticNames, 0, statisticNames, COMMON_STATISTICS.length, ownStatisticNames.length);
    }

    /** Gives the link its flow rules and the control-plane objects to destroy on close (QP, CQs, MR, PD, context). */
    final void attach(FlowTable steering, AutoCloseable controlPlane) {
        this.flows = steering;
        this.resources = controlPlane;
    }

    @Override
    public final String name() {
        return name;
    }

    @Override
    public final long macAddress() {
        return mac;
    }

    @Override
    public final int mtu() {
        return mtu;
    }

    @Override
    public final int offloads() {
        return offloads;
    }

    /**
     * Counts one successful receive completion and hands its frame, in slab buffer {@code buffer}, to {@code handler};
     * false, counted as dropped, when {@code length} is one no Ethernet frame in our buffers can have.
     *
     * @param checksumsOk the device verified the frame's IPv4 and TCP/UDP checksums
     */
    final boolean handUp(FrameHandler handler, int buffer, int length, boolean checksumsOk) {
        if (length < ETHERNET_HEADER || length > pool.bufferSize()) {
            rxDropped++;
            return false;
        }
        rxFrames++;
        rxBytes += length;
        handingBuffer = buffer;
        try {
            handler.onFrame(slab, pool.offset(buffer), length,
                checksumsOk && (offloads & Offloads.RX_CHECKSUM) != 0 ? Offloads.RX_CHECKSUM_OK : 0);
        } finally {
            handingBuffer = -1;
        }
        return true;
    }

    /** How many receive buffers the link may lend at once; set by the subclass from its receive queue's size. */
    final void lendLimit(int receiveQueueSize) {
        this.lendLimit = FrameHolds.lendLimit(receiveQueueSize);
    }

    /**
     * Lends the frame being handed up: a fresh slab buffer takes its place in the receive queue (the device fills that
     * one next time round), and the lent one goes back to the slab on {@link #returnFrame}. Refused beyond a quarter of
     * the receive queue, or when the slab has no buffer to put in its place (the slab is shared with transmit and
     * sized with that quarter spare, {@code RawQpLinks}).
     */
    @Override
    public final int lendFrame(MemorySegment segment, long offset) {
        final int buffer = handingBuffer;
        if (buffer < 0 || lent >= lendLimit || !segment.isNative()) {
            return -1;
        }
        final long at = segment.address() + offset - slab.address() - pool.offset(buffer);
        if (at < 0 || at >= pool.bufferSize()) {
            return -1;
        }
        final int fresh = pool.acquire();
        if (fresh < 0) {
            return -1;
        }
        replaceReceiveBuffer(fresh);
        handingBuffer = -1;
        lent++;
        return buffer;
    }

    @Override
    public final void returnFrame(int lease) {
        lent--;
        pool.release(lease);
    }

    /** Puts slab buffer {@code fresh} in the receive queue where the frame being handed up lies. */
    abstract void replaceReceiveBuffer(int fresh);

    /** Ends a claim: a slab buffer into {@code frame} when the link has {@code room}, else a refusal counted as busy. */
    final boolean claimIf(boolean room, TxFrame frame) {
        if (!room) {
            txBusy++;
            return false;
        }
        final int buffer = pool.acquire();
        claimed++;
        frame.claimed(slab, pool.offset(buffer), pool.bufferSize(), buffer);
        return true;
    }

    @Override
    public final void abort(TxFrame frame) {
        claimed--;
        pool.release((int) frame.token());
    }

    @Override
    public final void addMulticast(long groupMac) {
        flows.addMulticast(groupMac);
    }

    @Override
    public final void removeMulticast(long groupMac) {
        flows.removeMulticast(groupMac);
    }

    /**
     * On a link that steers by address (the default with an IPv4 address: the kernel keeps the MAC), a flow rule for
     * the IPv6 address; otherwise nothing, since every frame to our MAC is ours already.
     */
    @Override
    public final void addIpv6Address(long high, long low) {
        flows.addIpv6Address(macAddress(), high, low);
    }

    @Override
    public final void removeIpv6Address(long high, long low) {
        flows.removeIpv6Address(macAddress(), high, low);
    }

    /** True on a link that steers by address: the kernel keeps the MAC and whatever the rules leave it. */
    @Override
    public final boolean sharesInterfaceWithKernel() {
        return flows.steersByAddress();
    }

    /** The flow rules in force (for tools and tests). */
    public final List<FlowRule> flowRules() {
        return flows.rules();
    }

    /**
     * Removes the flow rules, destroys the QP and the rest of the control plane, lets the data path free its own
     * memory ({@link #releaseDataPath()}), then frees the slab. Buffers the device still held are simply forgotten:
     * nothing can complete after the QP is gone.
     */
    @Override
    public final void close() {
        if (closed) {
            return;
        }
        closed = true;
        // Steps run last-added first.
        final Teardown teardown = new Teardown();
        teardown.add(pool);
        teardown.add(this::releaseDataPath);
        if (resources != null) {
            teardown.add(resources);
        }
        teardown.add(flows);
        teardown.close();
    }

    /** Frees what the data path holds besides the slab; runs on close, after the QP is destroyed. */
    abstract void releaseDataPath();

    @Override
    public final String[] statisticNames() {
        return statisticNames.clone();
    }

    @Override
    public final void statistics(long[] values) {
        values[0] = rxFrames;
        values[1] = rxBytes;
        values[2] = rxErrors;
        values[3] = rxDropped;
        values[4] = txFrames;
        values[5] = txDropped;
        values[6] = txErrors;
        values[7] = txBusy;
        values[8] = pool.inUse();
        ownStatistics(values, COMMON_STATISTICS.length);
    }

    /** Writes the link's own statistics from {@code values[from]} on, in the order of its names; must not allocate. */
    abstract void ownStatistics(long[] values, int from);

    public final long rxFrames() {
        return rxFrames;
    }

    public final long rxBytes() {
        return rxBytes;
    }

    /** Receive completions with an error status (for example a frame longer than the buffer), and failed polls. */
    public final long rxErrors() {
        return rxErrors;
    }

    /** Receive completions whose byte count no Ethernet frame in our buffers can have. */
    public final long rxDropped() {
        return rxDropped;
    }

    /** Frames handed to the device. */
    public final long txFrames() {
        return txFrames;
    }

    /** Frames committed but never handed to the device: refused at commit or by the provider. */
    public final long txDropped() {
        return txDropped;
    }

    /** Send completions with an error status, refused posts and failed polls. */
    public final long txErrors() {
        return txErrors;
    }

    /** Claims refused for lack of buffers or send-queue room. */
    public final long txBusy() {
        return txBusy;
    }

    /** Buffers of the slab in use now: receive buffers, claimed and in-flight transmit buffers. */
    public final int buffersInUse() {
        return pool.inUse();
    }

    /** The data path and its shape, for {@link #toString()}: "verbs, max inline 256". */
    abstract String dataPath();

    @Override
    public final String toString() {
        return name + " " + MacAddress.format(mac) + " (" + dataPath() + ")";
    }
}
