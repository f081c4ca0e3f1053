package dev.tern.conformance.bench;

import dev.tern.afpacket.AfPacketLink;
import dev.tern.afpacket.AfPacketOptions;
import dev.tern.core.checksum.InternetChecksum;
import dev.tern.core.testing.Allocations;
import dev.tern.core.testing.ExternalTools;
import dev.tern.ethernet.wire.EtherType;
import dev.tern.ethernet.wire.EthernetHeader;
import dev.tern.ipv4.wire.IpProtocol;
import dev.tern.ipv4.wire.Ipv4Header;
import dev.tern.ipv4.wire.Ipv4Repr;
import dev.tern.tcp.wire.TcpFlags;
import dev.tern.tcp.wire.TcpHeader;
import dev.tern.testkit.netns.NetnsHarness;
import dev.tern.udp.wire.UdpHeader;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.DatagramChannel;
import java.time.Duration;
import java.util.HashSet;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The Java floods of the veth benchmark: the SYN flood's frames are SYNs the wire checks accept, with valid checksums
 * and a source port each, and so are the datagram flood's UDP datagrams; over a veth pair a paced run delivers every
 * frame the link took at about the asked rate, a kernel echo server answers every datagram of a paced run and the
 * counter counts the echoes, and a run allocates nothing per frame. The veth tests need root; skipped otherwise
 * (failed under CI).
 */
class FrameFloodGeneratorTest {
    private static final long PEER_MAC = 0x02_00_00_00_00_01L;
    private static final long TERN_MAC = 0x02_00_00_00_00_02L;
    private static final int PORT = 9;
    private static final long SECOND_NS = 1_000_000_000L;

    @Test
    void everyFrameIsASynWithValidChecksumsAndAPortOfItsOwn() {
        try (FrameFloodGenerator generator = FrameFloodGenerator.syns(PEER_MAC, NetnsHarness.PEER_IPV4, TERN_MAC,
                 NetnsHarness.TERN_IPV4, PORT, 1000, 7)) {
            final EthernetHeader ethernet = new EthernetHeader();
            final Ipv4Header ip = new Ipv4Header();
            final TcpHeader tcp = new TcpHeader();
            final Set<Integer> ports = new HashSet<>();
            final Set<Integer> sequences = new HashSet<>();
            for (int i = 0; i < generator.frameCount(); i++) {
                final MemorySegment frame = generator.frame(i);
                assertEquals(EthernetHeader.OK, ethernet.wrap(frame, 0, FrameFloodGenerator.SYN_FRAME_LENGTH).check());
                assertEquals(TERN_MAC, ethernet.destination());
                assertEquals(PEER_MAC, ethernet.source());
                assertEquals(EtherType.IPV4, ethernet.etherType());
                assertEquals(Ipv4Header.OK, ip.wrap(frame, EthernetHeader.LENGTH, FrameFloodGenerator.SYN_FRAME_LENGTH - EthernetHeader.LENGTH)
                    .check(true), "IPv4 header of frame " + i + " well formed, checksum valid");
                final Ipv4Repr repr = Ipv4Repr.parse(ip);
                assertEquals(NetnsHarness.PEER_IPV4, repr.source());
                assertEquals(NetnsHarness.TERN_IPV4, repr.destination());
                assertEquals(IpProtocol.TCP, repr.protocol());
                assertEquals(Ipv4Header.MIN_LENGTH + TcpHeader.MIN_LENGTH, ip.totalLength());
                tcp.wrap(frame, EthernetHeader.LENGTH + Ipv4Header.MIN_LENGTH, TcpHeader.MIN_LENGTH);
                assertEquals(TcpHeader.OK, tcp.check());
                assertTrue(tcp.checksumValid(NetnsHarness.PEER_IPV4, NetnsHarness.TERN_IPV4), "TCP checksum of frame " + i);
                assertEquals(TcpFlags.SYN, tcp.flags());
                assertEquals(PORT, tcp.destinationPort());
                assertEquals(0, tcp.acknowledgment());
                ports.add(tcp.sourcePort());
                sequences.add(tcp.sequence());
            }
            assertEquals(1000, ports.size(), "a source port per frame");
            assertTrue(sequences.size() > 990, "sequence numbers vary: " + sequences.size() + " distinct of 1000");
        }
    }

    @Test
    void everyDatagramHasValidChecksumsItsIndexAndAPortOfItsOwn() {
        try (FrameFloodGenerator generator = FrameFloodGenerator.datagrams(PEER_MAC, NetnsHarness.PEER_IPV4, TERN_MAC,
                 NetnsHarness.TERN_IPV4, 7, 1000, 64)) {
            final EthernetHeader ethernet = new EthernetHeader();
            final Ipv4Header ip = new Ipv4Header();
            final UdpHeader udp = new UdpHeader();
            final Set<Integer> ports = new HashSet<>();
            assertEquals(EthernetHeader.LENGTH + Ipv4Header.MIN_LENGTH + UdpHeader.LENGTH + 64, generator.frameLength());
            for (int i = 0; i < generator.frameCount(); i++) {
                final MemorySegment frame = generator.frame(i);
                assertEquals(EthernetHeader.OK, ethernet.wrap(frame, 0, generator.frameLength()).check());
                assertEquals(TERN_MAC, ethernet.destination());
                assertEquals(PEER_MAC, ethernet.source());
                assertEquals(Ipv4Header.OK, ip.wrap(frame, EthernetHeader.LENGTH, generator.frameLength() - EthernetHeader.LENGTH)
                    .check(true), "IPv4 header of frame " + i + " well formed, checksum valid");
                final Ipv4Repr repr = Ipv4Repr.parse(ip);
                assertEquals(NetnsHarness.PEER_IPV4, repr.source());
                assertEquals(NetnsHarness.TERN_IPV4, repr.destination());
                assertEquals(IpProtocol.UDP, repr.protocol());
                assertEquals(Ipv4Header.MIN_LENGTH + UdpHeader.LENGTH + 64, ip.totalLength());
                final long l4 = EthernetHeader.LENGTH + Ipv4Header.MIN_LENGTH;
                udp.wrap(frame, l4, UdpHeader.LENGTH + 64);
                assertEquals(UdpHeader.OK, udp.check());
                assertEquals(7, udp.destinationPort());
                assertEquals(UdpHeader.LENGTH + 64, udp.length());
                assertTrue(InternetChecksum.verifies(InternetChecksum.add(InternetChecksum.pseudoHeader(NetnsHarness.PEER_IPV4,
                    NetnsHarness.TERN_IPV4, IpProtocol.UDP, UdpHeader.LENGTH + 64), frame, l4, UdpHeader.LENGTH + 64)),
                    "UDP checksum of frame " + i + " verifies");
                assertEquals(i, frame.get(ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN), l4 + UdpHeader.LENGTH));
                ports.add(udp.sourcePort());
            }
            assertEquals(1000, ports.size(), "a source port per datagram");
        }
    }

    @Test
    void aKernelEchoServerAnswersEveryDatagramOfAPacedFloodAndTheCounterCountsTheEchoes() throws Exception {
        assumeNetns();
        try (NetnsHarness net = NetnsHarness.create()) {
            net.ternExec(Duration.ofSeconds(10), "ip", "address", "add", NetnsHarness.TERN_ADDRESS + "/24", "dev",
                NetnsHarness.TERN_INTERFACE).orThrow();
            final DatagramChannel server = net.ternNamespace().call(() -> {
                try {
                    return DatagramChannel.open().bind(new InetSocketAddress(NetnsHarness.TERN_ADDRESS, 7));
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
            final Thread echo = Thread.ofPlatform().start(() -> {
                final ByteBuffer buffer = ByteBuffer.allocate(2048);
                try (server) {
                    while (true) {
                        final SocketAddress from = server.receive(buffer.clear());
                        server.send(buffer.flip(), from);
                    }
                } catch (IOException e) {
                    // closed: done
                }
            });
            try (AfPacketLink peer = net.openPeerLink(AfPacketLink::open, AfPacketOptions.defaults().rxBlocks(256 * 1024, 64));
                 FrameFloodGenerator generator = FrameFloodGenerator.datagrams(peer.macAddress(), NetnsHarness.PEER_IPV4,
                     net.ternMac(), NetnsHarness.TERN_IPV4, 7, 1000, 64)) {
                final FrameFloodGenerator.DatagramCounter echoes = new FrameFloodGenerator.DatagramCounter(
                    NetnsHarness.TERN_IPV4, 7);
                // The first datagrams wait for the kernel's ARP query of the peer's address: one at a time until one
                // is echoed, then the stragglers' echoes are let in before the count starts.
                final long deadline = System.nanoTime() + 10 * SECOND_NS;
                while (echoes.count() == 0 && System.nanoTime() - deadline < 0) {
                    generator.run(peer, 0, 1, SECOND_NS, null);
                    FrameFloodGenerator.receiveFor(peer, echoes, 100_000_000L);
                }
                FrameFloodGenerator.receiveFor(peer, echoes, 200_000_000L);
                final long before = echoes.count();
                // 2,000 a second: the echo loop, a Java thread just started, lags behind now and then, and the
                // socket's default buffer holds only a few hundred small datagrams (it dropped 400 of 2,000 at
                // 20,000 a second: RcvbufErrors).
                final FrameFloodGenerator.Result result = generator.run(peer, 2_000, 1_000, 10 * SECOND_NS, echoes);
                FrameFloodGenerator.receiveFor(peer, echoes, 200_000_000L);

                assertEquals(1_000, result.frames(), "datagrams the link took");
                assertEquals(1_000, echoes.count() - before, "echoes counted; the server's kernel: " + net.ternExec(
                    Duration.ofSeconds(10), "grep", "^Udp:", "/proc/net/snmp").stdout() + ", the counting ring's drops "
                    + peer.stats().kernelDrops());
                assertEquals(64L * echoes.count(), echoes.payloadBytes(), "64 payload bytes in each echo");
            } finally {
                server.close();
                echo.join(5_000);
            }
        }
    }

    @Test
    void aPacedRunOverVethDeliversEveryFrameTheLinkTookAtAboutTheRate() {
        assumeNetns();
        // A frame ring of 8192 slots holds the whole run (a block ring would retire a block per millisecond on its
        // timer, with a few dozen frames in it, and hold only as many milliseconds as it has blocks).
        try (NetnsHarness net = NetnsHarness.create();
             AfPacketLink tern = net.openTernLink(AfPacketLink::open, AfPacketOptions.defaults().rxBlocks(256 * 1024, 64).rxFrameRing(2048));
             AfPacketLink peer = net.openPeerLink(AfPacketLink::open, AfPacketOptions.defaults());
             FrameFloodGenerator generator = FrameFloodGenerator.syns(peer.macAddress(), NetnsHarness.PEER_IPV4,
                 tern.macAddress(), NetnsHarness.TERN_IPV4, PORT, 4096, 1)) {
            final FrameFloodGenerator.SegmentCounter syns = new FrameFloodGenerator.SegmentCounter(NetnsHarness.PEER_IPV4, TcpFlags.SYN);
            final FrameFloodGenerator.Result result = generator.run(peer, 50_000, 5_000, 10 * SECOND_NS, null);
            final long deadline = System.nanoTime() + 5 * SECOND_NS;
            while (syns.count() < result.frames() && System.nanoTime() - deadline < 0) {
                tern.receive(syns, 256);
            }

            assertEquals(5_000, result.frames(), "frames the link took");
            assertEquals(5_000, syns.count(), "SYNs that reached the other end (kernel drops there: "
                + tern.stats().kernelDrops() + ")");
            // 5,000 frames at 50,000/s: 0.1 s, less one frame's time; not much more on a busy machine.
            assertTrue(result.elapsedNs() >= 99_000_000L && result.elapsedNs() < 2 * SECOND_NS,
                "paced run took " + result.elapsedNs() / 1e6 + " ms");
        }
    }

    @Test
    void aRunAllocatesNothingPerFrame() {
        assumeNetns();
        try (NetnsHarness net = NetnsHarness.create();
             AfPacketLink tern = net.openTernLink(AfPacketLink::open, AfPacketOptions.defaults());
             AfPacketLink peer = net.openPeerLink(AfPacketLink::open, AfPacketOptions.defaults());
             FrameFloodGenerator generator = FrameFloodGenerator.syns(peer.macAddress(), NetnsHarness.PEER_IPV4,
                 tern.macAddress(), NetnsHarness.TERN_IPV4, PORT, FrameFloodGenerator.DEFAULT_FRAMES, 1)) {
            // Enough flushes for C2 to compile the sendto downcall, which allocates below C2 (AfPacketZeroAllocationTest).
            final long perRun = 100_000;
            final long allocated = Allocations.measure(20, 10, () -> generator.run(peer, 0, perRun, 30 * SECOND_NS, null));
            // Each run returns one small Result; a byte per frame would be 1,000,000.
            assertTrue(allocated < 10 * 64, "bytes allocated over " + 10 * perRun + " frames: " + allocated);
            assertTrue(peer.stats().txFrames() >= 30 * perRun, "frames sent: " + peer.stats().txFrames());
        }
    }

    private static void assumeNetns() {
        NetnsHarness.unavailableReason().ifPresent(ExternalTools::skip);
    }
}
