package dev.tern.nio;

import dev.tern.nio.testing.World;

/**
 * {@link ChannelBehaviour} against Tern's provider over sharded stacks: two stacks of two shards each on a memory wire
 * that steers every flow to a shard by its 4-tuple, so server channels accept on both shards, active opens go to both,
 * datagram channels live on shard 0 with their ports claimed, and selectors watch sockets of both shards.
 */
class ShardedChannelBehaviourTest extends ChannelBehaviour {
    @Override
    protected World makeWorld() {
        return World.ternSharded(2);
    }
}
