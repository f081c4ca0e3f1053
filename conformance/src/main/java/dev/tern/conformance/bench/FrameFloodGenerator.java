package dev.tern.conformance.bench;

import dev.tern.ethernet.link.FrameHandler;
import dev.tern.ethernet.link.Link;
import dev.tern.ethernet.link.TxFrame;
import dev.tern.ethernet.wire.EtherType;
import dev.tern.core.checksum.InternetChecksum;
import dev.tern.ethernet.wire.EthernetHeader;
import dev.tern.ipv4.wire.IpProtocol;
import dev.tern.ipv4.wire.Ipv4Header;
import dev.tern.tcp.wire.TcpFlags;
import dev.tern.tcp.wire.TcpHeader;
import dev.tern.tcp.wire.TcpRepr;
import dev.tern.udp.wire.UdpHeader;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.SplittableRandom;
import java.util.concurrent.locks.LockSupport;

/**
 * A flood written in Java (for load shedding and the small-packet rates): a set of frames of one kind built once with the wire
 * flyweights, then copied into a {@link Link}'s transmit buffers in batches, one flush per batch, paced to a rate or
 * as fast as the link takes them. Two kinds: SYNs ({@link #syns}; hping3 made only 80,000-90,000 SYNs/s on the
 * two-core build machine, this several times that on the same veth, see conformance/README.md) and UDP datagrams
 * ({@link #datagrams}: a load for an echo server that a client on a kernel socket cannot make, since its own
 * system calls, one a datagram each way, cap it below what the server answers).
 *
 * <pre>
 *   frames (off-heap, built once; stride: the frame's length rounded up to 64 bytes)
 *   +---------------------------------------------------------------+---------+
 *   | Ethernet: the target's MAC <- the sender's MAC, IPv4          |  14 B   |
 *   | IPv4: the sender's address -> the target's address, TTL 64, DF|  20 B   |  checksum valid
 *   | syns:      TCP: source port 1024 + i, a random ISN, SYN,      |  20 B   |  checksum valid
 *   |            window 64240                                       |         |
 *   | datagrams: UDP: source port 1024 + i, then the payload (the   |  8 B +  |  checksum valid
 *   |            frame's index, then zeros)                         |  N B    |
 *   +---------------------------------------------------------------+---------+
 *   the frames go out in turn (0, 1, ..., frameCount - 1, 0, ...), carried on from one run to the next
 * </pre>
 * The source address is the sender's own, as hping3 uses by default: the flooded stack's SYN-ACKs then go to a host
 * that answers ARP, and the sender's kernel answers each with a reset (it has no such connection), so every SYN
 * costs the flooded host a SYN in, a SYN-ACK out and a reset in. Source ports run through {@value #DEFAULT_FRAMES}
 * values, so a port comes back only after that many frames, when the reset has closed its previous half-open
 * connection. An echoed datagram reaches a port with no socket on the sender's kernel, which drops it (and answers
 * with an ICMP port unreachable within its rate limit, 1,000 a second by default).
 *
 * <p>A run is bounded in frames and in time; the frames counted are those the link's {@link Link#flush()} reports
 * taken (on AF_PACKET: handed to the device). Copying a frame, committing and flushing allocate nothing.
 *
 * <p>Built on any thread; a run belongs to the thread that makes it (the link's owner), {@link #stop()} may come from
 * any thread. The frames live until {@link #close()}.
 */
final class FrameFloodGenerator implements AutoCloseable {
    /** Ethernet, IPv4 and TCP headers without options: what hping3 -S sends. */
    static final int SYN_FRAME_LENGTH = EthernetHeader.LENGTH + Ipv4Header.MIN_LENGTH + TcpHeader.MIN_LENGTH;
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
    /** The largest UDP payload a frame of the set carries: one Ethernet frame, no fragments. */
    static final int MAX_DATAGRAM_PAYLOAD = 1500 - Ipv4Header.MIN_LENGTH - UdpHeader.LENGTH;
    private static final int TTL = 64;
    private static final int WINDOW = 64_240;
    /** The longest a paced run sleeps at once, so that a stop is seen soon and the rate stays even. */
    private static final long MAX_PARK_NS = 200_000;
    private static final int MAX_REPLIES_PER_POLL = 256;
    private static final ValueLayout.OfInt INDEX = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);

    private final Arena arena = Arena.ofShared();
    private final MemorySegment frames;
    private final int frameCount;
    private final int frameLength;
    private final int stride;
    private final TxFrame tx = new TxFrame();
    private final EthernetHeader ethernet = new EthernetHeader();
    private final Ipv4Header ip = new Ipv4Header();
    private int next;
    private volatile boolean stopped;

    /** What a run sent: frames the link took, over how long. */
    record Result(long frames, long elapsedNs) {
        double framesPerSecond() {
            return elapsedNs == 0 ? 0 : frames * 1e9 / elapsedNs;
        }
    }

    private FrameFloodGenerator(int frameCount, int frameLength) {
        if (frameCount < 1 || frameCount > 0x10000 - FIRST_SOURCE_PORT) {
            throw new IllegalArgumentException("frame count " + frameCount + " outside 1.." + (0x10000 - FIRST_SOURCE_PORT)
                + " (one source port each)");
        }
        this.frameCount = frameCount;
        this.frameLength = frameLength;
        this.stride = (frameLength + 63) & ~63;
        this.frames = arena.allocate((long) frameCount * stride, 64);
    }

    /**
     * {@code frameCount} SYNs from {@code sourceMac}/{@code sourceAddress} (ports {@value #FIRST_SOURCE_PORT} up)
     * to {@code destinationMac}/{@code destinationAddress}:{@code destinationPort}, initial sequence numbers drawn
     * from {@code seed}.
     */
    static FrameFloodGenerator syns(long sourceMac, int sourceAddress, long destinationMac, int destinationAddress,
                                    int destinationPort, int frameCount, long seed) {
        final FrameFloodGenerator generator = new FrameFloodGenerator(frameCount, SYN_FRAME_LENGTH);
        final SplittableRandom random = new SplittableRandom(seed);
        final TcpHeader tcp = new TcpHeader();
        for (int i = 0; i < frameCount; i++) {
            final long l4 = generator.writeIpv4(i, sourceMac, sourceAddress, destinationMac, destinationAddress,
                IpProtocol.TCP, TcpHeader.MIN_LENGTH);
            tcp.wrap(generator.frames, l4, TcpHeader.MIN_LENGTH)
                .write(FIRST_SOURCE_PORT + i, destinationPort, random.nextInt(), 0, TcpHeader.MIN_LENGTH, TcpFlags.SYN, WINDOW);
            TcpRepr.fillChecksum(tcp, sourceAddress, destinationAddress, TcpHeader.MIN_LENGTH);
        }
        return generator;
    }

    /**
     * {@code frameCount} UDP datagrams of {@code payloadLength} bytes (at least 4: the frame's index, big-endian,
     * then zeros) from {@code sourceMac}/{@code sourceAddress} (ports {@value #FIRST_SOURCE_PORT} up) to
     * {@code destinationMac}/{@code destinationAddress}:{@code destinationPort}.
     */
    static FrameFloodGenerator datagrams(long sourceMac, int sourceAddress, long destinationMac, int destinationAddress,
                                         int destinationPort, int frameCount, int payloadLength) {
        if (payloadLength < 4 || payloadLength > MAX_DATAGRAM_PAYLOAD) {
            throw new IllegalArgumentException("payload of " + payloadLength + " bytes outside 4.." + MAX_DATAGRAM_PAYLOAD);
        }
        final int udpLength = UdpHeader.LENGTH + payloadLength;
        final FrameFloodGenerator generator = new FrameFloodGenerator(frameCount,
            EthernetHeader.LENGTH + Ipv4Header.MIN_LENGTH + udpLength);
        final UdpHeader udp = new UdpHeader();
        for (int i = 0; i < frameCount; i++) {
            final long l4 = generator.writeIpv4(i, sourceMac, sourceAddress, destinationMac, destinationAddress,
                IpProtocol.UDP, udpLength);
            generator.frames.set(INDEX, l4 + UdpHeader.LENGTH, i);
            udp.wrap(generator.frames, l4, udpLength).sourcePort(FIRST_SOURCE_PORT + i).destinationPort(destinationPort)
                .length(udpLength).checksum(0);
            final int checksum = InternetChecksum.finish(InternetChecksum.add(
                InternetChecksum.pseudoHeader(sourceAddress, destinationAddress, IpProtocol.UDP, udpLength),
                generator.frames, l4, udpLength));
            udp.checksum(checksum == 0 ? 0xffff : checksum); // RFC 768: a computed 0 is sent as all ones
        }
        return generator;
    }

    /** Writes frame {@code index}'s Ethernet and IPv4 headers; returns where its transport header starts. */
    private long writeIpv4(int index, long sourceMac, int sourceAddress, long destinationMac, int destinationAddress,
                           int protocol, int transportLength) {
        final long base = (long) index * stride;
        ethernet.wrap(frames, base, frameLength).destination(destinationMac).source(sourceMac)
            .etherType(EtherType.IPV4);
        ip.wrap(frames, base + EthernetHeader.LENGTH, frameLength - EthernetHeader.LENGTH)
            .write(0, Ipv4Header.MIN_LENGTH + transportLength, index, Ipv4Header.FLAG_DONT_FRAGMENT, TTL, protocol,
                sourceAddress, destinationAddress);
        return base + EthernetHeader.LENGTH + Ipv4Header.MIN_LENGTH;
    }

    int frameCount() {
        return frameCount;
    }

    /** Frame {@code index} of the set, in place (for checks). */
    MemorySegment frame(int index) {
        return frames.asSlice((long) index * stride, frameLength);
    }

    int frameLength() {
        return frameLength;
    }

    /**
     * Sends the frames through {@code link} until {@code maxFrames} were taken, {@code maxNs} passed or {@link #stop()}:
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
            MemorySegment.copy(frames, (long) next * stride, tx.segment(), tx.offset(), frameLength);
            tx.length(frameLength);
            link.commit(tx);
            next = next + 1 == frameCount ? 0 : next + 1;
            committed++;
        }
        return committed;
    }

    /** A handler that takes received frames and does nothing with them: for draining a link. */
    static final FrameHandler IGNORE = (segment, offset, length, flags) -> { };

    /**
     * Hands what {@code link} receives for {@code nanos} to {@code handler} (echoes still on their way, or a count's
     * stragglers), sleeping a millisecond whenever nothing came.
     */
    static void receiveFor(Link link, FrameHandler handler, long nanos) {
        final long end = System.nanoTime() + nanos;
        while (System.nanoTime() - end < 0) {
            if (link.receive(handler, MAX_REPLIES_PER_POLL) == 0) {
                VethBenchmark.sleep(1);
            }
        }
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
     * What the two counters share: a received frame goes to {@link #onTransport} when it is an unfragmented IPv4
     * packet of one protocol from one address, which counts it if it matches. Owned by the thread that receives; the
     * count may be read from any thread.
     */
    private abstract static class TransportCounter implements FrameHandler {
        private final EthernetHeader ethernet = new EthernetHeader();
        private final Ipv4Header ip = new Ipv4Header();
        private final int protocol;
        private final int source;
        private volatile long count;

        TransportCounter(int protocol, int source) {
            this.protocol = protocol;
            this.source = source;
        }

        @Override
        public final void onFrame(MemorySegment segment, long offset, int length, int rxFlags) {
            if (ethernet.wrap(segment, offset, length).check() != EthernetHeader.OK || ethernet.etherType() != EtherType.IPV4) {
                return;
            }
            final int header = ethernet.headerLength();
            // The checksum is not verified: a veth peer hands over partial checksums (see AfPacketLink).
            if (ip.wrap(segment, offset + header, length - header).check(false) == Ipv4Header.OK
                && ip.protocol() == protocol && ip.source() == source && !ip.isFragment()) {
                onTransport(segment, offset + header + ip.headerLength(), ip.totalLength() - ip.headerLength());
            }
        }

        /** The transport header and payload of a packet that matched, {@code length} bytes at {@code offset}. */
        abstract void onTransport(MemorySegment segment, long offset, int length);

        final void countOne() {
            count = count + 1; // one writer
        }

        final long count() {
            return count;
        }
    }

    /**
     * Counts received IPv4 TCP segments from one address whose SYN, ACK, RST and FIN bits are exactly
     * {@code flags} (SYN-ACKs answering the flood, or the flood's SYNs on the flooded side). Owned by the thread
     * that receives; the count may be read from any thread.
     */
    static final class SegmentCounter extends TransportCounter {
        private static final int FLAGS_COUNTED = TcpFlags.SYN | TcpFlags.ACK | TcpFlags.RST | TcpFlags.FIN;
        private final TcpHeader tcp = new TcpHeader();
        private final int flags;

        SegmentCounter(int source, int flags) {
            super(IpProtocol.TCP, source);
            this.flags = flags;
        }

        @Override
        void onTransport(MemorySegment segment, long offset, int length) {
            if (tcp.wrap(segment, offset, length).check() == TcpHeader.OK && (tcp.flags() & FLAGS_COUNTED) == flags) {
                countOne();
            }
        }
    }

    /**
     * Counts received IPv4 UDP datagrams from one address and port (the echoes of a {@link #datagrams} flood) and the
     * bytes of their payloads. Owned by the thread that receives; the counts may be read from any thread.
     */
    static final class DatagramCounter extends TransportCounter {
        private final UdpHeader udp = new UdpHeader();
        private final int sourcePort;
        private volatile long payloadBytes;

        DatagramCounter(int source, int sourcePort) {
            super(IpProtocol.UDP, source);
            this.sourcePort = sourcePort;
        }

        long payloadBytes() {
            return payloadBytes;
        }

        @Override
        void onTransport(MemorySegment segment, long offset, int length) {
            if (udp.wrap(segment, offset, length).check() == UdpHeader.OK && udp.sourcePort() == sourcePort) {
                countOne();
                payloadBytes = payloadBytes + udp.length() - UdpHeader.LENGTH;
            }
        }
    }
}
