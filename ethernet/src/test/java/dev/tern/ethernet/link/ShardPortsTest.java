package dev.tern.ethernet.link;

import org.junit.jupiter.api.Test;

import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A shard's ephemeral ports are exactly those whose replies (the 4-tuple swapped) {@link ShardSteering} gives to it:
 * each port belongs to one shard of N, about one in N to each, and all to a stack alone.
 */
class ShardPortsTest {
    @Test
    void eachPortsRepliesReachExactlyTheShardTheSteeringNames() {
        final SplittableRandom random = new SplittableRandom(16);
        final int shards = 3;
        final ShardPorts[] ports = {new ShardPorts(0, shards), new ShardPorts(1, shards), new ShardPorts(2, shards)};
        final int[] perShard = new int[shards];
        for (int i = 0; i < 30_000; i++) {
            final int local = 0xC612_0002;
            final int remote = 0xC612_0000 | random.nextInt(1, 255);
            final int localPort = random.nextInt(1, 65536);
            final int remotePort = random.nextInt(1, 65536);
            final int owner = ShardSteering.shardOf(remote, local, remotePort, localPort, shards);
            int reached = 0;
            for (int k = 0; k < shards; k++) {
                if (ports[k].repliesReach(local, localPort, remote, remotePort)) {
                    reached++;
                    assertEquals(owner, k);
                }
            }
            assertEquals(1, reached, "one shard per port");
            assertTrue(ShardPorts.ALONE.repliesReach(local, localPort, remote, remotePort));
            perShard[owner]++;
        }
        for (int k = 0; k < shards; k++) {
            assertTrue(perShard[k] > 9_000 && perShard[k] < 11_000, "shard " + k + ": " + perShard[k]);
        }
    }

    @Test
    void aShardOutsideTheCountIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> new ShardPorts(2, 2));
        assertThrows(IllegalArgumentException.class, () -> new ShardPorts(-1, 2));
    }
}
