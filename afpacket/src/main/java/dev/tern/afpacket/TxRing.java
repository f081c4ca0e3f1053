package dev.tern.afpacket;

import dev.tern.afpacket.libc.LinuxAbi;
import dev.tern.core.memory.BigEndian;
import dev.tern.core.sys.Libc;
import dev.tern.ethernet.link.TxChecksums;
import dev.tern.ethernet.link.TxFrame;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;

/**
 * The TPACKET_V2 transmit ring: fixed-size slots the stack writes frames into in place, marked
 * {@code TP_STATUS_SEND_REQUEST} on commit and handed to the kernel by one {@code sendto} per flush.
 *
 * <pre>
 * ring (mmap of block_size * block_nr bytes; frames never straddle a block)
 * +---------+---------+-----+---------+  +---------+-----
 * | slot 0  | slot 1  | ... | slot k  |  | slot k+1| ...      block 0, block 1, ...
 * +---------+---------+-----+---------+  +---------+-----
 *
 * one slot (frame_size bytes)
 *  0          4        8          12 ... 32                 32 + vnet (0 or 10)
 * +----------+--------+----------+------+------------------+----------------------------+
 * | tp_status| tp_len | tp_snaplen| ...  | virtio_net_hdr   | Ethernet frame             |
 * +----------+--------+----------+------+ (if the socket   +----------------------------+
 *                                          has one)
 *  AVAILABLE (0) -> we write the frame and tp_len, then SEND_REQUEST (1) with release semantics;
 *  the kernel takes it on sendto (SENDING, 2) and sets AVAILABLE again when the skb is freed.
 * </pre>
 * {@code tp_len} counts the vnet header too. Slot indices advance in order on both sides: the kernel sends from its
 * own head while slots are SEND_REQUEST, so a claimed slot that is aborted (or a frame rejected at commit) is
 * simply reused by the next claim and never leaves a hole. {@code PACKET_LOSS} is set so that a frame the kernel
 * finds malformed is skipped instead of wedging the ring at {@code TP_STATUS_WRONG_FORMAT}; commit validates
 * every frame first, so that should not happen.
 *
 * <p>Flush: {@code sendto(fd, NULL, 0, MSG_DONTWAIT, NULL, 0)}. On {@code EAGAIN}/{@code ENOBUFS} the frames the
 * kernel did not take stay SEND_REQUEST and go on the next flush; a frame refused on {@value #MAX_REFUSED_FLUSHES}
 * flushes in a row is given up and counted ({@link #discardOldest}). A committed frame is never dropped silently.
 *
 * <p>The vnet header and offloads are separate choices. With the header, every frame tells the kernel how many of
 * its bytes to copy into the skb's linear part ({@code hdr_len}): a frame that is not a segmentation request is
 * copied whole, because otherwise {@code tpacket_snd} attaches the ring's pages to the skb as zero-copy fragments,
 * and a device that forwards into another namespace (veth) or queues the skb must then copy those pages again
 * ({@code skb_copy_ubufs}, a page allocation per frame). Measured on veth with offloads off: that copy and its page
 * traffic were about a tenth of the stack thread's time. Only TSO super-frames keep the zero-copy fragments, since a
 * 64 KiB linear skb would need a high-order allocation. Without offloads the header carries no request, and
 * checksums are completed in software as they are without the header.
 *
 * <p>Owned by the link's shard thread; not thread-safe.
 */
final class TxRing {
    private static final VarHandle STATUS = ValueLayout.JAVA_INT.varHandle();
    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT;
    /** virtio_net_hdr fields are in host byte order (legacy virtio, {@code vio_le()} on little-endian hosts). */
    private static final ValueLayout.OfShort HOST_SHORT = ValueLayout.JAVA_SHORT_UNALIGNED;
    private static final int STATUS_OWNED_BY_KERNEL =
        LinuxAbi.TP_STATUS_SEND_REQUEST | LinuxAbi.TP_STATUS_SENDING | LinuxAbi.TP_STATUS_WRONG_FORMAT;
    private static final int ETHERTYPE_IPV6 = 0x86DD;
    private static final int TCP_DATA_OFFSET_OFFSET = 12;
    private static final int TCP_FLAGS_OFFSET = 13;
    private static final int TCP_CWR = 0x80;
    /** Flushes in a row that send nothing before the oldest frame is given up (see {@link #discardOldest}). */
    static final int MAX_REFUSED_FLUSHES = 1000;
    private static final int DISCARDED = -1;

    private final MemorySegment ring;
    private final int frameSize;
    private final int framesPerBlock;
    private final int blockSize;
    private final int frameCount;
    private final boolean vnetHeader;
    private final boolean offloads;
    private final int vnetLength;
    private final int capacity;
    private final int maxUnsegmentedLength;
    private final int[] lengths;

    private int head;
    private int claimed = -1;
    private int pendingStart;
    private int pendingCount;
    private int refusedFlushes;

    long frames;
    long bytes;
    long ringFull;
    long busy;
    long errors;
    long rejected;
    long dropped;
    long sendCalls;
    int lastErrno;

    /**
     * A ring of {@code frameCount} slots. {@code vnetHeader}: the socket has PACKET_VNET_HDR (each slot starts with a
     * virtio_net_hdr); {@code offloads}: the stack may ask for checksum and segmentation offload (needs the header).
     */
    TxRing(MemorySegment ring, int blockSize, int frameSize, int frameCount, boolean vnetHeader, boolean offloads, int mtu) {
        if (offloads && !vnetHeader) {
            throw new IllegalArgumentException("offloads need the vnet header");
        }
        this.ring = ring;
        this.blockSize = blockSize;
        this.frameSize = frameSize;
        this.framesPerBlock = blockSize / frameSize;
        this.frameCount = frameCount;
        this.vnetHeader = vnetHeader;
        this.offloads = offloads;
        this.vnetLength = vnetHeader ? LinuxAbi.VIRTIO_NET_HDR_SIZE : 0;
        this.maxUnsegmentedLength = mtu + LinuxAbi.ETH_HLEN + 4;
        final int room = frameSize - LinuxAbi.TPACKET2_DATA_OFFSET - vnetLength;
        this.capacity = offloads ? room : Math.min(room, maxUnsegmentedLength);
        this.lengths = new int[frameCount];
    }

    int capacity() {
        return capacity;
    }

    int frameCount() {
        return frameCount;
    }

    /** Committed frames the kernel has not taken yet. */
    int pending() {
        return pendingCount;
    }

    private long slotBase(int slot) {
        return (long) (slot / framesPerBlock) * blockSize + (long) (slot % framesPerBlock) * frameSize;
    }

    boolean claim(TxFrame frame) {
        if (claimed >= 0) {
            throw new IllegalStateException("claim before the previous claimed frame was committed or aborted");
        }
        final long base = slotBase(head);
        if (((int) STATUS.getAcquire(ring, base) & STATUS_OWNED_BY_KERNEL) != 0) {
            ringFull++;
            return false;
        }
        claimed = head;
        frame.claimed(ring, base + LinuxAbi.TPACKET2_DATA_OFFSET + vnetLength, capacity, head);
        return true;
    }

    void abort(TxFrame frame) {
        checkClaimed(frame);
        claimed = -1;
    }

    void commit(TxFrame frame) {
        checkClaimed(frame);
        claimed = -1;
        final int slot = head;
        final long base = slotBase(slot);
        final int length = frame.length();
        if (!prepare(frame, frame.offset(), length)) {
            rejected++;
            return;
        }
        ring.set(INT, base + LinuxAbi.TPACKET2_HDR_LEN_OFFSET, length + vnetLength);
        lengths[slot] = length;
        STATUS.setRelease(ring, base, LinuxAbi.TP_STATUS_SEND_REQUEST);
        head = slot + 1 == frameCount ? 0 : slot + 1;
        pendingCount++;
    }

    private void checkClaimed(TxFrame frame) {
        if (claimed < 0 || frame.token() != claimed) {
            throw new IllegalStateException("frame " + frame.token() + " was not claimed from this link");
        }
    }

    /** One sendto for everything committed; returns how many frames the kernel took. */
    int flush(MemorySegment callState, int fd) {
        if (pendingCount == 0) {
            return 0;
        }
        sendCalls++;
        boolean refused = false;
        // Without errno first, as AF_XDP's kick: the capturing downcall allocates until C2 has compiled it (see Libc),
        // which showed in tern serve's first seconds and in a flood generator's allocation test. Only a refused call
        // is made again with errno, to tell busy from broken.
        if (Libc.sendtoWithoutErrno(fd, LinuxAbi.MSG_DONTWAIT) < 0 && sendAgainWithErrno(callState, fd) < 0) {
            final int errno = Libc.errno(callState);
            if (errno == LinuxAbi.EAGAIN || errno == LinuxAbi.ENOBUFS || errno == LinuxAbi.EINTR) {
                busy++;
                refused = true;
            } else {
                errors++;
                lastErrno = errno;
            }
        }
        final int taken = reclaim();
        if (taken > 0 || !refused) {
            refusedFlushes = 0;
        } else if (++refusedFlushes >= MAX_REFUSED_FLUSHES) {
            discardOldest();
            refusedFlushes = 0;
        }
        return taken;
    }

    private long sendAgainWithErrno(MemorySegment callState, int fd) {
        sendCalls++;
        return Libc.sendto(callState, fd, LinuxAbi.MSG_DONTWAIT);
    }

    /** Walks the committed frames the kernel has taken (or skipped); returns how many it sent. */
    private int reclaim() {
        int taken = 0;
        while (pendingCount > 0) {
            final int slot = pendingStart;
            final int status = (int) STATUS.getAcquire(ring, slotBase(slot));
            if ((status & LinuxAbi.TP_STATUS_SEND_REQUEST) != 0) {
                break;
            }
            if (lengths[slot] == DISCARDED) {
                dropped++;
            } else if ((status & LinuxAbi.TP_STATUS_WRONG_FORMAT) != 0) {
                rejected++;
            } else {
                frames++;
                bytes += lengths[slot];
                taken++;
            }
            pendingStart = slot + 1 == frameCount ? 0 : slot + 1;
            pendingCount--;
        }
        return taken;
    }

    /**
     * Gives up on the oldest committed frame after {@value #MAX_REFUSED_FLUSHES} flushes in a row that sent nothing.
     * The kernel re-arms a frame its device refused (ENOBUFS) and retries it from the same place, so a frame that is
     * refused every time (a tc drop rule, a segmentation the device path cannot do) would block every frame behind
     * it. Setting {@code tp_len} to 0 makes the kernel skip the slot on the next flush ({@code PACKET_LOSS}); the frame
     * is counted as dropped.
     */
    private void discardOldest() {
        final int slot = pendingStart;
        ring.set(INT, slotBase(slot) + LinuxAbi.TPACKET2_HDR_LEN_OFFSET, 0);
        lengths[slot] = DISCARDED;
    }

    /**
     * Checks the frame against what the kernel accepts and fills in the offload requests: in the vnet header with
     * offloads, or the checksums in software without them. Returns false for a frame the kernel would refuse.
     */
    private boolean prepare(TxFrame frame, long data, int length) {
        final boolean segment = frame.segmentSize() != TxFrame.NO_SEGMENTATION;
        if (length < LinuxAbi.ETH_HLEN || (!segment && length > maxUnsegmentedLength)) {
            return false;
        }
        if (frame.ipChecksum() && !fillIpv4HeaderChecksum(data, length)) {
            return false;
        }
        final int start = frame.checksumStart();
        final int field = frame.checksumOffset();
        final boolean l4 = start >= 0;
        if (l4 && (start < LinuxAbi.ETH_HLEN || field < 0 || start + field + 2 > length)) {
            return false;
        }
        if (!offloads) {
            if (segment) {
                return false;
            }
            if (l4) {
                completeL4Checksum(data, start, field, length);
            }
            if (vnetHeader) {
                writeVnetHeader(data, 0, LinuxAbi.VIRTIO_NET_HDR_GSO_NONE, length, 0, 0, 0);
            }
            return true;
        }
        return requestOffloads(frame, data, length, segment, l4, start, field);
    }

    private boolean requestOffloads(TxFrame frame, long data, int length, boolean segment, boolean l4, int start, int field) {
        final int flags = l4 ? LinuxAbi.VIRTIO_NET_HDR_F_NEEDS_CSUM : 0;
        int gsoType = LinuxAbi.VIRTIO_NET_HDR_GSO_NONE;
        // Copied whole into the skb unless it is a segmentation request (see the class comment).
        int headerLength = length;
        int gsoSize = 0;
        if (segment) {
            // TSO needs the checksum offload too (CHECKSUM_PARTIAL), and the TCP header length for hdr_len.
            final int mss = frame.segmentSize();
            if (!l4 || mss <= 0 || mss > 0xFFFF || start + TCP_FLAGS_OFFSET >= length) {
                return false;
            }
            final int tcpHeaderLength = (BigEndian.u8(ring, data + start + TCP_DATA_OFFSET_OFFSET) >>> 4) * 4;
            if (tcpHeaderLength < 20 || start + tcpHeaderLength > length) {
                return false;
            }
            if (length - start - tcpHeaderLength > mss) {
                headerLength = start + tcpHeaderLength;
                gsoSize = mss;
                gsoType = TxChecksums.etherType(ring, data, length) == ETHERTYPE_IPV6 ? LinuxAbi.VIRTIO_NET_HDR_GSO_TCPV6 : LinuxAbi.VIRTIO_NET_HDR_GSO_TCPV4;
                if ((BigEndian.u8(ring, data + start + TCP_FLAGS_OFFSET) & TCP_CWR) != 0) {
                    // RFC 3168 §6.1.2: CWR goes on the first segment only; the ECN bit tells GSO so.
                    gsoType |= LinuxAbi.VIRTIO_NET_HDR_GSO_ECN;
                }
            } else if (length > maxUnsegmentedLength) {
                return false;
            }
        }
        writeVnetHeader(data, flags, gsoType, headerLength, gsoSize, l4 ? start : 0, l4 ? field : 0);
        return true;
    }

    /**
     * The virtio_net_hdr in front of the frame at {@code data}. {@code headerLength} ({@code hdr_len}) is how many
     * bytes {@code tpacket_snd} copies into the skb's linear part; the rest becomes zero-copy page fragments.
     */
    private void writeVnetHeader(long data, int flags, int gsoType, int headerLength, int gsoSize, int checksumStart,
                                 int checksumOffset) {
        final long header = data - LinuxAbi.VIRTIO_NET_HDR_SIZE;
        ring.set(ValueLayout.JAVA_BYTE, header + LinuxAbi.VIRTIO_NET_HDR_FLAGS_OFFSET, (byte) flags);
        ring.set(ValueLayout.JAVA_BYTE, header + LinuxAbi.VIRTIO_NET_HDR_GSO_TYPE_OFFSET, (byte) gsoType);
        ring.set(HOST_SHORT, header + LinuxAbi.VIRTIO_NET_HDR_HDR_LEN_OFFSET, (short) headerLength);
        ring.set(HOST_SHORT, header + LinuxAbi.VIRTIO_NET_HDR_GSO_SIZE_OFFSET, (short) gsoSize);
        ring.set(HOST_SHORT, header + LinuxAbi.VIRTIO_NET_HDR_CSUM_START_OFFSET, (short) checksumStart);
        ring.set(HOST_SHORT, header + LinuxAbi.VIRTIO_NET_HDR_CSUM_OFFSET_OFFSET, (short) checksumOffset);
    }

    /** Computes the IPv4 header checksum the stack asked for (no NIC here does it for a packet socket). */
    private boolean fillIpv4HeaderChecksum(long data, int length) {
        return TxChecksums.fillIpv4HeaderChecksum(ring, data, length);
    }

    /** Software completion of a CHECKSUM_PARTIAL request (when the link runs without the vnet header). */
    private void completeL4Checksum(long data, int start, int field, int length) {
        TxChecksums.completeL4Checksum(ring, data, start, field, length);
    }
}
