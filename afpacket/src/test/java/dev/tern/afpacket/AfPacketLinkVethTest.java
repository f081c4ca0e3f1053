package dev.tern.afpacket;

import dev.tern.afpacket.netns.BackgroundCommand;
import dev.tern.afpacket.netns.NetnsHarness;
import dev.tern.ethernet.link.Offloads;
import dev.tern.ethernet.link.TxFrame;
import dev.tern.ethernet.wire.MacAddress;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;

import static dev.tern.afpacket.netns.NetnsHarness.PEER_IPV4;
import static dev.tern.afpacket.netns.NetnsHarness.TERN_IPV4;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * AfPacketLink against a real kernel over a veth pair between two namespaces: the kernel peer (198.18.0.1) talks to
 * frames Tern's side builds by hand (198.18.0.2). Needs root; skipped otherwise (failed under CI).
 */
class AfPacketLinkVethTest {
    private static final Duration WAIT = Duration.ofSeconds(5);
    private static final long GROUP_MAC = 0x0100_5E01_0203L;

    private final TxFrame tx = new TxFrame();
    private NetnsHarness net;

    @AfterEach
    void cleanUp() {
        if (net != null) {
            net.close();
        }
    }

    @Test
    void reportsTheInterfacesMtuAndMacAndNoOffloadsWithoutVnetHeader() {
        net = NetnsTesting.harness(NetnsHarness.Options.defaults().mtu(1400));
        try (AfPacketLink link = net.openTernLink(AfPacketOptions.defaults())) {
            assertEquals("afpacket:tern0", link.name());
            assertEquals(1400, link.mtu());
            assertEquals(net.ternMac(), link.macAddress());
            assertEquals(net.ternMac(), link.interfaceMac());
            assertEquals(0, link.offloads());
            assertEquals(1400 + 18, link.transmitCapacity());
            assertEquals(256, link.transmitSlots());
        }
    }

    @Test
    void receivesTheKernelPeersArpRequestForTernsAddress() {
        net = NetnsTesting.harness();
        try (AfPacketLink link = net.openTernLink(AfPacketOptions.defaults())) {
            final Receiver receiver = new Receiver(link);
            final BackgroundCommand ping = net.startInPeer("ping", "-c", "1", "-W", "1", NetnsHarness.TERN_ADDRESS);
            final byte[] arp = receiver.await(f -> Packets.u16(f.bytes(), 12) == Packets.ETHERTYPE_ARP, WAIT, "ARP request").bytes();
            ping.stop();

            assertEquals(MacAddress.BROADCAST, Packets.u48(arp, 0), "to broadcast");
            assertEquals(net.peerMac(), Packets.u48(arp, 6), "from the peer");
            assertEquals(1, Packets.u16(arp, 14), "hardware type Ethernet");
            assertEquals(Packets.ETHERTYPE_IPV4, Packets.u16(arp, 16), "protocol type IPv4");
            assertEquals(6, Packets.u8(arp, 18));
            assertEquals(4, Packets.u8(arp, 19));
            assertEquals(1, Packets.u16(arp, 20), "operation request");
            assertEquals(net.peerMac(), Packets.u48(arp, 22), "sender hardware address");
            assertEquals(PEER_IPV4, Packets.i32(arp, 28), "sender protocol address");
            assertEquals(TERN_IPV4, Packets.i32(arp, 38), "target protocol address");
            assertTrue(arp.length >= 42);
            assertEquals(1, link.stats().rxFrames() >= 1 ? 1 : 0);
        }
    }

    @Test
    void kernelPingsTernAndAnswersTernsPingWhenTheLinkSpeaksArpAndIcmpByHand() {
        net = NetnsTesting.harness();
        try (AfPacketLink link = net.openTernLink(AfPacketOptions.defaults())) {
            final Receiver receiver = new Receiver(link);
            final BackgroundCommand ping = net.startInPeer("ping", "-c", "1", "-W", "5", NetnsHarness.TERN_ADDRESS);

            receiver.await(f -> Packets.u16(f.bytes(), 12) == Packets.ETHERTYPE_ARP && Packets.u16(f.bytes(), 20) == 1, WAIT, "ARP request");
            send(link, length -> Packets.arp(tx.segment(), tx.offset(), 2, link.macAddress(), TERN_IPV4, net.peerMac(), PEER_IPV4, net.peerMac()));

            final byte[] request = receiver.await(f -> Packets.isIpv4(f.bytes(), Packets.IP_ICMP) && Packets.u8(f.bytes(), 34) == 8,
                WAIT, "ICMP echo request from the kernel").bytes();
            assertEquals(link.macAddress(), Packets.u48(request, 0), "the kernel learned Tern's MAC from the ARP reply");
            final byte[] payload = Arrays.copyOfRange(request, 42, request.length);
            send(link, length -> Packets.icmpEcho(tx.segment(), tx.offset(), link.macAddress(), net.peerMac(), TERN_IPV4, PEER_IPV4,
                0, Packets.u16(request, 38), Packets.u16(request, 40), payload));
            assertEquals(0, ping.awaitExit(WAIT), "the kernel's ping got its reply: " + ping.stdout());
            assertTrue(ping.stdout().contains("1 received"), ping.stdout());

            final byte[] ours = "tern-afpacket-echo".getBytes(StandardCharsets.US_ASCII);
            send(link, length -> Packets.icmpEcho(tx.segment(), tx.offset(), link.macAddress(), net.peerMac(), TERN_IPV4, PEER_IPV4,
                8, 0x7E57, 1, ours));
            final byte[] reply = receiver.await(f -> Packets.isIpv4(f.bytes(), Packets.IP_ICMP) && Packets.u8(f.bytes(), 34) == 0,
                WAIT, "ICMP echo reply from the kernel").bytes();
            assertEquals(link.macAddress(), Packets.u48(reply, 0));
            assertEquals(net.peerMac(), Packets.u48(reply, 6));
            assertEquals(PEER_IPV4, Packets.i32(reply, 26));
            assertEquals(TERN_IPV4, Packets.i32(reply, 30));
            assertEquals(0x7E57, Packets.u16(reply, 38), "identifier echoed");
            assertEquals(1, Packets.u16(reply, 40), "sequence echoed");
            assertArrayEquals(ours, Arrays.copyOfRange(reply, 42, 42 + ours.length), "payload echoed");
            assertTrue(Packets.ipv4HeaderChecksumValid(reply));

            final AfPacketStats stats = link.stats();
            assertEquals(3, stats.txFrames());
            assertEquals(3, stats.txSendCalls());
            assertEquals(0, stats.kernelDrops());
        }
    }

    /** Frame writer for {@link #send}: writes at {@code tx} and returns the length. */
    private interface FrameWriter {
        int write(int capacity);
    }

    private void send(AfPacketLink link, FrameWriter writer) {
        assertTrue(link.claim(tx));
        tx.length(writer.write(tx.capacity()));
        link.commit(tx);
        assertEquals(1, link.flush());
    }
}
