package dev.tern.testkit.netns;

/**
 * Congestion Experienced marks set by the Linux kernel between the two ends of a {@link NetnsHarness} pair, both
 * ways, as an AQM that marks instead of dropping would (RFC 3168 §5): an nftables {@code netdev} table, placed as
 * {@link PacketLoss}'s, whose rule marks an ECN-capable IPv4 packet CE when {@code numgen random mod 10000 < N}
 * (N = percent x 100). Not-ECT packets are never marked (a router may only drop those) and nft mends the IPv4 header
 * checksum.
 *
 * <pre>
 *   table netdev tern_ce {
 *     chain to_peer   { type filter hook ingress device D1 priority -500; policy accept;
 *                       counter                                                        (every packet)
 *                       ip ecn { ect0, ect1 } numgen random mod 10000 &lt; N counter ip ecn set ce }   (marked)
 *     chain from_peer { ... the same ... }
 *   }
 * </pre>
 *
 * <p>{@link #close()} deletes the table; deleting the namespaces removes it anyway. Needs {@code nft} (Debian package
 * nftables). Thread-safe.
 */
public final class CeMarking implements AutoCloseable {
    /** The table's name. */
    public static final String TABLE = "tern_ce";

    private final PacketLoss rules;

    private CeMarking(PacketLoss rules) {
        this.rules = rules;
    }

    /** Packets that went each way past the rules, and those marked CE, since they were installed. */
    public record Counts(long toPeerPackets, long toPeerMarked, long fromPeerPackets, long fromPeerMarked) {
    }

    /** Marks {@code percent} (0 to 100) of the ECN-capable packets each way; fails, leaving nothing, without nft. */
    public static CeMarking install(NetnsHarness net, double percent) {
        return new CeMarking(PacketLoss.install(net, percent, TABLE, "CE marks",
            threshold -> "ip ecn { ect0, ect1 } " + (threshold >= 10_000 ? "" : "numgen random mod 10000 < "
                + threshold + " ") + "counter ip ecn set ce"));
    }

    /** What the rules counted since they were installed. */
    public Counts counts() {
        final PacketLoss.Counts c = rules.counts();
        return new Counts(c.toPeerPackets(), c.toPeerDropped(), c.fromPeerPackets(), c.fromPeerDropped());
    }

    /** Deletes the table. Idempotent. */
    @Override
    public void close() {
        rules.close();
    }

    @Override
    public String toString() {
        return rules.toString();
    }
}
