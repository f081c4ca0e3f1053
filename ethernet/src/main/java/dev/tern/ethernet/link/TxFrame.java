package dev.tern.ethernet.link;

import java.lang.foreign.MemorySegment;

/**
 * The reusable holder for one claimed transmit buffer: where to write (filled by the {@link Link} on
 * {@link Link#claim}), and what was written (filled by the stack before {@link Link#commit}).
 *
 * <p>One instance per shard; {@link Link#claim} resets every request field, so a stale offload request never
 * leaks from one frame to the next. Owned by the shard thread.
 */
public final class TxFrame {
    /** {@link #segmentSize} value meaning "do not segment". */
    public static final int NO_SEGMENTATION = 0;

    private MemorySegment segment;
    private long offset;
    private int capacity;
    private long token;

    private int length;
    private boolean ipChecksum;
    private int checksumStart = -1;
    private int checksumOffset = -1;
    private int segmentSize = NO_SEGMENTATION;

    /** Called by a link on claim: the buffer, its capacity and a link-private token (a ring slot, a buffer index). */
    public void claimed(MemorySegment segment, long offset, int capacity, long token) {
        this.segment = segment;
        this.offset = offset;
        this.capacity = capacity;
        this.token = token;
        this.length = 0;
        this.ipChecksum = false;
        this.checksumStart = -1;
        this.checksumOffset = -1;
        this.segmentSize = NO_SEGMENTATION;
    }

    public MemorySegment segment() {
        return segment;
    }

    /** Where the frame starts in {@link #segment()}. */
    public long offset() {
        return offset;
    }

    public int capacity() {
        return capacity;
    }

    public long token() {
        return token;
    }

    public int length() {
        return length;
    }

    /** Sets the frame's length (Ethernet header included, FCS excluded). */
    public TxFrame length(int length) {
        if (length < 0 || length > capacity) {
            throw new IllegalArgumentException("frame length " + length + " outside buffer of " + capacity);
        }
        this.length = length;
        return this;
    }

    /** Asks the link to fill in the IPv4 header checksum (needs {@link Offloads#TX_IPV4_CHECKSUM}). */
    public TxFrame requestIpChecksum() {
        this.ipChecksum = true;
        return this;
    }

    public boolean ipChecksum() {
        return ipChecksum;
    }

    /**
     * Asks the link to complete an L4 checksum: sum from {@code start} (frame offset of the L4 header) to the end of
     * the frame, folded into the 16-bit field at {@code start + fieldOffset}, which holds the pseudo-header sum.
     */
    public TxFrame requestL4Checksum(int start, int fieldOffset) {
        this.checksumStart = start;
        this.checksumOffset = fieldOffset;
        return this;
    }

    /** Frame offset of the L4 header whose checksum the link completes, or -1 for none. */
    public int checksumStart() {
        return checksumStart;
    }

    /** Offset of the checksum field from {@link #checksumStart()}, or -1. */
    public int checksumOffset() {
        return checksumOffset;
    }

    /**
     * Asks the link to split this TCP frame into segments of {@code mss} payload bytes (TSO). Segmentation needs an
     * L4 checksum request too ({@link #requestL4Checksum}): each segment's checksum is computed by the link.
     */
    public TxFrame requestSegmentation(int mss) {
        this.segmentSize = mss;
        return this;
    }

    public int segmentSize() {
        return segmentSize;
    }
}
