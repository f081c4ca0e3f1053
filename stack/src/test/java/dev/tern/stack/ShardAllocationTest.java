package dev.tern.stack;

import dev.tern.core.net.Ipv4Address;
import dev.tern.core.testing.Allocations;
import dev.tern.core.time.VirtualClock;
import dev.tern.ethernet.link.FrameHandler;
import dev.tern.ethernet.link.ShardSteering;
import dev.tern.ethernet.link.TxFrame;
import dev.tern.ethernet.memory.MemoryLink;
import dev.tern.ethernet.memory.MemoryWire;
import dev.tern.ethernet.wire.EtherType;
import dev.tern.ethernet.wire.MacAddress;
import dev.tern.stack.testing.Frames;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A sharded stack's own per-packet work allocates nothing: the wire's steering, each shard's check that a frame is
 * its own ({@code ShardFilterLink}), a frame handed over as another shard's, a datagram reassembled on shard 0 and
 * handed to shard 1 ({@code ShardReassembledHandOver}), and ARP relayed from shard 0 to shard 1
 * ({@code NeighbourRelay}). A raw port injects prebuilt frames; everything runs on the measuring thread.
 */
class ShardAllocationTest {
    private static final int US = Ipv4Address.parse("198.18.0.2");
    private static final int PEER = Ipv4Address.parse("198.18.0.1");
    private static final long PEER_MAC = MacAddress.parse("0a:00:00:00:00:01");
    private static final int WARMUP = Integer.getInteger("warmup", 200_000);

    @Test
    void steeringCheckingRelayingAndDroppingAllocateNothing() {
        final VirtualClock clock = new VirtualClock();
        try (MemoryWire wire = MemoryWire.builder().clock(clock).build(); Arena arena = Arena.ofConfined()) {
            final MemoryLink peer = wire.attach("peer", PEER_MAC);
            final MemoryLink[] links = wire.attachShards("us", 0x0200_0000_0002L, 2);
            final StackShards shards = StackShards.build(2, k -> links[k],
                b -> b.name("alloc").address("198.18.0.2/24").clock(clock).countersInMemory());
            final long ourMac = shards.shard(0).macAddress();
            // One UDP datagram per shard (to a closed port, so a shard counts it and answers at most a rate-limited
            // ICMP error), and an ARP request for our address (shard 0 answers and relays it to shard 1).
            int portOfShard1 = 40000;
            while (ShardSteering.shardOf(PEER, US, portOfShard1, 9, 2) != 1) {
                portOfShard1++;
            }
            final byte[][] wireFrames = {
                Frames.ethernet(ourMac, PEER_MAC, EtherType.IPV4, Frames.ipv4(PEER, US, 17, 1, 0x4000, 64,
                    udp(portOfShard1, 9))),
                Frames.ethernet(ourMac, PEER_MAC, EtherType.IPV4, Frames.ipv4(PEER, US, 17, 1, 0x4000, 64,
                    udp(portOfShard1 + 1, 9))),
                Frames.ethernet(MacAddress.BROADCAST, PEER_MAC, EtherType.ARP, Frames.arp(1, PEER_MAC, PEER, 0, US)),
                // Shard 1's datagram in two fragments: shard 0 reassembles it and hands it over.
                Frames.ethernet(ourMac, PEER_MAC, EtherType.IPV4, Frames.ipv4(PEER, US, 17, 2, 0x2000, 64,
                    java.util.Arrays.copyOfRange(udp(portOfShard1, 9), 0, 8))),
                Frames.ethernet(ourMac, PEER_MAC, EtherType.IPV4, Frames.ipv4(PEER, US, 17, 2, 1, 64,
                    java.util.Arrays.copyOfRange(udp(portOfShard1, 9), 8, 16)))};
            final MemorySegment[] frames = new MemorySegment[wireFrames.length];
            for (int i = 0; i < frames.length; i++) {
                frames[i] = arena.allocate(wireFrames[i].length);
                MemorySegment.copy(wireFrames[i], 0, frames[i], ValueLayout.JAVA_BYTE, 0, wireFrames[i].length);
            }
            // A frame of shard 1's flow handed to shard 0, as a disagreeing link would.
            final MemorySegment misSteered = frames[0];
            final ShardFilterLink shardZero = (ShardFilterLink) shards.shard(0).link();
            final TxFrame tx = new TxFrame();
            final FrameHandler swallow = (segment, offset, length, flags) -> { };
            final long[] rounds = {0};
            final Runnable round = () -> {
                rounds[0]++;
                Frames.send(peer, tx, frames);
                shards.pollAll();
                shardZero.onFrame(misSteered, 0, (int) misSteered.byteSize(), 0);
                shards.pollAll();
                peer.receive(swallow, 64);
            };
            round.run();
            round.run();
            final long bytes = Allocations.measure(WARMUP, 300_000, round);
            assertEquals(0, bytes, "bytes allocated over 300,000 rounds of 5 frames and a mis-steered one");
            assertEquals(rounds[0], shards.shard(0).counters().value("shard.tx.reassembled_handed_over"),
                "every reassembled datagram handed over");
            assertEquals(rounds[0], shards.shard(0).counters().value("shard.rx.wrong_shard"), "every mis-steered frame dropped");
            assertTrue(shards.shard(1).counters().value("udp.rx.datagrams") > 0);
            assertEquals(0, shards.shard(0).counters().value("shard.neighbour_relay_full"), "shard 1 kept up with the relay");
            assertEquals(java.util.List.of(), shards.failures());
            shards.close();
        }
    }

    /** A UDP header (checksum 0: none) and 8 bytes of data. */
    private static byte[] udp(int sourcePort, int destinationPort) {
        final byte[] datagram = new byte[16];
        datagram[0] = (byte) (sourcePort >>> 8);
        datagram[1] = (byte) sourcePort;
        datagram[2] = (byte) (destinationPort >>> 8);
        datagram[3] = (byte) destinationPort;
        datagram[5] = 16;
        return datagram;
    }
}
