package dev.tern.stack;

import dev.tern.core.net.Ipv4Address;
import dev.tern.ethernet.link.ShardSteering;
import dev.tern.ethernet.memory.MemoryLink;
import dev.tern.ethernet.memory.MemoryWire;
import dev.tern.ethernet.wire.EtherType;
import dev.tern.stack.testing.Frames;
import dev.tern.stack.testing.SleepyLink;
import dev.tern.tcp.wire.TcpFlags;
import dev.tern.tcp.wire.TcpHeader;
import dev.tern.tcp.wire.TcpRepr;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A frame handed to a shard that sleeps on its link wakes it ({@code Link.wakeAwaitingThread}) instead of waiting for
 * the sleep's timeout, and a shard that is awake is not woken (no system call per hand-over while it runs).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ShardHandOverWakeTest {
    private static final int CLIENT = Ipv4Address.parse("198.18.0.1");
    private static final int SERVER = Ipv4Address.parse("198.18.0.2");

    private static byte[] strayAck(long destinationMac, int sourcePort) {
        final byte[] segment = new byte[TcpHeader.MIN_LENGTH];
        final TcpHeader header = new TcpHeader().wrap(MemorySegment.ofArray(segment), 0, segment.length);
        TcpRepr.of(sourcePort, 9, 1000, 2000, TcpFlags.ACK, 1024).emit(header);
        TcpRepr.fillChecksum(header, CLIENT, SERVER, segment.length);
        return Frames.ethernet(destinationMac, 0x0200_0000_00AAL, EtherType.IPV4,
            Frames.ipv4(CLIENT, SERVER, 6, 1, 0x4000, 64, segment));
    }

    @Test
    void aHandOverWakesAnOwnerAsleepOnItsLinkAndLeavesAnAwakeOneAlone() throws Exception {
        try (MemoryWire wire = MemoryWire.builder().concurrent(true).build()) {
            final MemoryLink[] memory = wire.attachShards("server", 0x0200_0000_0002L, 2);
            final SleepyLink[] links = {new SleepyLink(memory[0]), new SleepyLink(memory[1])};
            try (StackShards shards = StackShards.build(2, k -> links[k],
                builder -> builder.name("server").address("198.18.0.2/24").countersInMemory())) {
                int port = 40000;
                while (ShardSteering.shardOf(CLIENT, SERVER, port, 9, 2) != 0) {
                    port++;
                }
                final byte[] ownedByShardZero = strayAck(links[0].macAddress(), port);
                final ShardFilterLink shardOne = (ShardFilterLink) shards.shard(1).link();

                // Shard 0 awake: the frame is posted, nobody is woken.
                shardOne.onFrame(MemorySegment.ofArray(ownedByShardZero), 0, ownedByShardZero.length, 0);
                assertEquals(0, links[0].wakes);
                assertEquals(0, shards.shard(1).counters().value("shard.tx.woke_owner"));
                // Shard 0 would not sleep now: a frame waits in its inbox.
                assertTrue(shards.shard(0).awaitWork(20_000));
                assertFalse(links[0].sleeping);
                shards.shard(0).link().receive((segment, offset, length, flags) -> { }, 64);

                // Shard 0 asleep on its link for up to 20 s: the hand-over wakes it.
                final CompletableFuture<Long> slept = CompletableFuture.supplyAsync(() -> {
                    final long start = System.nanoTime();
                    shards.shard(0).awaitWork(20_000);
                    return System.nanoTime() - start;
                });
                while (!links[0].sleeping) {
                    Thread.onSpinWait();
                }
                shardOne.onFrame(MemorySegment.ofArray(ownedByShardZero), 0, ownedByShardZero.length, 0);
                final long sleptNs = slept.get(10, TimeUnit.SECONDS);
                assertTrue(sleptNs < 10_000_000_000L, "woken by the hand-over, not at the timeout: " + sleptNs + " ns");
                assertEquals(1, links[0].wakes);
                assertEquals(1, shards.shard(1).counters().value("shard.tx.woke_owner"));
                assertEquals(2, shards.shard(1).counters().value("shard.tx.handed_over"));
            }
        }
    }
}
