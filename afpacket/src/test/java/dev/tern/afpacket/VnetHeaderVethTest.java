package dev.tern.afpacket;

import dev.tern.core.testing.ExternalTools;
import dev.tern.ethernet.link.Offloads;
import dev.tern.ethernet.link.TxFrame;
import dev.tern.testkit.netns.BackgroundCommand;
import dev.tern.testkit.netns.EthtoolOffloads;
import dev.tern.testkit.netns.NetnsHarness;
import dev.tern.testkit.netns.NetnsTesting;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;

import static dev.tern.testkit.netns.NetnsHarness.PEER_IPV4;
import static dev.tern.testkit.netns.NetnsHarness.TERN_IPV4;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Checksum and segmentation offloads through the virtio-net header ({@code PACKET_VNET_HDR}), checked against the
 * kernel over veth: what a local sender's partial checksums look like on receive, that a checksum the link asked
 * the kernel to complete is valid where the peer verifies it, and that a TSO super-frame is cut into MSS segments.
 */
class VnetHeaderVethTest {
    private static final Duration WAIT = Duration.ofSeconds(5);
    private static final int PORT = 9000;
    /** A UDP listener on the peer that reports the first datagram that passes the kernel's checks. */
    private static final String LISTENER = String.join("\n",
        "import socket",
        "s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)",
        "s.bind(('" + NetnsHarness.PEER_ADDRESS + "', " + PORT + "))",
        "s.settimeout(5)",
        "print('ready', flush=True)",
        "data, source = s.recvfrom(65535)",
        "print(data.decode(), source[0], source[1], flush=True)");

    private final TxFrame tx = new TxFrame();
    private NetnsHarness net;

    @AfterEach
    void cleanUp() {
        if (net != null) {
            net.close();
        }
    }

    private static String python() {
        return ExternalTools.require("python3", "python3").toString();
    }

    /** Sends one UDP datagram from the peer's kernel to Tern's address (optionally as one UDP GSO super-packet). */
    private void peerSendsUdp(int length, int gsoSegmentSize) {
        final String script = "import socket\n"
            + "s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
            + (gsoSegmentSize > 0 ? "s.setsockopt(socket.SOL_UDP, 103, " + gsoSegmentSize + ")\n" : "")
            + "s.sendto(b'u' * " + length + ", ('" + NetnsHarness.TERN_ADDRESS + "', " + PORT + "))\n";
        net.peerExec(WAIT, python(), "-c", script).orThrow();
    }

    private static boolean isUdpToPort(Receiver.Frame frame) {
        return Packets.isIpv4(frame.bytes(), Packets.IP_UDP) && Packets.u16(frame.bytes(), 36) == PORT;
    }

    @Test
    void linkWithVnetHeaderReportsChecksumAndSegmentationOffloads() {
        net = NetnsTesting.harness();
        try (AfPacketLink link = net.openTernLink(AfPacketLink::open, AfPacketOptions.defaults().vnetHeader(true))) {
            assertEquals(Offloads.TX_L4_CHECKSUM | Offloads.TX_TCP_SEGMENTATION | Offloads.RX_CHECKSUM, link.offloads());
            assertTrue(link.transmitCapacity() >= 14 + 4 + 65535, "a 64 KiB TSO super-frame fits: " + link.transmitCapacity());
            assertTrue(link.transmitSlots() >= 64, "at least the default 64 slots: " + link.transmitSlots());
        }
    }

    @Test
    void kernelUdpWithChecksumOffloadArrivesMarkedPartialWithOrWithoutVnetHeader() {
        net = NetnsTesting.harness(NetnsHarness.Options.defaults().offloads(EthtoolOffloads.ALL_ON));
        try (AfPacketLink vnet = net.openTernLink(AfPacketLink::open, AfPacketOptions.defaults().vnetHeader(true));
             AfPacketLink plain = net.openTernLink(AfPacketLink::open, AfPacketOptions.defaults())) {
            net.peerNeighbour(NetnsHarness.TERN_ADDRESS, net.ternMac());
            peerSendsUdp(5, 0);
            for (AfPacketLink link : List.of(vnet, plain)) {
                final Receiver.Frame frame = new Receiver(link).await(VnetHeaderVethTest::isUdpToPort, WAIT, "UDP datagram");
                assertEquals(Offloads.RX_CHECKSUM_PARTIAL, frame.flags(), link + ": NEEDS_CSUM / TP_STATUS_CSUMNOTREADY");
                assertTrue(Packets.l4ChecksumIsPseudoHeaderSum(frame.bytes()), "the field holds only the pseudo-header sum");
            }
        }
    }

    @Test
    void kernelUdpWithSoftwareChecksumArrivesWithoutChecksumClaimsAndVerifies() {
        net = NetnsTesting.harness(NetnsHarness.Options.defaults().ternOffloads(EthtoolOffloads.ALL_ON).peerOffloads(EthtoolOffloads.ALL_OFF));
        try (AfPacketLink link = net.openTernLink(AfPacketLink::open, AfPacketOptions.defaults().vnetHeader(true))) {
            net.peerNeighbour(NetnsHarness.TERN_ADDRESS, net.ternMac());
            peerSendsUdp(5, 0);
            final Receiver.Frame frame = new Receiver(link).await(VnetHeaderVethTest::isUdpToPort, WAIT, "UDP datagram");
            // veth passes CHECKSUM_NONE through (it no longer upgrades it to UNNECESSARY): the stack must verify.
            assertEquals(0, frame.flags(), "neither partial nor verified");
            assertTrue(Packets.l4ChecksumValid(frame.bytes()), "the peer computed a full checksum");
        }
    }

    @Test
    void kernelUdpGsoSuperPacketIsHandedUpAsOneFrameLargerThanTheMtu() {
        net = NetnsTesting.harness(NetnsHarness.Options.defaults().offloads(EthtoolOffloads.ALL_ON));
        try (AfPacketLink vnet = net.openTernLink(AfPacketLink::open, AfPacketOptions.defaults().vnetHeader(true));
             AfPacketLink plain = net.openTernLink(AfPacketLink::open, AfPacketOptions.defaults())) {
            net.peerNeighbour(NetnsHarness.TERN_ADDRESS, net.ternMac());
            peerSendsUdp(3000, 1000);
            for (AfPacketLink link : List.of(vnet, plain)) {
                final Receiver.Frame frame = new Receiver(link).await(VnetHeaderVethTest::isUdpToPort, WAIT, "UDP GSO super-packet");
                assertEquals(14 + 20 + 8 + 3000, frame.length(), link + ": one frame, MTU " + link.mtu());
                assertEquals(Offloads.RX_CHECKSUM_PARTIAL, frame.flags());
            }
        }
    }

    @ParameterizedTest(name = "vnet header {0}")
    @ValueSource(booleans = {true, false})
    void requestedUdpChecksumIsCompletedAndThePeerKernelAcceptsOnlyThatDatagram(boolean vnetHeader) {
        // Checksums computed in software on both ends: the peer verifies what arrives, nothing is trusted.
        net = NetnsTesting.harness(NetnsHarness.Options.defaults().offloads(EthtoolOffloads.ALL_OFF));
        try (AfPacketLink link = net.openTernLink(AfPacketLink::open, AfPacketOptions.defaults().vnetHeader(vnetHeader));
             BackgroundCommand listener = net.startInPeer(python(), "-c", LISTENER)) {
            listener.awaitOutput("ready", WAIT);
            final long errorsBefore = peerUdpCounter("InCsumErrors");

            sendUdp(link, "unfinished", false);
            sendUdp(link, "completed", true);

            assertEquals(0, listener.awaitExit(WAIT), listener.stderr());
            assertEquals("completed " + NetnsHarness.TERN_ADDRESS + " 40000", listener.stdout().strip().lines().toList().getLast(),
                "only the datagram whose checksum the link completed got through");
            assertEquals(errorsBefore + 1, peerUdpCounter("InCsumErrors"), "the other one failed the peer's checksum check");
        }
    }

    private void sendUdp(AfPacketLink link, String text, boolean requestCompletion) {
        assertTrue(link.claim(tx));
        tx.length(Packets.udp(tx.segment(), tx.offset(), link.macAddress(), net.peerMac(), TERN_IPV4, PEER_IPV4, 40000, PORT,
            text.getBytes(StandardCharsets.US_ASCII), Packets.Checksum.PARTIAL));
        if (requestCompletion) {
            tx.requestL4Checksum(Packets.ETH + Packets.IP, 6);
        }
        link.commit(tx);
        assertEquals(1, link.flush());
    }

    private long peerUdpCounter(String name) {
        final List<String> lines = net.peerExec(WAIT, "cat", "/proc/net/snmp").orThrow().stdout().lines()
            .filter(line -> line.startsWith("Udp:")).toList();
        final List<String> names = Arrays.asList(lines.get(0).split("\\s+"));
        return Long.parseLong(lines.get(1).split("\\s+")[names.indexOf(name)]);
    }

    @Test
    void tsoSuperFrameIsCutIntoMssSegmentsWithValidChecksums(@TempDir Path dir) throws Exception {
        final String tcpdump = ExternalTools.require("tcpdump", "tcpdump").toString();
        net = NetnsTesting.harness(NetnsHarness.Options.defaults().ternOffloads(EthtoolOffloads.ALL_OFF));
        final Path capture = dir.resolve("peer.pcap");
        final int mss = 1460;
        final byte[] payload = new byte[3 * mss];
        for (int i = 0; i < payload.length; i++) {
            payload[i] = (byte) (i * 7 + i / 251);
        }
        try (AfPacketLink link = net.openTernLink(AfPacketLink::open, AfPacketOptions.defaults().vnetHeader(true));
             BackgroundCommand dump = net.startInPeer(tcpdump, "-i", NetnsHarness.PEER_INTERFACE, "-n", "-U", "--immediate-mode", "-Z", "root",
                 "-w", capture.toString(), "tcp and src host " + NetnsHarness.TERN_ADDRESS)) {
            dump.awaitOutput("listening on", WAIT);
            final long before = net.peerInterfaceCounter("rx_packets");
            assertTrue(link.claim(tx));
            final int length = Packets.tcp(tx.segment(), tx.offset(), link.macAddress(), net.peerMac(), TERN_IPV4, PEER_IPV4,
                40001, 9, 1000, 1, 0x18, payload, Packets.Checksum.PARTIAL);
            assertEquals(14 + 20 + 20 + 4380, length, "one super-frame, larger than the MTU");
            tx.length(length).requestL4Checksum(Packets.ETH + Packets.IP, 16).requestSegmentation(mss);
            link.commit(tx);
            assertEquals(1, link.flush(), link.stats() + " errno " + link.lastTransmitErrno());
            final long deadline = System.nanoTime() + WAIT.toNanos();
            while (net.peerInterfaceCounter("rx_packets") - before < 3 && deadline - System.nanoTime() > 0) {
                Thread.sleep(20);
            }
            Thread.sleep(100);
            dump.stop();

            final List<byte[]> segments = PcapFile.frames(capture);
            assertEquals(3, segments.size(), "the kernel cut the super-frame into three segments: " + dump.stderr());
            for (int i = 0; i < 3; i++) {
                final byte[] segment = segments.get(i);
                assertEquals(14 + 20 + 20 + mss, segment.length, "segment " + i + " carries one MSS");
                assertEquals(20 + 20 + mss, Packets.u16(segment, 16), "IPv4 total length");
                assertEquals(1000 + i * mss, Packets.i32(segment, 38), "sequence number advances by MSS");
                assertArrayEquals(Arrays.copyOfRange(payload, i * mss, (i + 1) * mss), Arrays.copyOfRange(segment, 54, 54 + mss));
                assertTrue(Packets.ipv4HeaderChecksumValid(segment), "IPv4 header checksum of segment " + i);
                assertTrue(Packets.l4ChecksumValid(segment), "TCP checksum of segment " + i);
            }
            assertEquals(0x10, Packets.u8(segments.get(0), 47), "ACK without PSH on the first segment");
            assertEquals(0x10, Packets.u8(segments.get(1), 47), "ACK without PSH on the second segment");
            assertEquals(0x18, Packets.u8(segments.get(2), 47), "PSH stays on the last segment");
        }
    }

    @Test
    void segmentationIsRefusedWithoutTheVnetHeaderOrWithoutAChecksumRequest() {
        net = NetnsTesting.harness();
        try (AfPacketLink plain = net.openTernLink(AfPacketLink::open, AfPacketOptions.defaults());
             AfPacketLink vnet = net.openTernLink(AfPacketLink::open, AfPacketOptions.defaults().vnetHeader(true))) {
            final byte[] payload = new byte[1000];
            assertTrue(plain.claim(tx));
            tx.length(Packets.tcp(tx.segment(), tx.offset(), plain.macAddress(), net.peerMac(), TERN_IPV4, PEER_IPV4,
                40001, 9, 1, 1, 0x10, payload, Packets.Checksum.PARTIAL)).requestL4Checksum(34, 16).requestSegmentation(500);
            plain.commit(tx);
            assertEquals(1, plain.stats().txRejected());

            assertTrue(vnet.claim(tx));
            tx.length(Packets.tcp(tx.segment(), tx.offset(), vnet.macAddress(), net.peerMac(), TERN_IPV4, PEER_IPV4,
                40001, 9, 1, 1, 0x10, payload, Packets.Checksum.FULL)).requestSegmentation(500);
            vnet.commit(tx);
            assertEquals(1, vnet.stats().txRejected());
            assertEquals(0, plain.flush() + vnet.flush());
        }
    }
}
