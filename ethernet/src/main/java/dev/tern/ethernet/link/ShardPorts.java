package dev.tern.ethernet.link;

/**
 * The local ports a shard of a sharded stack may give a flow it opens: those for which the peer's replies are steered
 * back to it by {@link ShardSteering}'s rule. One rule for a TCP active open's ephemeral port ({@code TcpLayer}) and a
 * UDP socket's ({@code UdpLayer}); for a stack of one shard ({@link #ALONE}) every port qualifies, and on a shard of N
 * about one in N does.
 *
 * <p>Immutable and thread-safe.
 */
public final class ShardPorts {
    /** A stack of its own: every port's replies reach it. */
    public static final ShardPorts ALONE = new ShardPorts(0, 1);

    private final int shard;
    private final int shards;
    private final ShardRule rule;

    /** The ports of shard {@code shard} of {@code shards} on a link that steers by {@link ShardRule#FLOW_HASH}. */
    public ShardPorts(int shard, int shards) {
        this(shard, shards, ShardRule.FLOW_HASH);
    }

    /** The ports of shard {@code shard} of {@code shards} on a link that steers by {@code rule}. */
    public ShardPorts(int shard, int shards, ShardRule rule) {
        if (shard < 0 || shard >= shards) {
            throw new IllegalArgumentException("shard " + shard + " of " + shards);
        }
        rule.checkShards(shards);
        this.shard = shard;
        this.shards = shards;
        this.rule = rule;
    }

    /**
     * Whether the replies to a flow this host opens from {@code localAddress:localPort} to
     * {@code remoteAddress:remotePort} are steered to this shard: the 4-tuple as the replies carry it, source and
     * destination swapped. Allocates nothing.
     */
    public boolean repliesReach(int localAddress, int localPort, int remoteAddress, int remotePort) {
        return rule.shardOf(remoteAddress, localAddress, remotePort, localPort, shards) == shard;
    }

    /**
     * {@link #repliesReach} for a flow over IPv6, addresses whole: the replies' 4-tuple steered as
     * {@link ShardSteering#shardOf6} steers it. Allocates nothing.
     */
    public boolean repliesReach6(long localHigh, long localLow, int localPort, long remoteHigh, long remoteLow,
                                 int remotePort) {
        return ShardSteering.shardOf6(rule, remoteHigh, remoteLow, localHigh, localLow, remotePort, localPort, shards)
            == shard;
    }

    @Override
    public String toString() {
        return "shard " + shard + " of " + shards + (rule == ShardRule.FLOW_HASH ? "" : " by " + rule);
    }
}
