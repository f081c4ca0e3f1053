package dev.tern.ethernet.link;

/**
 * Where a stack meets a network: whole Ethernet frames (without FCS) in and out, in batches, in place.
 *
 * <h2>Receive</h2>
 * {@link #receive} hands up to {@code maxFrames} received frames to a {@link FrameHandler}, each in the link's own
 * memory (a ring, a registered slab). A frame is valid only until the callback returns: the stack processes it to
 * completion there and copies only what it must keep (payload into a socket buffer).
 *
 * <h2>Transmit</h2>
 * The stack {@link #claim}s a buffer (the link fills the reusable {@link TxFrame} holder with where to write), writes
 * the frame in place, sets its length and offload requests, and {@link #commit}s it. Committed frames leave on
 * {@link #flush}, which a shard calls once per poll: one doorbell, one {@code sendto}.
 *
 * <h2>Offloads</h2>
 * {@link #offloads()} says what the link (NIC, kernel, wire) does for the stack: checksums and segmentation, see
 * {@link Offloads}.
 *
 * <p>A link is owned by one shard thread and is not thread-safe, unless an implementation says otherwise.
 * Implementations: {@code MemoryLink}, {@code PcapTap} (wraps any link), {@code AfPacketLink}, {@code AfXdpLink}, {@code RawQpLink},
 * {@code Mlx5Link}.
 */
public interface Link extends AutoCloseable {
    /** A short human name ("memory:a", "afpacket:veth0"). */
    String name();

    /** The link's MAC address (packed, see {@code MacAddress}). */
    long macAddress();

    /** The largest IP packet a frame may carry (1500 on classic Ethernet); frames are MTU plus the Ethernet header. */
    int mtu();

    /** Bit set of {@link Offloads} flags. */
    int offloads();

    /** Hands up to {@code maxFrames} received frames to {@code handler}; returns how many. Never blocks. */
    int receive(FrameHandler handler, int maxFrames);

    /**
     * Claims a transmit buffer of at least {@code mtu() + 18} bytes (more with segmentation offload); fills
     * {@code frame} and returns true, or returns false when the link has no room now (the caller counts a drop or
     * tries again on a later poll).
     */
    boolean claim(TxFrame frame);

    /** Queues the claimed frame, of {@link TxFrame#length()} bytes, for the next {@link #flush()}. */
    void commit(TxFrame frame);

    /** Gives a claimed buffer back unsent. */
    void abort(TxFrame frame);

    /** Sends every committed frame; returns how many left. */
    int flush();

    /** Starts accepting frames addressed to a multicast MAC (reference-counted by the caller). */
    void addMulticast(long mac);

    /** Stops accepting frames addressed to a multicast MAC. */
    void removeMulticast(long mac);

    /**
     * Starts accepting frames for one of our IPv6 unicast addresses (tentative ones too), and the neighbour discovery
     * messages about it that go to multicast groups (RFC 4861 §4.3, §4.4), where the link chooses frames by address
     * rather than MAC (AF_XDP's program shares the interface with the kernel); a link that hands up every frame for
     * our MAC and its multicast groups does nothing. Cold path.
     *
     * @throws IllegalStateException when the link cannot take one more address
     */
    default void addIpv6Address(long high, long low) {
    }

    /** Stops accepting frames for an IPv6 address of ours ({@link #addIpv6Address}). Cold path. */
    default void removeIpv6Address(long high, long low) {
    }

    /**
     * True when the interface is the kernel's as well, with the same MAC: the kernel keeps its own addresses and the
     * frames the link does not take (AF_XDP). The stack then forms its IPv6 link-local address so that it is not the
     * one the kernel forms from that MAC.
     */
    default boolean sharesInterfaceWithKernel() {
        return false;
    }

    /**
     * True when the frames waiting to be received fill at least half of what the link can hold for the stack (its
     * receive ring): the stack is falling behind, and what comes next may be dropped by the link. The stack then
     * sheds work that is not for an existing connection (a SYN flood, scans) so established traffic keeps its place.
     * Cheap (a load or two); false where the link cannot tell.
     */
    default boolean receivePressure() {
        return false;
    }

    /**
     * How this link steers flows among the shards of a sharded stack, when it is one of a group's links (an AF_PACKET
     * fanout group's program and the memory wire hash the 4-tuple; a NIC's flow rules match port bits). The stack
     * checks every frame and picks its ports by the same rule.
     */
    default ShardRule shardRule() {
        return ShardRule.FLOW_HASH;
    }

    /**
     * Asks the link to drop, before they reach the stack, IPv4 TCP segments that open a connection (SYN without ACK
     * or RST), or to stop doing so. The stack turns this on while it sheds load under {@link #receivePressure()}
     * (a SYN flood) and off after; frames already waiting are not affected. Returns false where the link cannot (the
     * stack then drops such segments itself, at a higher cost per frame). Cold path: a system call per change.
     */
    default boolean shedUnsolicitedSyns(boolean shed) {
        return false;
    }

    /**
     * Asks the link to drop, before they reach the stack, every connection-opening SYN (as in
     * {@link #shedUnsolicitedSyns}) whose IPv4 source is one of the first {@code count} of {@code sources}, and to
     * pass other sources' SYNs (unless {@link #shedUnsolicitedSyns} is on as well); {@code count} 0 ends it. The
     * stack does this when a few sources carry most of a SYN flood, so that everyone else still gets in. The link
     * copies the addresses. Returns false where the link cannot. Cold path: a system call or two per change.
     */
    default boolean shedSynsFrom(int[] sources, int count) {
        return false;
    }

    /**
     * Blocks the calling thread up to {@code timeoutMs} (0: just check) until {@link #receive} has a frame to hand up,
     * and returns whether it has; a link that cannot wait ({@link #canAwaitFrames()} false: the memory wire) returns
     * false at once. For a stack's
     * thread with nothing to do: sleeping in the kernel until a frame comes makes it a sleeper the scheduler wakes at
     * once, where a polling thread waits for its turn behind everything else that runs.
     */
    default boolean awaitFrames(int timeoutMs) {
        return false;
    }

    /** Whether {@link #awaitFrames} really waits (a kernel socket to sleep on). */
    default boolean canAwaitFrames() {
        return false;
    }

    /**
     * Makes a thread asleep in {@link #awaitFrames} on this link return now (or the next one that sleeps, at once):
     * for another thread that queued work for the link's owner, such as a frame handed to another shard. Any thread;
     * cheap enough to call per hand-over (one system call) but not per frame. Returns false where the link cannot,
     * and then its owner sees the work when its wait ends.
     */
    default boolean wakeAwaitingThread() {
        return false;
    }

    /**
     * Lends the received frame that holds {@code segment} at {@code offset} to the stack beyond the receive call: the
     * link will not reuse its memory until {@link #returnFrame} with the lease returned here. Called on the link's
     * thread from inside {@link FrameHandler#onFrame}, for the frame being handed up; returns the lease (at least 0),
     * or -1 when the link cannot lend it: the memory is not one of this link's receive buffers (a copy, a frame
     * another shard handed over, one gathered from pieces), the link lends nothing (its buffers are refilled in
     * order, as AF_PACKET's ring is), or it has lent as many as it may without starving its own receive. A lent frame
     * is one buffer fewer for the link to receive into, so links bound how many they lend at once. Held-frame
     * zero-copy receive ({@link FrameHolds}) is built on this.
     */
    default int lendFrame(java.lang.foreign.MemorySegment segment, long offset) {
        return -1;
    }

    /** Takes back a frame lent by {@link #lendFrame}; on the link's thread. */
    default void returnFrame(int lease) {
    }

    /** Earliest time ({@code Clock} ns) at which this link will have a frame to receive, or {@link Long#MAX_VALUE} if unknown or none. */
    default long nextArrivalNs() {
        return Long.MAX_VALUE;
    }

    /**
     * Names of the link's own statistics (kernel drops, frames too large for the ring, ...), published by the
     * stack as {@code link.NAME} counters for {@code tern stat}. Cold path; none by default.
     */
    default String[] statisticNames() {
        return NO_STATISTICS;
    }

    /** Fills {@code values} with the current value of each statistic, in {@link #statisticNames()} order; must not allocate. */
    default void statistics(long[] values) {
    }

    String[] NO_STATISTICS = new String[0];

    @Override
    void close();
}
