package dev.tern.stack;

import dev.tern.core.memory.BigEndian;
import dev.tern.ethernet.link.ShardSteering;
import dev.tern.ipv4.IpProtocolHandler;
import dev.tern.ipv4.Ipv4Packet;
import org.agrona.concurrent.status.AtomicCounter;

import java.lang.foreign.MemorySegment;

/**
 * TCP input of one shard of a sharded stack, behind a check that the segment's flow is this shard's. Frames are
 * checked before any layer sees them ({@link ShardFilterLink}); what passes that check yet belongs to another shard
 * is a segment that arrived in fragments (every fragment goes to shard 0, see {@link ShardSteering}) and was
 * reassembled here. Its connection lives on another shard, so this one must not answer it (TCP would reset an
 * unknown connection, RFC 9293 §3.10.7.1): it is counted as {@code shard.rx.wrong_shard} and dropped. ICMP errors
 * pass through unchanged.
 *
 * <p>Owned by the shard's thread. Allocates nothing.
 */
final class ShardTcpGuard implements IpProtocolHandler {
    private final IpProtocolHandler tcp;
    private final int shard;
    private final int shards;
    private final AtomicCounter wrongShard;
    private final WrongShardSample sample;

    ShardTcpGuard(IpProtocolHandler tcp, int shard, int shards, AtomicCounter wrongShard, WrongShardSample sample) {
        this.sample = sample;
        this.tcp = tcp;
        this.shard = shard;
        this.shards = shards;
        this.wrongShard = wrongShard;
    }

    @Override
    public void onPacket(Ipv4Packet packet, MemorySegment segment, long offset, int length, long nowNs) {
        // A segment too short for its ports is TCP's to count as malformed.
        if (length >= 4 && ShardSteering.shardOf(packet.source(), packet.destination(), BigEndian.u16(segment, offset),
            BigEndian.u16(segment, offset + 2), shards) != shard) {
            wrongShard.incrementRelease();
            sample.record(segment, offset, length);
            return;
        }
        tcp.onPacket(packet, segment, offset, length, nowNs);
    }

    @Override
    public void onIcmpError(int type, int code, int nextHopMtu, int reporter, int originalSource, int originalDestination,
                            MemorySegment segment, long offset, int length, long nowNs) {
        tcp.onIcmpError(type, code, nextHopMtu, reporter, originalSource, originalDestination, segment, offset, length,
            nowNs);
    }
}
