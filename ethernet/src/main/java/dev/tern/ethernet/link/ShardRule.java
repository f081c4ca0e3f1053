package dev.tern.ethernet.link;

/**
 * How a link steers TCP and UDP flows to the shards of a sharded stack: the function of a flow's ports and addresses
 * that names its shard, which the link applies to received frames and the stack to choose its own ports. Which one a
 * link uses is the link's to say ({@link Link#shardRule()}); everything else (ARP, ICMP, IGMP, multicast and
 * broadcast, fragments, frames too short for their ports) goes to shard 0 under either rule (see
 * {@link ShardSteering}).
 */
public enum ShardRule {
    /**
     * A hash of the 4-tuple ({@link ShardSteering#hash}), any number of shards: what a program in the kernel can
     * compute (the AF_PACKET fanout group's classic BPF) and what the memory wire does by default.
     */
    FLOW_HASH,
    /**
     * The low bits of the source port XOR the destination port, for a power-of-two number of shards: what a NIC's
     * flow rules can express, as exact matches on port bits under masks (N × N rules per protocol, each naming one
     * pair of low bits), the rawqp link's way. Symmetric in the two ports, so a flow and its replies name one shard.
     */
    PORT_XOR;

    /**
     * The shard of a unicast TCP or UDP datagram as received ({@code source} is the sender), of {@code shards}; 0 for
     * a multicast or broadcast destination. Allocates nothing.
     */
    public int shardOf(int sourceAddress, int destinationAddress, int sourcePort, int destinationPort, int shards) {
        if (shards <= 1 || Integer.compareUnsigned(destinationAddress, ShardSteering.FIRST_MULTICAST) >= 0) {
            return 0;
        }
        return unicastShardOf(sourceAddress, destinationAddress, sourcePort, destinationPort, shards);
    }

    /**
     * The shard of a datagram known to be unicast, its addresses as 32-bit values (IPv4's, or IPv6's
     * {@link ShardSteering#fold}s, which may take any value). Allocates nothing.
     */
    public int unicastShardOf(int sourceAddress, int destinationAddress, int sourcePort, int destinationPort,
                              int shards) {
        if (shards <= 1) {
            return 0;
        }
        if (this == FLOW_HASH) {
            return Integer.remainderUnsigned(ShardSteering.hash(sourceAddress, destinationAddress, sourcePort,
                destinationPort), shards);
        }
        return (sourcePort ^ destinationPort) & (shards - 1);
    }

    /** Throws unless this rule can steer to {@code shards} shards (PORT_XOR needs a power of two). */
    public void checkShards(int shards) {
        if (this == PORT_XOR && Integer.bitCount(shards) != 1) {
            throw new IllegalArgumentException("a link that steers by port bits takes a power-of-two number of shards, not "
                + shards);
        }
    }
}
