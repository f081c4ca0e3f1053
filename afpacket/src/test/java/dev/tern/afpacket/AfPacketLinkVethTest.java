package dev.tern.afpacket;

import dev.tern.core.memory.BigEndian;
import dev.tern.core.testing.WakeChecks;
import dev.tern.ethernet.link.ShardSteering;
import dev.tern.ethernet.link.TxFrame;
import dev.tern.ethernet.wire.MacAddress;
import dev.tern.testkit.netns.BackgroundCommand;
import dev.tern.testkit.netns.NetnsHarness;
import dev.tern.testkit.netns.NetnsTesting;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;

import static dev.tern.testkit.netns.NetnsHarness.PEER_IPV4;
import static dev.tern.testkit.netns.NetnsHarness.TERN_IPV4;
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
        try (AfPacketLink link = net.openTernLink(AfPacketLink::open, AfPacketOptions.defaults())) {
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
        try (AfPacketLink link = net.openTernLink(AfPacketLink::open, AfPacketOptions.defaults())) {
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
            assertTrue(link.stats().rxFrames() >= 1);
        }
    }

    /** With the V3 block ring (0), the V2 frame ring of 2048-byte slots, and of slots sized for the MTU (-2). */
    @ParameterizedTest(name = "receive frame slots {0} (0: block ring, -2: sized for the MTU)")
    @ValueSource(ints = {0, 2048, AfPacketOptions.RX_FRAME_SIZE_MTU})
    void kernelPingsTernAndAnswersTernsPingWhenTheLinkSpeaksArpAndIcmpByHand(int rxFrameSize) {
        net = NetnsTesting.harness();
        try (AfPacketLink link = net.openTernLink(AfPacketLink::open, AfPacketOptions.defaults().rxFrameRing(rxFrameSize))) {
            final Receiver receiver = new Receiver(link);
            final BackgroundCommand ping = net.startInPeer("ping", "-c", "1", "-W", "5", NetnsHarness.TERN_ADDRESS);

            receiver.await(f -> Packets.u16(f.bytes(), 12) == Packets.ETHERTYPE_ARP && Packets.u16(f.bytes(), 20) == 1, WAIT, "ARP request");
            send(link, capacity -> Packets.arp(tx.segment(), tx.offset(), 2, link.macAddress(), TERN_IPV4, net.peerMac(), PEER_IPV4, net.peerMac()));

            final byte[] request = receiver.await(f -> Packets.isIpv4(f.bytes(), Packets.IP_ICMP) && Packets.u8(f.bytes(), 34) == 8,
                WAIT, "ICMP echo request from the kernel").bytes();
            assertEquals(link.macAddress(), Packets.u48(request, 0), "the kernel learned Tern's MAC from the ARP reply");
            final byte[] payload = Arrays.copyOfRange(request, 42, request.length);
            send(link, capacity -> Packets.icmpEcho(tx.segment(), tx.offset(), link.macAddress(), net.peerMac(), TERN_IPV4, PEER_IPV4,
                0, Packets.u16(request, 38), Packets.u16(request, 40), payload));
            assertEquals(0, ping.awaitExit(WAIT), "the kernel's ping got its reply: " + ping.stdout());
            assertTrue(ping.stdout().contains("1 received"), ping.stdout());

            final byte[] ours = "tern-afpacket-echo".getBytes(StandardCharsets.US_ASCII);
            send(link, capacity -> Packets.icmpEcho(tx.segment(), tx.offset(), link.macAddress(), net.peerMac(), TERN_IPV4, PEER_IPV4,
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

    @Test
    void oneFlushHandsAThousandFramesToTheKernelWithOneSendto() {
        net = NetnsTesting.harness();
        try (AfPacketLink link = net.openTernLink(AfPacketLink::open, AfPacketOptions.defaults().txFrameCount(1024));
             AfPacketLink peer = net.openPeerLink(AfPacketLink::open, AfPacketOptions.defaults())) {
            final long before = net.peerInterfaceCounter("rx_packets");
            for (int i = 0; i < 1000; i++) {
                assertTrue(link.claim(tx), "slot " + i);
                Packets.ethernet(tx.segment(), tx.offset(), net.peerMac(), link.macAddress(), Packets.ETHERTYPE_EXPERIMENT);
                BigEndian.i32(tx.segment(), tx.offset() + Packets.ETH, i);
                tx.length(64);
                link.commit(tx);
            }
            assertEquals(1000, link.flush());

            final AfPacketStats stats = link.stats();
            assertEquals(1, stats.txSendCalls(), "one sendto for the whole batch");
            assertEquals(1000, stats.txFrames());
            assertEquals(64_000, stats.txBytes());
            assertEquals(0, stats.txPending());

            final Receiver receiver = new Receiver(peer);
            final List<Receiver.Frame> frames = receiver.collect(f -> Packets.u16(f.bytes(), 12) == Packets.ETHERTYPE_EXPERIMENT, Duration.ofMillis(300));
            assertEquals(1000, frames.size(), "every frame reached the peer's end");
            for (int i = 0; i < 1000; i++) {
                assertEquals(i, Packets.i32(frames.get(i).bytes(), Packets.ETH), "in order");
                assertEquals(64, frames.get(i).length());
            }
            assertEquals(1000, net.peerInterfaceCounter("rx_packets") - before, "the peer kernel counted them");
        }
    }

    @Test
    void claimFailsWhenEverySlotIsCommittedAndSucceedsAgainAfterFlush() {
        net = NetnsTesting.harness();
        try (AfPacketLink link = net.openTernLink(AfPacketLink::open, AfPacketOptions.defaults().txFrameCount(32))) {
            final int slots = link.transmitSlots();
            for (int i = 0; i < slots; i++) {
                assertTrue(link.claim(tx));
                Packets.ethernet(tx.segment(), tx.offset(), net.peerMac(), link.macAddress(), Packets.ETHERTYPE_EXPERIMENT);
                tx.length(60);
                link.commit(tx);
            }
            assertFalse(link.claim(tx), "ring full of unflushed frames");
            assertEquals(1, link.stats().txRingFull());
            assertEquals(slots, link.flush());
            assertTrue(link.claim(tx));
            link.abort(tx);
            assertTrue(link.claim(tx), "an aborted slot is claimed again");
            tx.length(10);
            link.commit(tx);
            assertEquals(1, link.stats().txRejected(), "a runt is refused at commit, not sent");
            assertEquals(0, link.flush());
        }
    }

    @Test
    void aFrameTheKernelRefusesOnEveryFlushIsDroppedAndCountedWithoutBlockingTheRing() {
        net = NetnsTesting.harness();
        // The vnet-header link transmits through the qdisc layer; a FIFO of length 0 refuses everything (ENOBUFS).
        net.ternExec(WAIT, "tc", "qdisc", "add", "dev", NetnsHarness.TERN_INTERFACE, "root", "pfifo", "limit", "0").orThrow();
        try (AfPacketLink link = net.openTernLink(AfPacketLink::open, AfPacketOptions.defaults().vnetHeader(true))) {
            assertTrue(link.claim(tx));
            Packets.ethernet(tx.segment(), tx.offset(), net.peerMac(), link.macAddress(), Packets.ETHERTYPE_EXPERIMENT);
            tx.length(60);
            link.commit(tx);
            for (int i = 0; i < TxRing.MAX_REFUSED_FLUSHES; i++) {
                assertEquals(0, link.flush());
            }
            AfPacketStats stats = link.stats();
            assertEquals(TxRing.MAX_REFUSED_FLUSHES, stats.txBusy(), "each flush was refused and the frame kept");
            assertEquals(1, stats.txPending());
            assertEquals(0, link.flush(), "the flush that lets the kernel skip the given-up frame");
            stats = link.stats();
            assertEquals(1, stats.txDropped());
            assertEquals(0, stats.txPending());
            assertEquals(0, stats.txFrames());

            net.ternExec(WAIT, "tc", "qdisc", "del", "dev", NetnsHarness.TERN_INTERFACE, "root").orThrow();
            assertTrue(link.claim(tx));
            Packets.ethernet(tx.segment(), tx.offset(), net.peerMac(), link.macAddress(), Packets.ETHERTYPE_EXPERIMENT);
            tx.length(60);
            link.commit(tx);
            assertEquals(1, link.flush(), "the ring moves on");
        }
    }

    @Test
    void multicastMembershipIsAddedToTheInterfaceAndReleased() {
        net = NetnsTesting.harness();
        try (AfPacketLink link = net.openTernLink(AfPacketLink::open, AfPacketOptions.defaults());
             AfPacketLink peer = net.openPeerLink(AfPacketLink::open, AfPacketOptions.defaults())) {
            final String group = MacAddress.format(GROUP_MAC);
            assertFalse(ternMulticastAddresses().contains(group));

            link.addMulticast(GROUP_MAC);
            assertTrue(ternMulticastAddresses().contains(group), "the interface now accepts " + group);
            assertTrue(peer.claim(tx));
            Packets.ethernet(tx.segment(), tx.offset(), GROUP_MAC, peer.macAddress(), Packets.ETHERTYPE_EXPERIMENT);
            tx.length(60);
            peer.commit(tx);
            peer.flush();
            new Receiver(link).await(f -> Packets.u48(f.bytes(), 0) == GROUP_MAC, WAIT, "frame to the group");

            link.removeMulticast(GROUP_MAC);
            assertFalse(ternMulticastAddresses().contains(group), "released");

            link.addMulticast(GROUP_MAC);
            link.close();
            assertFalse(ternMulticastAddresses().contains(group), "closing the link releases its memberships");
            assertThrows(IllegalArgumentException.class, () -> peer.addMulticast(net.peerMac()), "not a group address");
        }
    }

    private String ternMulticastAddresses() {
        return net.ternExec(WAIT, "ip", "maddress", "show", "dev", NetnsHarness.TERN_INTERFACE).orThrow().stdout();
    }

    @Test
    void aMacOfTheStacksOwnIsReportedAndAddedAsUnicastMembership() {
        net = NetnsTesting.harness();
        final long ownMac = 0x0200_5E00_0002L;
        try (AfPacketLink peer = net.openPeerLink(AfPacketLink::open, AfPacketOptions.defaults())) {
            try (AfPacketLink link = net.openTernLink(AfPacketLink::open, AfPacketOptions.defaults().mac(ownMac))) {
                assertEquals(ownMac, link.macAddress());
                assertEquals(net.ternMac(), link.interfaceMac());
                // veth has no unicast filter, so the kernel turns a secondary unicast address into promiscuity.
                assertTrue(ternLinkDetails().contains("promiscuity 1"), ternLinkDetails());
                assertTrue(peer.claim(tx));
                Packets.ethernet(tx.segment(), tx.offset(), ownMac, peer.macAddress(), Packets.ETHERTYPE_EXPERIMENT);
                tx.length(60);
                peer.commit(tx);
                peer.flush();
                new Receiver(link).await(f -> Packets.u48(f.bytes(), 0) == ownMac, WAIT, "frame to the stack's own MAC");
            }
            assertTrue(ternLinkDetails().contains("promiscuity 0"), "membership released on close: " + ternLinkDetails());
        }
    }

    private String ternLinkDetails() {
        return net.ternExec(WAIT, "ip", "-d", "link", "show", "dev", NetnsHarness.TERN_INTERFACE).orThrow().stdout();
    }

    @Test
    void fanoutGroupSpreadsFlowsOverTheLinksThatShareIt() {
        net = NetnsTesting.harness();
        try (AfPacketLink first = net.openTernLink(AfPacketLink::open, AfPacketOptions.defaults().fanoutGroup(42));
             AfPacketLink second = net.openTernLink(AfPacketLink::open, AfPacketOptions.defaults().fanoutGroup(42));
             AfPacketLink peer = net.openPeerLink(AfPacketLink::open, AfPacketOptions.defaults().txFrameCount(256))) {
            final byte[] payload = new byte[16];
            for (int port = 20_000; port < 20_256; port++) {
                assertTrue(peer.claim(tx));
                final int p = port;
                tx.length(Packets.udp(tx.segment(), tx.offset(), peer.macAddress(), first.macAddress(), PEER_IPV4, TERN_IPV4,
                    p, 7, payload, Packets.Checksum.FULL));
                peer.commit(tx);
            }
            assertEquals(256, peer.flush());
            final Receiver a = new Receiver(first);
            final Receiver b = new Receiver(second);
            final long deadline = System.nanoTime() + WAIT.toNanos();
            while (udpCount(a) + udpCount(b) < 256 && deadline - System.nanoTime() > 0) {
                a.collect(f -> true, Duration.ofMillis(20));
                b.collect(f -> true, Duration.ofMillis(20));
            }
            assertEquals(256, udpCount(a) + udpCount(b), "each frame went to exactly one member");
            assertTrue(udpCount(a) > 0 && udpCount(b) > 0, "both members got flows: " + udpCount(a) + " / " + udpCount(b));
        }
    }

    /**
     * Tern's steering program in the kernel: each UDP flow reaches the member {@code ShardSteering.shardOf} names
     * (the Java function), every one exactly once; a frame that is not TCP or UDP (here an experimental EtherType)
     * reaches the first member.
     */
    @Test
    void steeredFanoutHandsEachFlowToTheShardTheJavaFunctionNames() {
        net = NetnsTesting.harness();
        try (AfPacketLink first = net.openTernLink(AfPacketLink::open, AfPacketOptions.defaults().fanoutSteering(43, 2));
             AfPacketLink second = net.openTernLink(AfPacketLink::open, AfPacketOptions.defaults().fanoutSteering(43, 2));
             AfPacketLink peer = net.openPeerLink(AfPacketLink::open, AfPacketOptions.defaults().txFrameCount(256))) {
            final byte[] payload = new byte[16];
            for (int port = 20_000; port < 20_255; port++) {
                assertTrue(peer.claim(tx));
                tx.length(Packets.udp(tx.segment(), tx.offset(), peer.macAddress(), first.macAddress(), PEER_IPV4, TERN_IPV4,
                    port, 7, payload, Packets.Checksum.FULL));
                peer.commit(tx);
            }
            assertTrue(peer.claim(tx));
            Packets.ethernet(tx.segment(), tx.offset(), first.macAddress(), peer.macAddress(), Packets.ETHERTYPE_EXPERIMENT);
            tx.length(60);
            peer.commit(tx);
            assertEquals(256, peer.flush());
            final Receiver[] members = {new Receiver(first), new Receiver(second)};
            final long deadline = System.nanoTime() + WAIT.toNanos();
            while (udpCount(members[0]) + udpCount(members[1]) < 255 && deadline - System.nanoTime() > 0) {
                members[0].collect(f -> true, Duration.ofMillis(20));
                members[1].collect(f -> true, Duration.ofMillis(20));
            }
            assertEquals(255, udpCount(members[0]) + udpCount(members[1]), "each frame went to exactly one member");
            for (int shard = 0; shard < 2; shard++) {
                for (Receiver.Frame frame : members[shard].frames()) {
                    if (Packets.isIpv4(frame.bytes(), Packets.IP_UDP)) {
                        final int sourcePort = Packets.u16(frame.bytes(), 34);
                        assertEquals(ShardSteering.shardOf(PEER_IPV4, TERN_IPV4, sourcePort, 7, 2), shard,
                            "source port " + sourcePort);
                    }
                }
            }
            assertTrue(udpCount(members[0]) > 0 && udpCount(members[1]) > 0,
                "both members got flows: " + udpCount(members[0]) + " / " + udpCount(members[1]));
            members[0].await(f -> Packets.u16(f.bytes(), 12) == Packets.ETHERTYPE_EXPERIMENT, WAIT, "non-IP frame on the first member");
            assertTrue(members[1].frames().stream().noneMatch(f -> Packets.u16(f.bytes(), 12) == Packets.ETHERTYPE_EXPERIMENT),
                "the non-IP frame reached the first member only");
        }
    }

    private static long udpCount(Receiver receiver) {
        return receiver.frames().stream().filter(f -> Packets.isIpv4(f.bytes(), Packets.IP_UDP)).count();
    }

    @ParameterizedTest(name = "receive frame slots {0} (0: block ring)")
    @ValueSource(ints = {0, 2048})
    void aVlanTagTheKernelStrippedIsPutBackInPlace(int rxFrameSize) {
        net = NetnsTesting.harness();
        try (AfPacketLink link = net.openTernLink(AfPacketLink::open, AfPacketOptions.defaults().rxFrameRing(rxFrameSize));
             AfPacketLink peer = net.openPeerLink(AfPacketLink::open, AfPacketOptions.defaults())) {
            assertTrue(peer.claim(tx));
            Packets.ethernet(tx.segment(), tx.offset(), link.macAddress(), peer.macAddress(), Packets.ETHERTYPE_VLAN);
            BigEndian.u16(tx.segment(), tx.offset() + 14, 0x2007);
            BigEndian.u16(tx.segment(), tx.offset() + 16, Packets.ETHERTYPE_EXPERIMENT);
            for (int i = 18; i < 80; i++) {
                tx.segment().set(ValueLayout.JAVA_BYTE, tx.offset() + i, (byte) i);
            }
            tx.length(80);
            final byte[] sent = tx.segment().asSlice(tx.offset(), 80).toArray(ValueLayout.JAVA_BYTE);
            peer.commit(tx);
            peer.flush();
            final byte[] received = new Receiver(link).await(f -> Packets.u48(f.bytes(), 6) == peer.macAddress(), WAIT, "tagged frame").bytes();
            assertArrayEquals(sent, received, "priority 1, VLAN 7, as sent");
            assertEquals(1, link.vlanTagsRestored(), "veth stripped the tag (rx-vlan-offload) and the ring put it back");
        }
    }

    @Test
    void aFrameLargerThanAFrameRingSlotIsCountedAsTruncatedNotDelivered() {
        net = NetnsTesting.harness(NetnsHarness.Options.defaults().mtu(9000));
        try (AfPacketLink link = net.openTernLink(AfPacketLink::open, AfPacketOptions.defaults().rxFrameRing(2048));
             AfPacketLink peer = net.openPeerLink(AfPacketLink::open, AfPacketOptions.defaults())) {
            for (int length : new int[] {3000, 200}) {
                assertTrue(peer.claim(tx));
                Packets.ethernet(tx.segment(), tx.offset(), link.macAddress(), peer.macAddress(), Packets.ETHERTYPE_EXPERIMENT);
                tx.segment().set(ValueLayout.JAVA_BYTE, tx.offset() + 14, (byte) (length / 100));
                tx.length(length);
                peer.commit(tx);
            }
            peer.flush();
            final byte[] small = new Receiver(link).await(f -> Packets.u48(f.bytes(), 6) == peer.macAddress(), WAIT,
                "the small frame").bytes();
            assertEquals(200, small.length, "the 3000-byte frame did not fit a 2048-byte slot and was not delivered");
            assertEquals(1, link.stats().rxTruncated());
        }
    }

    @Test
    void aWakeFromAnotherThreadEndsAWaitForFramesAtOnceAndIsTakenOnce() throws Exception {
        net = NetnsTesting.harness();
        try (AfPacketLink link = net.openTernLink(AfPacketLink::open, AfPacketOptions.defaults())) {
            WakeChecks.aWakeEndsAWaitAndIsTakenOnce(link::awaitFrames, link::wakeAwaitingThread);
            final String[] names = link.statisticNames();
            final long[] values = new long[names.length];
            link.statistics(values);
            assertEquals("rx.woken", names[names.length - 1]);
            assertEquals(1, values[names.length - 1]);
        }
    }

    @Test
    void closeReleasesBothSocketsAndBothRings() throws Exception {
        net = NetnsTesting.harness();
        final long fdsBefore = openFileDescriptors();
        final AfPacketLink link = net.openTernLink(AfPacketLink::open, AfPacketOptions.defaults().vnetHeader(true));
        assertEquals(fdsBefore + 3, openFileDescriptors(), "two sockets and the event counter");
        final long ringsWhileOpen = packetMappings();
        assertEquals(2, ringsWhileOpen, "the RX and TX rings are mapped");
        link.close();
        link.close();
        assertEquals(fdsBefore, openFileDescriptors());
        assertEquals(0, packetMappings());
        assertThrows(IllegalStateException.class, () -> link.receive((s, o, l, f) -> { }, 1), "ring memory is gone");
    }

    private static long openFileDescriptors() throws Exception {
        try (var entries = Files.list(Path.of("/proc/self/fd"))) {
            return entries.count();
        }
    }

    /** A ring mapping is backed by the socket, so /proc/self/maps names it "socket:[inode]". */
    private static long packetMappings() throws Exception {
        return Files.readAllLines(Path.of("/proc/self/maps")).stream().filter(line -> line.contains("socket:[")).count();
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
