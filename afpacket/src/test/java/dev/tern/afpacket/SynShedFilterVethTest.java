package dev.tern.afpacket;

import dev.tern.core.net.Ipv4Address;
import dev.tern.core.testing.ExternalTools;
import dev.tern.testkit.netns.BackgroundCommand;
import dev.tern.testkit.netns.NetnsHarness;
import dev.tern.testkit.netns.NetnsTesting;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.function.Predicate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The load-shedding filter and the pressure signal of {@link AfPacketLink} against the kernel over veth (load
 * shedding, so that a SYN flood cannot starve established connections): with {@link AfPacketLink#shedUnsolicitedSyns} on, the kernel keeps about seven in eight SYNs from the ring
 * and passes everything else; off, every SYN arrives again; {@link AfPacketLink#receivePressure()} says when half the
 * ring waits. The peer's frames come from hping3 and ping. Needs root; skipped otherwise (failed under CI).
 */
class SynShedFilterVethTest {
    private static final Duration SETTLE = Duration.ofSeconds(2);
    private static final int TCP_FLAGS = 14 + 20 + 13;

    private NetnsHarness net;

    @AfterEach
    void cleanUp() {
        if (net != null) {
            net.close();
        }
    }

    private static Predicate<Receiver.Frame> tcpWithFlags(int flags) {
        return f -> Packets.isIpv4(f.bytes(), Packets.IP_TCP) && f.length() > TCP_FLAGS
            && (Packets.u8(f.bytes(), TCP_FLAGS) & 0x17) == flags;
    }

    /** hping3 from the peer to Tern's address: {@code count} TCP segments with {@code flag} (-S, -A), 1 ms apart. */
    private void hping(String hping3, String flag, int count) {
        net.peerExec(Duration.ofSeconds(30), hping3, "-q", flag, "-p", "80", "-c", Integer.toString(count), "-i", "u1000",
            NetnsHarness.TERN_ADDRESS);
    }

    @Test
    void whileSheddingMostSynsStayOutAndEverythingElseComesInAndAfterwardsEverySynComesIn() {
        net = NetnsTesting.harness();
        final String hping3 = ExternalTools.require("hping3", "hping3").toString();
        // A frame ring of 2048 slots: every frame the peer sends waits there until the test reads (a block ring would
        // retire a block per sparse frame on its 1 ms timer and hold only as many frames as it has blocks).
        try (AfPacketLink link = net.openTernLink(AfPacketLink::open, AfPacketOptions.defaults().rxFrameRing(2048))) {
            net.peerNeighbour(NetnsHarness.TERN_ADDRESS, link.macAddress()); // no ARP needed by the peer
            final Receiver receiver = new Receiver(link);
            assertTrue(link.shedUnsolicitedSyns(true));
            assertTrue(link.shedUnsolicitedSyns(true), "asking again changes nothing");

            hping(hping3, "-S", 400);
            hping(hping3, "-A", 50);
            final BackgroundCommand ping = net.startInPeer("ping", "-c", "5", "-i", "0.2", "-W", "1", NetnsHarness.TERN_ADDRESS);
            ping.awaitExit(Duration.ofSeconds(10));
            final List<Receiver.Frame> seen = receiver.collect(f -> true, SETTLE);
            final long syns = seen.stream().filter(tcpWithFlags(0x02)).count();
            final long acks = seen.stream().filter(tcpWithFlags(0x10)).count();
            final long echoes = seen.stream().filter(f -> Packets.isIpv4(f.bytes(), Packets.IP_ICMP)).count();
            // One in eight of 400 passes: 50 expected, binomial standard deviation 6.6; the bounds are 5 of those.
            assertTrue(syns >= 17 && syns <= 83, "SYNs let through while shedding: " + syns + " of 400");
            assertEquals(50, acks, "every ACK-only segment arrives");
            assertEquals(5, echoes, "every echo request arrives");

            assertTrue(link.shedUnsolicitedSyns(false));
            hping(hping3, "-S", 100);
            final long after = receiver.collect(tcpWithFlags(0x02), SETTLE).size();
            assertEquals(100, after, "with the filter off every SYN arrives");
        }
    }

    /**
     * IPv6 SYNs (TCP in the fixed header) are shed at random as IPv4's are, and IPv6 ACKs all arrive; shedding by source
     * alone keeps none out (the list holds IPv4 sources). The peer's frames come from a packet socket.
     */
    @Test
    void whileSheddingAtRandomMostIpv6SynsStayOut() {
        net = NetnsTesting.harness();
        try (AfPacketLink link = net.openTernLink(AfPacketLink::open, AfPacketOptions.defaults().rxFrameRing(2048))) {
            final Receiver receiver = new Receiver(link);
            final byte[] tern = java.util.HexFormat.of().parseHex("20010db8000000000000000000000002");
            final byte[] peer = java.util.HexFormat.of().parseHex("20010db8000000000000000000000001");
            final byte[] syn = dev.tern.testkit.netns.Ipv6Segments.frame(link.macAddress(), net.peerMac(), tern, peer,
                40000, 80, 0x02);
            final byte[] ack = dev.tern.testkit.netns.Ipv6Segments.frame(link.macAddress(), net.peerMac(), tern, peer,
                40000, 80, 0x10);
            final Predicate<Receiver.Frame> ipv6Tcp = f -> f.length() > 14 + 40 + 13
                && Packets.u8(f.bytes(), 12) == 0x86 && Packets.u8(f.bytes(), 13) == 0xDD
                && Packets.u8(f.bytes(), 14 + 6) == 6;
            final Predicate<Receiver.Frame> synOnly = ipv6Tcp.and(f -> Packets.u8(f.bytes(), 14 + 40 + 13) == 0x02);
            final Predicate<Receiver.Frame> ackOnly = ipv6Tcp.and(f -> Packets.u8(f.bytes(), 14 + 40 + 13) == 0x10);

            assertTrue(link.shedUnsolicitedSyns(true));
            net.peerSendFrames(syn, 400, 1000);
            net.peerSendFrames(ack, 50, 1000);
            List<Receiver.Frame> seen = receiver.collect(f -> true, SETTLE);
            final long syns = seen.stream().filter(synOnly).count();
            assertTrue(syns >= 17 && syns <= 83, "IPv6 SYNs let through while shedding: " + syns + " of 400");
            assertEquals(50, seen.stream().filter(ackOnly).count(), "every IPv6 ACK arrives");

            assertTrue(link.shedUnsolicitedSyns(false));
            assertTrue(link.shedSynsFrom(new int[] {Ipv4Address.parse(NetnsHarness.PEER_ADDRESS)}, 1));
            net.peerSendFrames(syn, 100, 1000);
            assertEquals(100, receiver.collect(synOnly, SETTLE).size(), "by IPv4 source only: every IPv6 SYN arrives");
            assertTrue(link.shedSynsFrom(new int[0], 0));
        }
    }

    /** hping3 SYNs to Tern's address from {@code source} (the peer's own, or one it claims: same veth). */
    private void hpingSynsFrom(String hping3, String source, int count) {
        net.peerExec(Duration.ofSeconds(30), hping3, "-q", "-S", "-a", source, "-p", "80", "-c", Integer.toString(count),
            "-i", "u1000", NetnsHarness.TERN_ADDRESS);
    }

    private static Predicate<Receiver.Frame> from(String source) {
        final byte[] address = java.net.InetAddress.ofLiteral(source).getAddress();
        return f -> f.length() > 14 + 16 && Arrays.equals(f.bytes(), 14 + 12, 14 + 16, address, 0, 4);
    }

    /**
     * Shedding by source ({@link AfPacketLink#shedSynsFrom}): every SYN from a listed source stays out and every SYN
     * from another arrives; with the random filter on as well, other sources lose seven in eight; off, all arrive.
     */
    @Test
    void sheddingBySourceKeepsOutTheListedSourcesSynsOnly() {
        net = NetnsTesting.harness();
        final String hping3 = ExternalTools.require("hping3", "hping3").toString();
        final String other = "198.18.0.77";
        try (AfPacketLink link = net.openTernLink(AfPacketLink::open, AfPacketOptions.defaults().rxFrameRing(2048))) {
            net.peerNeighbour(NetnsHarness.TERN_ADDRESS, link.macAddress());
            final Receiver receiver = new Receiver(link);
            final int[] flooder = {Ipv4Address.parse(NetnsHarness.PEER_ADDRESS)};
            assertTrue(link.shedSynsFrom(flooder, 1));
            hpingSynsFrom(hping3, NetnsHarness.PEER_ADDRESS, 200);
            hpingSynsFrom(hping3, other, 100);
            hping(hping3, "-A", 50);
            List<Receiver.Frame> seen = receiver.collect(f -> true, SETTLE);
            assertEquals(0, seen.stream().filter(tcpWithFlags(0x02).and(from(NetnsHarness.PEER_ADDRESS))).count(),
                "no SYN from the listed source");
            assertEquals(100, seen.stream().filter(tcpWithFlags(0x02).and(from(other))).count(), "every other SYN");
            assertEquals(50, seen.stream().filter(tcpWithFlags(0x10)).count(), "the listed source's ACKs arrive");

            assertTrue(link.shedUnsolicitedSyns(true));
            hpingSynsFrom(hping3, NetnsHarness.PEER_ADDRESS, 100);
            hpingSynsFrom(hping3, other, 400);
            seen = receiver.collect(f -> true, SETTLE);
            assertEquals(0, seen.stream().filter(tcpWithFlags(0x02).and(from(NetnsHarness.PEER_ADDRESS))).count());
            final long others = seen.stream().filter(tcpWithFlags(0x02).and(from(other))).count();
            assertTrue(others >= 17 && others <= 83, "one in eight of the others' SYNs: " + others + " of 400");

            assertTrue(link.shedSynsFrom(flooder, 0));
            assertTrue(link.shedUnsolicitedSyns(false));
            hpingSynsFrom(hping3, NetnsHarness.PEER_ADDRESS, 100);
            assertEquals(100, receiver.collect(tcpWithFlags(0x02), SETTLE).size(), "off: every SYN arrives");
        }
    }

    @Test
    void receivePressureWhenHalfTheRingWaits() {
        net = NetnsTesting.harness();
        // A frame ring of 8 slots (4 blocks of two 2048-byte slots): pressure at 4 waiting frames.
        try (AfPacketLink link = net.openTernLink(AfPacketLink::open, AfPacketOptions.defaults().rxBlocks(4096, 4).rxFrameRing(2048))) {
            net.peerNeighbour(NetnsHarness.TERN_ADDRESS, link.macAddress());
            assertFalse(link.receivePressure(), "an empty ring");
            net.peerExec(Duration.ofSeconds(10), "ping", "-c", "2", "-i", "0.2", "-W", "1", NetnsHarness.TERN_ADDRESS);
            assertFalse(link.receivePressure(), "two frames of eight wait");
            net.peerExec(Duration.ofSeconds(10), "ping", "-c", "3", "-i", "0.2", "-W", "1", NetnsHarness.TERN_ADDRESS);
            assertTrue(link.receivePressure(), "five frames of eight wait");
            final Receiver receiver = new Receiver(link);
            link.receive(receiver, 256);
            assertEquals(5, receiver.frames().size());
            assertFalse(link.receivePressure(), "drained");
        }
    }
}
