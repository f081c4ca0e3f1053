package dev.tern.conformance.replay;

import dev.tern.core.checksum.InternetChecksum;
import dev.tern.core.memory.BigEndian;
import dev.tern.core.memory.FramePool;
import dev.tern.core.time.Clock;
import dev.tern.ethernet.link.FrameHandler;
import dev.tern.ethernet.link.Link;
import dev.tern.ethernet.link.Offloads;
import dev.tern.ethernet.link.TxFrame;
import dev.tern.ethernet.wire.MacAddress;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A {@link Link} that plays the far side of a recorded capture to a stack: it hands the stack, at their recorded
 * times, the frames of the capture that are addressed to the stack's MAC (its own, broadcast, or a multicast MAC the
 * stack joined), and records every frame the stack transmits, for comparison with the frames the capture shows the
 * recorded stack sending.
 *
 * <p>Timing: a frame is due when the link's {@link Clock} reaches its capture timestamp (nanoseconds since the
 * epoch), so drive the stack on a {@code VirtualClock} started at the capture's time ({@link Replay} does).
 * {@link #nextArrivalNs()} tells the driver when the next frame is due.
 *
 * <p>What is never delivered: frames sent from the link's own MAC (those are what the stack under test should
 * reproduce), frames before the link was made (a replay starts where its stack started), and frames for other
 * destinations; each is counted ({@link #ownFramesSkipped()}, {@link #notForUsSkipped()}).
 *
 * <p>Transmit: buffers come from a small pool ({@link #buffersInUse()} lets a test check that the stack gives back
 * every buffer it claims). A frame counts as transmitted at {@link #flush()}, as on a real link. If the link
 * advertises checksum offload, requested checksums are completed as a NIC would (CHECKSUM_PARTIAL semantics);
 * segmentation requests are refused and counted ({@link #rejected()}).
 *
 * <p>Owned by the stack's thread; not thread-safe. Delivered frames are valid until the handler returns.
 */
public final class PcapReplayLink implements Link {
    /** A frame the stack sent: when ({@link Clock#nanoTime()} at flush) and its bytes. */
    public record Transmitted(long atNs, byte[] bytes) {
        public CapturedFrame asFrame() {
            return new CapturedFrame(atNs, bytes);
        }
    }

    private static final int ETHERNET_HEADER_AND_TAG = 18;
    private static final int TX_SLOTS = 64;

    private final String name;
    private final long mac;
    private final int mtu;
    private final int offloads;
    private final int[] rxFlagsPerFrame;
    private final Clock clock;
    private final List<CapturedFrame> inbound;
    private final long[] dueNs;
    private final Arena arena = Arena.ofShared();
    private final MemorySegment rxBuffer;
    private final FramePool txPool;
    private final int[] pendingBuffers = new int[TX_SLOTS];
    private final int[] pendingLengths = new int[TX_SLOTS];
    private final int[] pendingChecksumStart = new int[TX_SLOTS];
    private final int[] pendingChecksumOffset = new int[TX_SLOTS];
    private final boolean[] pendingIpChecksum = new boolean[TX_SLOTS];
    private int pendingCount;
    private final List<Transmitted> transmitted = new ArrayList<>();
    private final Map<Long, Integer> multicast = new HashMap<>();
    private int next;
    private long delivered;
    private long ownSkipped;
    private long notForUsSkipped;
    private long rejected;
    private long claimFailures;
    private boolean promiscuous;
    private boolean closed;

    private PcapReplayLink(Builder builder) {
        this.name = builder.name;
        this.mac = builder.mac;
        this.mtu = builder.mtu;
        this.offloads = builder.offloads;
        this.clock = builder.clock;
        final long startNs = clock.nanoTime();
        final List<CapturedFrame> kept = new ArrayList<>();
        final int[] flags = new int[builder.frames.size()];
        for (int i = 0; i < builder.frames.size(); i++) {
            if (builder.frames.get(i).timestampNs() - startNs >= 0) {
                flags[kept.size()] = builder.rxFlagsPerFrame == null ? builder.rxFlags : builder.rxFlagsPerFrame[i];
                kept.add(builder.frames.get(i));
            }
        }
        this.inbound = List.copyOf(kept);
        this.rxFlagsPerFrame = flags;
        this.dueNs = receiveBatches(inbound, mac, builder.batchWindowNs);
        int largest = 0;
        for (CapturedFrame frame : inbound) {
            largest = Math.max(largest, frame.length());
        }
        this.rxBuffer = arena.allocate(Math.max(largest, 64), 64);
        final int txCapacity = (offloads & Offloads.TX_TCP_SEGMENTATION) != 0 ? 65_536 + ETHERNET_HEADER_AND_TAG
            : mtu + ETHERNET_HEADER_AND_TAG;
        this.txPool = FramePool.allocate(TX_SLOTS, txCapacity);
    }

    public static Builder builder() {
        return new Builder();
    }

    /**
     * When each frame is handed over: its own timestamp, except that frames of the far side that follow each other
     * within {@code windowNs}, with no frame of the stack's in between, are handed over together, at the last one's
     * time. That is how the recorded stack most likely took them from its ring: in one batch, and one batch makes
     * one output pass (one TCP ACK for a train of segments, where segment-by-segment input makes an ACK each).
     */
    private static long[] receiveBatches(List<CapturedFrame> frames, long mac, long windowNs) {
        final long[] due = new long[frames.size()];
        int start = 0;
        for (int i = 0; i <= frames.size(); i++) {
            final boolean end = i == frames.size();
            final boolean own = !end && frames.get(i).length() >= 14 && frames.get(i).source() == mac;
            final boolean gap = !end && i > start && frames.get(i).timestampNs() - frames.get(i - 1).timestampNs() > windowNs;
            if (end || own || gap) {
                for (int k = start; k < i; k++) {
                    due[k] = frames.get(i - 1).timestampNs();
                }
                start = own ? i + 1 : i;
            }
            if (own) {
                due[i] = frames.get(i).timestampNs();
            }
        }
        return due;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public long macAddress() {
        return mac;
    }

    @Override
    public int mtu() {
        return mtu;
    }

    @Override
    public int offloads() {
        return offloads;
    }

    @Override
    public int receive(FrameHandler handler, int maxFrames) {
        final long nowNs = clock.nanoTime();
        int count = 0;
        while (count < maxFrames && next < inbound.size() && dueNs[next] - nowNs <= 0) {
            final int flags = rxFlagsPerFrame[next];
            final CapturedFrame frame = inbound.get(next++);
            if (frame.length() >= 14 && frame.source() == mac) {
                ownSkipped++;
                continue;
            }
            if (frame.length() < 14 || !accepts(frame.destination())) {
                notForUsSkipped++;
                continue;
            }
            MemorySegment.copy(frame.bytes(), 0, rxBuffer, ValueLayout.JAVA_BYTE, 0, frame.length());
            delivered++;
            count++;
            handler.onFrame(rxBuffer, 0, frame.length(), flags);
        }
        return count;
    }

    private boolean accepts(long destination) {
        return promiscuous || destination == mac || MacAddress.isBroadcast(destination)
            || (MacAddress.isMulticast(destination) && multicast.containsKey(destination));
    }

    @Override
    public long nextArrivalNs() {
        return next < inbound.size() ? dueNs[next] : Long.MAX_VALUE;
    }

    /** True once every frame of the capture has been offered. */
    public boolean exhausted() {
        return next >= inbound.size();
    }

    @Override
    public boolean claim(TxFrame frame) {
        final int buffer = txPool.acquire();
        if (buffer < 0) {
            claimFailures++;
            return false;
        }
        frame.claimed(txPool.slab(), txPool.offset(buffer), txPool.bufferSize(), buffer);
        return true;
    }

    @Override
    public void commit(TxFrame frame) {
        final int buffer = (int) frame.token();
        if (frame.segmentSize() != TxFrame.NO_SEGMENTATION || frame.length() < 14) {
            rejected++;
            txPool.release(buffer);
            return;
        }
        final int i = pendingCount++;
        pendingBuffers[i] = buffer;
        pendingLengths[i] = frame.length();
        pendingChecksumStart[i] = frame.checksumStart();
        pendingChecksumOffset[i] = frame.checksumOffset();
        pendingIpChecksum[i] = frame.ipChecksum();
    }

    @Override
    public void abort(TxFrame frame) {
        txPool.release((int) frame.token());
    }

    @Override
    public int flush() {
        final int count = pendingCount;
        final long nowNs = clock.nanoTime();
        for (int i = 0; i < count; i++) {
            final long offset = txPool.offset(pendingBuffers[i]);
            final MemorySegment slab = txPool.slab();
            completeOffloads(slab, offset, i);
            final byte[] bytes = new byte[pendingLengths[i]];
            MemorySegment.copy(slab, ValueLayout.JAVA_BYTE, offset, bytes, 0, bytes.length);
            transmitted.add(new Transmitted(nowNs, bytes));
            txPool.release(pendingBuffers[i]);
        }
        pendingCount = 0;
        return count;
    }

    /** What a NIC with the advertised offloads does before the frame leaves. */
    private void completeOffloads(MemorySegment slab, long offset, int i) {
        if (pendingIpChecksum[i]) {
            // The IPv4 header follows an untagged Ethernet header; its checksum field is at +10.
            final int headerLength = (BigEndian.u8(slab, offset + 14) & 0x0F) * 4;
            BigEndian.u16(slab, offset + 14 + 10, 0);
            BigEndian.u16(slab, offset + 14 + 10, InternetChecksum.compute(slab, offset + 14, headerLength));
        }
        if (pendingChecksumStart[i] >= 0) {
            // CHECKSUM_PARTIAL: the field holds the pseudo-header sum; sum from start to the end, complement, store.
            final int start = pendingChecksumStart[i];
            final long field = offset + start + pendingChecksumOffset[i];
            final int checksum = InternetChecksum.compute(slab, offset + start, pendingLengths[i] - start);
            BigEndian.u16(slab, field, checksum);
        }
    }

    /** Every frame the stack has transmitted so far, in order. */
    public List<Transmitted> transmitted() {
        return transmitted;
    }

    /** The transmitted frames as captured frames (for {@link FrameComparison}). */
    public List<CapturedFrame> transmittedFrames() {
        return transmitted.stream().map(Transmitted::asFrame).toList();
    }

    /** Transmit buffers claimed and not yet committed, aborted or flushed. */
    public int buffersInUse() {
        return txPool.inUse();
    }

    /** Frames handed to the stack. */
    public long delivered() {
        return delivered;
    }

    /** Capture frames sent from this link's MAC, not delivered. */
    public long ownFramesSkipped() {
        return ownSkipped;
    }

    /** Capture frames for other destinations, not delivered. */
    public long notForUsSkipped() {
        return notForUsSkipped;
    }

    /** Frames refused at commit (runts, segmentation requests). */
    public long rejected() {
        return rejected;
    }

    /** Claims refused because every transmit buffer was in use. */
    public long claimFailures() {
        return claimFailures;
    }

    public void promiscuous(boolean enabled) {
        this.promiscuous = enabled;
    }

    @Override
    public void addMulticast(long groupMac) {
        multicast.merge(groupMac, 1, Integer::sum);
    }

    @Override
    public void removeMulticast(long groupMac) {
        multicast.computeIfPresent(groupMac, (k, refs) -> refs == 1 ? null : refs - 1);
    }

    @Override
    public void close() {
        if (!closed) {
            closed = true;
            txPool.close();
            arena.close();
        }
    }

    @Override
    public String toString() {
        return name + " " + MacAddress.format(mac) + " (" + inbound.size() + " frames to offer, " + delivered + " delivered)";
    }

    /** How to build a replay link; {@link #clock}, {@link #mac} and {@link #frames} are required. */
    public static final class Builder {
        private String name = "replay";
        private long mac = -1;
        private int mtu = 1500;
        private int offloads;
        private int rxFlags;
        private int[] rxFlagsPerFrame;
        private Clock clock;
        private List<CapturedFrame> frames;
        private long batchWindowNs;

        public Builder name(String value) {
            this.name = "replay:" + Objects.requireNonNull(value);
            return this;
        }

        /** The MAC of the stack under test: the recorded stack's MAC in the capture. */
        public Builder mac(long value) {
            this.mac = value;
            return this;
        }

        public Builder mtu(int value) {
            if (value < 68 || value > 65_535) {
                throw new IllegalArgumentException("MTU " + value + " outside 68..65535");
            }
            this.mtu = value;
            return this;
        }

        /** {@link Offloads} bits the link advertises; none by default, so the stack writes every checksum itself. */
        public Builder offloads(int value) {
            this.offloads = value;
            return this;
        }

        /** Receive flags given with every frame ({@link Offloads#RX_CHECKSUM_OK} etc.); none by default. */
        public Builder rxFlags(int value) {
            this.rxFlags = value;
            return this;
        }

        /** Receive flags for each frame of {@link #frames}, by position (fuzzers); overrides {@link #rxFlags}. */
        public Builder rxFlagsPerFrame(int[] value) {
            this.rxFlagsPerFrame = value.clone();
            return this;
        }

        /** The stack's clock; frames before its current time are never delivered. */
        public Builder clock(Clock value) {
            this.clock = Objects.requireNonNull(value);
            return this;
        }

        /**
         * Hands over together the far side's frames that follow each other within {@code windowNs} with no frame of
         * the stack's in between (at the last one's time), as the recorded stack's receive batches; 0 (the default)
         * hands each over at its own timestamp.
         */
        public Builder batchWindowNs(long windowNs) {
            if (windowNs < 0) {
                throw new IllegalArgumentException("batch window must not be negative");
            }
            this.batchWindowNs = windowNs;
            return this;
        }

        /** Frames to offer, in time order. */
        public Builder frames(List<CapturedFrame> value) {
            this.frames = List.copyOf(value);
            return this;
        }

        public Builder capture(Capture capture) {
            return frames(capture.frames());
        }

        public PcapReplayLink build() {
            if (clock == null || frames == null || mac == -1) {
                throw new IllegalStateException("a replay link needs a clock, frames and the stack's MAC");
            }
            if (rxFlagsPerFrame != null && rxFlagsPerFrame.length != frames.size()) {
                throw new IllegalStateException(rxFlagsPerFrame.length + " receive flags for " + frames.size() + " frames");
            }
            return new PcapReplayLink(this);
        }
    }
}
