package dev.tern.testkit.netns;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Random packet loss injected by the Linux kernel between the two ends of a {@link NetnsHarness} pair, both ways: an
 * nftables {@code netdev} table with one chain per direction, each counting every packet and dropping one when
 * {@code numgen random mod 10000 < N} (N = percent x 100: 0.01 % steps; 100 % is a plain drop). There is no netem on
 * the kernels we run on; this is the kernel's own random source, per packet, independent between packets.
 *
 * <pre>
 *   table netdev tern_loss {
 *     chain to_peer   { type filter hook ingress device D1 priority -500; policy accept;
 *                       counter                                          (every packet towards the peer)
 *                       numgen random mod 10000 &lt; N counter drop }      (the ones dropped)
 *     chain from_peer { type filter hook ingress|egress device D2 ... the same ... }
 *   }
 * </pre>
 *
 * <p><b>Where the rules go.</b> With a wire namespace ({@link NetnsHarness.Options#wire}), on the ingress hooks of the
 * bridge's two ports: D1 = {@value NetnsHarness#WIRE_TERN_PORT} (what Tern's end sends), D2 =
 * {@value NetnsHarness#WIRE_PEER_PORT} (what the peer sends). A packet is lost there as on a wire: after its sender's
 * device has cut it to MTU size (offloads off), and without its sender learning of it. This is the placement for
 * loss both ways.
 *
 * <p>Without one, on the peer's own device, {@value NetnsHarness#PEER_INTERFACE}: D1 its ingress hook, D2 its egress
 * hook. Packets towards the peer are lost as on a wire, but <em>not the peer's own</em>: the egress hook runs inside
 * {@code dev_queue_xmit}, which returns {@code NET_XMIT_DROP} to the sending socket, and the kernel's TCP takes that as
 * local congestion (it reduces cwnd and sends the same segment again, in order; measured at 1 % over veth with
 * offloads off: 0 to 2 retransmissions by the sender and no out-of-order segment at the receiver, against about 1000
 * and 3000 with the wire). Its egress rule also sees GSO packets before they are cut. Use it to silence the peer
 * (100 %) or for loss towards the peer only.
 *
 * <p>{@link #close()} deletes the table; deleting the namespaces (the harness's {@link NetnsHarness#close()}) removes
 * it anyway, so nothing outlives the harness even if this is never closed. Needs {@code nft} (Debian package
 * nftables). Thread-safe (each call runs {@code nft} once).
 */
public final class PacketLoss implements AutoCloseable {
    /** The table's name. */
    public static final String TABLE = "tern_loss";
    private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(20);
    private static final Pattern COUNTER = Pattern.compile("counter packets (\\d+) bytes (\\d+)");

    private final NetworkNamespace namespace;
    private final String table;
    /** What the rules do, for {@link #toString}: "loss", or {@link CeMarking}'s "CE marks". */
    private final String what;
    /** The rule after the counter of every packet, for a threshold ({@link #DROP}, or {@link CeMarking}'s). */
    private final java.util.function.IntFunction<String> rule;
    private final String nft;
    private final String toPeerHook;
    private final String toPeerDevice;
    private final String fromPeerHook;
    private final String fromPeerDevice;
    private double percent;
    private boolean closed;

    /** Packets that went each way past the rules, and those dropped, since they were (re)installed. */
    public record Counts(long toPeerPackets, long toPeerDropped, long fromPeerPackets, long fromPeerDropped) {
        public long dropped() {
            return toPeerDropped + fromPeerDropped;
        }

        public long packets() {
            return toPeerPackets + fromPeerPackets;
        }

        /** The share of packets dropped, in percent (NaN when none passed). */
        public double droppedPercent() {
            return packets() == 0 ? Double.NaN : 100.0 * dropped() / packets();
        }
    }

    /** Drops the packets numgen picks: {@code numgen random mod 10000 < N counter drop}; 100 % drops every one. */
    static final java.util.function.IntFunction<String> DROP = threshold ->
        // numgen's values are 0..9999, so "< 10000" is refused: 100 % is a plain drop.
        (threshold >= 10_000 ? "" : "numgen random mod 10000 < " + threshold + " ") + "counter drop";

    private PacketLoss(NetworkNamespace namespace, String table, String what, java.util.function.IntFunction<String> rule,
                       String nft, String toPeerHook, String toPeerDevice, String fromPeerHook, String fromPeerDevice) {
        this.namespace = namespace;
        this.table = table;
        this.what = what;
        this.rule = rule;
        this.nft = nft;
        this.toPeerHook = toPeerHook;
        this.toPeerDevice = toPeerDevice;
        this.fromPeerHook = fromPeerHook;
        this.fromPeerDevice = fromPeerDevice;
    }

    /**
     * Installs the rules for {@code net} with {@code percent} loss each way (0 to 100): on the wire's ports when it has
     * a wire namespace, else on the peer's device (see the class comment for the difference). Fails (and leaves
     * nothing behind) if nft is missing or the kernel refuses the rules.
     */
    public static PacketLoss install(NetnsHarness net, double percent) {
        return install(net, percent, TABLE, "loss", DROP);
    }

    /**
     * As {@link #install(NetnsHarness, double)}, with table {@code table} and {@code rule} in place of the drop;
     * {@code what} names what the rule does.
     */
    static PacketLoss install(NetnsHarness net, double percent, String table, String what,
                              java.util.function.IntFunction<String> rule) {
        final String nft = Commands.require("nft", "nftables");
        final NetworkNamespace wire = net.wireNamespace();
        final PacketLoss loss = wire != null
            ? new PacketLoss(wire, table, what, rule, nft, "ingress", NetnsHarness.WIRE_TERN_PORT, "ingress",
                NetnsHarness.WIRE_PEER_PORT)
            : new PacketLoss(net.peerNamespace(), table, what, rule, nft, "ingress", NetnsHarness.PEER_INTERFACE,
                "egress", NetnsHarness.PEER_INTERFACE);
        try {
            return loss.percent(percent);
        } catch (RuntimeException e) {
            try {
                loss.close();
            } catch (RuntimeException cleanup) {
                e.addSuppressed(cleanup);
            }
            throw e;
        }
    }

    /** The rule's threshold for {@code percent}: {@code numgen random mod 10000 < threshold}. */
    static int threshold(double percent) {
        if (!(percent >= 0 && percent <= 100)) {
            throw new IllegalArgumentException("loss " + percent + " % outside 0..100");
        }
        return (int) Math.round(percent * 100);
    }

    /** The nft script that (re)creates the table in one transaction, counters at zero. */
    String script(int threshold) {
        return script(table, rule.apply(threshold), toPeerHook, toPeerDevice, fromPeerHook, fromPeerDevice);
    }

    static String script(int threshold, String toPeerHook, String toPeerDevice, String fromPeerHook, String fromPeerDevice) {
        return script(TABLE, DROP.apply(threshold), toPeerHook, toPeerDevice, fromPeerHook, fromPeerDevice);
    }

    private static String script(String table, String rule, String toPeerHook, String toPeerDevice, String fromPeerHook,
                                 String fromPeerDevice) {
        final StringBuilder script = new StringBuilder();
        // Declaring the table first makes the delete succeed whether or not it existed: one atomic replacement.
        script.append("table netdev ").append(table).append('\n');
        script.append("delete table netdev ").append(table).append('\n');
        script.append("table netdev ").append(table).append(" {\n");
        final String[][] chains = {{"to_peer", toPeerHook, toPeerDevice}, {"from_peer", fromPeerHook, fromPeerDevice}};
        for (String[] chain : chains) {
            script.append(String.format(Locale.ROOT, """
                  chain %1$s {
                    type filter hook %2$s device "%3$s" priority -500; policy accept;
                    counter
                    %4$s
                  }
                """, chain[0], chain[1], chain[2], rule));
        }
        return script.append("}\n").toString();
    }

    /** Sets the loss each way to {@code percent} (0 to 100); the counters start again from zero. */
    public synchronized PacketLoss percent(double percent) {
        final int threshold = threshold(percent);
        if (closed) {
            throw new IllegalStateException("packet loss rules already removed");
        }
        final Path file = writeScript(script(threshold));
        try {
            namespace.exec(COMMAND_TIMEOUT, nft, "-f", file.toString()).orThrow();
        } finally {
            Commands.deleteQuietly(file);
        }
        this.percent = percent;
        return this;
    }

    private static Path writeScript(String text) {
        try {
            final Path file = Files.createTempFile("tern-loss", ".nft");
            Files.writeString(file, text);
            return file;
        } catch (IOException e) {
            throw new NetnsException("cannot write the nft script: " + e.getMessage(), e);
        }
    }

    /** The loss each way now, in percent. */
    public synchronized double percent() {
        return percent;
    }

    /** The namespace the rules are in (the wire's, or the peer's). */
    public NetworkNamespace namespace() {
        return namespace;
    }

    /** What the rules counted since they were last (re)installed. */
    public Counts counts() {
        final long[] to = chainCounters("to_peer");
        final long[] from = chainCounters("from_peer");
        return new Counts(to[0], to[1], from[0], from[1]);
    }

    /** {every packet, dropped packets} of one chain. */
    private long[] chainCounters(String chain) {
        final String listing = namespace.exec(COMMAND_TIMEOUT, nft, "list", "chain", "netdev", table, chain).orThrow().stdout();
        final Matcher counter = COUNTER.matcher(listing);
        final long[] values = new long[2];
        for (int i = 0; i < 2; i++) {
            if (!counter.find()) {
                throw new NetnsException("no counters in nft's listing of chain " + chain + ": " + listing);
            }
            values[i] = Long.parseLong(counter.group(1));
        }
        return values;
    }

    /** Deletes the table. Idempotent; a no-op once the namespace is gone. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (namespace.exists() && namespace.exec(COMMAND_TIMEOUT, nft, "list", "table", "netdev", table).exitCode() == 0) {
            namespace.exec(COMMAND_TIMEOUT, nft, "delete", "table", "netdev", table).orThrow();
        }
    }

    @Override
    public String toString() {
        return String.format(Locale.ROOT, "%.2f %% %s each way (%s %s, %s %s) in %s", percent, what, toPeerDevice, toPeerHook,
            fromPeerDevice, fromPeerHook, namespace.name());
    }
}
