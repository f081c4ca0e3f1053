package dev.tern.stack;

import dev.tern.ethernet.link.FrameHandler;
import dev.tern.ethernet.link.ForwardingLink;
import dev.tern.ethernet.link.Link;
import dev.tern.ethernet.link.ShardSteering;
import org.agrona.concurrent.status.AtomicCounter;

import java.lang.foreign.MemorySegment;

/**
 * The receive side of one shard of a sharded stack: a frame that {@link ShardSteering} gives to another shard is
 * counted ({@code shard.rx.wrong_shard}) and dropped before any layer sees it. Such a frame means the link's steering
 * and Tern's disagree (a fanout group still forming while the shards join it, a group that lost a member, a link that
 * steers by another rule); answering it would be wrong, because this shard does not know the other shard's
 * connections, and TCP answers a segment for an unknown connection with a reset (RFC 9293 §3.10.7.1).
 *
 * <p>Owned by the shard's thread; not thread-safe. Allocates nothing: one handler object per shard, re-pointed at
 * the stack's handler on each receive.
 */
final class ShardFilterLink extends ForwardingLink implements FrameHandler {
    private final int shard;
    private final int shards;
    private final AtomicCounter wrongShard;
    private final WrongShardSample sample;
    private FrameHandler handler;

    ShardFilterLink(Link link, int shard, int shards, AtomicCounter wrongShard, WrongShardSample sample) {
        super(link);
        this.sample = sample;
        this.shard = shard;
        this.shards = shards;
        this.wrongShard = wrongShard;
    }

    @Override
    public int receive(FrameHandler handler, int maxFrames) {
        this.handler = handler;
        return link.receive(this, maxFrames);
    }

    @Override
    public void onFrame(MemorySegment segment, long offset, int length, int flags) {
        if (ShardSteering.shardOf(segment, offset, length, shards) != shard) {
            wrongShard.incrementRelease();
            sample.record(segment, offset, length);
            return;
        }
        handler.onFrame(segment, offset, length, flags);
    }
}
