package dev.tern.ethernet;

import dev.tern.core.counters.CountersFile;
import dev.tern.core.memory.BigEndian;
import dev.tern.ethernet.link.FrameHandler;
import dev.tern.ethernet.link.FrameHolds;
import dev.tern.ethernet.link.Link;
import dev.tern.ethernet.link.MulticastMacSet;
import dev.tern.ethernet.link.TxFrame;
import dev.tern.ethernet.wire.EthernetHeader;
import dev.tern.ethernet.wire.MacAddress;
import org.agrona.concurrent.status.AtomicCounter;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;

/**
 * The Ethernet layer of one stack: accepts frames for us from the {@link Link}, dispatches them by EtherType to the
 * layer registered for it (ARP, IPv4), and frames what those layers send.
 *
 * <p>A frame is for us when its destination is our MAC, broadcast, or a multicast MAC we joined. The link may
 * filter too, but AF_PACKET on a shared segment also shows frames for other hosts, so the check is made here.
 *
 * <p>Transmit: {@link #begin} claims a link buffer and writes the header, the caller writes its packet at
 * {@link #payloadOffset()} in {@link #frame()}, then {@link #send} pads short frames (with zeros: a reused buffer
 * must not leak old bytes) and commits. Frames leave on {@link #flush()}, once per poll.
 *
 * <p>Owned by the shard thread; not thread-safe.
 */
public final class EthernetLayer implements FrameHandler {
    /**
     * Holds the table has room for: more than any link lends at once (a quarter of its receive buffers), so the
     * link's limit is the one that acts.
     */
    private static final int HOLD_SLOTS = 4096;
    /** A protocol above Ethernet; receives the payload of each frame of its EtherType, valid until it returns. */
    @FunctionalInterface
    public interface Handler {
        void onPacket(MemorySegment segment, long offset, int length, int rxFlags, long sourceMac, long destinationMac,
                      long nowNs);
    }

    static final int DROP_TOO_SHORT = EthernetHeader.DROP_TOO_SHORT;
    static final int DROP_NOT_ETHERNET_II = EthernetHeader.DROP_NOT_ETHERNET_II;
    static final int DROP_NOT_FOR_US = 3;
    static final int DROP_UNKNOWN_TYPE = 4;
    static final int DROP_OWN_SOURCE = 5;
    private static final String[] DROP_NAMES = {null, "too_short", "not_ethernet_ii", "not_for_us", "unknown_type", "own_source"};

    private final Link link;
    private final long mac;
    private final int mtu;
    private final EthernetHeader rxHeader = new EthernetHeader();
    private final EthernetHeader txHeader = new EthernetHeader();
    private final TxFrame frame = new TxFrame();
    private int[] types = new int[0];
    private Handler[] handlers = new Handler[0];
    private final MulticastMacSet multicast = new MulticastMacSet();
    private boolean inFrame;
    private long nowNs;

    private final AtomicCounter rxFrames;
    private final AtomicCounter rxBytes;
    private final AtomicCounter txFrames;
    private final AtomicCounter txBytes;
    private final AtomicCounter txNoBuffer;
    private final AtomicCounter internalErrors;
    private final AtomicCounter[] drops;
    private final FrameHolds holds;
    private Runnable[] recoveries = new Runnable[0];
    private RuntimeException firstInternalError;

    public EthernetLayer(Link link, long mac, CountersFile counters) {
        this(link, mac, link.mtu(), counters);
    }

    /** An Ethernet layer whose MTU is {@code mtu} (at most the link's). */
    public EthernetLayer(Link link, long mac, int mtu, CountersFile counters) {
        this.link = link;
        this.mac = mac;
        this.mtu = Math.min(mtu, link.mtu());
        this.rxFrames = counters.counter("ethernet.rx.frames");
        this.rxBytes = counters.counter("ethernet.rx.bytes");
        this.txFrames = counters.counter("ethernet.tx.frames");
        this.txBytes = counters.counter("ethernet.tx.bytes");
        this.txNoBuffer = counters.counter("ethernet.tx.no_buffer");
        this.internalErrors = counters.counter("stack.internal_errors");
        this.drops = counters.counters("ethernet.drop.", DROP_NAMES);
        this.holds = new FrameHolds(link, HOLD_SLOTS, counters);
    }

    /** Received frames kept past the receive call for held-frame zero-copy receive (TCP's and UDP's handlers). */
    public FrameHolds holds() {
        return holds;
    }

    /** Our MAC address. */
    public long mac() {
        return mac;
    }

    public Link link() {
        return link;
    }

    /** The largest payload (IP packet) a frame may carry. */
    public int mtu() {
        return mtu;
    }

    /** Registers the layer that receives frames of {@code etherType}. Cold path. */
    public void register(int etherType, Handler handler) {
        final int n = types.length;
        types = Arrays.copyOf(types, n + 1);
        handlers = Arrays.copyOf(handlers, n + 1);
        types[n] = etherType;
        handlers[n] = handler;
    }

    /** Receives up to {@code maxFrames} frames from the link and hands them up; returns how many were received. */
    public int poll(long nowNs, int maxFrames) {
        this.nowNs = nowNs;
        return link.receive(this, maxFrames);
    }

    /**
     * Registers what to reset when handling a frame fails with an exception (a layer's half-built output, say).
     * Cold path.
     */
    public void onInternalError(Runnable recovery) {
        recoveries = Arrays.copyOf(recoveries, recoveries.length + 1);
        recoveries[recoveries.length - 1] = recovery;
    }

    /** The first exception a frame's processing threw, for diagnostics; null while there was none. */
    public RuntimeException firstInternalError() {
        return firstInternalError;
    }

    /**
     * Receives one frame. An exception from the layers above means a bug, never bad input (bad input is counted and
     * dropped): it is caught here, counted as {@code stack.internal_errors}, the layers reset their half-done work,
     * and the poll loop goes on with the next frame.
     */
    @Override
    public void onFrame(MemorySegment segment, long offset, int length, int flags) {
        try {
            receive(segment, offset, length, flags);
        } catch (RuntimeException e) {
            internalErrors.incrementRelease();
            if (firstInternalError == null) {
                firstInternalError = e;
            }
            for (Runnable recovery : recoveries) {
                recovery.run();
            }
            abort();
        }
    }

    private void receive(MemorySegment segment, long offset, int length, int flags) {
        rxFrames.incrementRelease();
        rxBytes.getAndAddRelease(length);
        rxHeader.wrap(segment, offset, length);
        final int reason = rxHeader.check();
        if (reason != EthernetHeader.OK) {
            drops[reason].incrementRelease();
            return;
        }
        final long destination = rxHeader.destination();
        if (!acceptsDestination(destination)) {
            drops[DROP_NOT_FOR_US].incrementRelease();
            return;
        }
        final long source = rxHeader.source();
        if (source == mac) {
            // Our own frame looped back (a hub, a mirrored port): never process what we sent.
            drops[DROP_OWN_SOURCE].incrementRelease();
            return;
        }
        final int type = rxHeader.etherType();
        final int headerLength = rxHeader.headerLength();
        for (int i = 0; i < types.length; i++) {
            if (types[i] == type) {
                handlers[i].onPacket(segment, offset + headerLength, length - headerLength, flags, source, destination, nowNs);
                return;
            }
        }
        drops[DROP_UNKNOWN_TYPE].incrementRelease();
    }

    private boolean acceptsDestination(long destination) {
        if (destination == mac || MacAddress.isBroadcast(destination)) {
            return true;
        }
        return MacAddress.isMulticast(destination) && multicast.contains(destination);
    }

    /** Starts receiving a multicast MAC (reference-counted; the link's filter is told on the first join). */
    public void addMulticast(long groupMac) {
        if (multicast.add(groupMac)) {
            link.addMulticast(groupMac);
        }
    }

    /** Starts receiving frames for an IPv6 address of ours where the link filters by address ({@link Link#addIpv6Address}). */
    public void addIpv6Address(long high, long low) {
        link.addIpv6Address(high, low);
    }

    /** Stops receiving frames for an IPv6 address of ours ({@link Link#removeIpv6Address}). */
    public void removeIpv6Address(long high, long low) {
        link.removeIpv6Address(high, low);
    }

    /** Drops one reference to a multicast MAC; the link stops receiving it with the last. */
    public void removeMulticast(long groupMac) {
        if (multicast.remove(groupMac)) {
            link.removeMulticast(groupMac);
        }
    }

    /**
     * Claims a frame to {@code destination} and writes its header; returns false (counted) when the link has no
     * buffer now. At most one frame is open at a time.
     */
    public boolean begin(long destination, int etherType) {
        if (inFrame) {
            throw new IllegalStateException("a frame is already open");
        }
        if (!link.claim(frame)) {
            txNoBuffer.incrementRelease();
            return false;
        }
        inFrame = true;
        txHeader.wrap(frame.segment(), frame.offset(), EthernetHeader.LENGTH)
            .destination(destination).source(mac).etherType(etherType);
        return true;
    }

    /** The open frame: its segment, and offload requests for it. */
    public TxFrame frame() {
        return frame;
    }

    /** Where the payload of the open frame starts in {@code frame().segment()}. */
    public long payloadOffset() {
        return frame.offset() + EthernetHeader.LENGTH;
    }

    /** Room for payload in the open frame. */
    public int payloadCapacity() {
        return frame.capacity() - EthernetHeader.LENGTH;
    }

    /** Commits the open frame with {@code payloadLength} bytes of payload, zero-padded to the Ethernet minimum. */
    public void send(int payloadLength) {
        int length = EthernetHeader.LENGTH + payloadLength;
        if (length < EthernetHeader.MIN_FRAME_LENGTH) {
            BigEndian.zero(frame.segment(), frame.offset() + length, EthernetHeader.MIN_FRAME_LENGTH - length);
            length = EthernetHeader.MIN_FRAME_LENGTH;
        }
        frame.length(length);
        link.commit(frame);
        inFrame = false;
        txFrames.incrementRelease();
        txBytes.getAndAddRelease(length);
    }

    /** Gives the open frame back unsent. */
    public void abort() {
        if (inFrame) {
            link.abort(frame);
            inFrame = false;
        }
    }

    /** Sends every committed frame (one doorbell / syscall); call once per poll. */
    public int flush() {
        return link.flush();
    }
}
