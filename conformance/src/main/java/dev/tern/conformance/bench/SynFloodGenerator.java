package dev.tern.conformance.bench;

import dev.tern.ethernet.link.FrameHandler;
import dev.tern.ethernet.link.Link;
import dev.tern.ethernet.link.TxFrame;
import dev.tern.ethernet.wire.EtherType;
import dev.tern.ethernet.wire.EthernetHeader;
import dev.tern.ipv4.wire.IpProtocol;
import dev.tern.ipv4.wire.Ipv4Header;
import dev.tern.tcp.wire.TcpFlags;
import dev.tern.tcp.wire.TcpHeader;
import dev.tern.tcp.wire.TcpRepr;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.SplittableRandom;
import java.util.concurrent.locks.LockSupport;

/**
 * A SYN flood written in Java (issue 15 item 5, issue 16 item 4): a set of SYN frames built once with the wire
 * flyweights, then copied into a {@link Link}'s transmit buffers in batches, one flush per batch, paced to a rate or
 * as fast as the link takes them. hping3 made only 80,000-90,000 SYNs/s on the two-core build machine; this reaches
 * several times that on the same veth (see conformance/README.md).
 *
 * <pre>
 *   frames (off-heap, built once; STRIDE bytes apart)
 *   +---------------------------------------------------------------+---------+
 *   | Ethernet: Tern's MAC <- the peer's MAC, IPv4                  |  14 B   |
 *   | IPv4: the peer's address -> the flooded address, TTL 64, DF    |  20 B   |  checksum valid
 *   | TCP: source port 1024 + i, a random ISN, SYN, window 64240     |  20 B   |  checksum valid
 *   +---------------------------------------------------------------+---------+
 *   the frames go out in turn (0, 1, ..., frameCount - 1, 0, ...), carried on from one run to the next
 * </pre>
 * The source address is the sender's own, as hping3 uses by default: the flooded stack's SYN-ACKs then go to a host
 * that answers ARP, and the sender's kernel answers each with a reset (it has no such connection), so every SYN
 * costs the flooded host a SYN in, a SYN-ACK out and a reset in. Source ports run through {@value #DEFAULT_FRAMES}
 * values, so a port comes back only after that many frames, when the reset has closed its previous half-open
 * connection.
 *
 * <p>A run is bounded in frames and in time; the frames counted are those the link's {@link Link#flush()} reports
 * taken (on AF_PACKET: handed to the device). Copying a frame, committing and flushing allocate nothing.
 *
 * <p>Built on any thread; a run belongs to the thread that makes it (the link's owner), {@link #stop()} may come from
 * any thread. The frames live until {@link #close()}.
 */
final class SynFloodGenerator implements AutoCloseable {
    /** Ethernet, IPv4 and TCP headers without options: what hping3 -S sends. */
    static final int FRAME_LENGTH = EthernetHeader.LENGTH + Ipv4Header.MIN_LENGTH + TcpHeader.MIN_LENGTH;
    static final int DEFAULT_FRAMES = 16_384;
    /** Frames committed per flush (one sendto on AF_PACKET). */
    static final int BATCH = 64;
    /**
     * The fewest frames a paced run sends at once; below {@value #PACED_BATCH} x 10,000 frames/s, rate / 10,000 (a
     * batch every 100 µs). A flush per frame spent a system call on each, with the veth receiver's work inside it, and
     * a paced run fell behind the unpaced rate (a kernel listener: 81,567 SYNs/s sent at 200,000 asked, 235,494
     * unpaced).
     */
    static final int PACED_BATCH = 16;
    static final int FIRST_SOURCE_PORT = 1024;
    private static final int STRIDE = 64;
    private static final int TTL = 64;
    private static final int WINDOW = 64_240;
    /** The longest a paced run sleeps at once, so that a stop is seen soon and the rate stays even. */
    private static final long MAX_PARK_NS = 200_000;
    private static final int MAX_REPLIES_PER_POLL = 256;

    private final Arena arena = Arena.ofShared();
    private final MemorySegment frames;
    private final int frameCount;
    private final TxFrame tx = new TxFrame();
    private int next;
    private volatile boolean stopped;

    /** What a run sent: frames the link took, over how long. */
    record Result(long frames, long elapsedNs) {
        double framesPerSecond() {
            return elapsedNs == 0 ? 0 : frames * 1e9 / elapsedNs;
        }
    }

    /**
     * {@code frameCount} SYNs from {@code sourceMac}/{@code sourceAddress} (ports {@value #FIRST_SOURCE_PORT} up)
     * to {@code destinationMac}/{@code destinationAddress}:{@code destinationPort}, initial sequence numbers drawn
     * from {@code seed}.
     */
    SynFloodGenerator(long sourceMac, int sourceAddress, long destinationMac, int destinationAddress, int destinationPort,
                      int frameCount, long seed) {
        if (frameCount < 1 || frameCount > 0x10000 - FIRST_SOURCE_PORT) {
            throw new IllegalArgumentException("frame count " + frameCount + " outside 1.." + (0x10000 - FIRST_SOURCE_PORT)
                + " (one source port each)");
        }
        this.frameCount = frameCount;
        this.frames = arena.allocate((long) frameCount * STRIDE, STRIDE);
        final SplittableRandom random = new SplittableRandom(seed);
        final EthernetHeader ethernet = new EthernetHeader();
        final Ipv4Header ip = new Ipv4Header();
        final TcpHeader tcp = new TcpHeader();
        for (int i = 0; i < frameCount; i++) {
            final long base = (long) i * STRIDE;
            ethernet.wrap(frames, base, FRAME_LENGTH).destination(destinationMac).source(sourceMac).etherType(EtherType.IPV4);
            ip.wrap(frames, base + EthernetHeader.LENGTH, FRAME_LENGTH - EthernetHeader.LENGTH)
                .write(0, Ipv4Header.MIN_LENGTH + TcpHeader.MIN_LENGTH, i, Ipv4Header.FLAG_DONT_FRAGMENT, TTL, IpProtocol.TCP,
                    sourceAddress, destinationAddress);
            tcp.wrap(frames, base + EthernetHeader.LENGTH + Ipv4Header.MIN_LENGTH, TcpHeader.MIN_LENGTH)
                .write(FIRST_SOURCE_PORT + i, destinationPort, random.nextInt(), 0, TcpHeader.MIN_LENGTH, TcpFlags.SYN, WINDOW);
            TcpRepr.fillChecksum(tcp, sourceAddress, destinationAddress, TcpHeader.MIN_LENGTH);
        }
    }

    int frameCount() {
        return frameCount;
    }

    /** Frame {@code index} of the set, in place (for checks). */
    MemorySegment frame(int index) {
        return frames.asSlice((long) index * STRIDE, FRAME_LENGTH);
    }

    /**
     * Sends SYNs through {@code link} until {@code maxFrames} were taken, {@code maxNs} passed or {@link #stop()}:
     * at {@code framesPerSecond} on average ({@code 0}: as fast as the link takes them), in batches of up to
     * {@value #BATCH}. Between batches, frames received on the link go to {@code replies} (null: left to the link,
     * which drops what its ring cannot hold). Allocates nothing except the result.
     */
    Result run(Link link, long framesPerSecond, long maxFrames, long maxNs, FrameHandler replies) {
        final double framesPerNs = framesPerSecond / 1e9;
        final long minBatch = Math.clamp(framesPerSecond / 10_000, 1, PACED_BATCH);
        final long startNs = System.nanoTime();
        long committed = 0;
        long taken = 0;
        long nowNs = startNs;
        while (!stopped && taken < maxFrames && nowNs - startNs < maxNs) {
            final long due = framesPerSecond == 0 ? maxFrames : Math.min(maxFrames, (long) ((nowNs - startNs) * framesPerNs) + 1);
            final long budget = Math.min(BATCH, due - committed);
            if (budget >= minBatch || budget > 0 && due == maxFrames) {
                committed += commitBatch(link, (int) budget);
            } else if (replies == null) {
                // Ahead of the rate: sleep until the next frame is due rather than spin on a shared processor.
                LockSupport.parkNanos(Math.min(MAX_PARK_NS, (long) ((committed + minBatch - due) / framesPerNs)));
            }
            // Also without a new batch: frames the kernel refused (ENOBUFS) wait in the ring for the next flush.
            taken += link.flush();
            if (replies != null) {
                link.receive(replies, MAX_REPLIES_PER_POLL);
            }
            nowNs = System.nanoTime();
        }
        taken += link.flush();
        return new Result(taken, System.nanoTime() - startNs);
    }

    /** Claims, fills and commits up to {@code count} frames; returns how many (fewer when the ring is full). */
    private int commitBatch(Link link, int count) {
        int committed = 0;
        while (committed < count && link.claim(tx)) {
            MemorySegment.copy(frames, (long) next * STRIDE, tx.segment(), tx.offset(), FRAME_LENGTH);
            tx.length(FRAME_LENGTH);
            link.commit(tx);
            next = next + 1 == frameCount ? 0 : next + 1;
            committed++;
        }
        return committed;
    }

    /** Ends the run in progress (from any thread); later runs end at once. */
    void stop() {
        stopped = true;
    }

    @Override
    public void close() {
        arena.close();
    }

    /**
     * Counts received IPv4 TCP segments from one address whose SYN, ACK, RST and FIN bits are exactly
     * {@code flags} (SYN-ACKs answering the flood, or the flood's SYNs on the flooded side). Owned by the thread
     * that receives; the count may be read from any thread.
     */
    static final class SegmentCounter implements FrameHandler {
        private static final int FLAGS_COUNTED = TcpFlags.SYN | TcpFlags.ACK | TcpFlags.RST | TcpFlags.FIN;
        private final EthernetHeader ethernet = new EthernetHeader();
        private final Ipv4Header ip = new Ipv4Header();
        private final TcpHeader tcp = new TcpHeader();
        private final int source;
        private final int flags;
        private volatile long count;

        SegmentCounter(int source, int flags) {
            this.source = source;
            this.flags = flags;
        }

        long count() {
            return count;
        }

        @Override
        public void onFrame(MemorySegment segment, long offset, int length, int rxFlags) {
            if (ethernet.wrap(segment, offset, length).check() != EthernetHeader.OK || ethernet.etherType() != EtherType.IPV4) {
                return;
            }
            final int header = ethernet.headerLength();
            // The checksum is not verified: a veth peer hands over partial checksums (see AfPacketLink).
            if (ip.wrap(segment, offset + header, length - header).check(false) != Ipv4Header.OK
                || ip.protocol() != IpProtocol.TCP || ip.source() != source || ip.isFragment()) {
                return;
            }
            if (tcp.wrap(segment, offset + header + ip.headerLength(), ip.totalLength() - ip.headerLength()).check() == TcpHeader.OK
                && (tcp.flags() & FLAGS_COUNTED) == flags) {
                count = count + 1; // one writer
            }
        }
    }
}
