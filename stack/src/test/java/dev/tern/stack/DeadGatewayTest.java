package dev.tern.stack;

import dev.tern.arp.wire.ArpPacket;
import dev.tern.arp.wire.ArpRepr;
import dev.tern.core.memory.BigEndian;
import dev.tern.core.net.Ipv4Address;
import dev.tern.ethernet.link.TxFrame;
import dev.tern.ethernet.memory.MemoryLink;
import dev.tern.ethernet.wire.EtherType;
import dev.tern.ethernet.wire.EthernetHeader;
import dev.tern.ethernet.wire.MacAddress;
import dev.tern.stack.sim.Simulation;
import dev.tern.stack.testing.Frames;
import dev.tern.stack.testing.PeerPort;
import dev.tern.stack.testing.SimulatedSockets;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Dead gateway detection and the choice of another default gateway (RFC 1122 §3.3.1.4-§3.3.1.5) on the memory wire:
 * a near stack (198.18.0.2/24) reaches a far one (198.19.0.5/24) through a scripted router with two doors on the near
 * subnet (198.18.0.1 and 198.18.0.254) and one on the far subnet (198.19.0.1). The first door then goes silent: no ARP
 * answers, nothing forwarded.
 */
class DeadGatewayTest {
    private static final long SECOND = 1_000_000_000L;
    private static final int GW1 = Ipv4Address.parse("198.18.0.1");
    private static final int GW2 = Ipv4Address.parse("198.18.0.254");
    private static final int FAR = Ipv4Address.parse("198.19.0.5");
    private static final long GW1_MAC = MacAddress.parse("0a:00:00:00:00:01");
    private static final long GW2_MAC = MacAddress.parse("0a:00:00:00:00:02");

    /** A router played by the test: answers ARP for each live door's address and forwards IPv4 between the subnets. */
    private static final class Router {
        private final class Door {
            final MemoryLink link;
            final int ip;
            boolean alive = true;

            Door(String name, String ip, long mac) {
                this.link = sim.addPort(name, MacAddress.parse(String.format("0a:00:00:00:00:%02x", mac)));
                this.ip = Ipv4Address.parse(ip);
            }
        }

        private final Simulation sim;
        private final List<Door> doors = new ArrayList<>();
        private final List<byte[]> outgoing = new ArrayList<>();
        private final TxFrame tx = new TxFrame();
        long nearMac;
        long farMac;

        Router(Simulation sim) {
            this.sim = sim;
            sim.onPoll(this::poll);
        }

        Door door(String name, String ip, long macByte) {
            final Door door = new Door(name, ip, macByte);
            doors.add(door);
            return door;
        }

        private void poll() {
            for (Door door : doors) {
                door.link.receive((segment, offset, length, flags) -> {
                    final byte[] frame = new byte[length];
                    MemorySegment.copy(segment, ValueLayout.JAVA_BYTE, offset, frame, 0, length);
                    if (door.alive) {
                        handle(door, frame);
                    }
                }, 1000);
                for (byte[] frame : outgoing) {
                    Frames.send(door.link, tx, frame);
                }
                outgoing.clear();
            }
        }

        private void handle(Door door, byte[] frame) {
            final MemorySegment in = MemorySegment.ofArray(frame);
            final long doorMac = door.link.macAddress();
            if (BigEndian.u16(in, 12) == EtherType.ARP) {
                final ArpRepr arp = ArpRepr.parse(new ArpPacket().wrap(in, 14, 28));
                if (arp.operation() == ArpPacket.OPERATION_REQUEST && arp.targetIp() == door.ip) {
                    outgoing.add(Frames.ethernet(arp.senderMac(), doorMac, EtherType.ARP,
                        Frames.arp(ArpPacket.OPERATION_REPLY, doorMac, door.ip, arp.senderMac(), arp.senderIp())));
                }
                return;
            }
            if (BigEndian.u16(in, 12) == EtherType.IPV4 && BigEndian.u48(in, 0) == doorMac) {
                final int destination = BigEndian.i32(in, 14 + 16);
                final byte[] out = frame.clone();
                new EthernetHeader().wrap(MemorySegment.ofArray(out), 0, out.length)
                    .destination(Ipv4Address.inPrefix(destination, FAR, 24) ? farMac : nearMac).source(doorMac);
                outgoing.add(out);
            }
        }
    }

    /** An ARP request seen on the wire: when, to which MAC (broadcast or a unicast probe), for which address. */
    private record ArpRequest(long atNs, long destinationMac, int targetIp) {
        @Override
        public String toString() {
            return String.format("%.1fs %s who-has %s", atNs / 1e9, MacAddress.format(destinationMac),
                Ipv4Address.format(targetIp));
        }
    }

    private final MemorySegment buffer = Arena.ofAuto().allocate(1 << 16);

    @Test
    void aConnectionThroughADeadDefaultGatewayGoesOnThroughTheNextOneAfterR1sAdvice() throws Exception {
        try (Simulation sim = new Simulation()) {
            final Router router = router(sim);
            final PeerPort tap = new PeerPort(sim, "tap", MacAddress.parse("0a:00:00:00:00:09"));
            final NetStack near = sim.addStack("near", "198.18.0.2/24",
                b -> b.gateway("198.18.0.1").gateway("198.18.0.254"));
            final NetStack far = sim.addStack("far", "198.19.0.5/24", b -> b.gateway("198.19.0.1"));
            router.nearMac = near.macAddress();
            router.farMac = far.macAddress();
            final TcpListener listener = far.listen(80, 4);
            final TcpConnection client = near.connect(FAR, 80);
            assertTrue(sim.runUntil(client::isConnected, 5 * SECOND), "connected through the first gateway");
            final TcpConnection server = accepted(sim, listener);
            final byte[] data = new byte[4000];
            new SplittableRandom(7).nextBytes(data);
            assertEquals(2000, client.write(MemorySegment.ofArray(data), 0, 2000));
            assertArrayEquals(Arrays.copyOfRange(data, 0, 2000), readAll(sim, server, 2000));
            assertEquals(GW1, near.ipv4().currentDefaultGateway());

            router.doors.getFirst().alive = false;
            tap.clear();
            final long deadAtNs = sim.nowNs();
            assertEquals(2000, client.write(MemorySegment.ofArray(data), 2000, 2000));
            assertArrayEquals(Arrays.copyOfRange(data, 2000, 4000), readAll(sim, server, 2000),
                "the rest arrives, through the second gateway");

            assertEquals(1, near.counters().value("ipv4.gateway.switches"));
            assertEquals(GW2, near.ipv4().currentDefaultGateway());
            final List<ArpRequest> requests = arpRequestsFrom(tap, near.macAddress(), deadAtNs);
            assertEquals(List.of(GW1_MAC, GW1_MAC, GW1_MAC, MacAddress.BROADCAST),
                requests.stream().map(ArpRequest::destinationMac).toList(),
                "three unicast probes of the first gateway (R1's advice), then the second resolved: " + requests);
            assertEquals(List.of(GW1, GW1, GW1, GW2), requests.stream().map(ArpRequest::targetIp).toList());
            final long switchedAtNs = requests.getLast().atNs();
            final List<PeerPort.Received> afterSwitch = tap.drain(f -> f.etherType() == EtherType.IPV4
                && f.atNs() >= switchedAtNs && srcMac(f) == near.macAddress());
            assertTrue(!afterSwitch.isEmpty() && afterSwitch.stream().allMatch(f -> dstMac(f) == GW2_MAC),
                "every datagram after the switch goes to the second gateway's MAC: " + afterSwitch.stream()
                    .map(f -> f.atNs() / 1e9 + "s " + MacAddress.format(dstMac(f))).toList());
        }
    }

    @Test
    void withOneGatewayADeadGatewayIsResolvedAgainAndNothingElseIsChosen() throws Exception {
        try (Simulation sim = new Simulation()) {
            final Router router = router(sim);
            final PeerPort tap = new PeerPort(sim, "tap", MacAddress.parse("0a:00:00:00:00:09"));
            final NetStack near = sim.addStack("near", "198.18.0.2/24", b -> b.gateway("198.18.0.1"));
            final NetStack far = sim.addStack("far", "198.19.0.5/24", b -> b.gateway("198.19.0.1"));
            router.nearMac = near.macAddress();
            router.farMac = far.macAddress();
            final TcpListener listener = far.listen(80, 4);
            final TcpConnection client = near.connect(FAR, 80);
            assertTrue(sim.runUntil(client::isConnected, 5 * SECOND));
            final TcpConnection server = accepted(sim, listener);

            router.doors.getFirst().alive = false;
            tap.clear();
            final long deadAtNs = sim.nowNs();
            assertEquals(100, client.write(MemorySegment.ofArray(new byte[100]), 0, 100));
            sim.runFor(30 * SECOND);

            assertEquals(0, server.available(), "nothing arrives: there is no other way");
            assertEquals(0, near.counters().value("ipv4.gateway.switches"));
            assertEquals(GW1, near.ipv4().currentDefaultGateway());
            final List<ArpRequest> requests = arpRequestsFrom(tap, near.macAddress(), deadAtNs);
            assertTrue(requests.size() > 3, "probes, then resolution again: " + requests);
            assertEquals(List.of(GW1_MAC, GW1_MAC, GW1_MAC, MacAddress.BROADCAST),
                requests.subList(0, 4).stream().map(ArpRequest::destinationMac).toList(), requests.toString());
            assertTrue(requests.stream().allMatch(r -> r.targetIp() == GW1), "only the one gateway: " + requests);
        }
    }

    private static Router router(Simulation sim) {
        final Router router = new Router(sim);
        router.door("gw1", "198.18.0.1", 1);
        router.door("gw2", "198.18.0.254", 2);
        router.door("far-side", "198.19.0.1", 3);
        return router;
    }

    private static List<ArpRequest> arpRequestsFrom(PeerPort tap, long sourceMac, long sinceNs) {
        final List<ArpRequest> requests = new ArrayList<>();
        for (PeerPort.Received frame : tap.drain(f -> f.etherType() == EtherType.ARP)) {
            final ArpRepr arp = ArpRepr.parse(new ArpPacket().wrap(frame.segment(), EthernetHeader.LENGTH, 28));
            // Our own announcements (RFC 5227 §2.3: sender and target both our address) are not resolutions.
            if (arp.operation() == ArpPacket.OPERATION_REQUEST && srcMac(frame) == sourceMac && frame.atNs() >= sinceNs
                && arp.targetIp() != arp.senderIp()) {
                requests.add(new ArpRequest(frame.atNs(), dstMac(frame), arp.targetIp()));
            }
        }
        return requests;
    }

    private static long dstMac(PeerPort.Received frame) {
        return BigEndian.u48(frame.segment(), 0);
    }

    private static long srcMac(PeerPort.Received frame) {
        return BigEndian.u48(frame.segment(), 6);
    }

    private TcpConnection accepted(Simulation sim, TcpListener listener) {
        return SimulatedSockets.accepted(sim, listener);
    }

    private byte[] readAll(Simulation sim, TcpConnection connection, int expected) throws TernSocketException {
        return SimulatedSockets.readAll(sim, connection, expected, buffer, 120 * SECOND);
    }
}
